//! The neutral spine: a profiler adapter's observations go through the kernel selection into the
//! region core, and come out as the report model with the notes a user needs to read the numbers right
//! (no regions, patterns that matched nothing, metrics the inputs lack). Nothing here knows which
//! profiler ran: adapters implement [`Observations`].
//!
//! Floor: analysis. May import insights, report, config, region and the ground floor; never a
//! profiler. (docs/architecture.md, checked by tests/it/architecture.rs)

pub mod cross_rank;
mod frames;
mod layers;
mod metrics;
mod notes;
mod ranks;
mod source;

use std::sync::Mutex;

use crate::config::Unrequested;
use crate::error::{Error, Result};
use crate::fast_map::FastMap;
use crate::insights::{self, RuleSet};
use crate::parallel;
use crate::region::{
    KernelFilter, MetricSpec, Observation, RegionAccumulator, RegionKind, RegionPath, Regioner,
    RegionerState, Renames, RequestedRegions, Rollup, ScopeStats,
};
use crate::report;
use crate::report::build::ScopeBuilder;
use crate::report::distribution::OUTLIER_FACTOR;
use crate::report::finish::Finishing;
use crate::report::model::{
    keeps_totals_only, DeepWorker, KernelSelectionInfo, MetricInfo, Report, RunInfo, Scope,
};
use crate::report::over_peak;

pub use metrics::{metric_requests, rollup_overrides, MetricRequest};
pub use ranks::check_once as check_ranks_once;
pub use source::{InsightLookup, MetricsFound, Observations, Reading, MAX_DURATION_NS};

/// What is known about the run that made the inputs (empty for a bare export).
#[derive(Debug, Clone, Default)]
pub struct RunContext {
    pub command: Vec<String>,
    pub profiler_command: Vec<String>,
    pub profiler_version: Option<String>,
    pub config_fingerprint: String,
    /// The second profiler command of a sampled run (its deep pass); empty otherwise.
    pub deep_command: Vec<String>,
    /// Every worker's command of a deep pass run as several profiler processes, worker 0's
    /// (`deep_command`) first; empty for a deep pass of one.
    pub deep_worker_commands: Vec<Vec<String>>,
    /// The same workers as run.json recorded them (what each was planned to take, how it ended),
    /// their results not yet read.
    pub deep_workers: Vec<DeepWorker>,
    /// Why the run's capture is partial (`run.json`); `None` for a whole run or a bare export.
    pub partial: Option<String>,
    /// How an adaptive sampled run sized its deep samples (`run.json`); `None` otherwise.
    pub adaptive: Option<AdaptiveRecord>,
    /// Whether a sampled run's deep pass was ended once covered (`run.json`).
    pub stopped_when_covered: bool,
    /// What collected a sampled run's deep metrics (`run.json`'s `deep_engine`); `None` where the
    /// inputs do not say.
    pub deep_engine: Option<String>,
    /// Every launcher rank whose run directory was read (`merge` of per-rank runs), in input order.
    pub ranks: Vec<RankRun>,
    /// The ranks whose own deep results a sampled multi-process run holds (the others take deep
    /// metrics from them by launch key); `None` when no ranks were chosen.
    pub deep_ranks: Option<Vec<u32>>,
    /// What finding the inputs left out and why (a rank directory linked from outside the shared
    /// run directory): report notes, on stderr too.
    pub notes: Vec<String>,
}

/// One rank's run as its `run.json` recorded it.
#[derive(Debug, Clone, PartialEq)]
pub struct RankRun {
    pub rank: u32,
    /// How many ranks its launcher started, where the launcher said.
    pub world_size: Option<u32>,
    /// Why its capture is partial; `None` when it ended well.
    pub partial: Option<String>,
    /// The run directory whose `run.json` names it (for messages); `None` for a rank only a trace
    /// names.
    pub run: Option<std::path::PathBuf>,
}

/// What an adaptive sampled run recorded when it sized its deep samples (run.json `adaptive`).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct AdaptiveRecord {
    pub error: f64,
    pub max_samples: u32,
    /// Launch keys of the first pass that the deep pass measured.
    pub keys: u64,
    /// Keys whose n exceeded `launch_count`.
    pub keys_topped_up: u64,
    /// Keys held below their n by `max_samples`.
    pub keys_capped: u64,
    /// Why the samples could not be sized (the first pass could not be read): the counts above
    /// are 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sizing_failed: Option<String>,
    /// Whether each key's n was scaled by the largest share of a region's time it holds
    /// (`sampling.error_scope: region`); absent: each key's own mean (`key`, and older runs).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub per_region: bool,
}

