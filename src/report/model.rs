//! The report model: one `Serialize` tree that report.json is and report.md renders.
//!
//! Profiler-neutral: regions, kernels and metrics, with every metric's unit named. The JSON form is
//! versioned by [`SCHEMA_VERSION`] and documented in docs/report-schema.md and
//! docs/report.schema.json; bump the version on any incompatible change.
//!
//! Floor: report (see `crate::report`): imports config, region and the ground floor only.

use std::sync::Arc;

use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};

use crate::region::{RegionKind, Rollup};
pub use crate::report::idle::Idle;
pub use item_noun::ItemNoun;

mod item_noun;

mod cross_rank;
mod scope_table;
mod scope_totals;
mod summary;
pub use cross_rank::{
    Cause, CollectiveTime, CrossRank, FlaggedRank, RankWaits, RegionWaits, Straggler,
};
pub use scope_table::{RowFinding, ScopeRow, ScopeTable, Spread, TableSummary};
pub use scope_totals::TREES_UP_TO;
pub use summary::{NotQuantified, Summary, SummaryInsight, SummaryKernel, SummaryRegion};

/// Version of the report.json layout.
pub const SCHEMA_VERSION: u32 = 4;

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
    /// How the time metric was measured, where its name alone would mislead (`each kernel's end −
    /// start as CUPTI traced it in place …`); given by the adapter, said beside the metric's name
    /// in report.md and report.html, not written to report.json.
    #[serde(skip)]
    pub time_measured: Option<String>,
    pub kernel_selection: KernelSelectionInfo,
    /// One per process and device, in the order they first appear in the profile.
    pub scopes: Vec<Scope>,
    /// Everything merged across scopes; `null` when `report.aggregate` is false.
    pub aggregate: Option<Scope>,
    /// Scopes too many to hold one by one (a Neuron profile's subgraphs past the eighth), as rows of
    /// values beside the scope they belong to; absent when there are none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub scope_tables: Vec<ScopeTable>,
    /// Report-wide notes: why no regions were found, patterns that matched nothing, missing metrics.
    pub notes: Vec<String>,
    /// `report.compare`: the chosen regions side by side, one entry per scope (and the aggregate)
    /// that has at least one of them; empty when `report.compare` is.
    pub compare: Vec<Comparison>,
    /// How a sampled run joined its two passes; `null` for a run whose every result was profiled in
    /// full.
    pub sampling: Option<Sampling>,
    /// Collectives matched across ranks and the straggler they waited for; `null` unless at least two
    /// scopes ran collectives with in-place times.
    pub cross_rank: Option<CrossRank>,
    /// Whether every scope holds its whole region tree; `false` when a report of more than
    /// [`TREES_UP_TO`] scopes keeps each scope's region totals only (`report.scope_trees`).
    pub scope_trees: bool,
    /// What the profiler calls one result, for prose and headings (`kernel`, `instruction`); given by
    /// the adapter, not written to report.json.
    #[serde(skip)]
    pub item_noun: ItemNoun,
    /// The notes of `notes` that change how the numbers read or say a setting did nothing (metrics
    /// missing, patterns that matched nothing, an unknown `report.compare` name): repeated on stderr,
    /// where a user who does not open the report sees them. Chosen where each note is made; not
    /// written to report.json.
    #[serde(skip)]
    pub console_notes: Vec<String>,
}

/// A sampled run: a timing pass measured every result's time; a deep pass measured the other
/// metrics on a few launches of each distinct launch key, and every result took its twins' values.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Sampling {
    /// The deep pass's files, each followed by its top-up pass's where one ran.
    pub deep_sources: Vec<String>,
    /// The top-up passes' files among `deep_sources`.
    pub topup_sources: Vec<String>,
    /// What makes two launches twins.
    pub join_key: Vec<String>,
    /// Deep results per distinct launch (`null` when not recorded); twins are averaged.
    pub launch_count: Option<u32>,
    /// The metrics that come from the deep pass (all others come from the timing pass).
    pub deep_metrics: Vec<String>,
    /// Results of the deep pass.
    pub deep_results: u64,
    /// Timing results whose deep metrics were measured on that very launch (the same launch of its
    /// key in its process).
    pub measured_results: u64,
    /// Timing results that took the deep metrics of a twin launch.
    pub estimated_results: u64,
    /// Timing results with no twin: they have their time and no deep metrics.
    pub unmatched_results: u64,
    /// Timing results whose key was left out of the deep samples on purpose (a share of every
    /// region's time below the run's threshold): time kept, deep metrics not measured. Absent when 0.
    #[serde(skip_serializing_if = "is_zero")]
    pub not_measured_results: u64,
    /// Adaptive samples per launch key, and what they took.
    #[serde(flatten)]
    pub adaptive: AdaptiveSampling,
}

