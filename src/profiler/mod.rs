//! The profilers profile-run drives and reads. Each is a folder that knows its tool (command line,
//! logs, export formats) and hands the neutral spine ([`crate::analysis`]) observations through the
//! [`crate::analysis::Observations`] contract; nothing outside this folder names a profiler's own
//! vocabulary. The rest of the crate goes through this seam only: [`Profiler`] (plan, capture,
//! find inputs, failure), [`Inputs`] (captures found again, analysed), [`ProfilerPlan`] and
//! [`ReadError`]. Each profiler has the same rooms: `capture/`, `readers/`, `observe/`, and the
//! same doors: the functions of its `mod.rs`, with the same names and parameters, each called by
//! one arm here (docs/architecture.md, "Adding a profiler").
//!
//! Floor: profiler. May import run, process, analysis, insights, report, config, region and the
//! ground floor; only `src/profiler/` names `ncu` or `neuron`. (docs/architecture.md, checked by
//! tests/it/architecture.rs)

mod error;
mod job;
pub mod ncu;
pub mod neuron;
mod plan;

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use crate::analysis::AnalysisPlan;
use crate::config::{Config, Loaded, ProfilerKind};
use crate::error::{Error, Result};
use crate::process::{Finished, ProfilerError};
use crate::region::RegionFilter;
use crate::report::model::{ItemNoun, Report};
use crate::run::{RunDir, RunRecord};

use self::ncu::readers::export::ExportError;
use self::ncu::readers::report_file::ReportFileError;
use self::ncu::readers::trace::TraceError;
use self::ncu::{NcuInputs, NcuPlan};
use self::neuron::{NeuronError, NeuronInputs, NeuronPlan};

pub use error::ReadError;
pub use job::{Analysed, Capture};
pub use plan::ProfilerPlan;

