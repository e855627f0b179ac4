//! A profiling run under Neuron: a framework workload run with the runtime's inspect environment (then
//! `view` for each NEFF/NTFF pair it wrote), or `capture` of one NEFF (then `view`); the run's files
//! (config, command, record, log, `views/`, the manifest), `--dry-run`, and the report afterwards.
//!
//! Floor: profiler (see `crate::profiler`): imports run, process, analysis, insights, report,
//! config, region and the ground floor, and its own profiler's rooms.

pub mod cli;
pub mod completion;
pub mod inspect;
/// The `pipeline.neuron:` section's schema lives with every other section's, in the config layer.
pub use crate::config::neuron_pipeline as pipeline;
pub mod views;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::config::{Config, Loaded};
use crate::console::err_line;
use crate::error::{Error, Result};
use crate::process::progress::Display;
use crate::process::{Failure, Finished, ProfilerError};
use crate::profiler::job::Capture;
use crate::profiler::neuron::capture::cli::{
    capture_outputs, resolve_program, NeuronCli, ViewInput, NEURON_BIN,
};
use crate::profiler::neuron::capture::inspect::{discover, inspect_env};
use crate::profiler::neuron::capture::pipeline::{CaptureMode, NeuronPipeline};
use crate::profiler::neuron::observe::report;
use crate::profiler::neuron::plan::NeuronPlan;
use crate::report::model::Report;
use crate::run::{Executor, Finding, PassGroup, PassSpec, RunDir, RunRecord, Slot, Watch};
use views::{pair_stem, pair_viewed, view_one, Viewed};

pub use crate::run::{
    NEURON_INSPECT_DIR as INSPECT_DIR, NEURON_LOG as LOG, NEURON_SESSION as SESSION,
};

/// The checks that need only the configuration (run by [`Plan::new`]): NEFF mode names a NEFF that
/// exists; the outlier factor is a factor.
pub fn check_config(config: &Config) -> Result<()> {
    let pipeline = &config.pipeline.neuron;
    if pipeline.mode == CaptureMode::Neff {
        let Some(neff) = &pipeline.neff else {
            return Err(Error::Usage(
                "pipeline.neuron.mode is `neff` but pipeline.neuron.neff is not set; name the compiled model: pipeline.neuron.neff=model.neff".into(),
            ));
        };
        if !neff.is_file() {
            return Err(Error::Usage(format!(
                "pipeline.neuron.neff: {} is not a file; give the path of the compiled .neff",
                neff.display()
            )));
        }
    }
    // The rules file is loaded (and checked against the metric vocabulary) before anything starts.
    report::rules(config)?;
    let factor = config.neuron.distribution.outlier_factor;
    if !(factor.is_finite() && factor >= 1.0) {
        return Err(Error::Usage(format!(
            "neuron.distribution.outlier_factor is {factor}; it must be a number of at least 1 (1.5: 50 % above or below the median)"
        )));
    }
    Ok(())
}

/// Whether the run needs a workload after `--` (NEFF mode runs the NEFF itself).
pub fn needs_workload(config: &Config) -> bool {
    config.pipeline.neuron.mode == CaptureMode::Inspect
}

/// The program a dry run names: the one found, else the configured name.
fn program_for_display(pipeline: &NeuronPipeline) -> PathBuf {
    resolve_program(pipeline, std::env::var_os("PATH").as_deref())
        .unwrap_or_else(|_| PathBuf::from(&pipeline.executable))
}