/// Adaptive samples per launch key (n = ⌈(1.96·CV/error)²⌉, at most `max_samples`) in a sampled run.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct AdaptiveSampling {
    /// Whether the run sized each key's deep samples by its first-pass durations.
    pub adaptive: bool,
    /// ε: the relative half-width at 95% the samples aimed at (`null` when not adaptive or unknown).
    pub error: Option<f64>,
    /// The budget: the most deep samples any key got (`null` when not adaptive or unknown).
    pub max_samples: Option<u32>,
    /// Distinct launch keys with deep results.
    pub keys: u64,
    /// Keys whose n exceeded the deep pass's `launch_count`: the top-up pass sampled them again
    /// (`null` when not recorded).
    pub keys_topped_up: Option<u64>,
    /// Keys held below their n by `max_samples` (`null` when not recorded).
    pub keys_capped: Option<u64>,
    /// Deep results the top-up pass added.
    pub topup_results: u64,
}

/// How a region's (or scope's) deep metrics were obtained in a sampled run, as shares of its time.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Coverage {
    /// Time whose deep metrics were measured on that very launch, 0..1.
    pub measured_time_share: f64,
    /// Time whose deep metrics come from a twin launch, 0..1.
    pub estimated_time_share: f64,
    /// Time with no twin, so no deep metrics, 0..1.
    pub unmatched_time_share: f64,
    /// Time whose key was left out of the deep samples on purpose, so not measured, 0..1. Absent
    /// when 0.
    #[serde(skip_serializing_if = "is_zero_share")]
    pub not_measured_time_share: f64,
    /// Whether the deep metrics are estimated, in part or in whole (not all time measured).
    pub estimated: bool,
}

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
    pub instances: Option<Instances>,
    pub inclusive: MetricMap,
}

#[derive(Debug, Clone, Serialize)]
pub struct RunInfo {
    /// The workload command line, when known (empty for a report made from a bare export).
    pub command: Vec<String>,
    /// The profiler command line, when known.
    pub profiler_command: Vec<String>,
    pub profiler: ProfilerInfo,
    /// Where the inputs were captured, as they record it: device models and driver.
    pub platform: Platform,
    /// SHA-256 of the resolved configuration (YAML), first 16 hex digits.
    pub config_fingerprint: String,
    /// The export files the numbers come from; for a sampled run the timing pass's, then
    /// `sampling.deep_sources`.
    pub sources: Vec<String>,
    /// Why the report covers only part of the run (the workload exited non-zero, the profiler was
    /// killed, the run was interrupted), as `run.json` recorded it; `null` for a run that ended well
    /// or when no run was recorded (a bare export).
    pub partial: Option<String>,
    /// Ranks of a merged run that are missing or whose capture is partial: their numbers are not
    /// the whole job's, so the Summary names them (empty when none is).
    pub flagged_ranks: Vec<FlaggedRank>,
}

/// The profiler that made the inputs, as its adapter describes it.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ProfilerInfo {
    /// The profiler's name, as its adapter gives it.
    pub name: String,
    /// Its version, when known.
    pub version: Option<String>,
    /// The settings that shape what a result is and how numbers compare between runs, named by the
    /// adapter, as recorded or inferred; a setting the inputs do not tell is absent.
    pub settings: std::collections::BTreeMap<String, String>,
}

/// The hardware and driver the inputs were captured on, as the inputs record them; nothing is
/// guessed, so a source that does not record them leaves `devices` empty and `driver` null.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Platform {
    /// Each device the inputs list, once per (id, model), in the order first listed.
    pub devices: Vec<DeviceModel>,
    /// The driver as the inputs name it (`CUDA 13.0`: the CUDA version the driver supports), `null`
    /// when not recorded; several inputs that disagree are listed joined by `, `.
    pub driver: Option<String>,
    /// The runtime and libraries the workload ran with, as the inputs name them (`Neuron runtime
    /// 2.29.40 (f954c), collectives 2.29.41, compiler 2.22.12471.0+b4a00d10`); `null` when not recorded.
    pub runtime: Option<String>,
}

/// One device of [`Platform::devices`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DeviceModel {
    /// The device's id as the scopes name it (`Scope::device`).
    pub id: String,
    /// Its model (`NVIDIA H100 80GB HBM3`).
    pub model: String,
}

impl Platform {
    /// Adds a device unless the same (id, model) is already listed.
    pub fn add_device(&mut self, id: String, model: String) {
        if !self.devices.iter().any(|d| d.id == id && d.model == model) {
            self.devices.push(DeviceModel { id, model });
        }
    }

