//! AWS Neuron (Trainium/Inferentia) profiles, in the same rooms as every profiler:
//!
//! - `capture/`: the `pipeline.neuron` settings, the command/environment builders for capturing and
//!   viewing, inspect-mode discovery;
//! - `inputs`: `profile-run report`'s Neuron inputs, found again and analysed;
//! - `readers/`: every `neuron-explorer view` output (full JSON, summary JSON, summary text, Parquet
//!   directories) read into one [`readers::model::NeuronProfile`] (with its interval arithmetic),
//!   told apart by content;
//! - `observe/`: its timeline fed to the shared region methods, the metrics only Neuron can compute
//!   over those regions, the rules' findings, and the mapping onto the shared report model;
//! - `plan`: what a run is handed.
//!
//! [`Neuron`] implements the seam's doors ([`Adapter`]); `crate::profiler::Profiler` calls each
//! through it. `settings` is the `neuron:` config section; `error` its errors.
//!
//! Floor: profiler. May import the floors below (run, process, analysis, insights, report, config,
//! region, ground) and `crate::profiler`'s own files; nothing outside `src/profiler/` imports it.

pub mod capture;
pub mod error;
pub mod inputs;
pub mod observe;
pub mod plan;
pub mod readers;
/// The `neuron:` section's schema lives with every other section's, in the config layer.
pub use crate::config::neuron_settings as settings;

pub use error::NeuronError;
pub use inputs::NeuronInputs;
pub use plan::NeuronPlan;
pub use readers::model::NeuronProfile;
pub use readers::recognise::{load, recognise, InputKind};

use std::path::{Path, PathBuf};

use crate::analysis::AnalysisPlan;
use crate::config::Config;
use crate::error::{Error, Result};
use crate::process::Finished;
use crate::profiler::adapter::Adapter;
use crate::profiler::job::{AfterRun, BeforeRun, Capture, Judgement, RunEnd, Settled};
use crate::region::RegionFilter;
use crate::report::model::{ItemNoun, Report};

/// AWS Neuron as the seam drives it.
pub struct Neuron;

impl Adapter for Neuron {
    type Plan = NeuronPlan;
    type Inputs = NeuronInputs;

    const ITEM_NOUN: ItemNoun = observe::report::ITEM_NOUN;

    /// A `view` output (full or summary JSON) Neuron reads by itself, with no run directory around it.
    const READS_AS_CAPTURE: Option<fn(&Path) -> bool> = Some(reads_as_capture);

    /// Neuron leaves nothing to settle (every setting means one thing before the run); a NEFF
    /// capture runs the NEFF itself, with no workload after `--`.
    fn settle(config: &mut Config) -> Settled {
        Settled {
            notes: Vec::new(),
            needs_workload: capture::needs_workload(config),
        }
    }

    /// Its checks and plan; `regions` is refused where it asks what a Neuron profile cannot answer
    /// (an NVTX domain).
    fn plan(config: &Config, analysis: AnalysisPlan, regions: RegionFilter) -> Result<NeuronPlan> {
        capture::check_config(config)?;
        if let Some(why) = observe::regions::filter_refusal(&regions) {
            return Err(Error::Usage(why));
        }
        Ok(NeuronPlan { analysis, regions })
    }

    /// The environment and commands a run in `dir` would use.
    fn dry_run(before: BeforeRun<'_, NeuronPlan>, dir: &Path, workload: &[String]) -> String {
        capture::dry_run(before.config, dir, workload)
    }

    /// The Neuron tools can be found.
    fn check_starts(before: BeforeRun<'_, NeuronPlan>) -> Result<String> {
        capture::check_runnable(before.config)?;
        Ok(format!(
            "{} found",
            before.config.pipeline.neuron.executable
        ))
    }

    /// Neither Neuron tool can be found.
    fn check_runnable(before: BeforeRun<'_, NeuronPlan>) -> Result<()> {
        capture::check_runnable(before.config)
    }

    /// Runs the capture, then `view`s every profile it wrote.
    fn capture(job: Capture<'_, NeuronPlan>) -> Result<Finished> {
        capture::capture(job)
    }

    /// The report of what the run viewed.
    fn report(after: &AfterRun<'_, NeuronPlan>) -> Result<Option<Report>> {
        capture::report(after.loaded, after.plan, after.run, after.record)
    }

    fn interrupted_notes(after: &AfterRun<'_, NeuronPlan>) -> Vec<String> {
        capture::interrupted_notes(&after.loaded.config, after.finished)
    }

    /// A Neuron run is whole or failed: it never captures less than it was asked to.
    fn judge(after: &AfterRun<'_, NeuronPlan>, end: RunEnd) -> Judgement {
        match end {
            RunEnd::Failed { .. } => Judgement::Failed(capture::failure(
                &after.loaded.config,
                after.run,
                after.finished,
            )),
            RunEnd::Succeeded => Judgement::Whole,
        }
    }

    /// An inspect output directory is viewed into `export_dir(None)` (the report's directory).
    fn find_inputs(
        paths: &[PathBuf],
        config: &Config,
        export_dir: &mut dyn FnMut(Option<&Path>) -> Result<PathBuf>,
    ) -> Result<Option<NeuronInputs>> {
        inputs::resolve_inputs(paths, config, &mut || export_dir(None))
    }
}

/// Whether `path` is a `view` output Neuron reads by itself, with no run directory around it.
fn reads_as_capture(path: &Path) -> bool {
    recognise(path).is_ok()
}
