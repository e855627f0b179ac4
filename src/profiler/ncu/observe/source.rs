//! ncu's CSV exports as a source of observations for the neutral spine: the raw page gives the
//! results, the details page ncu's rule results (advice), and the recorded command the settings.

use std::path::PathBuf;
use std::sync::Mutex;

use crate::analysis::{analyze, AnalysisPlan, MetricsFound, Observations, Reading, RunContext};
use crate::error::{Error, Result};
use crate::region::{KernelFilter, Observation};
use crate::report::model::{Platform, ProfilerInfo, Report};

use super::read_plan::ReadPlan;
use crate::profiler::ncu::readers::export::details::{read_details, AdviceIndex};
use crate::profiler::ncu::readers::export::raw::{open_raw_head, stream_files, RawHead, RawPlan};
use crate::profiler::ncu::readers::export::ExportError;

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

/// Raw exports whose headers were read and agree, ready to stream (each reopened in its turn).
pub struct CsvSource<'p> {
    plan: &'p AnalysisPlan,
    sets: Vec<ExportSet>,
    exports: Vec<RawHead>,
    found: MetricsFound,
    context: RunContext,
    /// Raw `--nvtx-include` expressions, for the trailing-`/` hint when nothing ran in a range.
    nvtx_include: Vec<String>,
}

impl<'p> CsvSource<'p> {
    pub fn open(
        plan: &'p AnalysisPlan,
        sets: &[ExportSet],
        context: &RunContext,
        nvtx_include: &[String],
    ) -> Result<CsvSource<'p>> {
        let raw_plan = raw_plan(plan);
        let mut exports = Vec::with_capacity(sets.len());
        for set in sets {
            let mut head = open_raw_head(&set.raw, set.rank, &raw_plan)?;
            if let Some(first) = exports.first() {
                check_same_metrics(first, &head)?;
                // Only the first export's metrics are used; the others' need not wait in memory.
                head.summary.specs = Vec::new();
                head.summary.groups = Vec::new();
            }
            exports.push(head);
        }
        let Some(first) = exports.first() else {
            return Err(Error::Usage("no export to read".into()));
        };
        let summary = &first.summary;
        let found = MetricsFound {
            specs: summary.specs.clone(),
            groups: summary.groups.clone(),
            labels: summary
                .specs
                .iter()
                .map(|s| super::labels::label(&s.name, &[]))
                .collect(),
            missing: summary.missing.clone(),
            has_time: exports.iter().all(|e| e.summary.has_time),
        };
        Ok(CsvSource {
            plan,
            sets: sets.to_vec(),
            exports,
            found,
            context: context.clone(),
            nvtx_include: nvtx_include.to_vec(),
        })
    }
}

/// Every rank exported with the same sections and metrics, or an error naming the first that differs.
fn check_same_metrics(first: &RawHead, other: &RawHead) -> Result<()> {
    let names = |head: &RawHead| -> Vec<String> {
        head.summary.specs.iter().map(|s| s.name.clone()).collect()
    };
    if names(first) != names(other) {
        return Err(Error::Usage(format!(
            "{} and {} hold different metrics; export every rank with the same sections and metrics",
            first.path.display(),
            other.path.display()
        )));
    }
    Ok(())
}

fn raw_plan(plan: &AnalysisPlan) -> RawPlan<'_> {
    RawPlan {
        metrics: &plan.requests,
        time_metric: &plan.time_metric,
        rollups: &plan.rollups,
        renames: &plan.renames,
    }
}

impl Observations for CsvSource<'_> {
    fn metrics(&self) -> &MetricsFound {
        &self.found
    }

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
        M: FnMut(&mut S, S),
    {
        let raw_plan = raw_plan(self.plan);
        let (state, summaries) =
            stream_files(&self.exports, &raw_plan, threads, init, visit, merge)?;
        let mut advice = AdviceIndex::default();
        let mut filter = filter.lock().unwrap_or_else(|e| e.into_inner());
        for set in &self.sets {
            if let Some(details) = &set.details {
                read_details_file(details, set, self.plan, &mut filter, &mut advice)?;
            }
        }
        let counts: Vec<ResultCounts> = summaries
            .iter()
            .map(|s| ResultCounts {
                results: s.results,
                range_results: s.range_results,
                results_in_ranges: s.results_in_ranges,
            })
            .collect();
        let sources = self
            .sets
            .iter()
            .flat_map(|set| std::iter::once(&set.raw).chain(&set.details))
            .map(|p| p.display().to_string())
            .collect();
        let mut reading = ncu_reading(
            &self.context,
            &counts,
            summaries.iter().any(|s| s.has_nvtx),
            sources,
            &self.nvtx_include,
            advice,
        );
        // The raw page names each device's model; it holds no driver version.
        for (id, model) in summaries.iter().flat_map(|s| &s.devices) {
            reading.platform.add_device(id.clone(), model.clone());
        }
        Ok((state, reading))
    }
}

