//! A profiling run under ncu: the plan checked before it, its passes planned as data (`passes`:
//! the first under ncu or the CUPTI trace; `sampling::deep_plan`: a sampled run's deep pass, from
//! what the first pass found) and handed to the run's executor, which records each in the journal;
//! `--dry-run`'s lines and checks. What the run's log and record say is read in `outcome`; its
//! captures are found in `crate::profiler::ncu::inputs`. Its rooms: `run/` (ncu's command lines,
//! logs, failures, exported pages), `sampling/` (a sampled run's flags, plan, workers, coverage,
//! ranks), `trace/` (the trace pass and its injection library).
//!
//! Floor: profiler (see `crate::profiler`): imports run, process, analysis, insights, report,
//! config, region and the ground floor, and its own profiler's rooms.

mod outcome;
pub mod passes;
pub mod run;
pub mod sampling;
pub mod trace;
mod watch;

pub use outcome::{failure, incomplete, interrupted_notes};

use std::path::Path;
use std::time::Duration;

use crate::analysis::AnalysisPlan;
use crate::config::{Config, DeepEngine, GraphKernels};
use crate::console::err_line;
use crate::error::{Error, Result};
use crate::process::progress::Display;
use crate::process::{received_signal, Finished};
use crate::profiler::job::Capture;
use crate::profiler::ncu::nvtx;
use crate::profiler::ncu::plan::{FirstPass, NcuPlan, Passes};
use crate::region::RegionFilter;
use crate::run::{ncu_report_file, Executor, Finding, PassGroup, PassSpec, Slot, REPORT_BASE};

use self::run::log::LOG;
use self::run::{check_program, ncu_answers, version_of};
use self::sampling::deep_plan::{self, DeepInputs};
use self::sampling::ranks::FirstFindings;
use self::sampling::{chips, coverage, findings, first_pass, in_process, ranks};
use self::watch::NcuWatch;

/// ncu's checks of a configuration (a mistake exits 2 before anything runs) and its plan: the NVTX
/// expressions from the region filter, sampling refused where it cannot work, raw NVTX expressions
/// refused under the trace.
pub fn plan(config: &Config, analysis: AnalysisPlan, regions: RegionFilter) -> Result<NcuPlan> {
    let nvtx = nvtx::plan(&regions, &config.pipeline.ncu.ncu_cli.nvtx)
        .map_err(|e| Error::Usage(e.to_string()))?;
    let passes = Passes::of(config);
    if let Some(why) = sampling::refusal(config) {
        return Err(Error::Usage(why));
    }
    if let Some(why) = trace::refusal(config, passes.first) {
        return Err(Error::Usage(why));
    }
    if let Some(why) = passes
        .in_place
        .then(|| in_process::refusal(config))
        .flatten()
    {
        return Err(Error::Usage(why));
    }
    Ok(NcuPlan {
        analysis,
        regions,
        nvtx,
        max_block_bytes: config.pipeline.ncu.max_block_mib.saturating_mul(1 << 20),
        passes,
        first_read: Default::default(),
        first_index: Default::default(),
    })
}

/// The run's first pass: ncu's only pass, a sampled run's timing pass, or the workload under the
/// CUPTI trace.
fn first_pass(plan: &NcuPlan, config: &Config, dir: &Path, workload: &[String]) -> PassSpec {
    if plan.passes.first == FirstPass::Trace {
        let deep = match plan.passes.in_place {
            true => in_process::environment(config),
            false => Vec::new(),
        };
        return trace::pass(config, dir, workload, deep);
    }
    let cli = passes::ncu_cli(&plan.nvtx, config, dir, workload);
    let ncu = &config.pipeline.ncu;
    let (name, cli) = match plan.passes.deep {
        false => ("ncu", cli),
        true => (
            "ncu's timing pass",
            cli.with_flags(
                sampling::timing_flags(&ncu.ncu_cli, &config.report.time_metric),
                &dir.join(REPORT_BASE),
            ),
        ),
    };
    passes::under_ncu(name, Slot::First, &cli, LOG, Vec::new())
}

