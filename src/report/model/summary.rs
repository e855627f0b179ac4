//! The report model's per-scope summary: the regions, kernels and findings a scope opens with.

use serde::Serialize;

use super::Severity;

/// A scope at a glance: the regions with the most self time, the kernels with the most time, and the
/// findings that would save the most time in the scope. Times in the time metric's base unit.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ScopeSummary {
    /// The scope's total time (`null` without a time metric).
    pub time: Option<f64>,
    /// Regions by self time (the results directly in them), most first.
    pub top_regions: Vec<SummaryRegion>,
    /// Kernels by total time over the whole scope, most first.
    pub top_kernels: Vec<SummaryKernel>,
    /// Findings by the time they save that no better finding saves already (`estimated_saving_ns`),
    /// most first; one per (source, rule), from the innermost region with that saving. Each kernel's
    /// time counts under one finding only, so these savings never add up to more than `time`.
    pub top_insights: Vec<SummaryInsight>,
    /// Findings whose every kernel is counted under a better finding of `top_insights`: acting on
    /// them saves time that finding already claims.
    pub overlapping: Vec<SummaryInsight>,
    /// Findings with no estimate of the time they save, one per (source, rule), and why.
    pub not_quantified: Vec<NotQuantified>,
    /// Regions left out of `top_regions` because their time overlaps the regions listed there
    /// (start/end ranges beside push/pop ranges), with their inclusive time and share.
    pub overlapping_regions: Vec<SummaryRegion>,
}

/// A finding of the summary with no time saving, and why.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NotQuantified {
    /// The outermost region the finding was made in.
    pub region: String,
    pub source: String,
    pub rule: String,
    pub message: String,
    /// Why there is no estimate.
    pub reason: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SummaryRegion {
    pub path: String,
    pub self_time: f64,
    /// Self time over the scope's time, 0..1.
    pub self_time_share: Option<f64>,
    /// Inclusive time over the scope's time, 0..1.
    pub time_share: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SummaryKernel {
    /// The variant with the most time (a function's variants differ in template arguments or
    /// signature).
    pub name: String,
    /// The function every variant counted here shares: kernels group by it, as in region tables.
    pub function: String,
    /// Distinct names (variants) of the function counted together.
    pub variants: u64,
    pub count: u64,
    pub time: f64,
    /// Over the scope's time, 0..1.
    pub time_share: Option<f64>,
    /// The innermost region that runs at least half of this kernel's time, where to look at it;
    /// `null` when no region does.
    pub mostly_in: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SummaryInsight {
    /// The path of the region whose finding this is.
    pub region: String,
    pub source: String,
    pub rule: String,
    pub severity: Severity,
    pub message: String,
    /// What to try, when the rule says (the insight's `action`).
    pub action: Option<String>,
    pub kernel: Option<String>,
    /// Kernel-local, of the shown result (see the insight's field).
    pub estimated_speedup: Option<f64>,
    /// Time acting on it would save, in ns, counting only kernels no better finding of the list
    /// claims already (each kernel's time is saved once).
    pub estimated_saving_ns: f64,
    /// The finding's own estimate in its region, in ns, overlap included: more than
    /// `estimated_saving_ns` when some of its kernels count under a better finding.
    pub own_saving_ns: f64,
    /// The findings (`source:rule`) better for some of this finding's kernels, under which those
    /// kernels are counted.
    pub overlaps: Vec<String>,
    /// That saving over the scope's time, 0..1.
    pub saving_share: Option<f64>,
    /// The innermost region nested in `region` that holds at least half of this saving (the same
    /// rule's saving there), where to look first; `null` when no nested region does.
    pub mostly_in: Option<String>,
    /// The saving in `mostly_in`, in ns.
    pub mostly_in_saving_ns: Option<f64>,
}
