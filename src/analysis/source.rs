//! The contract between a profiler adapter and the neutral spine: what an adapter must hand over so
//! that regions, metrics, notes and insights can be built without knowing which profiler ran.

use std::sync::Mutex;

use super::RankRun;
use crate::error::Result;
use crate::region::{KernelFilter, KeySamples, MetricSpec, Observation, RegionPath, ScopeKey};
use crate::report::model::{Insight, Platform, ProfilerInfo, Sampling};

/// The longest a result or a range may last: 2^53 ns (104 days). Past it a duration in ns is no
/// longer exact in the report's numbers, and no profiler's clock gives one, so every reader refuses
/// a longer one as damage.
pub const MAX_DURATION_NS: u64 = 1 << 53;

/// The requested metrics a source can give, known before any result is read.
#[derive(Debug, Clone, Default)]
pub struct MetricsFound {
    /// Found metrics in request order, with base units and rollups.
    pub specs: Vec<MetricSpec>,
    /// The request group of each spec (same order).
    pub groups: Vec<String>,
    /// The profiler's own label of each spec (same order; `None` where it has none, or shorter).
    pub labels: Vec<Option<String>>,
    /// Requested metrics the source does not have.
    pub missing: Vec<String>,
    /// Whether every input has the time metric.
    pub has_time: bool,
}

/// The profiler's own findings for a region of a scope (`None`: of the aggregate).
pub type InsightLookup = Box<dyn Fn(Option<&ScopeKey>, &RegionPath) -> Vec<Insight> + Sync>;

/// What an adapter learnt while reading, beside the observations themselves.
pub struct Reading {
    pub results: u64,
    /// Results that ran inside at least one range or mark.
    pub results_in_ranges: u64,
    /// Whether the inputs carry range information at all.
    pub has_ranges: bool,
    /// Which profiler made the inputs, its version and the settings that shape the numbers.
    pub profiler: ProfilerInfo,
    /// The devices and driver the inputs record (empty where they record none).
    pub platform: Platform,
    /// The files the numbers come from.
    pub sources: Vec<String>,
    /// Notes only the adapter can word (a profiler mode that changes what a result is, …).
    pub notes: Vec<String>,
    /// What to check when the inputs hold no result at all, in the profiler's terms.
    pub no_results_hint: String,
    /// How to get range information when the inputs have none, in the profiler's terms.
    pub no_ranges_hint: String,
    /// How to capture call stacks when `stack_frames` finds none, in the profiler's terms.
    pub no_call_stacks_hint: String,
    /// How to get metrics the report asks for and the inputs lack, in the profiler's terms.
    pub missing_metrics_hint: String,
    /// The inputs hold times alone by their kind (a time-only trace): a missing metric is what such
    /// an input always gives, said in the report but not repeated on stderr.
    pub time_only: bool,
    /// How the time metric was measured, where its name alone would mislead (a trace keeps each
    /// kernel's end − start under the profiler's duration metric); `None`: the metric is what it says.
    pub time_measured: Option<String>,
    /// The profiler's own findings per region.
    pub insights: InsightLookup,
    /// The method that made the regions, as the adapter names it (the program's own ranges, a
    /// regioner's cut).
    pub origin: String,
    /// How a sampled reading joined its passes; `None` when every result was profiled in full.
    pub sampling: Option<Sampling>,
    /// A sampled reading's deep samples per launch key (the keys of its observations), from which
    /// each estimated deep value gets its 95% interval; `None` otherwise.
    pub key_samples: Option<KeySamples>,
    /// Why the inputs themselves hold only part of the run (a file cut short), beside what the run's
    /// record says; `None` when they are whole.
    pub partial: Option<String>,
    /// The launcher ranks the inputs themselves name (a trace records its process's rank and world
    /// size), beside those of the run records: a rank of the job that none of them holds is flagged.
    pub ranks: Vec<RankRun>,
}

/// A profiler's results, read once: `read` streams every result as an [`Observation`] into states made
/// by `init` (several when the adapter reads in parallel), folded together in input order by `merge`.
pub trait Observations: Sized {
    fn metrics(&self) -> &MetricsFound;

    /// `filter` is the report's kernel selection: the adapter applies it to what it reads beside the
    /// observations (its own findings), so they cover the same results as the numbers.
    fn read<S, I, V, M>(
        self,
        threads: usize,
        filter: &Mutex<KernelFilter>,
        init: I,
        visit: V,
        merge: M,
    ) -> Result<(S, Reading)>
    where
        S: Send,
        I: Fn() -> S + Sync,
        V: Fn(&mut S, &Observation<'_>) + Sync,
        M: FnMut(&mut S, S);
}
