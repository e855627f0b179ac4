//! A scope (one process and device, or the aggregate) and its totals.

use serde::Serialize;

use super::{CoverageShares, Distribution, Idle, Insight, Kernel, MetricMap, Region, ScopeSummary};

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
    /// Where the scope's time goes and what would save the most: report.md and report.html open
    /// with it.
    pub summary: ScopeSummary,
    /// Every selected result of the scope, inside regions or not.
    pub total: Totals,
    /// Selected results that ran outside every range.
    pub outside_regions: Totals,
    /// Depth-first, parents before children, siblings in program order.
    pub regions: Vec<Region>,
    /// Findings about the scope as a whole (a profiler summary judged by profile-run's rules), most
    /// important first; empty when the source has no such summary.
    pub insights: Vec<Insight>,
    /// For every group of regions sharing a base name (`MLP` for `MLP[0]`…`MLP[3]`), how their
    /// durations spread; empty when no two regions share one.
    pub distributions: Vec<Distribution>,
    pub notes: Vec<String>,
    /// Where the device sat idle over the scope's window (`null` where the profile holds no device
    /// timeline).
    pub idle: Option<Idle>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Totals {
    pub kernel_count: u64,
    /// How the deep metrics were obtained (sampled runs; `null` otherwise).
    pub coverage: Option<CoverageShares>,
    pub metrics: MetricMap,
    pub kernels: Vec<Kernel>,
}
