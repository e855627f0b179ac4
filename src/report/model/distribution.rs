//! How the durations of same-named regions spread.

use serde::Serialize;

use super::Percentiles;

/// How the durations of the regions sharing a base name spread.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Distribution {
    /// The shared base name (`MLP`).
    pub base: String,
    /// The metric whose values are distributed (the time metric).
    pub metric: String,
    pub unit: String,
    #[serde(flatten)]
    pub spread: Percentiles,
    /// A region is an outlier above `outlier_factor × median` or below `median / outlier_factor`.
    pub outlier_factor: f64,
    /// Every region of the group in time order, with its value.
    pub regions: Vec<DistributionEntry>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DistributionEntry {
    pub path: String,
    pub value: f64,
    pub outlier: bool,
}