/// What `--dry-run` prints: the environment and commands a run in `dir` would use.
pub fn dry_run(config: &Config, dir: &Path, workload: &[String]) -> String {
    let pipeline = &config.pipeline.neuron;
    let program = program_for_display(pipeline);
    let view_line = |input: &ViewInput| {
        let out = dir
            .join(views::VIEWS_DIR)
            .join(pipeline.view.format.file_name("<profile>"));
        let home = std::env::var_os("HOME").unwrap_or_else(|| "$HOME".into());
        NeuronCli::view(
            &program,
            pipeline,
            input,
            pipeline.view.format,
            &out,
            Some(&home),
            None,
        )
        .map(|cli| {
            format!(
                "{} (with HOME set and {} on PATH)",
                cli.shell_line(),
                NEURON_BIN
            )
        })
        .unwrap_or_else(|e| format!("# {e}"))
    };
    match pipeline.mode {
        CaptureMode::Inspect => {
            let inspect = inspect_env(&pipeline.inspect, &dir.join(INSPECT_DIR));
            for warning in &inspect.warnings {
                err_line(&format!("warning: {warning}"));
            }
            let run = env_line(&inspect.env, workload);
            let pair = ViewInput::Pair {
                neff: dir
                    .join(INSPECT_DIR)
                    .join("<instance>_pid_<pid>/neff_<hash>.neff"),
                ntff: dir
                    .join(INSPECT_DIR)
                    .join("<instance>_pid_<pid>/<hash>_instid_<i>_vnc_<N>.ntff"),
            };
            format!(
                "{run}\nthen, for each NEFF/NTFF pair written: {}",
                view_line(&pair)
            )
        }
        CaptureMode::Neff => {
            let neff = pipeline.neff.clone().unwrap_or_default();
            let session = dir.join(SESSION);
            let capture = NeuronCli::capture(&program, pipeline, &neff, &session);
            let ntff = capture_outputs(
                &session,
                pipeline.capture.profile_nth_exec,
                pipeline.capture.workers_per_node,
            );
            let pair = ViewInput::Pair {
                neff,
                ntff: ntff[0].clone(),
            };
            format!(
                "{}\nthen, for each NTFF written: {}",
                capture.shell_line(),
                view_line(&pair)
            )
        }
    }
}

/// `K=V … WORKLOAD…` for a POSIX shell: the assignments bare, their values and the words quoted.
fn env_line(env: &[(String, String)], workload: &[String]) -> String {
    let assignments = env
        .iter()
        .map(|(k, v)| format!("{k}={}", shell_words::quote(v)));
    assignments
        .chain(std::iter::once(shell_words::join(workload)))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Fails with exit 3 and the fix when neither `neuron-explorer` nor `neuron-profile` can be found.
pub fn check_runnable(config: &Config) -> Result<()> {
    let pipeline = &config.pipeline.neuron;
    match resolve_program(pipeline, std::env::var_os("PATH").as_deref()) {
        Ok(_) => Ok(()),
        Err(e) => Err(ProfilerError::NotFound {
            program: pipeline.executable.clone(),
            hint: format!(": {e}"),
        }
        .into()),
    }
}

/// Runs the capture into `run` (inspect mode: the workload; NEFF mode: `capture`), then `view`s every
/// profile it wrote and lists them in the run's manifest; returns how the capture ended.
pub fn capture(job: Capture<'_, NeuronPlan>) -> Result<Finished> {
    let journal = job.journal;
    let run = journal.run();
    let config = &job.loaded.config;
    let pipeline = &config.pipeline.neuron;
    let grace = Duration::from_secs(config.pipeline.signal_grace_seconds);
    let pass = capture_pass(config, run, job.workload)?;
    journal.begin(&job.loaded.to_yaml())?;

    let display = Display::new(job.quiet);
    let watch = NeuronWatch {
        mode: pipeline.mode,
        log: run.path(LOG),
    };
    let exec = Executor {
        journal,
        grace,
        display: &display,
        watch: &watch,
    };
    let ran = exec.run(&PassGroup::alone(pass));
    display.finish();
    let finished = ran?
        .ended
        .into_iter()
        .flatten()
        .next()
        .expect("one pass ran");
    // In inspect mode the program run is the workload itself (NEFF mode runs `capture`).
    if pipeline.mode == CaptureMode::Inspect {
        journal.found(Finding::WorkloadEnded {
            code: finished.code,
            signal: finished.killed_by,
        })?;
    }
    if !finished.success() || finished.interrupted_by.is_some() {
        return Ok(finished);
    }
    let rank = journal.record().rank.as_ref().map(|r| r.rank);
    let viewed = match pipeline.mode {
        CaptureMode::Inspect => {
            view_inspect_dir(pipeline, &run.path(INSPECT_DIR), run.root(), rank, grace)?
        }
        CaptureMode::Neff => view_sessions(pipeline, run, grace)?,
    };
    if !job.quiet {
        for v in &viewed {
            err_line(&format!("viewed {}", v.output.display()));
        }
    }
    views::write_manifest(run.root(), &viewed)?;
    Ok(finished)
}

/// What names the program the capture step starts, for a message when it cannot start: the
/// workload in inspect mode, Neuron's own tool in NEFF mode (where nothing follows `--`).
fn named_by(mode: CaptureMode) -> &'static str {
    match mode {
        CaptureMode::Inspect => "the command after `--`",
        CaptureMode::Neff => "pipeline.neuron.executable",
    }
}

