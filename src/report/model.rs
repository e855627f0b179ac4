//! The report model: one `Serialize` tree that report.json is and report.md renders.
//!
//! Profiler-neutral: regions, kernels and metrics, with every metric's unit named. The JSON form is
//! versioned by [`SCHEMA_VERSION`] and documented in docs/report-schema.md and
//! docs/report.schema.json; bump the version on any incompatible change.

use std::sync::Arc;

use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};

use crate::region::{RegionKind, Rollup};

/// Version of the report.json layout.
pub const SCHEMA_VERSION: u32 = 2;

#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub schema_version: u32,
    /// `profile-run <version>`.
    pub generator: String,
    pub run: RunInfo,
    /// The metrics shown, in report order, with unit and rollup.
    pub metrics: Vec<MetricInfo>,
    /// The metric that gives each region its time and time share (`null` when the export lacks it).
    pub time_metric: Option<String>,
    pub kernel_selection: KernelSelectionInfo,
    /// One per process and device, in the order they first appear in the profile.
    pub scopes: Vec<Scope>,
    /// Everything merged across scopes; `null` when `report.aggregate` is false.
    pub aggregate: Option<Scope>,
    /// Report-wide notes: why no regions were found, patterns that matched nothing, missing metrics.
    pub notes: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct RunInfo {
    /// The workload command line, when known (empty for a report made from a bare export).
    pub command: Vec<String>,
    /// The profiler command line, when known.
    pub profiler_command: Vec<String>,
    pub profiler: ProfilerInfo,
    /// SHA-256 of the resolved configuration (YAML), first 16 hex digits.
    pub config_fingerprint: String,
    /// The export files the numbers come from.
    pub sources: Vec<String>,
}

/// The profiler that made the inputs, as its adapter describes it.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ProfilerInfo {
    /// The profiler's name (`ncu`).
    pub name: String,
    /// Its version, when known.
    pub version: Option<String>,
    /// The settings that shape what a result is and how numbers compare between runs (for ncu:
    /// `replay_mode`, `clock_control`, `cache_control`, …), as recorded or inferred; a setting the
    /// inputs do not tell is absent.
    pub settings: std::collections::BTreeMap<String, String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct MetricInfo {
    pub name: String,
    /// Base unit (`nsecond`, `byte`, `%`, `cycle`, …); empty for unitless metrics.
    pub unit: String,
    pub rollup: Rollup,
    /// The `report.sections` group that asked for it, or `metrics` for `report.metrics`.
    pub group: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct KernelSelectionInfo {
    pub include: Vec<String>,
    pub exclude: Vec<String>,
    /// `demangled` or `function`.
    pub name_base: String,
    /// Results kept by the selection, over all scopes.
    pub results_selected: u64,
    /// Results dropped by the selection, over all scopes.
    pub results_excluded: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct Scope {
    /// `python3.12 pid 1606 @ host, device 0`, or `aggregate`.
    pub label: String,
    /// The launcher rank the results came from (`null` when unknown, and in the aggregate).
    pub rank: Option<u32>,
    /// `null` in the aggregate.
    pub process_id: Option<u64>,
    pub process_name: Option<String>,
    pub host: Option<String>,
    pub device: Option<String>,
    /// Every selected result of the scope, inside regions or not.
    pub total: Totals,
    /// Selected results that ran outside every range.
    pub outside_regions: Totals,
    /// Depth-first, parents before children, siblings in program order.
    pub regions: Vec<Region>,
    pub notes: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Totals {
    pub kernel_count: u64,
    pub metrics: MetricMap,
    pub kernels: Vec<Kernel>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Region {
    /// Range names from the outermost, joined by `/` (a `/` or `\` inside a name is escaped with `\`).
    pub path: String,
    /// The same path as a list of exact range names.
    pub segments: Vec<String>,
    pub name: String,
    /// `push_pop` (nested) or `start_end` (flat, may overlap anything).
    pub kind: RegionKind,
    pub parent: Option<String>,
    /// 0 for a top-level region.
    pub depth: usize,
    /// Results in this region and everything nested in it.
    pub kernel_count: u64,
    /// Results whose innermost range is this region.
    pub self_kernel_count: u64,
    /// Inclusive time over the scope's total time, 0..1 (`null` without a time metric).
    pub time_share: Option<f64>,
    pub inclusive: MetricMap,
    pub exclusive: MetricMap,
    /// Kernels run in the region (nested ones included), longest total time first.
    pub kernels: Vec<Kernel>,
    /// The profiler's own findings for the results in this region (nested regions included), most
    /// important first; empty when the profiler gave none or they were not exported.
    pub advice: Vec<Advice>,
    pub notes: Vec<String>,
}

/// One profiler rule's findings in one region (ncu: a rule result of `--page details`).
///
/// `description`, `kernel`, `estimated_speedup` and `speedup_type` all come from one result the rule
/// fired on: the one with the largest estimated saving, else the longest.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Advice {
    /// Which profiler gave it (`ncu`).
    pub source: String,
    /// The rule's identifier (`SOLBottleneck`, `LaunchConfiguration`, …).
    pub rule: String,
    /// `OPT` (optimisation opportunity), `WRN` (warning) or `INF` (information).
    pub kind: String,
    /// The section the rule belongs to.
    pub section: String,
    /// The rule's text for the shown result.
    pub description: String,
    /// The shown result's kernel, as the profiler names it (demangled signature for ncu).
    pub kernel: String,
    /// Results the rule fired on.
    pub results: u64,
    /// Summed duration of those results, in ns.
    pub time: f64,
    /// The shown result's estimated speedup, in percent of its kernel's time (`null` when none).
    pub estimated_speedup: Option<f64>,
    /// `local` or `global`, as the profiler labels that estimate (`null` when none).
    pub speedup_type: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Kernel {
    /// The name as the profiler recorded it (demangled signature for ncu).
    pub name: String,
    /// Base function name, for display.
    pub function: String,
    pub count: u64,
    pub metrics: MetricMap,
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
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (name, value) in &self.0 {
            map.serialize_entry(&**name, value)?;
        }
        map.end()
    }
}
