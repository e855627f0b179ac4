//! A region of the report: its values, its instances and its findings.

use serde::Serialize;

use crate::region::RegionKind;

use super::{
    CollectiveTime, CoverageShares, Idle, Insight, Kernel, MetricMap, PerResultMap, Percentiles,
};

#[derive(Debug, Clone, Serialize)]
pub struct Region {
    /// Range names from the outermost, joined by `/` (a `/` or `\` inside a name is escaped with `\`).
    pub path: String,
    /// The same path as a list of exact range names.
    pub segments: Vec<String>,
    pub name: String,
    /// `stack` (nested ranges) or `mark` (flat, may overlap anything).
    pub kind: RegionKind,
    /// The method that made the region, as its adapter names it (the program's own ranges, a
    /// regioner's cut).
    pub origin: String,
    pub parent: Option<String>,
    /// 0 for a top-level region.
    pub depth: usize,
    /// Results in this region and everything nested in it.
    pub kernel_count: u64,
    /// Results whose innermost range is this region.
    pub self_kernel_count: u64,
    /// Inclusive time over the scope's total time, 0..1 (`null` without a time metric).
    pub time_share: Option<f64>,
    /// How the inclusive deep metrics were obtained (sampled runs; `null` otherwise).
    pub coverage: Option<CoverageShares>,
    pub inclusive: MetricMap,
    pub exclusive: MetricMap,
    /// Per-result statistics over the region's results (nested regions included): the smallest,
    /// largest and mean single result of each numeric metric, as a profiler's per-range summary shows
    /// them. A different view from `inclusive`, which holds the region's totals.
    pub per_result: PerResultMap,
    /// Kernels run in the region (nested ones included), longest total time first.
    pub kernels: Vec<Kernel>,
    /// How the inclusive times of the region's instances (visits) spread, in the time metric's
    /// unit, p90 by nearest rank; `null` when the source cannot tell two visits of a range apart
    /// (CSV exports), for flat regions, and where no visit has a time.
    pub instances: Option<Percentiles>,
    /// Findings for the results in this region (nested regions included), most important first;
    /// empty when there are none or the profiler's were not exported.
    pub insights: Vec<Insight>,
    pub notes: Vec<String>,
    /// Where the device sat idle in the region's time (`null` where the profile holds no device
    /// timeline).
    pub idle: Option<Idle>,
    /// Its collective kernels' wait for the last rank and transfer (`report.cross_rank`); `null`
    /// where it launched none or no cross-rank diagnosis was made.
    pub collectives: Option<CollectiveTime>,
}