/// The capture step, planned: the workload with Neuron's inspect environment, or Neuron's own
/// capture of a NEFF.
fn capture_pass(config: &Config, run: &RunDir, workload: &[String]) -> Result<PassSpec> {
    let pipeline = &config.pipeline.neuron;
    let (program, args, env, line) = match pipeline.mode {
        CaptureMode::Inspect => {
            let dir = run.path(INSPECT_DIR);
            std::fs::create_dir_all(&dir).map_err(|source| Error::Write {
                path: dir.clone(),
                source,
            })?;
            let inspect = inspect_env(&pipeline.inspect, &dir);
            for warning in &inspect.warnings {
                err_line(&format!("warning: {warning}"));
            }
            let args = workload[1..].iter().map(OsString::from).collect();
            let line = env_line(&inspect.env, workload);
            let env = inspect
                .env
                .into_iter()
                .map(|(k, v)| (k, OsString::from(v)))
                .collect();
            (workload[0].clone(), args, env, line)
        }
        CaptureMode::Neff => {
            let program = resolve_program(pipeline, std::env::var_os("PATH").as_deref())?;
            let neff = pipeline.neff.clone().unwrap_or_default();
            let cli = NeuronCli::capture(&program, pipeline, &neff, &run.path(SESSION));
            let program = program.to_string_lossy().into_owned();
            (
                program,
                cli.args_os().to_vec(),
                cli.env().to_vec(),
                cli.shell_line(),
            )
        }
    };
    Ok(PassSpec {
        name: program.clone(),
        slot: Slot::First,
        command: shell_words::split(&line).unwrap_or_default(),
        program,
        args,
        env,
        line,
        log: LOG.to_string(),
        outputs: Vec::new(),
        expected: None,
        status: None,
        watched: false,
    })
}

/// What the capture step's failures mean: its output is the workload's or the tool's own.
struct NeuronWatch {
    mode: CaptureMode,
    log: PathBuf,
}

impl Watch for NeuronWatch {
    fn failed(&self, pass: &PassSpec, again: bool, error: Option<&ProfilerError>) -> String {
        let again = if again { " again" } else { "" };
        match error {
            Some(e) => format!("warning: {} could not be run{again} ({e})", pass.name),
            None => format!(
                "warning: {} failed{again}; its log is {}",
                pass.name,
                self.log.display()
            ),
        }
    }

    fn rerun(&self, pass: &PassSpec, aside: &Path) -> String {
        format!(
            "warning: {} runs once more (its failed log: {})",
            pass.name,
            aside.display()
        )
    }

    fn not_started(&self, pass: &PassSpec, error: ProfilerError) -> ProfilerError {
        views::not_started(error, &pass.program, named_by(self.mode), &self.log)
    }
}

/// `view` for every NEFF/NTFF pair under an inspect output directory, into `views/` under `dest`.
/// NTFFs without their NEFF are reported; no pair at all is an error saying what to check.
pub fn view_inspect_dir(
    pipeline: &NeuronPipeline,
    inspect: &Path,
    dest: &Path,
    rank: Option<u32>,
    grace: Duration,
) -> Result<Vec<Viewed>> {
    let found = discover(inspect)?;
    for ntff in &found.unpaired {
        err_line(&format!(
            "warning: {} has no `neff_<hash>.neff` of the same hash beside it; it is not viewed",
            ntff.display()
        ));
    }
    if found.pairs.is_empty() {
        return Err(ProfilerError::Failed(Box::new(Failure {
            what: "the Neuron runtime's inspect mode".into(),
            code: String::new(),
            cause: format!("no NEFF/NTFF pair was written under {}", inspect.display()),
            fix: "check that the workload runs on a NeuronCore; on PJRT runtimes set pipeline.neuron.inspect.device_profile=session; for JAX set pipeline.neuron.inspect.framework=jax and wrap the steps in jax.profiler.trace".into(),
            log: inspect.to_path_buf(),
            tail: String::new(),
        }))
        .into());
    }
    let mut hashes: Vec<&str> = found.pairs.iter().map(|p| p.hash.as_str()).collect();
    hashes.sort_unstable();
    hashes.dedup();
    found
        .pairs
        .iter()
        .map(|pair| {
            let input = ViewInput::Pair {
                neff: pair.neff.clone(),
                ntff: pair.ntff.clone(),
            };
            let viewed = pair_viewed(pair, rank, hashes.len() > 1);
            view_one(pipeline, &input, dest, &pair_stem(pair), grace, viewed)
        })
        .collect()
}

