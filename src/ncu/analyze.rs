//! From ncu exports to the report model: picks the metrics the config asks for, applies the kernel
//! selection, feeds every result to the region core and writes the notes a user needs to read the
//! numbers right (no regions, patterns that matched nothing, metrics the export lacks).

use std::collections::BTreeMap;

use crate::fast_map::FastMap;
use std::path::PathBuf;
use std::sync::Mutex;

use crate::config::{Config, KernelNameBase, Unrequested};
use crate::error::{Error, Result};
use crate::region::{
    KernelFilter, RegionAccumulator, RegionKind, RegionPath, Renames, RequestedRegions, Rollup,
    ScopeKey,
};
use crate::report::build::ScopeBuilder;
use crate::report::model::{
    KernelSelectionInfo, MetricInfo, Report, RunInfo, Scope, SCHEMA_VERSION,
};

use super::export::details::{read_details, AdviceIndex};
use super::export::raw::{open_raw_file, stream_files, MetricRequest, RawPlan, RawSummary};
use super::export::ExportError;

/// What is known about the run that made the exports (empty for a bare export).
#[derive(Debug, Clone, Default)]
pub struct RunContext {
    pub command: Vec<String>,
    pub profiler_command: Vec<String>,
    pub profiler_version: Option<String>,
    pub config_fingerprint: String,
}

/// The metrics to report, in order: each `report.sections` group, then `report.metrics`.
pub fn metric_requests(config: &Config) -> Result<Vec<MetricRequest>> {
    let report = &config.report;
    let mut requests: Vec<MetricRequest> = Vec::new();
    let mut push = |name: &str, group: &str| {
        if !requests.iter().any(|r| r.name == name) {
            requests.push(MetricRequest {
                name: name.to_string(),
                group: group.to_string(),
            });
        }
    };
    for section in &report.sections {
        let metrics = report.metric_groups.get(section).ok_or_else(|| {
            let known: Vec<&str> = report.metric_groups.keys().map(String::as_str).collect();
            Error::Usage(format!(
                "report.sections names `{section}`, which is not a key of report.metric_groups (known: {}); define it under report.metric_groups.{section} or remove it",
                known.join(", ")
            ))
        })?;
        for metric in metrics {
            push(metric, section);
        }
    }
    for metric in &report.metrics {
        push(metric, "metrics");
    }
    Ok(requests)
}

fn rollup_overrides(config: &Config) -> Result<BTreeMap<String, Rollup>> {
    config
        .report
        .rollups
        .iter()
        .map(|(metric, text)| {
            Rollup::parse(text).map(|r| (metric.clone(), r)).ok_or_else(|| {
                Error::Usage(format!(
                    "report.rollups.{metric} = `{text}` is not a rollup; use one of sum, mean, max, min, distinct"
                ))
            })
        })
        .collect()
}

/// The exports of one capture: its raw page, optionally its details page (ncu's rule results), and
/// the launcher rank that made it, when known.
#[derive(Debug, Clone, PartialEq)]
pub struct ExportSet {
    pub raw: PathBuf,
    pub details: Option<PathBuf>,
    pub rank: Option<u32>,
}

impl ExportSet {
    pub fn raw_only(raw: PathBuf) -> ExportSet {
        ExportSet {
            raw,
            details: None,
            rank: None,
        }
    }
}

/// Reads raw exports (one per process group) into one report, without rule results or ranks.
pub fn analyze(config: &Config, raw_exports: &[PathBuf], context: &RunContext) -> Result<Report> {
    let sets: Vec<ExportSet> = raw_exports
        .iter()
        .cloned()
        .map(ExportSet::raw_only)
        .collect();
    analyze_sets(config, &sets, context)
}

