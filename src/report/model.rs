//! The report model: one `Serialize` tree that report.json is and report.md renders.
//!
//! Profiler-neutral: regions, kernels and metrics, with every metric's unit named. The JSON form is
//! versioned by [`SCHEMA_VERSION`] and documented in docs/report-schema.md and
//! docs/report.schema.json; bump the version on any incompatible change.
//!
//! Floor: report (see `crate::report`): imports config, region and the ground floor only.

use serde::Serialize;

pub use crate::report::idle::Idle;
pub use item_noun::ItemNoun;

mod comparison;
mod cross_rank;
mod distribution;
mod insight;
mod item_noun;
mod kernel;
mod metric;
mod region;
mod run_info;
mod sampling;
mod scope;
mod scope_table;
mod scope_totals;
mod spread;
mod summary;
mod timeline;

pub use comparison::{ComparedRegion, Comparison};
pub use cross_rank::{
    Cause, CollectiveTime, CrossRank, FlaggedRank, RankWaits, RegionWaits, Straggler,
};
pub use distribution::{Distribution, DistributionEntry};
pub use insight::{Evidence, Insight, Severity};
pub use kernel::{Kernel, KernelSelectionInfo};
pub use metric::{MetricInfo, MetricMap, MetricValue, PerResultMap, PerResultValue};
pub use region::Region;
pub use run_info::{DeviceModel, Platform, ProfilerInfo, RunInfo};
pub use sampling::{AdaptiveSampling, CoverageShares, DeepWorker, RankCoverage, Sampling};
pub use scope::{Scope, Totals};
pub use scope_table::{MetricSpread, RowFinding, ScopeRow, ScopeTable, TableSummary};
pub use scope_totals::{keeps_totals_only, past_side_by_side, SIDE_BY_SIDE};
pub use spread::{Percentiles, RegionAcross};
pub use summary::{NotQuantified, ScopeSummary, SummaryInsight, SummaryKernel, SummaryRegion};
pub use timeline::{
    PlannedProcess, ProcessTimeline, RealTimeline, TimelineCut, TimelineEvent, TimelineProcess,
};

/// Version of the report.json layout.
pub const SCHEMA_VERSION: u32 = 4;

/// Metrics besides time that report.md, report.html and trace.json show beside each region.
pub const KEY_METRICS: usize = 4;

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
    /// Scopes too many to hold one by one (a Neuron profile's subgraphs past [`SIDE_BY_SIDE`]), as rows of
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
    /// With more scopes than [`SIDE_BY_SIDE`], each region's time metric across the scopes that
    /// have it, in the order the regions are first met; absent otherwise.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub across_scopes: Vec<RegionAcross>,
    /// Whether every scope holds its whole region tree; `false` when a report of more than
    /// [`SIDE_BY_SIDE`] scopes keeps each scope's region totals only (`report.scope_trees`).
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
    /// What really happened and when, where the capture holds real times (a CUPTI trace): trace.json
    /// lays it out; `None` lays out the aggregates instead. Not written to report.json.
    #[serde(skip)]
    pub timeline: Option<RealTimeline>,
}

impl Report {
    /// The key metrics: the first [`KEY_METRICS`] of `metrics` other than the time metric, in
    /// report order; every output's region columns are these.
    pub fn key_metrics(&self) -> impl Iterator<Item = &MetricInfo> {
        let time = self.time_metric.as_deref();
        (self.metrics.iter())
            .filter(move |m| Some(m.name.as_str()) != time)
            .take(KEY_METRICS)
    }
}
