//! The profilers profile-run drives and reads. Each is a folder that knows its tool (command line,
//! logs, export formats) and hands the neutral spine ([`crate::analysis`]) observations through the
//! [`crate::analysis::Observations`] contract; nothing outside this folder names a profiler's own
//! vocabulary. The rest of the crate goes through this seam only: [`Profiler`] (plan, capture,
//! find inputs, judgement), [`Inputs`] (captures found again, analysed), [`ProfilerPlan`] and
//! [`ReadError`]. Each profiler has the same rooms (`capture/`, `inputs`, `readers/`, `observe/`)
//! and implements the same doors, the trait [`Adapter`] (`adapter.rs`), with the contexts each
//! door is handed (`job.rs`). Every door is called through one match per seam enum, written once
//! in the macros below (docs/architecture.md, "Adding a profiler").
//!
//! Floor: profiler. May import run, process, analysis, insights, report, config, region and the
//! ground floor; only `src/profiler/` names `ncu` or `neuron`. (docs/architecture.md, checked by
//! tests/it/architecture.rs)

mod adapter;
mod error;
mod job;
pub mod ncu;
pub mod neuron;
mod plan;

use std::path::{Path, PathBuf};

use crate::analysis::AnalysisPlan;
use crate::config::{Config, ProfilerKind};
use crate::error::{Error, Result};
use crate::process::Finished;
use crate::region::RegionFilter;
use crate::report::model::{ItemNoun, Report};

use self::ncu::readers::export::ExportError;
use self::ncu::readers::report_file::ReportFileError;
use self::ncu::readers::trace::TraceError;
use self::ncu::{Ncu, NcuInputs};
use self::neuron::{Neuron, NeuronError, NeuronInputs};

pub use adapter::{Adapter, FoundCaptures};
pub use error::ReadError;
pub use job::{AfterRun, Analysed, BeforeRun, Capture, Judgement, RunEnd, Settled};
pub use plan::ProfilerPlan;

use plan::OtherProfiler;

/// Runs `$door` with `$adapter` standing for the [`Adapter`] of a [`Profiler`]: the one match of
/// `enum Profiler`. A new profiler is one arm here, and the compiler then asks for each door.
macro_rules! by_profiler {
    ($profiler:expr, $adapter:ident => $door:expr) => {
        match $profiler {
            Profiler::Ncu => {
                type $adapter = Ncu;
                $door
            }
            Profiler::Neuron => {
                type $adapter = Neuron;
                $door
            }
        }
    };
}

/// Runs `$door` with `$adapter` standing for the adapter whose plan `$plan` holds, and `$own` for
/// that plan: the one match of [`ProfilerPlan`].
macro_rules! by_plan {
    ($plan:expr, $adapter:ident($own:ident) => $door:expr) => {
        match $plan {
            ProfilerPlan::Ncu($own) => {
                type $adapter = Ncu;
                $door
            }
            ProfilerPlan::Neuron($own) => {
                type $adapter = Neuron;
                $door
            }
        }
    };
}

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
    /// The order in which profilers are asked whether captures are theirs: those that tell theirs
    /// apart by content first, ncu (which reads whatever is left, or refuses it) last.
    const BY_CONTENT_FIRST: [Profiler; 2] = [Profiler::Neuron, Profiler::Ncu];

    /// The profiler a configuration drives.
    pub fn of(config: &Config) -> Profiler {
        match config.pipeline.profiler {
            ProfilerKind::Ncu => Profiler::Ncu,
            ProfilerKind::Neuron => Profiler::Neuron,
        }
    }

    /// Settles what the configuration leaves to the machine (`pipeline.ncu.timing: auto`), before
    /// the plan and before the configuration is recorded: the notes say what was chosen and why,
    /// and whether the run needs a workload after `--`.
    pub fn settle(self, config: &mut Config) -> Settled {
        by_profiler!(self, A => A::settle(config))
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
        by_profiler!(self, A => A::plan(config, analysis, regions).map(ProfilerPlan::from))
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
        for profiler in Profiler::BY_CONTENT_FIRST {
            let found = by_profiler!(profiler, A => {
                A::find_inputs(paths, config, export_dir)?.map(Inputs::from)
            });
            if let Some(found) = found {
                return Ok(found);
            }
        }
        Err(Error::Usage(format!(
            "no profiler reads {}; give a run directory, a `--page raw` CSV export, an .ncu-rep or a Neuron profile",
            paths.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
        )))
    }

    /// Whether `path` is a capture file that a profiler reads by itself, with no run directory around
    /// it (a Neuron `view` output), so `diff` can take it in place of a report.json.
    pub fn reads_as_capture(path: &Path) -> bool {
        Profiler::BY_CONTENT_FIRST.into_iter().any(|profiler| {
            by_profiler!(profiler, A => A::READS_AS_CAPTURE.is_some_and(|reads| reads(path)))
        })
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
        by_profiler!(self, A => A::ITEM_NOUN)
    }
}