/// The profilers a run can drive. Closed on purpose: each arm is a folder here, and the commands
/// stay the same whichever runs. Steps that take a plan follow it to its adapter: it was made for
/// this profiler by [`Profiler::plan`].
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

    /// Settles what the configuration leaves to the machine (`pipeline.ncu.timing: auto`), before
    /// the plan and before the configuration is recorded; the notes say what was chosen and why.
    pub fn settle(self, config: &mut Config) -> Vec<String> {
        match self {
            Profiler::Ncu => ncu::settle(config),
            Profiler::Neuron => neuron::settle(config),
        }
    }

    /// The profiler's own checks of a configuration (a mistake exits 2 before anything runs) and
    /// the plan it is handed, holding the region filter `crate::plan` read once: ncu's NVTX
    /// expressions (built from that filter) and passes, Neuron's settings, rules file and its
    /// refusal of what the filter asks that a Neuron profile cannot answer.
    pub fn plan(
        self,
        config: &Config,
        analysis: AnalysisPlan,
        regions: RegionFilter,
    ) -> Result<ProfilerPlan> {
        match self {
            Profiler::Ncu => ncu::plan(config, analysis, regions).map(ProfilerPlan::Ncu),
            Profiler::Neuron => neuron::plan(config, analysis, regions).map(ProfilerPlan::Neuron),
        }
    }

    /// Captures on disk named by `report`, `merge` or `diff` arguments, found again by the profiler
    /// that made them (told apart by content): Neuron's profiles and run directories, else ncu's
    /// run directories, report files and CSV exports. What a reader must write first (CSV pages of a
    /// report file, a decompressed export) goes into `export_dir(the input's run directory, if
    /// any)`, which says where the report's own files go.
    pub fn find_inputs(
        paths: &[PathBuf],
        config: &Config,
        export_dir: &mut dyn FnMut(Option<&Path>) -> Result<PathBuf>,
    ) -> Result<Inputs> {
        if let Some(found) = neuron::find_inputs(paths, config, export_dir)? {
            return Ok(Inputs::Neuron(found));
        }
        ncu::find_inputs(paths, config, export_dir).map(Inputs::Ncu)
    }

    /// Whether `path` is a capture file that a profiler reads by itself, with no run directory around
    /// it (a Neuron `view` output), so `diff` can take it in place of a report.json.
    pub fn reads_as_capture(path: &Path) -> bool {
        ncu::reads_as_capture(path) || neuron::reads_as_capture(path)
    }

    /// The profiler a report.json names in `run.profiler.name`: Neuron for its own name, a GPU
    /// profiler (ncu, or the CUPTI trace that times for it) for any other.
    pub fn recorded(name: &str) -> Profiler {
        if name == neuron::observe::PROFILER_NAME {
            Profiler::Neuron
        } else {
            Profiler::Ncu
        }
    }

    /// What this profiler's reports call their results, regions, scopes and hardware (report prose,
    /// `diff`'s wording and how it pairs scopes).
    pub fn item_noun(self) -> ItemNoun {
        match self {
            Profiler::Ncu => ncu::item_noun(),
            Profiler::Neuron => neuron::item_noun(),
        }
    }

    /// Whether a run needs a workload after `--` (a Neuron NEFF capture runs the NEFF itself).
    pub fn needs_workload(self, config: &Config) -> bool {
        match self {
            Profiler::Ncu => ncu::needs_workload(config),
            Profiler::Neuron => neuron::needs_workload(config),
        }
    }

    /// The command line a run in `dir` would start (`--dry-run`).
    pub fn dry_run(
        self,
        config: &Config,
        plan: &ProfilerPlan,
        dir: &Path,
        workload: &[String],
    ) -> String {
        match plan {
            ProfilerPlan::Ncu(plan) => ncu::dry_run(plan, config, dir, workload),
            ProfilerPlan::Neuron(plan) => neuron::dry_run(plan, config, dir, workload),
        }
    }

    /// What `--dry-run` checks of the profiler: it can be started (exit 3 otherwise) and, for ncu,
    /// answers `--version`; returns what was checked as a clause (`ncu 2025.3.1.0 (ncu) runs`), for
    /// the dry run's `checked:` line.
    pub fn check_starts(self, plan: &ProfilerPlan, config: &Config) -> Result<String> {
        match plan {
            ProfilerPlan::Ncu(plan) => ncu::check_starts(plan, config),
            ProfilerPlan::Neuron(plan) => neuron::check_starts(plan, config),
        }
    }

    /// Fails (exit 3, with the fix) when the profiler cannot be started at all.
    pub fn check_runnable(self, plan: &ProfilerPlan, config: &Config) -> Result<()> {
        match plan {
            ProfilerPlan::Ncu(plan) => ncu::check_runnable(plan, config),
            ProfilerPlan::Neuron(plan) => neuron::check_runnable(plan, config),
        }
    }

    /// Runs the workload under the profiler into the capture's run directory, keeping its record up
    /// to date.
    pub fn capture(self, plan: &ProfilerPlan, job: Capture<'_>) -> Result<Finished> {
        match plan {
            ProfilerPlan::Ncu(plan) => ncu::capture(plan, job),
            ProfilerPlan::Neuron(plan) => neuron::capture(plan, job),
        }
    }

    /// The report of what a run captured; `None` when nothing was captured to report on.
    pub fn report(
        self,
        loaded: &Loaded,
        plan: &ProfilerPlan,
        run: &RunDir,
        record: &RunRecord,
        quiet: bool,
    ) -> Result<Option<Report>> {
        match plan {
            ProfilerPlan::Ncu(plan) => ncu::report(plan, loaded, run, record, quiet),
            ProfilerPlan::Neuron(plan) => neuron::report(plan, loaded, run, record, quiet),
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
            Profiler::Ncu => ncu::interrupted_notes(config, run, finished),
            Profiler::Neuron => neuron::interrupted_notes(config, run, finished),
        }
    }

    /// A run whose profiler succeeded but captured less than it was asked to (a sampled run's deep
    /// pass failed or profiled nothing): what is missing and the fix. The report of what was
    /// captured is already written.
    pub fn incomplete(self, run: &RunDir, record: &RunRecord) -> Option<ProfilerError> {
        match self {
            Profiler::Ncu => ncu::incomplete(run, record),
            Profiler::Neuron => neuron::incomplete(run, record),
        }
    }

    /// Why a run that did not succeed failed, with the fix.
    pub fn failure(
        self,
        plan: &ProfilerPlan,
        config: &Config,
        run: &RunDir,
        finished: &Finished,
        partial_report: bool,
    ) -> ProfilerError {
        match plan {
            ProfilerPlan::Ncu(plan) => ncu::failure(plan, config, run, finished, partial_report),
            ProfilerPlan::Neuron(plan) => {
                neuron::failure(plan, config, run, finished, partial_report)
            }
        }
    }
}