/// What one input held, for the notes and settings both ncu sources word the same way.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct ResultCounts {
    pub results: u64,
    /// Range results (range / app-range replay).
    pub range_results: u64,
    /// Results that ran inside at least one range or mark.
    pub results_in_ranges: u64,
}

/// The [`Reading`] of ncu inputs (one [`ResultCounts`] per input), whichever form they came in.
pub(super) fn ncu_reading(
    context: &RunContext,
    counts: &[ResultCounts],
    has_ranges: bool,
    sources: Vec<String>,
    nvtx_include: &[String],
    advice: AdviceIndex,
) -> Reading {
    Reading {
        results: counts.iter().map(|c| c.results).sum(),
        results_in_ranges: counts.iter().map(|c| c.results_in_ranges).sum(),
        has_ranges,
        profiler: profiler_info(context, counts),
        platform: Platform::default(),
        sources,
        notes: ncu_notes(counts, nvtx_include),
        no_results_hint: "Check that the NVTX include patterns match ranges the program pushes \
            (push/pop ranges need a trailing `/`), and that the workload launches kernels."
            .into(),
        no_ranges_hint: "ncu ran without `--nvtx`: set pipeline.ncu.ncu_cli.nvtx.enabled=true \
            and mark regions with NVTX ranges."
            .into(),
        no_call_stacks_hint: "the regions need a report file captured with \
            pipeline.ncu.ncu_cli.call_stack=true and call_stack_type=[python] (CSV exports never hold one)"
            .into(),
        missing_metrics_hint: "Collect them with the profiler (sections, metrics), or drop them \
            from report.sections / report.metrics."
            .into(),
        time_only: false,
        time_measured: None,
        insights: Box::new(move |scope, path| advice.for_region(scope, path)),
        origin: "nvtx".into(),
        sampling: None,
        key_samples: None,
        partial: None,
        ranks: Vec::new(),
    }
}

/// ncu, its version, and the settings that decide what a result is: the replay mode as recorded in
/// the command, or inferred from the results when the inputs come alone.
fn profiler_info(context: &RunContext, counts: &[ResultCounts]) -> ProfilerInfo {
    let mut settings = std::collections::BTreeMap::new();
    for flag in [
        "replay-mode",
        "clock-control",
        "cache-control",
        "nvtx-push-pop-scope",
    ] {
        let value = context
            .profiler_command
            .iter()
            .skip_while(|arg| **arg != format!("--{flag}"))
            .nth(1);
        if let Some(value) = value {
            settings.insert(flag.replace('-', "_"), value.clone());
        }
    }
    let results: u64 = counts.iter().map(|c| c.results).sum();
    let range_results: u64 = counts.iter().map(|c| c.range_results).sum();
    if !settings.contains_key("replay_mode") && results > 0 {
        let inferred = if range_results == results {
            "range"
        } else {
            "kernel"
        };
        settings.insert("replay_mode".into(), inferred.into());
    }
    ProfilerInfo {
        name: "ncu".into(),
        version: context.profiler_version.clone(),
        settings,
    }
}

/// Notes only ncu's terms can explain.
fn ncu_notes(counts: &[ResultCounts], nvtx_include: &[String]) -> Vec<String> {
    let mut notes = Vec::new();
    let results: u64 = counts.iter().map(|c| c.results).sum();
    let in_ranges: u64 = counts.iter().map(|c| c.results_in_ranges).sum();
    if results > 0 && in_ranges == 0 {
        for expr in nvtx_include
            .iter()
            .filter(|e| !e.contains('/') && !e.contains(','))
        {
            notes.push(format!(
                "The NVTX include `{expr}` has no trailing `/`, so ncu read it as a start/end range and it matches no push/pop range; write `{expr}/` or use regions.include."
            ));
        }
    }
    if counts
        .iter()
        .any(|c| c.range_results > 0 && c.range_results == c.results)
    {
        notes.push(
            "Range replay: each result is one instance of a whole range (`Kernel Name` = `range`), so kernel counts count range instances and metrics cover the whole range. \
             When a parent and its child range both match, ncu reports only the outermost one."
                .to_string(),
        );
    }
    notes
}

fn read_details_file(
    path: &std::path::Path,
    set: &ExportSet,
    plan: &AnalysisPlan,
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
        set.rank,
        &plan.renames,
        &mut |kernel| filter.selects(kernel),
        index,
    )?;
    Ok(())
}

/// The report of one or more captures' CSV exports, under a checked plan.
pub fn analyze_exports(
    plan: &ReadPlan<'_>,
    sets: &[ExportSet],
    context: &RunContext,
) -> Result<Report> {
    let source = CsvSource::open(plan.analysis, sets, context, plan.nvtx_include)?;
    let mut report = analyze(plan.analysis, source, context)?;
    super::hints::add_hints(&mut report);
    Ok(report)
}