/// Reads every capture (one per process group or rank) into one report.
pub fn analyze_sets(config: &Config, sets: &[ExportSet], context: &RunContext) -> Result<Report> {
    let requests = metric_requests(config)?;
    let rollups = rollup_overrides(config)?;
    let selection = &config.report.kernels;
    let filter = KernelFilter::new(
        &selection.include,
        &selection.exclude,
        selection.name_base == KernelNameBase::Function,
    )
    .map_err(|e| Error::Usage(e.to_string()))?;
    let renames = Renames::new(&config.regions.rename).map_err(|e| Error::Usage(e.to_string()))?;
    let plan = RawPlan {
        metrics: &requests,
        time_metric: &config.report.time_metric,
        rollups: &rollups,
        renames: &renames,
    };

    let mut exports = Vec::with_capacity(sets.len());
    for set in sets {
        exports.push((
            &set.raw,
            open_raw_file(&set.raw, &plan)?.with_rank(set.rank),
        ));
    }
    let Some((first_path, first)) = exports.first() else {
        return Err(Error::Usage("no export to read".into()));
    };
    let specs = first.summary().specs.clone();
    let groups = first.summary().groups.clone();
    for (path, export) in &exports[1..] {
        if export
            .summary()
            .specs
            .iter()
            .map(|s| &s.name)
            .ne(specs.iter().map(|s| &s.name))
        {
            return Err(Error::Usage(format!(
                "{} and {} hold different metrics; export every rank with the same sections and metrics",
                first_path.display(),
                path.display()
            )));
        }
    }

    // Large inputs are read in parallel chunks, each into its own accumulator; the kernel filter is
    // shared, and each chunk asks it once per distinct kernel name.
    let filter = Mutex::new(filter);
    let (state, summaries) = stream_files(
        exports.into_iter().map(|(_, export)| export).collect(),
        &plan,
        config.report.threads,
        || ChunkState::new(&specs),
        |state, obs| {
            if state.selects(obs.kernel, &filter) {
                state.selected += 1;
                state.accumulator.add(obs);
            } else {
                state.excluded += 1;
                state.accumulator.add_excluded(obs);
            }
        },
        |state, later| {
            state.selected += later.selected;
            state.excluded += later.excluded;
            state.accumulator.merge(later.accumulator);
        },
    )?;
    let filter = filter.into_inner().unwrap_or_else(|e| e.into_inner());
    let ChunkState {
        accumulator,
        selected,
        excluded,
        ..
    } = state;

    let mut filter = filter;
    let mut advice = AdviceIndex::default();
    for set in sets {
        if let Some(details) = &set.details {
            read_details_file(details, set.rank, &renames, &mut filter, &mut advice)?;
        }
    }

    let has_time = summaries.iter().all(|s| s.has_time);
    let notes = report_notes(config, &summaries, &filter, selected);
    let threads = config.report.threads;
    let (scopes, aggregate) = accumulator.finish_on(config.report.aggregate, threads);
    let advice_for = |scope: Option<&ScopeKey>, path: &RegionPath| advice.for_region(scope, path);
    let builder = ScopeBuilder::new(&specs, has_time, &advice_for);
    let mut scopes = crate::parallel::map(scopes, threads, |s| builder.scope(s, false));
    let mut aggregate = aggregate.map(|s| builder.scope(s, true));
    let requested = requested_regions(config)?;
    for scope in scopes.iter_mut().chain(aggregate.iter_mut()) {
        if config.regions.unrequested == Unrequested::Note {
            set_aside_unrequested(&requested, scope);
        }
        add_requested_empty_regions(config, scope, &builder);
    }

    let results: u64 = summaries.iter().map(|s| s.results).sum();
    let range_results: u64 = summaries.iter().map(|s| s.range_results).sum();
    // The recorded command says how the run was made; a bare export only lets us infer it.
    let recorded_mode = context
        .profiler_command
        .iter()
        .skip_while(|arg| *arg != "--replay-mode")
        .nth(1)
        .cloned();
    let replay_mode = recorded_mode.or_else(|| {
        (results > 0).then(|| {
            if range_results == results {
                "range"
            } else {
                "kernel"
            }
            .to_string()
        })
    });
    Ok(Report {
        schema_version: SCHEMA_VERSION,
        generator: format!("profile-run {}", env!("CARGO_PKG_VERSION")),
        run: RunInfo {
            command: context.command.clone(),
            profiler_command: context.profiler_command.clone(),
            profiler: "ncu".into(),
            profiler_version: context.profiler_version.clone(),
            replay_mode,
            config_fingerprint: context.config_fingerprint.clone(),
            sources: sets
                .iter()
                .flat_map(|set| std::iter::once(&set.raw).chain(&set.details))
                .map(|p| p.display().to_string())
                .collect(),
        },
        metrics: specs
            .iter()
            .zip(&groups)
            .map(|(spec, group)| MetricInfo {
                name: spec.name.clone(),
                unit: spec.unit.clone(),
                rollup: spec.rollup,
                group: group.clone(),
            })
            .collect(),
        time_metric: has_time.then(|| config.report.time_metric.clone()),
        kernel_selection: KernelSelectionInfo {
            include: selection.include.clone(),
            exclude: selection.exclude.clone(),
            name_base: match selection.name_base {
                KernelNameBase::Demangled => "demangled",
                KernelNameBase::Function => "function",
            }
            .into(),
            results_selected: selected,
            results_excluded: excluded,
        },
        scopes,
        aggregate,
        notes,
    })
}

/// What one reader thread accumulates.
struct ChunkState {
    accumulator: RegionAccumulator,
    /// Kernel selection decisions already asked of the shared filter.
    decisions: FastMap<String, bool>,
    selected: u64,
    excluded: u64,
}

impl ChunkState {
    fn new(specs: &[crate::region::MetricSpec]) -> ChunkState {
        ChunkState {
            accumulator: RegionAccumulator::new(specs.to_vec()),
            decisions: FastMap::default(),
            selected: 0,
            excluded: 0,
        }
    }

    fn selects(&mut self, kernel: &str, filter: &Mutex<KernelFilter>) -> bool {
        if let Some(&decision) = self.decisions.get(kernel) {
            return decision;
        }
        let decision = filter
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .selects(kernel);
        self.decisions.insert(kernel.to_string(), decision);
        decision
    }
}

