//! A profiling run under ncu: the plan checked before it, its passes in order (the first under ncu
//! or the CUPTI trace, then a sampled run's deep pass, as one ncu worker or several at once), the run's files (config,
//! command, record, logs), `--dry-run`'s lines and checks; what the run left is read in `outcome`,
//! captures found again in `inputs`. Its rooms: `run/` (running ncu: command lines, logs, failures,
//! exported pages), `sampling/` (the passes of a sampled run: flags, workers, coverage), `trace/`
//! (the trace pass and its injection library).
//!
//! Floor: profiler (see `crate::profiler`): imports run, process, analysis, insights, report,
//! config, region and the ground floor, and its own profiler's rooms.

pub mod inputs;
mod outcome;
pub mod run;
pub mod sampling;
pub mod trace;

pub use outcome::{failure, incomplete, interrupted_notes, report};

use std::collections::BTreeSet;
use std::path::Path;
use std::time::Duration;

use crate::analysis::AnalysisPlan;
use crate::config::Config;
use crate::console::err_line;
use crate::error::{Error, Result};
use crate::process::progress::Display;
use crate::process::{received_signal, Finished};
use crate::profiler::job::Capture;
use crate::profiler::ncu::nvtx;
use crate::profiler::ncu::observe::launch_durations::LaunchDurations;
use crate::profiler::ncu::plan::{FirstPass, NcuPlan, Passes};
use crate::region::RegionFilter;
use crate::run::{ncu_report_file, PassRecord, RunDir, RunRecord, COMMAND_FILE, REPORT_BASE};

use self::run::cli::NcuCli;
use self::run::log::LOG;
use self::run::{check_program, ncu_answers, run_pass, version_of, Pass};
use self::sampling::deep_run::{self, DeepRun};
use self::sampling::{coverage, ranks, workers};

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
    if passes.deep {
        workers::host_gpus(config.pipeline.ncu.sampling.deep_gpus).map_err(Error::Usage)?;
    }
    if let Some(why) = trace::refusal(config, passes.first) {
        return Err(Error::Usage(why));
    }
    Ok(NcuPlan {
        analysis,
        regions,
        nvtx,
        max_block_bytes: config.pipeline.ncu.max_block_mib.saturating_mul(1 << 20),
        passes,
    })
}

/// The first pass of a run, ready to start.
enum FirstRun {
    /// ncu's only pass, or a sampled run's timing pass (boxed: a pass's command line is large).
    Ncu(Box<Pass>),
    /// The workload under the CUPTI trace.
    Trace,
}

/// The runs a profiling run in `dir` makes, in order, as the plan's [`Passes`] say: the first, and
/// a sampled run's deep pass, both with the same NVTX filter and process options.
struct Runs {
    first: FirstRun,
    deep: Option<Pass>,
}

impl Runs {
    fn new(plan: &NcuPlan, config: &Config, dir: &Path, workload: &[String]) -> Runs {
        let cli = NcuCli::profile(config, &plan.nvtx, &dir.join(REPORT_BASE), workload);
        let ncu = &config.pipeline.ncu;
        let deep = plan.passes.deep.then(|| deep_pass(&cli, config, dir));
        let first = match (plan.passes.first, plan.passes.deep) {
            (FirstPass::Trace, _) => FirstRun::Trace,
            (FirstPass::Ncu, false) => FirstRun::Ncu(Box::new(Pass {
                name: "ncu",
                cli,
                log: LOG.to_string(),
                gpu: None,
            })),
            (FirstPass::Ncu, true) => FirstRun::Ncu(Box::new(Pass {
                name: "ncu's timing pass",
                cli: cli.with_flags(
                    sampling::timing_flags(&ncu.ncu_cli, &config.report.time_metric),
                    &dir.join(REPORT_BASE),
                ),
                log: LOG.to_string(),
                gpu: None,
            })),
        };
        Runs { first, deep }
    }