/// Everything the spine needs from the configuration, checked before any process starts
/// (`crate::plan`).
#[derive(Debug, Clone)]
pub struct AnalysisPlan {
    pub requests: Vec<MetricRequest>,
    pub rollups: std::collections::BTreeMap<String, Rollup>,
    pub time_metric: String,
    pub renames: Renames,
    pub filter: KernelFilter,
    /// `report.kernels`, as the report states it.
    pub selection: KernelSelectionInfo,
    /// `regions.include` as region matchers, and the literal paths it names (for empty regions).
    pub requested: RequestedRegions,
    pub requested_paths: Vec<(String, Vec<String>)>,
    pub unrequested: Unrequested,
    /// `regions.auto`: the method giving results their regions (`Own`: their own ranges).
    pub regioner: Regioner,
    pub aggregate: bool,
    /// `report.scope_trees`: every scope keeps its whole region tree however many there are.
    pub scope_trees: bool,
    pub threads: usize,
    /// `regions.max_depth`: the deepest range stack read.
    pub max_depth: usize,
    /// `report.compare`: at most three region paths or names.
    pub compare: Vec<String>,
    /// Rules evaluated on every region (`report.rules`).
    pub rules: RuleSet,
    /// Which kernels are collectives (`regions.auto.collectives.kernels`), for the cross-rank
    /// diagnosis.
    pub collectives: globset::GlobSet,
}

/// Reads every observation of `source` into one report.
pub fn analyze<O: Observations>(
    plan: &AnalysisPlan,
    source: O,
    context: &RunContext,
) -> Result<Report> {
    let found = source.metrics().clone();
    // Large inputs are read in parallel chunks, each into its own accumulator; the kernel filter is
    // shared, and each chunk asks it once per distinct kernel name.
    let filter = Mutex::new(plan.filter.clone());
    // A method that counts results in launch order (collectives) needs them from one reader.
    let threads = if plan.regioner.needs_order() {
        1
    } else {
        plan.threads
    };
    let (state, reading) = source.read(
        threads,
        &filter,
        || ChunkState::new(&found.specs),
        |state, obs| state.visit(obs, plan, &filter),
        ChunkState::merge,
    )?;
    if state.deepest_refused > 0 {
        return Err(Error::RegionsTooDeep {
            depth: state.deepest_refused,
            limit: plan.max_depth,
            sources: reading.sources.join(", "),
        });
    }
    let filter = filter.into_inner().unwrap_or_else(|e| e.into_inner());
    let ChunkState {
        accumulator,
        selected,
        excluded,
        with_call_stack,
        regions: regioner_state,
        timelines,
        ..
    } = state;

    let mut notes = notes::report_notes(plan, &found, &reading, &filter, selected);
    for note in &context.notes {
        notes.push_loud(note.clone());
    }
    notes.extend(frames::call_stack_note(
        &plan.regioner,
        with_call_stack,
        reading.results,
        &reading.no_call_stacks_hint,
    ));
    let (mut scopes, mut aggregate) = accumulator.finish_on(plan.aggregate, plan.threads);
    layers::cut(&plan.regioner, &mut scopes, aggregate.as_mut());
    let origin = plan.regioner.origin(&reading.origin);
    let builder = ScopeBuilder::new(
        &found.specs,
        found.has_time,
        reading.sampling.is_some(),
        origin,
        &reading.insights,
    )
    .with_samples(reading.key_samples.as_ref());
    let time = found.has_time.then_some(plan.time_metric.as_str());
    let frames = &regioner_state.frames;
    let (scopes, aggregate, totals_only) =
        build_all(plan, &builder, frames, time, scopes, aggregate);

    let metrics = metric_infos(&found);
    notes.extend(over_peak::notes(&metrics, &scopes));
    let mut selection = plan.selection.clone();
    selection.results_selected = selected;
    selection.results_excluded = excluded;
    let mut report = Report::new(
        run_info(context, &reading),
        metrics,
        found.has_time.then(|| plan.time_metric.clone()),
        selection,
        scopes,
        aggregate,
    );
    (report.sampling, report.time_measured) = (reading.sampling, reading.time_measured.clone());
    // Scopes already finished and cut are not finished again.
    report.scope_trees = !totals_only;
    report.cross_rank = cross_rank::diagnose(timelines);
    cross_rank::annotate(&mut report);
    report.notes = notes.all;
    report.console_notes = notes.console;
    report.finish(&Finishing {
        compare: &plan.compare,
        outlier_factor: OUTLIER_FACTOR,
        threads: plan.threads,
    });
    report.keep_scope_totals(plan.scope_trees);
    Ok(report)
}

