//! Nsight Compute, in the same rooms as every profiler: `capture/` (the run and its passes: running
//! ncu, sampled runs, the CUPTI trace; finding captures again), `readers/` (ncu's CSV pages, its
//! `.ncu-rep` report file and the trace files, units and rollup rules) and `observe/` (what was read
//! → the shared observations, with metric labels); `plan` (what a run is handed, its passes decided
//! once) and `nvtx` (the NVTX expressions built from `regions.include`).
//!
//! The functions below are ncu's doors: `crate::profiler::Profiler` calls each in one line, and
//! `neuron/mod.rs` has the same ones with the same parameters (tests/it/architecture_doors.rs).
//!
//! Floor: profiler. May import the floors below (run, process, analysis, insights, report, config,
//! region, ground) and `crate::profiler`'s own files; nothing outside `src/profiler/` imports it.

pub mod capture;
pub mod nvtx;
pub mod observe;
pub mod plan;
pub mod readers;

use std::path::{Path, PathBuf};

use crate::analysis::AnalysisPlan;
use crate::config::{Config, Loaded};
use crate::error::Result;
use crate::process::{Finished, ProfilerError};
use crate::profiler::job::{Analysed, Capture};
use crate::region::RegionFilter;
use crate::report::model::{ItemNoun, Report};
use crate::run::{RunDir, RunRecord};

pub use capture::inputs::NcuInputs;
pub use plan::NcuPlan;

/// Settles `pipeline.ncu.timing: auto` before the plan and before the configuration is recorded;
/// the note says why ncu times the kernels when it does.
pub fn settle(config: &mut Config) -> Vec<String> {
    capture::trace::settle_timing(config).into_iter().collect()
}

/// ncu's checks of a configuration (exit 2) and its plan, its NVTX expressions built from `regions`.
pub fn plan(config: &Config, analysis: AnalysisPlan, regions: RegionFilter) -> Result<NcuPlan> {
    capture::plan(config, analysis, regions)
}

/// An ncu run always profiles a workload named after `--`.
pub fn needs_workload(_config: &Config) -> bool {
    true
}

/// What ncu's reports call their results: kernels.
pub fn item_noun() -> ItemNoun {
    ItemNoun::KERNEL
}

/// ncu reads no capture without a run directory or an export around it in place of a report.json.
pub fn reads_as_capture(_path: &Path) -> bool {
    false
}

/// The command lines a run in `dir` would start (`--dry-run`).
pub fn dry_run(plan: &NcuPlan, config: &Config, dir: &Path, workload: &[String]) -> String {
    capture::dry_run(plan, config, dir, workload)
}

/// `--dry-run`'s check that the passes can start, as a clause for its `checked:` line.
pub fn check_starts(plan: &NcuPlan, config: &Config) -> Result<String> {
    capture::check_starts(plan, config)
}

/// Fails (exit 3, with the fix) when a pass cannot be started at all.
pub fn check_runnable(plan: &NcuPlan, config: &Config) -> Result<()> {
    capture::check_runnable(plan, config)
}

/// Runs the workload under ncu (or the trace) into the run directory.
pub fn capture(plan: &NcuPlan, job: Capture<'_>) -> Result<Finished> {
    capture::capture(plan, job)
}

/// The report of what a run captured; `None` when nothing was captured to report on.
pub fn report(
    plan: &NcuPlan,
    loaded: &Loaded,
    run: &RunDir,
    record: &RunRecord,
    quiet: bool,
) -> Result<Option<Report>> {
    capture::report(plan, loaded, run, record, quiet)
}

/// Notes for a run ended by a signal, from ncu's log.
pub fn interrupted_notes(config: &Config, run: &RunDir, finished: &Finished) -> Vec<String> {
    capture::interrupted_notes(config, run, finished)
}

/// A sampled run whose deep pass failed or profiled nothing: what is missing and the fix.
pub fn incomplete(run: &RunDir, record: &RunRecord) -> Option<ProfilerError> {
    capture::incomplete(run, record)
}

/// Why a run that did not succeed failed, with the fix.
pub fn failure(
    plan: &NcuPlan,
    _config: &Config,
    run: &RunDir,
    finished: &Finished,
    partial_report: bool,
) -> ProfilerError {
    capture::failure(plan, run, finished, partial_report)
}

/// ncu's captures among `report`/`merge`/`diff` arguments: whatever no other profiler recognised
/// is ncu's to read or to refuse with why. What must be exported first goes into `export_dir(the
/// input's run directory, if any)`.
pub fn find_inputs(
    paths: &[PathBuf],
    config: &Config,
    export_dir: &mut dyn FnMut(Option<&Path>) -> Result<PathBuf>,
) -> Result<NcuInputs> {
    capture::inputs::resolve_inputs(paths, config, export_dir)
}

/// The run directory the first input belongs to; `None` for a bare export or report file.
pub fn inputs_run_dir(found: &NcuInputs) -> Option<&Path> {
    found.run_dir.as_deref()
}

/// Whether several captures are merged into one report (the ranks of one job).
pub fn merges_captures(found: &NcuInputs) -> bool {
    found.merges_captures()
}

/// The report of captures found again, recorded with the configuration's `fingerprint`.
pub fn analyze(
    found: &NcuInputs,
    plan: &NcuPlan,
    config: &Config,
    fingerprint: String,
) -> Result<Analysed> {
    let mut context = found.context.clone();
    context.config_fingerprint = fingerprint;
    Ok(Analysed {
        report: found.analyze(plan, config, &context)?,
        details: Vec::new(),
    })
}