/// Report-wide notes, most important first.
fn report_notes(
    config: &Config,
    summaries: &[RawSummary],
    filter: &KernelFilter,
    selected: u64,
) -> Vec<String> {
    let mut notes = Vec::new();
    let results: u64 = summaries.iter().map(|s| s.results).sum();
    let in_ranges: u64 = summaries.iter().map(|s| s.results_in_ranges).sum();
    let nvtx = &config.pipeline.ncu.ncu_cli.nvtx;
    if results == 0 {
        notes.push(
            "The export holds no results: ncu profiled nothing, so no region-specific profiling was performed. \
             Check that the NVTX include patterns match ranges the program pushes (push/pop ranges need a trailing `/`), \
             and that the workload launches kernels."
                .to_string(),
        );
    } else if !summaries.iter().any(|s| s.has_nvtx) {
        notes.push(
            "No region-specific profiling was performed: the export has no NVTX columns (ncu ran without `--nvtx`). \
             Set pipeline.ncu.ncu_cli.nvtx.enabled=true and mark regions with NVTX ranges. Totals below cover every profiled kernel."
                .to_string(),
        );
    } else if in_ranges == 0 {
        notes.push(
            "No region-specific profiling was performed: no profiled result ran inside an NVTX range. \
             Totals below cover every profiled kernel (a baseline)."
                .to_string(),
        );
    }
    if results > 0 && in_ranges == 0 {
        for expr in nvtx
            .include
            .iter()
            .filter(|e| !e.contains('/') && !e.contains(','))
        {
            notes.push(format!(
                "The NVTX include `{expr}` has no trailing `/`, so ncu read it as a start/end range and it matches no push/pop range; write `{expr}/` or use regions.include."
            ));
        }
    }
    for summary in summaries {
        if summary.range_results > 0 && summary.range_results == summary.results {
            notes.push(
                "Range replay: each result is one instance of a whole range (`Kernel Name` = `range`), so kernel counts count range instances and metrics cover the whole range. \
                 When a parent and its child range both match, ncu reports only the outermost one."
                    .to_string(),
            );
            break;
        }
    }
    let mut missing: Vec<&str> = summaries
        .iter()
        .flat_map(|s| s.missing.iter().map(String::as_str))
        .collect();
    missing.sort();
    missing.dedup();
    if !missing.is_empty() {
        notes.push(format!(
            "Not in the export, so not shown: {}. Collect them with pipeline.ncu.ncu_cli.sections / .metrics (or `set`), or drop them from report.sections / report.metrics.",
            missing.iter().map(|m| format!("`{m}`")).collect::<Vec<_>>().join(", ")
        ));
    }
    if !summaries.iter().all(|s| s.has_time) {
        notes.push(format!(
            "The time metric `{}` is not in the export: means are per-result averages and regions have no time share. Collect it (SpeedOfLight section) or set report.time_metric.",
            config.report.time_metric
        ));
    }
    for (list, pattern) in filter.unmatched() {
        notes.push(format!(
            "report.kernels.{list} pattern `{pattern}` matched no kernel name."
        ));
    }
    if results > 0 && selected == 0 && !filter.is_all() {
        notes.push(
            "The kernel selection (report.kernels) left no result: every region shows zeroed metrics.".to_string(),
        );
    }
    notes
}

/// `regions.include` as region-path matchers (empty when nothing is named).
fn requested_regions(config: &Config) -> Result<RequestedRegions> {
    let domain = config.regions.domain.as_deref();
    let patterns = config
        .regions
        .include
        .iter()
        .enumerate()
        .map(|(i, pattern)| {
            super::nvtx::level_regexes(pattern, domain).map_err(|e| {
                Error::Usage(format!(
                    "regions.include[{i}] {pattern:?} is not a valid pattern: {e}"
                ))
            })
        })
        .collect::<Result<_>>()?;
    Ok(RequestedRegions::new(patterns))
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
fn add_requested_empty_regions(config: &Config, scope: &mut Scope, builder: &ScopeBuilder<'_>) {
    for pattern in &config.regions.include {
        let Some(levels) = super::nvtx::literal_levels(pattern) else {
            continue;
        };
        let segments: Vec<String> = levels
            .into_iter()
            .map(|s| match &config.regions.domain {
                Some(domain) => format!("{domain}@{s}"),
                None => s,
            })
            .collect();
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

fn read_details_file(
    path: &std::path::Path,
    rank: Option<u32>,
    renames: &Renames,
    filter: &mut KernelFilter,
    index: &mut AdviceIndex,
) -> Result<()> {
    let file = std::fs::File::open(path).map_err(|source| ExportError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let input = std::io::BufReader::with_capacity(1 << 20, file);
    read_details(
        input,
        path,
        rank,
        renames,
        &mut |kernel| filter.selects(kernel),
        index,
    )?;
    Ok(())
}