/// How the run was made: the command and configuration from the run, the profiler and sources from
/// what was read.
fn run_info(context: &RunContext, reading: &Reading) -> RunInfo {
    RunInfo {
        command: context.command.clone(),
        profiler_command: context.profiler_command.clone(),
        profiler: reading.profiler.clone(),
        platform: reading.platform.clone(),
        config_fingerprint: context.config_fingerprint.clone(),
        // The run's record first, then what the inputs themselves say.
        partial: join_reasons(context.partial.iter().chain(&reading.partial)),
        flagged_ranks: ranks::flagged(&ranks::read(&context.ranks, &reading.ranks)),
        // A sampled run's deep metrics come from the deep pass's files: they are sources too.
        sources: reading
            .sources
            .iter()
            .chain(reading.sampling.iter().flat_map(|s| &s.deep_sources))
            .cloned()
            .collect(),
    }
}

/// Why a report is partial, several reasons joined into one; `None` when there is none.
pub(crate) fn join_reasons<S: AsRef<str>>(reasons: impl Iterator<Item = S>) -> Option<String> {
    let reasons: Vec<S> = reasons.collect();
    let reasons: Vec<&str> = reasons.iter().map(AsRef::as_ref).collect();
    (!reasons.is_empty()).then(|| reasons.join("; "))
}

/// Every scope's model, the aggregate's apart, and whether they were cut to their totals. Each
/// scope (the aggregate first, the largest) is finished on its own thread: the model, the regions
/// set aside or added, and the rules' findings; many scopes are cut to their totals as each is
/// finished, so their kernels never pile up.
fn build_all(
    plan: &AnalysisPlan,
    builder: &ScopeBuilder<'_>,
    frames: &std::collections::HashSet<String>,
    time: Option<&str>,
    scopes: Vec<ScopeStats>,
    aggregate: Option<ScopeStats>,
) -> (Vec<Scope>, Option<Scope>, bool) {
    let has_aggregate = aggregate.is_some();
    let totals_only = keeps_totals_only(scopes.len(), plan.scope_trees);
    let stats: Vec<_> = aggregate.into_iter().chain(scopes).collect();
    let built = Built {
        plan,
        builder,
        frames,
        time,
        has_aggregate,
        totals_only,
    };
    let mut finished = parallel::map(stats.into_iter().enumerate().collect(), plan.threads, |s| {
        built.scope(s)
    });
    let aggregate = has_aggregate.then(|| finished.remove(0));
    (finished, aggregate, totals_only)
}

/// What each scope is built and finished with, on its own thread.
struct Built<'b> {
    plan: &'b AnalysisPlan,
    builder: &'b ScopeBuilder<'b>,
    frames: &'b std::collections::HashSet<String>,
    time: Option<&'b str>,
    has_aggregate: bool,
    totals_only: bool,
}

impl Built<'_> {
    /// The `i`th scope (the aggregate first, where there is one) built and finished; cut to its
    /// totals at once in a report of many scopes.
    fn scope(&self, (i, stats): (usize, ScopeStats)) -> Scope {
        let is_aggregate = self.has_aggregate && i == 0;
        let scope = self.builder.scope(stats, is_aggregate);
        let mut scope = finish_scope(self.plan, self.builder, self.frames, self.time, scope);
        if self.totals_only && !is_aggregate {
            report::finish::finish_scope(&mut scope, self.time, OUTLIER_FACTOR);
            scope.cut_to_totals(self.time);
        }
        scope
    }
}

/// A scope's model made whole: frame chains collapsed, regions set aside or added as requested, the
/// rules' findings (distributions and the summary come in the shared finishing step).
fn finish_scope(
    plan: &AnalysisPlan,
    builder: &ScopeBuilder<'_>,
    frames: &std::collections::HashSet<String>,
    time: Option<&str>,
    mut scope: Scope,
) -> Scope {
    frames::collapse_frame_chains(&plan.regioner, &mut scope, frames);
    if plan.unrequested == Unrequested::Note {
        set_aside_unrequested(&plan.requested, &mut scope);
    }
    add_requested_empty_regions(plan, &mut scope, builder);
    insights::region::apply(&plan.rules, time, &mut scope);
    scope
}

/// The report's metric list: each metric with its label, unit, rollup and group.
fn metric_infos(found: &MetricsFound) -> Vec<MetricInfo> {
    found
        .specs
        .iter()
        .zip(&found.groups)
        .enumerate()
        .map(|(at, (spec, group))| MetricInfo {
            label: found.labels.get(at).cloned().flatten(),
            name: spec.name.clone(),
            unit: spec.unit.clone(),
            rollup: spec.rollup,
            group: group.clone(),
            description: None,
        })
        .collect()
}

/// What one reader thread accumulates.
struct ChunkState {
    accumulator: RegionAccumulator,
    /// Kernel selection decisions already asked of the shared filter.
    decisions: FastMap<String, bool>,
    selected: u64,
    excluded: u64,
    /// The regions `regions.auto` gives the current result, and its per-scope counts.
    regions: RegionerState,
    /// Results that carried a call stack (what `stack_frames` needs).
    with_call_stack: u64,
    /// The deepest range stack past `regions.max_depth` (0: none); such results are not added, so
    /// refusing them costs no more memory than reading one.
    deepest_refused: usize,
    /// Each scope's collectives and what ran between them.
    timelines: cross_rank::Timelines,
}

