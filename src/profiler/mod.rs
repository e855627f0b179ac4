//! The profilers profile-run drives and reads. Each is a folder that knows its tool (command line,
//! logs, export formats) and hands the neutral spine ([`crate::analysis`]) observations through the
//! [`crate::analysis::Observations`] contract; nothing outside this folder names a profiler's own
//! vocabulary.

pub mod ncu;
pub mod neuron;

use std::path::Path;

use crate::config::{Config, Loaded, ProfilerKind};
use crate::error::Result;
use crate::plan::Plan;
use crate::process::{Finished, ProfilerError};
use crate::report::model::Report;
use crate::run::{RunDir, RunRecord};

/// The profilers a run can drive. Closed on purpose: each arm is a folder here, and the commands
/// stay the same whichever runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Profiler {
    /// Nsight Compute.
    Ncu,
    /// AWS Neuron (`neuron-explorer`).
    Neuron,
}

impl Profiler {
    /// The profiler a configuration drives.
    pub fn of(config: &Config) -> Profiler {
        match config.pipeline.profiler {
            ProfilerKind::Ncu => Profiler::Ncu,
            ProfilerKind::Neuron => Profiler::Neuron,
        }
    }

    /// Whether a run needs a workload after `--` (a Neuron NEFF capture runs the NEFF itself).
    pub fn needs_workload(self, config: &Config) -> bool {
        match self {
            Profiler::Ncu => true,
            Profiler::Neuron => neuron::capture::needs_workload(config),
        }
    }

    /// The command line a run in `dir` would start (`--dry-run`).
    pub fn dry_run(self, config: &Config, plan: &Plan, dir: &Path, workload: &[String]) -> String {
        match self {
            Profiler::Ncu => ncu::capture::dry_run(config, plan, dir, workload),
            Profiler::Neuron => neuron::capture::dry_run(config, dir, workload),
        }
    }

    /// Fails (exit 3, with the fix) when the profiler cannot be started at all.
    pub fn check_runnable(self, config: &Config) -> Result<()> {
        match self {
            Profiler::Ncu => ncu::capture::check_runnable(config),
            Profiler::Neuron => neuron::capture::check_runnable(config),
        }
    }

    /// Runs the workload under the profiler into `run`, keeping `record` up to date.
    pub fn capture(
        self,
        loaded: &Loaded,
        plan: &Plan,
        run: &RunDir,
        record: &mut RunRecord,
        workload: &[String],
        quiet: bool,
    ) -> Result<Finished> {
        match self {
            Profiler::Ncu => ncu::capture::capture(loaded, plan, run, record, workload, quiet),
            Profiler::Neuron => neuron::capture::capture(loaded, run, record, workload, quiet),
        }
    }

    /// The report of what a run captured; `None` when nothing was captured to report on.
    pub fn report(
        self,
        loaded: &Loaded,
        plan: &Plan,
        run: &RunDir,
        record: &RunRecord,
        quiet: bool,
    ) -> Result<Option<Report>> {
        match self {
            Profiler::Ncu => ncu::capture::report(loaded, plan, run, record, quiet),
            Profiler::Neuron => neuron::capture::report(loaded, run, record),
        }
    }

    /// Notes for a run ended by a signal: what the profiler's log says about why.
    pub fn interrupted_notes(
        self,
        config: &Config,
        run: &RunDir,
        finished: &Finished,
    ) -> Vec<String> {
        match self {
            Profiler::Ncu => ncu::capture::interrupted_notes(config, run, finished),
            Profiler::Neuron => neuron::capture::interrupted_notes(config, finished),
        }
    }

    /// A run whose profiler succeeded but captured less than it was asked to (a sampled run's deep
    /// pass failed or profiled nothing): what is missing and the fix. The report of what was
    /// captured is already written.
    pub fn incomplete(self, run: &RunDir, record: &RunRecord) -> Option<ProfilerError> {
        match self {
            Profiler::Ncu => ncu::capture::incomplete(run, record),
            Profiler::Neuron => None,
        }
    }

    /// Why a run that did not succeed failed, with the fix.
    pub fn failure(
        self,
        config: &Config,
        run: &RunDir,
        finished: &Finished,
        partial_report: bool,
    ) -> ProfilerError {
        match self {
            Profiler::Ncu => ncu::capture::failure(config, run, finished, partial_report),
            Profiler::Neuron => neuron::capture::failure(config, run, finished),
        }
    }
}