    /// The passes under ncu, in order.
    fn under_ncu(&self) -> impl Iterator<Item = &Pass> {
        let first = match &self.first {
            FirstRun::Ncu(pass) => Some(pass.as_ref()),
            FirstRun::Trace => None,
        };
        first.into_iter().chain(self.deep.as_ref())
    }

    /// What ncu warns of its first command line, on stderr.
    fn warn(&self) {
        if let Some(first) = self.under_ncu().next() {
            for warning in first.cli.warnings() {
                err_line(&format!("warning: {warning}"));
            }
        }
    }

    /// Each run's name and shell line, in order.
    fn lines(&self, config: &Config, dir: &Path, workload: &[String]) -> Vec<(&str, String)> {
        let trace = match self.first {
            FirstRun::Trace => Some(("the trace pass", trace::shell_line(config, dir, workload))),
            FirstRun::Ncu(_) => None,
        };
        trace
            .into_iter()
            .chain(self.under_ncu().map(|p| (p.name, p.cli.shell_line())))
            .collect()
    }
}

/// A sampled run's deep pass as configured, from the run's ncu command `cli`: what runs when the
/// first pass's launches do not plan it, and the line written before the first pass.
fn deep_pass(cli: &NcuCli, config: &Config, dir: &Path) -> Pass {
    let sampling = &config.pipeline.ncu.sampling;
    let flags = sampling::deep_flags(
        &config.pipeline.ncu.ncu_cli,
        sampling.launch_count,
        sampling.skip_cold_start,
    );
    Pass {
        name: "ncu's deep pass",
        cli: cli
            .clone()
            .with_flags(flags, &dir.join(sampling::DEEP_REPORT_BASE)),
        log: sampling::DEEP_LOG.to_string(),
        gpu: None,
    }
}

