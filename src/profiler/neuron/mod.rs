//! AWS Neuron (Trainium/Inferentia) profiles, in the same rooms as every profiler:
//!
//! - `capture/`: the `pipeline.neuron` settings, the command/environment builders for capturing and
//!   viewing, inspect-mode discovery, and `profile-run report`'s Neuron inputs;
//! - `readers/`: every `neuron-explorer view` output (full JSON, summary JSON, summary text, Parquet
//!   directories) read into one [`readers::model::NeuronProfile`] (with its interval arithmetic),
//!   told apart by content;
//! - `observe/`: its timeline fed to the shared region methods, the metrics only Neuron can compute
//!   over those regions, the rules' findings, and the mapping onto the shared report model;
//! - `plan`: what a run is handed.
//!
//! The functions below are Neuron's doors: `crate::profiler::Profiler` calls each in one line, and
//! `ncu/mod.rs` has the same ones with the same parameters (tests/it/architecture_doors.rs).
//! `settings` is the `neuron:` config section; `error` its errors.
//!
//! Floor: profiler. May import the floors below (run, process, analysis, insights, report, config,
//! region, ground) and `crate::profiler`'s own files; nothing outside `src/profiler/` imports it.

pub mod capture;
pub mod error;
pub mod observe;
pub mod plan;
pub mod readers;
/// The `neuron:` section's schema lives with every other section's, in the config layer.
pub use crate::config::neuron_settings as settings;

pub use capture::inputs::NeuronInputs;
pub use error::NeuronError;
pub use plan::NeuronPlan;
pub use readers::model::NeuronProfile;
pub use readers::recognise::{load, recognise, InputKind};

use std::path::{Path, PathBuf};

use crate::analysis::AnalysisPlan;
use crate::config::{Config, Loaded};
use crate::error::{Error, Result};
use crate::process::{Finished, ProfilerError};
use crate::profiler::job::{Analysed, Capture};
use crate::region::RegionFilter;
use crate::report::model::{ItemNoun, Report};
use crate::run::{RunDir, RunRecord};

/// Neuron leaves nothing to settle: every setting means one thing before the run.
pub fn settle(_config: &mut Config) -> Vec<String> {
    Vec::new()
}

/// Neuron's checks of a configuration (exit 2) and its plan; `regions` is refused where it asks
/// what a Neuron profile cannot answer (an NVTX domain).
pub fn plan(config: &Config, analysis: AnalysisPlan, regions: RegionFilter) -> Result<NeuronPlan> {
    capture::check_config(config)?;
    if let Some(why) = observe::regions::filter_refusal(&regions) {
        return Err(Error::Usage(why));
    }
    Ok(NeuronPlan { analysis, regions })
}

/// Whether a run needs a workload after `--` (a NEFF capture runs the NEFF itself).
pub fn needs_workload(config: &Config) -> bool {
    capture::needs_workload(config)
}

/// What Neuron's reports call their results, regions, scopes and hardware.
pub fn item_noun() -> ItemNoun {
    observe::report::ITEM_NOUN
}

/// Whether `path` is a `view` output Neuron reads by itself, with no run directory around it.
pub fn reads_as_capture(path: &Path) -> bool {
    recognise(path).is_ok()
}

/// The environment and commands a run in `dir` would use (`--dry-run`).
pub fn dry_run(_plan: &NeuronPlan, config: &Config, dir: &Path, workload: &[String]) -> String {
    capture::dry_run(config, dir, workload)
}

/// `--dry-run`'s check that the Neuron tools can be found, as a clause for its `checked:` line.
pub fn check_starts(plan: &NeuronPlan, config: &Config) -> Result<String> {
    check_runnable(plan, config)?;
    Ok(format!("{} found", config.pipeline.neuron.executable))
}

/// Fails (exit 3, with the fix) when neither Neuron tool can be found.
pub fn check_runnable(_plan: &NeuronPlan, config: &Config) -> Result<()> {
    capture::check_runnable(config)
}

/// Runs the capture, then `view`s every profile it wrote.
pub fn capture(_plan: &NeuronPlan, job: Capture<'_>) -> Result<Finished> {
    capture::capture(job)
}

/// The report of what a run viewed; `None` when nothing was (or rendering is off).
pub fn report(
    plan: &NeuronPlan,
    loaded: &Loaded,
    run: &RunDir,
    record: &RunRecord,
    _quiet: bool,
) -> Result<Option<Report>> {
    capture::report(loaded, plan, run, record)
}

/// Notes for a run ended by a signal.
pub fn interrupted_notes(config: &Config, _run: &RunDir, finished: &Finished) -> Vec<String> {
    capture::interrupted_notes(config, finished)
}

/// A Neuron run is whole or failed: it never captures less than it was asked to.
pub fn incomplete(_run: &RunDir, _record: &RunRecord) -> Option<ProfilerError> {
    None
}

/// Why a capture that did not succeed failed, with the fix.
pub fn failure(
    _plan: &NeuronPlan,
    config: &Config,
    run: &RunDir,
    finished: &Finished,
    _partial_report: bool,
) -> ProfilerError {
    capture::failure(config, run, finished)
}

/// Neuron's captures among `report`/`merge`/`diff` arguments, told apart by content; `None` when
/// they are not Neuron's. An inspect output directory is viewed into `export_dir(None)`.
pub fn find_inputs(
    paths: &[PathBuf],
    config: &Config,
    export_dir: &mut dyn FnMut(Option<&Path>) -> Result<PathBuf>,
) -> Result<Option<NeuronInputs>> {
    capture::inputs::resolve_inputs(paths, config, &mut || export_dir(None))
}

/// The run directory of the first input, when it is one.
pub fn inputs_run_dir(found: &NeuronInputs) -> Option<&Path> {
    found.run_dir.as_deref()
}

/// Several Neuron profiles are each a scope of their own, never merged into one.
pub fn merges_captures(_found: &NeuronInputs) -> bool {
    false
}

/// The report of profiles found again, recorded with the configuration's `fingerprint`, and the
/// top-level keys each left unused (for `-v`).
pub fn analyze(
    found: &NeuronInputs,
    plan: &NeuronPlan,
    config: &Config,
    fingerprint: String,
) -> Result<Analysed> {
    let mut context = found.context.clone();
    context.config_fingerprint = fingerprint;
    if found.system.is_empty() {
        let (report, details) =
            observe::report::report_with_details(config, &plan.regions, &found.viewed, &context)?;
        return Ok(Analysed { report, details });
    }
    // A system profile: every instance's and process's directory read as one run, each once.
    let profile = readers::parquet::system::read_all(&found.system)?;
    let sources: Vec<String> = profile
        .sources
        .iter()
        .map(|d| d.display().to_string())
        .collect();
    Ok(Analysed {
        report: observe::workers::system::report(
            config,
            &plan.regions,
            &profile,
            &sources,
            &context,
        )?,
        details: Vec::new(),
    })
}
