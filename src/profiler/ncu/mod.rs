//! Nsight Compute, in the same rooms as every profiler: `capture/` (the run and its passes: running
//! ncu, sampled runs, the CUPTI trace), `inputs` (captures found again, and the one place that
//! chooses ncu's reader), `readers/` (ncu's CSV pages, its `.ncu-rep` report file and the trace
//! files, units and rollup rules) and `observe/` (what was read → the shared observations, with
//! metric labels); `plan` (what a run is handed, its passes decided once) and `nvtx` (the NVTX
//! expressions built from `regions.include`).
//!
//! [`Ncu`] implements the seam's doors ([`Adapter`]); `crate::profiler::Profiler` calls each
//! through it.
//!
//! Floor: profiler. May import the floors below (run, process, analysis, insights, report, config,
//! region, ground) and `crate::profiler`'s own files; nothing outside `src/profiler/` imports it.

pub mod capture;
pub mod inputs;
pub mod nvtx;
pub mod observe;
pub mod plan;
pub mod readers;

use std::path::{Path, PathBuf};

use crate::analysis::AnalysisPlan;
use crate::config::Config;
use crate::error::Result;
use crate::process::Finished;
use crate::profiler::adapter::Adapter;
use crate::profiler::job::{AfterRun, BeforeRun, Capture, Judgement, RunEnd, Settled};
use crate::region::RegionFilter;
use crate::report::model::{ItemNoun, Report};

pub use inputs::NcuInputs;
pub use plan::NcuPlan;

/// Nsight Compute as the seam drives it.
pub struct Ncu;

impl Adapter for Ncu {
    type Plan = NcuPlan;
    type Inputs = NcuInputs;

    const ITEM_NOUN: ItemNoun = ItemNoun::KERNEL;

    /// ncu reads no capture that opens as a report.json does: its own are run directories, report
    /// files, CSV exports and traces.
    const READS_AS_CAPTURE: Option<fn(&Path) -> bool> = None;

    /// Settles `pipeline.ncu.timing: auto` (the note says why ncu times the kernels when it does);
    /// an ncu run always profiles a workload named after `--`.
    fn settle(config: &mut Config) -> Settled {
        Settled {
            notes: capture::trace::settle_timing(config).into_iter().collect(),
            needs_workload: true,
        }
    }

    fn plan(config: &Config, analysis: AnalysisPlan, regions: RegionFilter) -> Result<NcuPlan> {
        capture::plan(config, analysis, regions)
    }

    fn dry_run(before: BeforeRun<'_, NcuPlan>, dir: &Path, workload: &[String]) -> String {
        capture::dry_run(before.plan, before.config, dir, workload)
    }

    fn check_starts(before: BeforeRun<'_, NcuPlan>) -> Result<String> {
        capture::check_starts(before.plan, before.config)
    }

    fn check_runnable(before: BeforeRun<'_, NcuPlan>) -> Result<()> {
        capture::check_runnable(before.plan, before.config)
    }

    fn capture(job: Capture<'_, NcuPlan>) -> Result<Finished> {
        capture::capture(job)
    }

    fn report(after: &AfterRun<'_, NcuPlan>) -> Result<Option<Report>> {
        inputs::captured::report(after)
    }

    /// From ncu's log, and the processes killed after the grace period.
    fn interrupted_notes(after: &AfterRun<'_, NcuPlan>) -> Vec<String> {
        capture::interrupted_notes(&after.loaded.config, after.run, after.finished)
    }

    /// A failed run's cause from its log; a sampled run whose deep pass failed or profiled nothing
    /// is incomplete.
    fn judge(after: &AfterRun<'_, NcuPlan>, end: RunEnd) -> Judgement {
        match end {
            RunEnd::Failed { report_written } => Judgement::Failed(capture::failure(
                after.plan,
                after.run,
                after.finished,
                report_written,
            )),
            RunEnd::Succeeded => match capture::incomplete(after.run, after.record) {
                Some(missing) => Judgement::Incomplete(missing),
                None => Judgement::Whole,
            },
        }
    }

    /// Whatever no other profiler recognised is ncu's to read or to refuse with why: it is asked
    /// last, and answers for every input.
    fn find_inputs(
        paths: &[PathBuf],
        config: &Config,
        export_dir: &mut dyn FnMut(Option<&Path>) -> Result<PathBuf>,
    ) -> Result<Option<NcuInputs>> {
        inputs::resolve_inputs(paths, config, export_dir).map(Some)
    }
}