impl ChunkState {
    fn new(specs: &[MetricSpec]) -> ChunkState {
        ChunkState {
            accumulator: RegionAccumulator::new(specs.to_vec()),
            decisions: FastMap::default(),
            selected: 0,
            excluded: 0,
            regions: RegionerState::default(),
            with_call_stack: 0,
            deepest_refused: 0,
            timelines: cross_rank::Timelines::default(),
        }
    }

    /// Folds in the state of the chunk that followed this one's.
    fn merge(&mut self, later: ChunkState) {
        self.deepest_refused = self.deepest_refused.max(later.deepest_refused);
        self.selected += later.selected;
        self.excluded += later.excluded;
        self.with_call_stack += later.with_call_stack;
        self.regions.frames.extend(later.regions.frames);
        self.accumulator.merge(later.accumulator);
        self.timelines.merge(later.timelines);
    }

    fn visit(&mut self, obs: &Observation<'_>, plan: &AnalysisPlan, filter: &Mutex<KernelFilter>) {
        let depth = obs.stacks.iter().map(Vec::len).max().unwrap_or(0);
        if depth > plan.max_depth {
            self.deepest_refused = self.deepest_refused.max(depth);
            return;
        }
        self.with_call_stack += u64::from(obs.call_stack.is_some());
        // Every result counts, selected or not: a rank waits in its collectives whether or not
        // the report shows them.
        self.timelines.visit(obs, &plan.collectives);
        let obs = plan.regioner.apply(obs, &mut self.regions);
        if selects(&mut self.decisions, obs.kernel, filter) {
            self.selected += 1;
            self.accumulator.add(&obs);
        } else {
            self.excluded += 1;
            self.accumulator.add_excluded(&obs);
        }
    }
}

/// The kernel selection's decision for a kernel name, asked of the shared filter once per name.
fn selects(
    decisions: &mut FastMap<String, bool>,
    kernel: &str,
    filter: &Mutex<KernelFilter>,
) -> bool {
    if let Some(&decision) = decisions.get(kernel) {
        return decision;
    }
    let decision = filter
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .selects(kernel);
    decisions.insert(kernel.to_string(), decision);
    decision
}

/// Removes the regions `regions.include` does not relate to (docs/attribution.md, "Ranges nobody asked
/// for") and names the outermost of them, with their result counts, in a scope note.
fn set_aside_unrequested(requested: &RequestedRegions, scope: &mut Scope) {
    let paths: Vec<(RegionKind, &[String])> = scope
        .regions
        .iter()
        .map(|r| (r.kind, r.segments.as_slice()))
        .collect();
    let keep = requested.keep(&paths);
    if keep.iter().all(|k| *k) {
        return;
    }
    let kept_paths: Vec<&str> = scope
        .regions
        .iter()
        .zip(&keep)
        .filter(|(_, k)| **k)
        .map(|(r, _)| r.path.as_str())
        .collect();
    let set_aside: Vec<String> = scope
        .regions
        .iter()
        .zip(&keep)
        .filter(|(r, k)| {
            let parent_kept = match r.parent.as_deref() {
                Some(parent) => kept_paths.contains(&parent),
                None => true,
            };
            !**k && parent_kept
        })
        .map(|(r, _)| format!("`{}` ({} results)", r.path, r.kernel_count))
        .collect();
    let mut keep = keep.into_iter();
    scope.regions.retain(|_| keep.next().unwrap_or(true));
    scope.notes.push(format!(
        "Ranges that regions.include does not name were left out of the region tree (their results still count in the scope total): {}. Set regions.unrequested=show to keep them as regions.",
        set_aside.join(", ")
    ));
}

/// A range the user asked for by plain name or path that produced no result still gets a region, with
/// zeroed metrics and a note, so "nothing ran there" is visible rather than silently absent.
fn add_requested_empty_regions(plan: &AnalysisPlan, scope: &mut Scope, builder: &ScopeBuilder<'_>) {
    for (pattern, segments) in &plan.requested_paths {
        let segments = segments.clone();
        if scope
            .regions
            .iter()
            .any(|r| r.segments == segments && r.kind == RegionKind::Stack)
        {
            continue;
        }
        scope.regions.push(builder.empty_region(
            RegionPath {
                kind: RegionKind::Stack,
                segments,
            },
            format!(
                "Requested in regions.include (`{pattern}`) but no profiled result ran inside it in this scope; metrics are zero."
            ),
        ));
    }
}