/// `view` for every NTFF `capture` wrote (one per rank with several workers).
fn view_sessions(pipeline: &NeuronPipeline, run: &RunDir, grace: Duration) -> Result<Vec<Viewed>> {
    let neff = pipeline.neff.clone().unwrap_or_default();
    let ranks = pipeline.capture.workers_per_node;
    let outputs = capture_outputs(&run.path(SESSION), pipeline.capture.profile_nth_exec, ranks);
    let several = outputs.len() > 1;
    outputs
        .iter()
        .enumerate()
        .map(|(i, ntff)| {
            if !ntff.is_file() {
                return Err(ProfilerError::Failed(Box::new(Failure {
                    what: "`capture`".into(),
                    code: String::new(),
                    cause: format!("it ended without writing {}", ntff.display()),
                    fix: "check the NEFF runs (pipeline.neuron.capture.ignore_exec_errors) and that pipeline.neuron.capture matches the tool's version".into(),
                    log: run.path(LOG),
                    tail: views::log_tail(&run.path(LOG)),
                }))
                .into());
            }
            let stem = ntff.file_stem().unwrap_or_default().to_string_lossy().into_owned();
            let rank = several.then_some(i as u32);
            let viewed = Viewed {
                label: match rank {
                    Some(r) => format!("{} rank {r}", neff.display()),
                    None => neff.display().to_string(),
                },
                rank,
                process_id: None,
                device: None,
                output: PathBuf::new(),
                command: Vec::new(),
            };
            let input = ViewInput::Pair { neff: neff.clone(), ntff: ntff.clone() };
            view_one(pipeline, &input, run.root(), &stem, grace, viewed)
        })
        .collect()
}

/// The report of what the run viewed, or `None` when nothing was (or rendering is off).
pub fn report(
    loaded: &Loaded,
    plan: &NeuronPlan,
    run: &RunDir,
    record: &RunRecord,
) -> Result<Option<Report>> {
    let Some(viewed) = views::read_manifest(run.root())? else {
        return Ok(None);
    };
    if !loaded.config.output.render {
        return Ok(None);
    }
    let context = record.context(loaded.fingerprint());
    report::report(&loaded.config, &plan.regions, &viewed, &context).map(Some)
}

/// What to tell a user whose run was interrupted.
pub fn interrupted_notes(config: &Config, finished: &Finished) -> Vec<String> {
    let mut notes = Vec::new();
    if finished.killed_after_grace {
        notes.push(format!(
            "the workload and the processes it started had not all ended {} s after the signal (pipeline.signal_grace_seconds); those left were killed",
            config.pipeline.signal_grace_seconds
        ));
    }
    notes
}

/// Why a capture that did not succeed failed, with the fix.
pub fn failure(config: &Config, run: &RunDir, finished: &Finished) -> ProfilerError {
    let log = run.path(LOG);
    let (what, fix) = match config.pipeline.neuron.mode {
        CaptureMode::Inspect => (
            "the workload (under the Neuron runtime's inspect mode)",
            "run the workload without profile-run to see whether it fails on its own; the log holds its output",
        ),
        CaptureMode::Neff => (
            "`capture`",
            "check that the NEFF was compiled for this instance type and that no other process holds the NeuronCores (neuron-top)",
        ),
    };
    let code = match (finished.code, finished.killed_by) {
        (Some(c), _) => format!(" (exit code {c})"),
        (None, Some(s)) => format!(" (killed by signal {s})"),
        _ => String::new(),
    };
    ProfilerError::Failed(Box::new(Failure {
        what: what.into(),
        code,
        cause: "it did not end successfully, so there is no profile to view".into(),
        fix: fix.into(),
        tail: views::log_tail(&log),
        log,
    }))
}