/// What `--dry-run` prints: the ncu command line for a run in `dir`, or each pass of a sampled run
/// (the trace pass's line first under `timing: trace`), planned by the functions the run uses.
pub fn dry_run(plan: &NcuPlan, config: &Config, dir: &Path, workload: &[String]) -> String {
    let first = first_pass(plan, config, dir, workload);
    warn(plan, config, dir, workload);
    let mut lines = vec![(first.name.clone(), first.line.clone())];
    if plan.passes.deep {
        let inputs = deep_inputs(plan, config, dir, workload);
        if let Ok(deep) = deep_plan::plan(&inputs, FirstFindings::none()) {
            lines.extend(
                deep.lines()
                    .into_iter()
                    .map(|l| ("ncu's deep pass".to_string(), l)),
            );
        }
    }
    let notes = [
        plan.passes
            .in_place
            .then(|| in_process::dry_run_note(config)),
        graph_kernels_note(plan, config, dir, workload),
        instead_of_counters_note(plan, config, dir, workload),
        plan.passes.in_place.then(|| {
            let metrics = in_process::metrics(config).collected;
            let libcupti = config.pipeline.ncu.trace.libcupti.as_deref();
            let line = chips::passes_line(&metrics, in_process::samples(config), libcupti);
            ("the in-process metrics' replay passes", line)
        }),
        coverage::dry_run_note(config, plan.passes),
        ranks::dry_run_note(config, plan.passes),
        workers_note(config, plan.passes.deep, dir)
            .map(|n| ("the deep pass may run as several workers", n)),
        share_note(config, plan.passes.deep),
    ];
    lines.extend(
        notes
            .into_iter()
            .flatten()
            .map(|(name, line)| (name.to_string(), line)),
    );
    if lines.len() == 1 {
        return lines.remove(0).1;
    }
    lines
        .iter()
        .map(|(name, line)| format!("# {name}\n{line}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// `--dry-run`'s note on the deep pass under ncu an in-process run makes for the launch keys that
/// ran only inside CUDA graphs, known once the trace pass has run (`sampling.graph_kernels`).
fn graph_kernels_note(
    plan: &NcuPlan,
    config: &Config,
    dir: &Path,
    workload: &[String],
) -> Option<(&'static str, String)> {
    let ncu = config.pipeline.ncu.sampling.graph_kernels == GraphKernels::Ncu;
    (plan.passes.in_place && ncu).then(|| {
        let inputs = deep_inputs(plan, config, dir, workload);
        let group = deep_plan::graph_kernels(&inputs, vec!["NAME".to_string()]);
        (
            "ncu's deep pass for kernels inside CUDA graphs",
            format!(
                "# only if the trace pass finds launch keys that ran only inside CUDA graphs (CUPTI's Range Profiler cannot profile graph node kernels) in a run of one process, with NAME the alternatives of their mangled names (pipeline.ncu.sampling.graph_kernels=unmeasured leaves them without deep values):\n{}",
                group.passes[0].line
            ),
        )
    })
}

/// `--dry-run`'s note on the deep pass under ncu that follows the trace pass of `deep_engine: auto`
/// where no traced process could collect counters, known once the trace pass has run.
fn instead_of_counters_note(
    plan: &NcuPlan,
    config: &Config,
    dir: &Path,
    workload: &[String],
) -> Option<(&'static str, String)> {
    if !plan.passes.in_place || !auto_engine(config) {
        return None;
    }
    let inputs = deep_inputs(plan, config, dir, workload);
    let lines = deep_plan::plan(&inputs, FirstFindings::none())
        .ok()?
        .lines();
    let without_ncu = match check_program(config) {
        Ok(()) => String::new(),
        Err(_) => format!(
            " ({} is not found here: the run would warn and keep the trace's times alone)",
            config.pipeline.ncu.executable
        ),
    };
    Some((
        "ncu's deep pass where the counters cannot run",
        format!(
            "# only if no traced process can collect counters (a libcupti older than CUDA 12.6, or a GPU CUPTI cannot profile): a second launch of the workload under ncu measures the deep metrics, planned from the trace as with deep_engine=ncu{without_ncu}:\n{}",
            lines.join("\n")
        ),
    ))
}

/// What a deep pass under ncu of a run of one process in `dir` is planned for.
fn deep_inputs<'a>(
    plan: &'a NcuPlan,
    config: &'a Config,
    dir: &'a Path,
    workload: &'a [String],
) -> DeepInputs<'a> {
    DeepInputs {
        config,
        passes: plan.passes,
        nvtx: &plan.nvtx,
        dir,
        workload,
        rank: None,
    }
}

/// What ncu warns of the run's command line, on stderr.
fn warn(plan: &NcuPlan, config: &Config, dir: &Path, workload: &[String]) {
    if plan.passes.runs_ncu() {
        for warning in passes::ncu_cli(&plan.nvtx, config, dir, workload).warnings() {
            err_line(&format!("warning: {warning}"));
        }
    }
}

/// `--dry-run`'s note on the names `min_time_share` keeps, decided once the first pass has run.
fn share_note(config: &Config, deep: bool) -> Option<(&'static str, String)> {
    let share = config.pipeline.ncu.sampling.min_time_share;
    (deep && share > 0.0).then(|| {
        (
            "the deep pass keeps the kernel names that matter",
            format!(
                "# once the first pass has run, the deep pass's command gets --kernel-name regex:^(?:NAME|…)$ of the mangled names with a launch key at or above {share} of some region it runs in (pipeline.ncu.sampling.min_time_share); the others keep their times, their deep metrics not measured"
            ),
        )
    })
}

/// `--dry-run`'s note on the deep pass's workers, decided once the first pass has run: one per
/// sample count (adaptive); `None` when it always runs as one.
fn workers_note(config: &Config, deep: bool, dir: &Path) -> Option<String> {
    let sampling = &config.pipeline.ncu.sampling;
    if !deep || !sampling.adaptive {
        return None;
    }
    Some(format!(
        "# once the first pass has run, each launch key's deep samples are sized from its durations (adaptive; at most max_samples, {}), and the deep pass's command runs as one ncu worker per sample count on the workload's GPU, all at once, each with --kernel-name regex:^(?:NAME|…)$ --launch-count N of its names; worker 0 writes {}, worker i {}; a worker that fails runs once more, alone, after the others",
        sampling.budget(),
        dir.join(ncu_report_file(sampling::DEEP_REPORT_BASE)).display(),
        dir.join(format!("{}.i.ncu-rep", sampling::DEEP_REPORT_BASE)).display(),
    ))
}

/// Fails with exit 3 and the fix when the configured ncu cannot be started (or, under
/// `timing: trace`, the injection library is missing or not one), and with exit 2 when this
/// machine's GPU cannot count a metric the in-process engine is to collect.
pub fn check_runnable(plan: &NcuPlan, config: &Config) -> Result<()> {
    if plan.passes.first == FirstPass::Trace {
        trace::check_library(config)?;
    }
    if plan.passes.in_place {
        let metrics = in_process::metrics(config).collected;
        let libcupti = config.pipeline.ncu.trace.libcupti.as_deref();
        if let Some(why) = chips::refused(&metrics, libcupti) {
            return Err(Error::Usage(why));
        }
    }
    if plan.passes.runs_ncu() {
        check_program(config)?;
    }
    Ok(())
}

/// `--dry-run`'s check of what the run starts, as a clause for its `checked:` line: ncu resolves
/// (exit 3 otherwise) and `ncu --version` answers with a version (exit 3 with its path otherwise: an
/// ncu that cannot start would fail the run). Under `timing: trace` the injection library is found
/// and is an ELF shared object (exit 3 otherwise); a time-only traced run needs no ncu.
pub fn check_starts(plan: &NcuPlan, config: &Config) -> Result<String> {
    check_runnable(plan, config)?;
    let library = (plan.passes.first == FirstPass::Trace).then(|| {
        format!(
            "the CUPTI injection library ({}, an ELF shared object) found",
            trace::library(config).display()
        )
    });
    let ncu = match plan.passes.runs_ncu() {
        true => Some(ncu_answers(config)?),
        false => None,
    };
    Ok([library, ncu]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join(", "))
}

/// Runs the workload under ncu (or the CUPTI trace) into the journal's run directory; returns how
/// the first pass ended, or how the deep pass a signal stopped ended. A sampled run's deep pass
/// runs only after a first pass that succeeded, planned from what that pass found.
pub fn capture(job: Capture<'_, NcuPlan>) -> Result<Finished> {
    let Capture {
        plan,
        loaded,
        journal,
        workload,
        quiet,
    } = job;
    let config = &loaded.config;
    let run = journal.run();
    let first = first_pass(plan, config, run.root(), workload);
    warn(plan, config, run.root(), workload);
    let version = match plan.passes.runs_ncu() {
        true => Some(version_of(&config.pipeline.ncu.executable, run, quiet)?),
        false => None,
    };
    if plan.passes.first == FirstPass::Trace {
        let dir = run.path(trace::TRACE_DIR);
        std::fs::create_dir_all(&dir).map_err(|source| Error::Write { path: dir, source })?;
    }
    journal.begin(&loaded.to_yaml())?;
    if let Some(version) = version {
        journal.found(Finding::ProfilerVersion(version))?;
    }
    let engine = match plan.passes {
        passes if passes.in_place => Some(crate::profiler::ncu::observe::trace::inprocess::ENGINE),
        passes if passes.deep => Some("ncu"),
        _ => None,
    };
    if let Some(engine) = engine {
        journal.found(Finding::DeepEngine(engine))?;
    }
    let display = Display::new(quiet);
    let watch = NcuWatch { journal };
    let exec = Executor {
        journal,
        grace: Duration::from_secs(config.pipeline.signal_grace_seconds),
        display: &display,
        watch: &watch,
    };
    // A signal between the probe and now: do not start the first pass at all.
    if let Some(signal) = received_signal() {
        return Err(Error::Interrupted {
            signal,
            run_dir: run.root().to_path_buf(),
            captured: false,
        });
    }
    let ran = exec.run(&PassGroup::alone(first));
    let finished = ran.and_then(|ran| {
        let first = ran
            .ended
            .into_iter()
            .flatten()
            .next()
            .expect("one pass ran");
        // Under ncu the workload's exit code is in ncu's log; a traced workload ran as the pass.
        let workload_exit = match plan.passes.first {
            FirstPass::Ncu => {
                run::log::application_exit_code(&crate::run::read_run_text(&run.path(LOG)))
            }
            FirstPass::Trace => first.code.or(first.killed_by.map(|signal| 128 + signal)),
        };
        journal.found(Finding::WorkloadExit(workload_exit))?;
        if !first.success() || first.interrupted_by.is_some() {
            return Ok(first);
        }
        let stopped = match plan.passes {
            passes if passes.deep => deep(plan, config, &exec, workload)?,
            passes if passes.in_place => after_trace_pass(plan, config, &exec, workload, quiet)?,
            _ => return Ok(first),
        };
        let mut finished = stopped.unwrap_or(first);
        // A signal before any deep pass started is in the record alone.
        finished.interrupted_by = finished.interrupted_by.or(journal.record().interrupted_by);
        Ok(finished)
    });
    display.finish();
    finished
}

/// What follows an in-process run's trace pass: ncu's deep pass in place of counters no traced
/// process could collect (`deep_engine: auto`), else ncu's deep pass for the kernels that ran only
/// inside CUDA graphs, where there are some.
fn after_trace_pass(
    plan: &NcuPlan,
    config: &Config,
    exec: &Executor<'_>,
    workload: &[String],
    quiet: bool,
) -> Result<Option<Finished>> {
    let unavailable = trace::counters_unavailable(&exec.journal.run().path(trace::TRACE_DIR));
    match unavailable.filter(|_| auto_engine(config)) {
        Some(why) => instead_of_counters(plan, config, exec, workload, (why, quiet)),
        None => graph_kernels(plan, config, exec, workload, quiet),
    }
}

/// Whether the deep engine was left to profile-run (`deep_engine: auto`): in process where the
/// traced processes can count, ncu's deep pass where they cannot.
fn auto_engine(config: &Config) -> bool {
    config.pipeline.ncu.sampling.deep_engine == DeepEngine::Auto
}

/// `deep_engine: auto`, and no traced process could collect counters (`why`, the library's words:
/// a libcupti without the Range Profiler, a GPU CUPTI cannot profile): ncu's deep pass measures
/// the deep metrics, planned as a run with `deep_engine: ncu` plans it, and run.json says why
/// (`counters_unavailable`). Where it cannot run (no ncu to start, one profile-run per rank, whose
/// peers would each have to decide alike and launch the job again together, or a plan ncu's deep
/// pass refuses) the run keeps the trace's times, with a warning.
fn instead_of_counters(
    plan: &NcuPlan,
    config: &Config,
    exec: &Executor<'_>,
    workload: &[String],
    (why, quiet): (String, bool),
) -> Result<Option<Finished>> {
    let journal = exec.journal;
    let left_out = match journal.record().rank.is_some() {
        true => Err("this is one profile-run per rank, whose peers would have to launch the job again together; set pipeline.ncu.sampling.deep_engine=ncu".to_string()),
        false => check_program(config).map_err(|e| e.to_string()),
    };
    let version = left_out.and_then(|()| {
        version_of(&config.pipeline.ncu.executable, journal.run(), quiet).map_err(|e| e.to_string())
    });
    let version = match version {
        Ok(version) => version,
        Err(e) => {
            err_line(&format!("warning: the in-process counters collected nothing ({why}), and ncu's deep pass cannot measure the deep metrics instead: {e}; the report has the trace's times alone"));
            return Ok(None);
        }
    };
    err_line(&format!("note: the in-process counters collected nothing ({why}): ncu's deep pass measures the deep metrics instead, in a second launch of the workload (pipeline.ncu.sampling.deep_engine=auto)"));
    journal.found(Finding::CountersUnavailable(why))?;
    journal.found(Finding::ProfilerVersion(version))?;
    match deep(plan, config, exec, workload) {
        Err(e @ Error::Usage(_)) => {
            err_line(&format!("warning: ncu's deep pass could not be planned in place of the in-process counters ({e}); the report has the trace's times alone"));
            Ok(None)
        }
        ran => ran,
    }
}

/// An in-process run's deep pass under ncu for the launch keys that ran only inside CUDA graphs,
/// which CUPTI's Range Profiler cannot profile (`sampling.graph_kernels: ncu`), where the trace
/// found some. It is left out, with a note, where it cannot run: a run of several processes (ncu
/// would profile the ranks of one job at once, and their collectives stall), or no ncu to start;
/// those keys then stay without deep values, as `graph_kernels: unmeasured` leaves them.
fn graph_kernels(
    plan: &NcuPlan,
    config: &Config,
    exec: &Executor<'_>,
    workload: &[String],
    quiet: bool,
) -> Result<Option<Finished>> {
    if config.pipeline.ncu.sampling.graph_kernels != GraphKernels::Ncu {
        return Ok(None);
    }
    let journal = exec.journal;
    let run = journal.run();
    let graph_only = match first_pass::graph_only(config, plan, run) {
        Ok(graph_only) => graph_only,
        Err(e) => {
            err_line(&format!("warning: the trace could not be read for the launch keys that ran only inside CUDA graphs ({e}); they keep their times, with no deep values"));
            return Ok(None);
        }
    };
    let processes = graph_only.processes;
    let Some(names) = graph_only.names() else {
        return Ok(None);
    };
    let left_out = match (processes, journal.record().rank.is_some()) {
        (1, false) => check_program(config).err().map(|e| e.to_string()),
        _ => Some("the run traced several processes, and ncu would profile the ranks of one job at once (their collectives stall); run with pipeline.ncu.sampling.deep_engine=ncu to measure them".to_string()),
    };
    if let Some(why) = left_out {
        err_line(&format!("note: {} kernel name(s) ran only inside CUDA graphs, which the in-process engine cannot profile, and are left without deep values: {why}", names.len()));
        return Ok(None);
    }
    err_line(&format!("note: {} kernel name(s) ran only inside CUDA graphs, which the in-process engine cannot profile: ncu's deep pass measures them (pipeline.ncu.sampling.graph_kernels=ncu)", names.len()));
    journal.found(Finding::ProfilerVersion(version_of(
        &config.pipeline.ncu.executable,
        run,
        quiet,
    )?))?;
    let inputs = deep_inputs(plan, config, run.root(), workload);
    Ok(exec.run(&deep_plan::graph_kernels(&inputs, names))?.stopped)
}

/// A sampled run's deep pass: what the first pass found, read once, planned (`deep_plan`), run by
/// the executor; then what its workers left unprofiled, planned on new workers and run.
fn deep(
    plan: &NcuPlan,
    config: &Config,
    exec: &Executor<'_>,
    workload: &[String],
) -> Result<Option<Finished>> {
    let journal = exec.journal;
    let record = journal.record();
    let rank = record.rank.as_ref();
    let found = findings::first_findings(config, plan, journal.run(), rank)?;
    if let Some(world) = found.job_world_size {
        journal.found(Finding::JobWorldSize(Some(world)))?;
    }
    if let Some(chosen) = found.deep_ranks.clone() {
        journal.found(Finding::DeepRanks(chosen))?;
    }
    // A signal while the deep step was chosen (the ranks' signature wait ends on one): no deep
    // pass starts, and the record says the run was interrupted.
    if exec.signalled()?.is_some() {
        return Ok(None);
    }
    let inputs = DeepInputs {
        config,
        passes: plan.passes,
        nvtx: &plan.nvtx,
        dir: journal.run().root(),
        workload,
        rank,
    };
    let planned = deep_plan::plan(&inputs, found)?;
    for note in &planned.notes {
        err_line(note);
    }
    if let Some(adaptive) = planned.adaptive {
        journal.found(Finding::Adaptive(adaptive))?;
    }
    if let Some(stopped) = exec.run_stages(planned.stages)? {
        return Ok(Some(stopped));
    }
    // Names a worker was given and never profiled go to new workers, after the others.
    let Some(unseen) = planned.unseen else {
        return Ok(None);
    };
    let record = journal.record();
    let again = findings::never_profiled(plan, journal.run(), &record, &unseen);
    if again.is_empty() || record.deep_workers.is_empty() {
        return Ok(None);
    }
    let group = deep_plan::unseen_group(&inputs, &unseen, again, record.deep_workers.len());
    Ok(exec.run(&group)?.stopped)
}
