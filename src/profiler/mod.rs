//! The profilers profile-run drives and reads. Each is a folder that knows its tool (command line,
//! logs, export formats) and hands the neutral spine ([`crate::analysis`]) observations through the
//! [`crate::analysis::Observations`] contract; nothing outside this folder names a profiler's own
//! vocabulary. The rest of the crate goes through this seam only: [`Profiler`] (plan, capture,
//! find inputs, failure), [`Inputs`] (captures found again, analysed), [`ProfilerPlan`] and
//! [`ReadError`]. Each profiler has the same rooms: `capture/`, `readers/`, `observe/`.
//!
//! Floor: profiler. May import run, process, analysis, insights, report, config, region and the
//! ground floor; only `src/profiler/` names `ncu` or `neuron`. (docs/architecture.md, checked by
//! tests/it/architecture.rs)

mod error;
pub mod ncu;
pub mod neuron;
mod plan;

use std::path::{Path, PathBuf};

use crate::analysis::AnalysisPlan;
use crate::config::{Config, Loaded, ProfilerKind};
use crate::error::{Error, Result};
use crate::process::{Finished, ProfilerError};
use crate::report::model::{ItemNoun, Report};
use crate::run::{RunDir, RunRecord};

pub use error::ReadError;
pub use plan::{Capture, ProfilerPlan};

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

    /// The profiler's own checks of a configuration (a mistake exits 2 before anything runs) and the
    /// plan it is handed: ncu's NVTX expressions, sampling refused where it cannot work, Neuron's
    /// settings and rules file.
    /// Settles what the configuration leaves to the machine (`pipeline.ncu.timing: auto`), before
    /// the plan and before the configuration is recorded; the notes say what was chosen and why.
    pub fn settle(self, config: &mut Config) -> Vec<String> {
        match self {
            Profiler::Ncu => ncu::capture::trace::settle_timing(config)
                .into_iter()
                .collect(),
            Profiler::Neuron => Vec::new(),
        }
    }

    pub fn plan(self, config: &Config, analysis: AnalysisPlan) -> Result<ProfilerPlan> {
        let nvtx = ncu::capture::nvtx::plan(&config.regions, &config.pipeline.ncu.ncu_cli.nvtx)
            .map_err(|e| Error::Usage(e.to_string()))?;
        if let Some(why) = ncu::capture::sampling::refusal(config) {
            return Err(Error::Usage(why));
        }
        if let Some(why) = ncu::capture::trace::refusal(config) {
            return Err(Error::Usage(why));
        }
        if self == Profiler::Neuron {
            neuron::capture::check_config(config)?;
        }
        Ok(ProfilerPlan {
            analysis,
            nvtx,
            max_block_bytes: config.pipeline.ncu.max_block_mib.saturating_mul(1 << 20),
        })
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
        if let Some(found) =
            neuron::capture::inputs::resolve_inputs(paths, config, &mut || export_dir(None))?
        {
            return Ok(Inputs::Neuron(found));
        }
        ncu::capture::inputs::resolve_inputs(paths, config, export_dir).map(Inputs::Ncu)
    }

    /// Whether `path` is a capture file that a profiler reads by itself, with no run directory around
    /// it (a Neuron `view` output), so `diff` can take it in place of a report.json.
    pub fn reads_as_capture(path: &Path) -> bool {
        neuron::recognise(path).is_ok()
    }

    /// The profiler a report.json names in `run.profiler.name`: Neuron for its own name, a GPU
    /// profiler (ncu, or the CUPTI trace that times for it) for any other.
    pub fn recorded(name: &str) -> Profiler {
        if name == neuron::observe::report::PROFILER_NAME {
            Profiler::Neuron
        } else {
            Profiler::Ncu
        }
    }

    /// What this profiler's reports call their results, regions, scopes and hardware (report prose,
    /// `diff`'s wording and how it pairs scopes).
    pub fn item_noun(self) -> ItemNoun {
        match self {
            Profiler::Ncu => ItemNoun::KERNEL,
            Profiler::Neuron => neuron::observe::report::ITEM_NOUN,
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
    pub fn dry_run(
        self,
        config: &Config,
        plan: &ProfilerPlan,
        dir: &Path,
        workload: &[String],
    ) -> String {
        match self {
            Profiler::Ncu => ncu::capture::dry_run(config, plan, dir, workload),
            Profiler::Neuron => neuron::capture::dry_run(config, dir, workload),
        }
    }

    /// What `--dry-run` checks of the profiler: it can be started (exit 3 otherwise) and, for ncu,
    /// answers `--version`; returns what was checked as a clause (`ncu 2025.3.1.0 (ncu) runs`), for
    /// the dry run's `checked:` line.
    pub fn check_starts(self, config: &Config) -> Result<String> {
        match self {
            Profiler::Ncu => ncu::capture::check_starts(config),
            Profiler::Neuron => {
                neuron::capture::check_runnable(config)?;
                Ok(format!("{} found", config.pipeline.neuron.executable))
            }
        }
    }

    /// Fails (exit 3, with the fix) when the profiler cannot be started at all.
    pub fn check_runnable(self, config: &Config) -> Result<()> {
        match self {
            Profiler::Ncu => ncu::capture::check_runnable(config),
            Profiler::Neuron => neuron::capture::check_runnable(config),
        }
    }

    /// Runs the workload under the profiler into the capture's run directory, keeping its record up
    /// to date.
    pub fn capture(self, plan: &ProfilerPlan, capture: Capture<'_>) -> Result<Finished> {
        match self {
            Profiler::Ncu => ncu::capture::capture(plan, capture),
            Profiler::Neuron => neuron::capture::capture(capture),
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

/// A report of captures found again, and what only `-v` shows of how they were read (a Neuron
/// profile's top-level keys that were not used).
pub struct Analysed {
    pub report: Report,
    pub details: Vec<String>,
}

/// Captures found again for `report`, `merge` and `diff` ([`Profiler::find_inputs`]).
#[derive(Debug, Clone)]
pub enum Inputs {
    Ncu(ncu::capture::inputs::Inputs),
    Neuron(neuron::capture::inputs::NeuronInputs),
}

impl Inputs {
    /// The run directory the first input belongs to; `None` for a bare export or profile.
    pub fn run_dir(&self) -> Option<&Path> {
        match self {
            Inputs::Ncu(found) => found.run_dir.as_deref(),
            Inputs::Neuron(found) => found.run_dir.as_deref(),
        }
    }

    /// Whether several captures are merged into one report (the ranks of one job), so they must be
    /// of one workload; several Neuron profiles are each a scope of their own, never merged.
    pub fn merges_captures(&self) -> bool {
        match self {
            Inputs::Ncu(found) => found.reports.len() + found.exports.len() > 1,
            Inputs::Neuron(_) => false,
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
                let mut context = found.context.clone();
                context.config_fingerprint = fingerprint;
                Ok(Analysed {
                    report: found.analyze(plan, config, &context)?,
                    details: Vec::new(),
                })
            }
            Inputs::Neuron(found) => {
                let mut context = found.context.clone();
                context.config_fingerprint = fingerprint;
                let (report, details) =
                    neuron::observe::report::report_with_details(config, &found.viewed, &context)?;
                Ok(Analysed { report, details })
            }
        }
    }
}

// Each profiler's own errors join the crate's error through [`ReadError`], so that `?` works in the
// adapters and nothing outside `src/profiler/` names them.
impl From<ncu::readers::export::ExportError> for Error {
    fn from(e: ncu::readers::export::ExportError) -> Self {
        ReadError::from(e).into()
    }
}

impl From<ncu::readers::report_file::ReportFileError> for Error {
    fn from(e: ncu::readers::report_file::ReportFileError) -> Self {
        ReadError::from(e).into()
    }
}

impl From<ncu::readers::trace::TraceError> for Error {
    fn from(e: ncu::readers::trace::TraceError) -> Self {
        ReadError::from(e).into()
    }
}

impl From<neuron::NeuronError> for Error {
    fn from(e: neuron::NeuronError) -> Self {
        ReadError::from(e).into()
    }
}
