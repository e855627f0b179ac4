//! Metrics: what each one is, and the values a region, scope or kernel holds.

use std::sync::Arc;

use serde::{Serialize, Serializer};

use crate::region::Rollup;

#[derive(Debug, Clone, Serialize)]
pub struct MetricInfo {
    /// The raw metric name, as the profiler records it.
    pub name: String,
    /// The profiler's own display name for it (a section label such as `Compute (SM) Throughput`),
    /// given by the profiler's adapter; `null` where it has none, and tables show `name`.
    pub label: Option<String>,
    /// Base unit (`ns`, `byte`, `%`, `cycle`, …); empty for unitless metrics.
    pub unit: String,
    pub rollup: Rollup,
    /// The `report.sections` group that asked for it, or `metrics` for `report.metrics`.
    pub group: String,
    /// The profiler's own description of the metric (AWS's `terminology` for a Neuron summary
    /// field); absent where it gives none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// One aggregated metric value.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MetricValue {
    /// `null` when no result had a value, and for attributes (see `values`).
    pub value: Option<f64>,
    /// Shared with every other value of the same metric: a large report holds millions of these.
    pub unit: Arc<str>,
    /// Distinct values of an attribute metric (rollup `distinct`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub values: Option<Vec<String>>,
    /// A sampled run's deep value: the 95% interval `[lo, hi]` in which full replay's value is
    /// expected, from the estimates of twin launches and how much two runs differ
    /// (docs/attribution.md, "Intervals"). Absent for metrics measured on every launch and in runs
    /// profiled in full.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interval95: Option<[f64; 2]>,
}

impl MetricValue {
    /// A number (`None`: no result had one) in `unit`, measured on every launch.
    pub fn number(value: Option<f64>, unit: Arc<str>) -> MetricValue {
        MetricValue {
            value,
            unit,
            values: None,
            interval95: None,
        }
    }
}

/// Metric name → value, serialised as a JSON object in report order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MetricMap(pub Vec<(Arc<str>, MetricValue)>);

impl MetricMap {
    pub fn get(&self, name: &str) -> Option<&MetricValue> {
        self.0.iter().find(|(n, _)| &**n == name).map(|(_, v)| v)
    }
}

impl Serialize for MetricMap {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_map(self.0.iter().map(|(name, value)| (&**name, value)))
    }
}

/// One metric over the single results of a region.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PerResultValue {
    pub min: f64,
    pub max: f64,
    /// Plain (unweighted) mean over the results with a value.
    pub mean: f64,
    pub unit: Arc<str>,
}

/// Metric name → per-result statistics, serialised as a JSON object in report order; metrics without
/// a value and attributes are left out.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PerResultMap(pub Vec<(Arc<str>, PerResultValue)>);

impl Serialize for PerResultMap {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_map(self.0.iter().map(|(name, value)| (&**name, value)))
    }
}