// The steps that take a plan, whichever profiler's: each hands the same context, holding the
// adapter's own plan, to the adapter of the plan.

impl BeforeRun<'_, ProfilerPlan> {
    /// The command line a run in `dir` would start (`--dry-run`).
    pub fn dry_run(&self, dir: &Path, workload: &[String]) -> String {
        by_plan!(self.plan, A(own) => A::dry_run(self.with_plan(own), dir, workload))
    }

    /// What `--dry-run` checks of the profiler: it can be started (exit 3 otherwise) and, for ncu,
    /// answers `--version`; returns what was checked as a clause (`ncu 2025.3.1.0 (ncu) runs`), for
    /// the dry run's `checked:` line.
    pub fn check_starts(&self) -> Result<String> {
        by_plan!(self.plan, A(own) => A::check_starts(self.with_plan(own)))
    }

    /// Fails (exit 3, with the fix) when the profiler cannot be started at all.
    pub fn check_runnable(&self) -> Result<()> {
        by_plan!(self.plan, A(own) => A::check_runnable(self.with_plan(own)))
    }
}

impl Capture<'_, ProfilerPlan> {
    /// Runs the workload under the profiler into the journal's run directory, keeping its record up
    /// to date.
    pub fn run(&self) -> Result<Finished> {
        by_plan!(self.plan, A(own) => A::capture(self.with_plan(own)))
    }
}

impl AfterRun<'_, ProfilerPlan> {
    /// The report of what the run captured; `None` when nothing was captured to report on.
    pub fn report(&self) -> Result<Option<Report>> {
        by_plan!(self.plan, A(own) => A::report(&self.with_plan(own)))
    }

    /// Notes for a run ended by a signal: what the profiler's log says about why.
    pub fn interrupted_notes(&self) -> Vec<String> {
        by_plan!(self.plan, A(own) => A::interrupted_notes(&self.with_plan(own)))
    }

    /// What the run's end means, once its report is written (or not): a failure with the fix, a
    /// run short of what it was asked to capture (its report already written), or a whole one.
    pub fn judge(&self, report_written: bool) -> Judgement {
        let end = RunEnd::of(self.finished, report_written, &self.loaded.config);
        by_plan!(self.plan, A(own) => A::judge(&self.with_plan(own), end))
    }
}

/// Captures found again for `report`, `merge` and `diff` ([`Profiler::find_inputs`]).
#[derive(Debug, Clone)]
pub enum Inputs {
    Ncu(NcuInputs),
    Neuron(NeuronInputs),
}

/// Runs `$door` with `$adapter` standing for the adapter whose captures `$inputs` holds, and
/// `$found` for those captures: the one match of [`Inputs`].
macro_rules! by_inputs {
    ($inputs:expr, $adapter:ident($found:ident) => $door:expr) => {
        match $inputs {
            Inputs::Ncu($found) => {
                type $adapter = Ncu;
                $door
            }
            Inputs::Neuron($found) => {
                type $adapter = Neuron;
                $door
            }
        }
    };
}

impl Inputs {
    /// The run directory the first input belongs to; `None` for a bare export or profile.
    pub fn run_dir(&self) -> Option<&Path> {
        by_inputs!(self, A(found) => <A as Adapter>::Inputs::run_dir(found))
    }

    /// Whether several captures are merged into one report (the ranks of one job), so they must be
    /// of one workload; several Neuron profiles are each a scope of their own, never merged.
    pub fn merges_captures(&self) -> bool {
        by_inputs!(self, A(found) => <A as Adapter>::Inputs::merges_captures(found))
    }

    /// The report of these captures under `plan`, recorded with the configuration's `fingerprint`.
    /// Captures of another profiler than the plan's (`report` of ncu captures under a Neuron
    /// preset) are read under their own profiler's plan, made from the configuration.
    pub fn analyze(
        &self,
        config: &Config,
        plan: &ProfilerPlan,
        fingerprint: String,
    ) -> Result<Analysed> {
        by_inputs!(self, A(found) => {
            let made;
            let own = match <&<A as Adapter>::Plan>::try_from(plan) {
                Ok(own) => own,
                Err(OtherProfiler) => {
                    made = A::plan(config, plan.analysis().clone(), plan.regions().clone())?;
                    &made
                }
            };
            found.analyze(own, config, fingerprint)
        })
    }
}

impl From<NcuInputs> for Inputs {
    fn from(found: NcuInputs) -> Self {
        Inputs::Ncu(found)
    }
}

impl From<NeuronInputs> for Inputs {
    fn from(found: NeuronInputs) -> Self {
        Inputs::Neuron(found)
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