/// Captures found again for `report`, `merge` and `diff` ([`Profiler::find_inputs`]).
#[derive(Debug, Clone)]
pub enum Inputs {
    Ncu(NcuInputs),
    Neuron(NeuronInputs),
}

impl Inputs {
    /// The run directory the first input belongs to; `None` for a bare export or profile.
    pub fn run_dir(&self) -> Option<&Path> {
        match self {
            Inputs::Ncu(found) => ncu::inputs_run_dir(found),
            Inputs::Neuron(found) => neuron::inputs_run_dir(found),
        }
    }

    /// Whether several captures are merged into one report (the ranks of one job), so they must be
    /// of one workload; several Neuron profiles are each a scope of their own, never merged.
    pub fn merges_captures(&self) -> bool {
        match self {
            Inputs::Ncu(found) => ncu::merges_captures(found),
            Inputs::Neuron(found) => neuron::merges_captures(found),
        }
    }

    /// The report of these captures under `plan`, recorded with the configuration's `fingerprint`.
    pub fn analyze(
        &self,
        config: &Config,
        plan: &ProfilerPlan,
        fingerprint: String,
    ) -> Result<Analysed> {
        match self {
            Inputs::Ncu(found) => {
                ncu::analyze(found, ncu_plan(plan, config)?.as_ref(), config, fingerprint)
            }
            Inputs::Neuron(found) => neuron::analyze(
                found,
                neuron_plan(plan, config)?.as_ref(),
                config,
                fingerprint,
            ),
        }
    }
}

/// ncu's plan for reading ncu captures: the plan itself, or, where the configuration named another
/// profiler (`report` of ncu captures under a Neuron preset), one made from the configuration.
fn ncu_plan<'p>(plan: &'p ProfilerPlan, config: &Config) -> Result<Cow<'p, NcuPlan>> {
    match plan {
        ProfilerPlan::Ncu(own) => Ok(Cow::Borrowed(own)),
        ProfilerPlan::Neuron(_) => {
            ncu::plan(config, plan.analysis().clone(), plan.regions().clone()).map(Cow::Owned)
        }
    }
}

/// Neuron's plan for reading Neuron profiles, as [`ncu_plan`] is ncu's.
fn neuron_plan<'p>(plan: &'p ProfilerPlan, config: &Config) -> Result<Cow<'p, NeuronPlan>> {
    match plan {
        ProfilerPlan::Neuron(own) => Ok(Cow::Borrowed(own)),
        ProfilerPlan::Ncu(_) => {
            neuron::plan(config, plan.analysis().clone(), plan.regions().clone()).map(Cow::Owned)
        }
    }
}

// Each profiler's own errors join the crate's error through [`ReadError`], so that `?` works in the
// adapters and nothing outside `src/profiler/` names them.
impl From<ExportError> for Error {
    fn from(e: ExportError) -> Self {
        ReadError::from(e).into()
    }
}

impl From<ReportFileError> for Error {
    fn from(e: ReportFileError) -> Self {
        ReadError::from(e).into()
    }
}

impl From<TraceError> for Error {
    fn from(e: TraceError) -> Self {
        ReadError::from(e).into()
    }
}

impl From<NeuronError> for Error {
    fn from(e: NeuronError) -> Self {
        ReadError::from(e).into()
    }
}