/// What `--dry-run` prints: the ncu command line for a run in `dir`, or both of a sampled run (the
/// trace pass's line first under `timing: trace`).
pub fn dry_run(plan: &NcuPlan, config: &Config, dir: &Path, workload: &[String]) -> String {
    let runs = Runs::new(plan, config, dir, workload);
    runs.warn();
    let mut lines = runs.lines(config, dir, workload);
    lines.extend(coverage::dry_run_note(config, plan.passes));
    lines.extend(ranks::dry_run_note(config, plan.passes));
    let sampling = &config.pipeline.ncu.sampling;
    if let Some(note) = workers_note(config, plan.passes.deep, dir) {
        lines.push(("the deep pass may run as several workers", note));
    }
    if plan.passes.deep && sampling.min_time_share > 0.0 {
        lines.push((
            "the deep pass keeps the kernel names that matter",
            format!(
                "# once the first pass has run, the deep pass's command gets --kernel-name regex:^(?:NAME|…)$ of the mangled names with a launch key at or above {} of some region it runs in (pipeline.ncu.sampling.min_time_share); the others keep their times, their deep metrics not measured",
                sampling.min_time_share
            ),
        ));
    }
    if lines.len() == 1 {
        return lines.remove(0).1;
    }
    lines
        .iter()
        .map(|(name, line)| format!("# {name}\n{line}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// `--dry-run`'s note on the deep pass's workers, decided once the first pass has run: one per
/// sample count (adaptive) and GPU (`deep_gpus`); `None` when it always runs as one.
fn workers_note(config: &Config, deep: bool, dir: &Path) -> Option<String> {
    let sampling = &config.pipeline.ncu.sampling;
    let gpus = workers::host_gpus(sampling.deep_gpus).unwrap_or_default();
    if !deep || (!sampling.adaptive && gpus.is_empty()) {
        return None;
    }
    let spread = match gpus.is_empty() {
        true => "on the workload's GPU".to_string(),
        false => format!(
            "spread over GPUs {} (pipeline.ncu.sampling.deep_gpus; each worker with CUDA_VISIBLE_DEVICES=<its GPU>), its launch keys balanced by expected cost",
            gpus.join(", ")
        ),
    };
    Some(format!(
        "# once the first pass has run, each launch key's deep samples are sized from its durations ({}; at most max_samples, {}), and the deep pass's command runs as one ncu worker per sample count {spread}, all at once, each with --kernel-name regex:^(?:NAME|…)$ --launch-count N of its names; worker 0 writes {}, worker i {}; a worker that fails runs once more, alone, after the others",
        match sampling.adaptive {
            true => "adaptive",
            false => "launch_count for every key, not adaptive",
        },
        sampling.budget(),
        dir.join(ncu_report_file(sampling::DEEP_REPORT_BASE)).display(),
        dir.join(format!("{}.i.ncu-rep", sampling::DEEP_REPORT_BASE)).display(),
    ))
}

/// Fails with exit 3 and the fix when the configured ncu cannot be started (or, under
/// `timing: trace`, the injection library is missing or not one).
pub fn check_runnable(plan: &NcuPlan, config: &Config) -> Result<()> {
    if plan.passes.first == FirstPass::Trace {
        trace::check_library(config)?;
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

/// Runs the workload under ncu into `run`, keeping the run record up to date; returns how ncu ended.
/// A sampled run runs it twice: the deep pass only after a timing pass that succeeded, and how the
/// deep pass went is in the record (`deep_pass`) unless a signal ended it, which is returned.
pub fn capture(plan: &NcuPlan, job: Capture<'_>) -> Result<Finished> {
    let Capture {
        loaded,
        run,
        record,
        workload,
        quiet,
    } = job;
    let config = &loaded.config;
    if let Some(why) =
        workers::launcher_refusal(config, workload, record.rank.as_ref().map(|r| r.rank))
    {
        return Err(Error::Usage(why));
    }
    let runs = Runs::new(plan, config, run.root(), workload);
    runs.warn();
    record.profiler_command = match &runs.first {
        FirstRun::Ncu(pass) => pass.command(),
        FirstRun::Trace => trace::command(config, run.root(), workload),
    };
    record.deep_pass = runs.deep.as_ref().map(|deep| PassRecord {
        command: deep.command(),
        ..PassRecord::default()
    });
    if let Some(ncu) = runs.under_ncu().next() {
        record.profiler_version = version_of(ncu.cli.program(), run, quiet)?;
    }
    if let FirstRun::Trace = runs.first {
        let dir = run.path(trace::TRACE_DIR);
        std::fs::create_dir_all(&dir).map_err(|source| Error::Write { path: dir, source })?;
    }
    let lines: Vec<String> = runs
        .lines(config, run.root(), workload)
        .into_iter()
        .map(|(_, line)| line)
        .collect();
    run.write_start(&loaded.to_yaml(), &lines, record)?;

    // A signal between the probe and now: do not start ncu at all.
    if let Some(signal) = received_signal() {
        return Err(Error::Interrupted {
            signal,
            run_dir: run.root().to_path_buf(),
            captured: false,
        });
    }
    let grace = Duration::from_secs(config.pipeline.signal_grace_seconds);
    let display = Display::new(quiet);
    let first = match &runs.first {
        FirstRun::Ncu(pass) => run_pass(pass, run, grace, &display, None)?.0,
        FirstRun::Trace => trace::run(config, run, workload, grace, &display)?,
    };
    record.finish(&first);
    // Under ncu the workload's exit code is in ncu's log; a traced workload ran as the pass itself.
    let workload_exit = match &runs.first {
        FirstRun::Ncu(pass) => {
            let log_text = crate::run::read_run_text(&run.path(&pass.log));
            run::log::application_exit_code(&log_text)
        }
        FirstRun::Trace => first.code.or(first.killed_by.map(|signal| 128 + signal)),
    };
    record.set_workload_exit(workload_exit);
    run.write_record(record)?;
    let Some(deep) = runs
        .deep
        .as_ref()
        .filter(|_| first.success() && first.interrupted_by.is_none())
    else {
        display.finish();
        return Ok(first);
    };
    let ctx = DeepRun {
        config,
        plan,
        run,
        workload,
        grace,
        display: &display,
    };
    let finished = run_deep(deep, ctx, record);
    display.finish();
    let mut finished = finished?.unwrap_or(first);
    // A signal before any deep pass started is in the record alone (`run_deep`).
    finished.interrupted_by = finished.interrupted_by.or(record.interrupted_by);
    Ok(finished)
}

/// Runs the deep pass: as planned from the first pass's launches where they could be read (each
/// key's sample count, the names `min_time_share` keeps, the GPUs of `deep_gpus`, the ranks of
/// `deep_ranks`), as one ncu worker or several (at once, or in turns where several ranks of one job
/// take the deep pass); else as configured. A rank that is not a
/// deep rank runs the workload unprofiled instead; one profile-run per rank with several deep ranks
/// runs its step in rounds, one per deep rank. Returns how the pass a signal stopped ended
/// (`None`: none was). Each worker reads the first pass's launches (`stop_when_covered`) to know
/// when it has profiled everything it will take.
fn run_deep(deep: &Pass, ctx: DeepRun<'_>, record: &mut RunRecord) -> Result<Option<Finished>> {
    let (step, mut read) = ranks::deep_step(ctx.config, ctx.plan, ctx.run, record)?;
    // A signal while the deep step was chosen (the ranks' signature wait ends on one): no deep
    // pass starts, and the record says the run was interrupted.
    if let Some(signal) = received_signal() {
        record.interrupted_by = Some(signal);
        ctx.run.write_record(record)?;
        return Ok(None);
    }
    match step {
        ranks::DeepStep::Unprofiled => ranks::run_unprofiled(&ctx, deep, record),
        ranks::DeepStep::InRounds { mine, ranks } => {
            let own = |record: &mut RunRecord| {
                run_planned(deep, &ctx, ranks::DeepStep::AsPlanned, read.take(), record)
            };
            ranks::run_rounds(&ctx, deep, record, (mine, &ranks), own)
        }
        step => run_planned(deep, &ctx, step, read, record),
    }
}

/// The deep pass of a run whose deep step is `step`: sized and placed from the first pass's
/// launches (`read` where choosing the deep step read them already) where they could be read,
/// else as configured.
fn run_planned(
    deep: &Pass,
    ctx: &DeepRun<'_>,
    step: ranks::DeepStep,
    read: Option<LaunchDurations>,
    record: &mut RunRecord,
) -> Result<Option<Finished>> {
    let (config, run) = (ctx.config, ctx.run);
    let sampling = &config.pipeline.ncu.sampling;
    let gpus = workers::host_gpus(sampling.deep_gpus).map_err(Error::Usage)?;
    let countable = coverage::uncountable(config, ctx.plan.passes).is_none();
    let first =
        (sampling.adaptive || countable || sampling.min_time_share > 0.0 || !gpus.is_empty()).then(
            || {
                read.map_or_else(
                    || deep_run::first_pass_durations(config, ctx.plan, run, record),
                    Ok,
                )
                .map(|first| ranks::deep_launches(first, &step))
            },
        );
    let selection = keep_where_it_matters(config, first.as_ref())?;
    let durations = match first {
        Some(Ok(durations)) => durations,
        Some(Err(e)) => {
            if sampling.adaptive {
                record.adaptive = Some(deep_run::sizing_failed(config, e.to_string()));
            }
            err_line(&format!(
                "warning: the first pass's launches could not be read ({e}); the deep pass runs as configured, to the workload's end"
            ));
            return run_as_configured(deep, ctx, &step, record);
        }
        None => return run_as_configured(deep, ctx, &step, record),
    };
    let skip = u32::from(sampling.skip_cold_start);
    let kept = |name: &str| {
        selection
            .as_ref()
            .is_none_or(|s| s.kept.iter().any(|k| k == name))
    };
    let one_job = ranks::one_worker(record, &step, &durations);
    let gpus = deep_run::gpus_for(gpus, one_job);
    let sizing_settings = deep_run::sizing_settings(sampling, one_job);
    let (needs, sizing) = workers::needs(&durations, &sizing_settings, skip, kept);
    if sampling.adaptive {
        record.adaptive = Some(deep_run::sized_record(config, sizing, one_job));
    }
    let placed = ranks::placed(workers::plan(&needs, &gpus, selection.is_some()), &step);
    let countable = countable && ranks::ends_alone(record);
    let (planned, passes) = placed_passes(deep, ctx, placed, Some(&durations), countable);
    let schedule = ranks::schedule(&step, record);
    let stopped = run_workers(deep, ctx, record, &planned, passes, schedule)?;
    // A rerun of names never seen would profile every rank of a job at once (or one rank of a
    // launch alone): there what a worker never saw stays unmatched, or comes from another rank.
    let rerun = schedule.reruns && !one_job;
    if stopped.is_some() || record.deep_workers.is_empty() || !rerun {
        return Ok(stopped);
    }
    deep_run::rerun_unseen(ctx, &deep.cli, &planned, &durations, countable, record)
}

/// The deep pass as configured, to the workload's end, where the first pass's launches are not
/// known: on the chosen ranks' devices, or once per rank taking its turn.
fn run_as_configured(
    deep: &Pass,
    ctx: &DeepRun<'_>,
    step: &ranks::DeepStep,
    record: &mut RunRecord,
) -> Result<Option<Finished>> {
    let schedule = ranks::schedule(step, record);
    if !ranks::in_turns(step) {
        let pass = deep_run::configured(deep);
        let pass = match step {
            ranks::DeepStep::OnDevices(devices) => ranks::on_devices(&pass, devices),
            _ => pass,
        };
        return run_workers(deep, ctx, record, &[], vec![(pass, None)], schedule);
    }
    let whole = deep_run::whole_worker(ctx.config.pipeline.ncu.sampling.launch_count);
    let placed = ranks::placed(vec![whole], step);
    let (planned, passes) = placed_passes(deep, ctx, placed, None, false);
    run_workers(deep, ctx, record, &planned, passes, schedule)
}

/// Each placed worker's pass (its file, flags and devices) with the results it is expected to take
/// of the first pass's launches (`durations`; `None`: unknown, and so are its results). A worker
/// limited to some devices (a rank's turn) counts its launch keys, cost and results on theirs alone.
/// `countable`: whether the pass may end once it has them (`stop_when_covered`).
fn placed_passes(
    deep: &Pass,
    ctx: &DeepRun<'_>,
    placed: Vec<(workers::Worker, Option<BTreeSet<u32>>)>,
    durations: Option<&LaunchDurations>,
    countable: bool,
) -> (Vec<workers::Worker>, Vec<(Pass, Option<u64>)>) {
    let skip = u32::from(ctx.config.pipeline.ncu.sampling.skip_cold_start);
    placed
        .into_iter()
        .enumerate()
        .map(|(at, (mut worker, devices))| {
            let pass = deep_run::worker_pass(&deep.cli, ctx.config, ctx.run.root(), at, &worker);
            let Some(devices) = devices else {
                let expected =
                    durations.and_then(|d| deep_run::expected(d, &worker, skip, countable));
                return (worker, (pass, expected));
            };
            let expected = durations.and_then(|d| {
                let on_them = ranks::launches_on(d.clone(), &devices);
                worker.keys = deep_run::keys_of(&on_them, &worker);
                // What it takes on its devices, whether or not the pass may end on that count
                // (run.json and the reports hold a turn's results against it).
                worker.cost = deep_run::cost_of(&on_them, &worker, skip);
                deep_run::expected(&on_them, &worker, skip, countable)
            });
            (worker, (ranks::on_devices(&pass, &devices), expected))
        })
        .unzip()
}

/// Runs the planned workers (none planned: `deep` as configured, alone), recording their commands
/// in place of the line written before the first pass ran.
fn run_workers(
    deep: &Pass,
    ctx: &DeepRun<'_>,
    record: &mut RunRecord,
    planned: &[workers::Worker],
    passes: Vec<(Pass, Option<u64>)>,
    schedule: deep_run::Schedule,
) -> Result<Option<Finished>> {
    let passes = match passes.is_empty() {
        true => vec![(deep_run::configured(deep), None)],
        false => passes,
    };
    let lines: Vec<String> = passes
        .iter()
        .map(|(p, _)| gpu_prefix(p) + &p.cli.shell_line())
        .collect();
    replace_deep_command(ctx.run, record, deep, &passes[0].0, &lines)?;
    if passes.len() > 1 {
        record.deep_workers = deep_run::worker_records(planned, &passes, 0);
    }
    if record.deep_workers.is_empty() {
        let (pass, expected) = &passes[0];
        let (finished, covered) = run_pass(pass, ctx.run, ctx.grace, ctx.display, *expected)?;
        if let Some(record) = record.deep_pass.as_mut() {
            record.finish(&finished, covered);
        }
        record.interrupted_by = finished.interrupted_by;
        ctx.run.write_record(record)?;
        return Ok(finished.interrupted_by.is_some().then_some(finished));
    }
    ctx.run.write_record(record)?;
    deep_run::run_workers(ctx, passes, schedule, record)
}

/// `CUDA_VISIBLE_DEVICES=N ` before a worker's shell line where it has a GPU of its own.
fn gpu_prefix(pass: &Pass) -> String {
    pass.gpu
        .as_ref()
        .map(|gpu| format!("CUDA_VISIBLE_DEVICES={gpu} "))
        .unwrap_or_default()
}

/// The names the deep pass keeps under `sampling.min_time_share` (`None`: it keeps every name, as
/// at 0, or when the first pass's launches could not be read, said in a warning). Leaving out every
/// name is refused: the deep pass would measure nothing.
fn keep_where_it_matters(
    config: &Config,
    first: Option<&Result<LaunchDurations>>,
) -> Result<Option<sampling::share::DeepSelection>> {
    let share = config.pipeline.ncu.sampling.min_time_share;
    let durations = match first {
        Some(Ok(durations)) if share > 0.0 => durations,
        Some(Err(e)) if share > 0.0 => {
            err_line(&format!(
                "warning: the first pass's launches could not be read ({e}); pipeline.ncu.sampling.min_time_share leaves nothing out, the deep pass profiles every launch key"
            ));
            return Ok(None);
        }
        _ => return Ok(None),
    };
    let selection = sampling::share::select(durations, share);
    if selection.left_out.is_empty() {
        return Ok(None);
    }
    if selection.kept.is_empty() {
        return Err(Error::Usage(format!(
            "pipeline.ncu.sampling.min_time_share is {share}, and every launch key of the first pass is below that share of each of its regions: the deep pass would measure nothing; lower min_time_share (0 leaves nothing out)"
        )));
    }
    let (keys, keys_left_out) = selection.keys;
    err_line(&format!(
        "note: pipeline.ncu.sampling.min_time_share={share} leaves {} of {} kernel names ({keys_left_out} of {keys} launch keys) out of the deep pass; their deep metrics are not measured",
        selection.left_out.len(),
        selection.left_out.len() + selection.kept.len()
    ));
    Ok(Some(selection))
}

/// Records the deep pass's command as planned after the first pass: worker 0's in run.json, and
/// every worker's line (`lines`) in command.txt in place of the line written before the first
/// pass ran.
fn replace_deep_command(
    run: &RunDir,
    record: &mut RunRecord,
    was: &Pass,
    now: &Pass,
    lines: &[String],
) -> Result<()> {
    if let Some(pass) = record.deep_pass.as_mut() {
        pass.command = now.command();
    }
    let commands = crate::run::read_run_text(&run.path(COMMAND_FILE));
    let commands = commands.replace(&was.cli.shell_line(), &lines.join("\n"));
    run.write_text(COMMAND_FILE, &commands)?;
    run.write_record(record)
}