    /// Adds a driver name unless it is already named.
    pub fn add_driver(&mut self, driver: &str) {
        match &mut self.driver {
            Some(known) if known.split(", ").any(|d| d == driver) => {}
            Some(known) => *known = format!("{known}, {driver}"),
            None => self.driver = Some(driver.to_string()),
        }
    }

    /// The distinct models, in order: what `GPU` lines show and what comparisons check.
    pub fn models(&self) -> Vec<&str> {
        let mut models: Vec<&str> = Vec::new();
        for d in &self.devices {
            if !models.contains(&d.model.as_str()) {
                models.push(&d.model);
            }
        }
        models
    }
}

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
    /// Where the scope's time goes and what would save the most: report.md and report.html open
    /// with it.
    pub summary: Summary,
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

/// How the durations of the regions sharing a base name spread.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Distribution {
    /// The shared base name (`MLP`).
    pub base: String,
    /// The metric whose values are distributed (the time metric).
    pub metric: String,
    pub unit: String,
    pub count: u64,
    pub min: f64,
    pub median: f64,
    /// 90th percentile, linear interpolation between closest ranks.
    pub p90: f64,
    pub max: f64,
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

#[derive(Debug, Clone, Serialize)]
pub struct Totals {
    pub kernel_count: u64,
    /// How the deep metrics were obtained (sampled runs; `null` otherwise).
    pub coverage: Option<Coverage>,
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
    pub coverage: Option<Coverage>,
    pub inclusive: MetricMap,
    pub exclusive: MetricMap,
    /// Per-result statistics over the region's results (nested regions included): the smallest,
    /// largest and mean single result of each numeric metric, as a profiler's per-range summary shows
    /// them. A different view from `inclusive`, which holds the region's totals.
    pub per_result: PerResultMap,
    /// Kernels run in the region (nested ones included), longest total time first.
    pub kernels: Vec<Kernel>,
    /// How the region's instances (visits) are distributed in time; `null` when the source cannot
    /// tell two visits of a range apart (CSV exports) and for flat regions.
    pub instances: Option<Instances>,
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
    pub saving_by_kernel: std::collections::BTreeMap<String, f64>,
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
    pub labels: std::collections::BTreeMap<String, String>,
    /// The metric values that fired a rule of profile-run's (empty for a profiler's own finding).
    pub metrics: std::collections::BTreeMap<String, f64>,
}

/// The instances of a region and the spread of their inclusive times (in the time metric's unit).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Instances {
    pub count: u64,
    /// `null` when the region has no instance with results.
    pub min: Option<f64>,
    pub median: Option<f64>,
    /// 90th percentile, nearest rank.
    pub p90: Option<f64>,
    pub max: Option<f64>,
}

impl Instances {
    pub fn of(times: &[f64]) -> Instances {
        let mut sorted = times.to_vec();
        sorted.sort_by(f64::total_cmp);
        // Nearest rank: the smallest value with at least q of the instances at or below it.
        // A region whose results the kernel selection all left out has no visit with a time.
        let rank = |q: f64| {
            let at = ((q * sorted.len() as f64).ceil() as usize).max(1);
            sorted.get(at - 1).copied()
        };
        Instances {
            count: sorted.len() as u64,
            min: sorted.first().copied(),
            median: rank(0.5),
            p90: rank(0.9),
            max: sorted.last().copied(),
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Kernel {
    /// The name as the profiler recorded it (a demangled signature, for GPU kernels).
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
    /// A sampled run's deep value: the 95% interval `[lo, hi]` in which full replay's value is
    /// expected, from the estimates of twin launches and how much two runs differ
    /// (docs/attribution.md, "Intervals"). Absent for metrics measured on every launch and in runs
    /// profiled in full.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interval95: Option<[f64; 2]>,
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
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (name, value) in &self.0 {
            map.serialize_entry(&**name, value)?;
        }
        map.end()
    }
}

/// Whether a count is 0 (left out of report.json, as in reports written before it existed).
fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// Whether a share is 0 (left out of report.json, as in reports written before it existed).
fn is_zero_share(share: &f64) -> bool {
    *share == 0.0
}

#[cfg(test)]
mod tests {
    use super::Instances;

    #[test]
    fn instances_spread_by_nearest_rank_and_none_for_no_visit() {
        let i = Instances::of(&[5.0, 1.0, 3.0, 2.0, 4.0, 6.0, 7.0, 8.0, 9.0, 10.0]);
        assert_eq!(
            (i.count, i.min, i.median, i.p90, i.max),
            (10, Some(1.0), Some(5.0), Some(9.0), Some(10.0))
        );
        let none = Instances::of(&[]);
        assert_eq!(
            (none.count, none.min, none.median, none.p90, none.max),
            (0, None, None, None, None)
        );
    }
}
