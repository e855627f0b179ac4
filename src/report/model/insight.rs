//! Findings: what was found about a region or scope, how much it matters, what it rests on.

use std::collections::BTreeMap;

use serde::Serialize;

/// A finding about a region: a profiler's own rule result (its guided analysis) or a rule of
/// profile-run's, with what it is based on.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Insight {
    /// Who found it: the profiler's name, or `profile-run` for its own rules.
    pub source: String,
    /// The rule's identifier (`SOLBottleneck`, `LaunchConfiguration`, …).
    pub rule: String,
    pub severity: Severity,
    /// What was found, for the result the evidence shows.
    pub message: String,
    /// Why it happens, when the rule says (profile-run's rules do; a profiler's message holds both).
    pub cause: Option<String>,
    /// What to try, when the rule says.
    pub action: Option<String>,
    /// Estimated speedup of acting on it, in percent of the shown kernel's time (`null` when none):
    /// kernel-local, so it neither adds up across kernels nor says what the region would gain.
    pub estimated_speedup: Option<f64>,
    /// The time acting on it would save in the region, in ns: over the results the rule fired on,
    /// each result's estimated speedup times that result's own time, capped by the region's time
    /// (`null` when no result had an estimate). What findings are ranked by.
    pub estimated_saving_ns: Option<f64>,
    /// `estimated_saving_ns` kernel by kernel (name → ns; empty without an estimate): what lets the
    /// summary count each kernel's time under one finding only.
    pub saving_by_kernel: BTreeMap<String, f64>,
    /// Why the finding has no estimated saving (`null` when it has one, or for information).
    pub not_quantified: Option<String>,
    pub evidence: Evidence,
}

/// How much a finding matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// A change that would make the region faster.
    Opportunity,
    /// Something wrong or suspicious.
    Warning,
    /// Context worth knowing.
    Info,
}

/// What an insight rests on.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Evidence {
    /// Results of the region the rule fired on.
    pub results: u64,
    /// Their summed duration, in ns.
    pub time: f64,
    /// The kernel of the result the message and estimate come from, as the profiler names it.
    pub kernel: Option<String>,
    /// The source's own labels for the finding (a section, how its estimate is meant).
    pub labels: BTreeMap<String, String>,
    /// The metric values that fired a rule of profile-run's (empty for a profiler's own finding).
    pub metrics: BTreeMap<String, f64>,
}
