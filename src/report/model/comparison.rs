//! `report.compare`: chosen regions side by side.

use serde::Serialize;

use super::{MetricMap, Percentiles};

/// Up to three regions of one scope, side by side (`report.compare`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    /// The scope's label (`aggregate` for the aggregate).
    pub scope: String,
    /// In the order `report.compare` names them.
    pub regions: Vec<ComparedRegion>,
    /// Entries of `report.compare` that name no region of this scope.
    pub missing: Vec<String>,
}

/// One region of a comparison: the same values as the region's own entry.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ComparedRegion {
    /// The `report.compare` entry that chose it (a path or a region name).
    pub requested: String,
    pub path: String,
    pub kernel_count: u64,
    /// Inclusive time over the scope's, 0..1.
    pub time_share: Option<f64>,
    pub instances: Option<Percentiles>,
    pub inclusive: MetricMap,
}
