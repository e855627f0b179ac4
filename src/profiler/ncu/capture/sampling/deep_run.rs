//! Running the deep pass as its workers (`workers`): all at once, one ncu process each (or one
//! after another, where the ranks of one job take turns), then each worker that failed (out of GPU
//! memory with several copies of the workload on one GPU, say) once more, alone, after the others,
//! unless the run is one rank of a launch. A worker that fails twice leaves its keys without deep
//! results: unmatched in the report, never estimated. How each worker went is in run.json
//! (`deep_workers`).

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::analysis::AdaptiveRecord;
use crate::config::{Config, ErrorScope, SamplingConfig};
use crate::console::err_line;
use crate::error::{Error, Result};
use crate::process::progress::Display;
use crate::process::Finished;
use crate::profiler::ncu::capture::run::cli::NcuCli;
use crate::profiler::ncu::capture::run::{run_pass, Pass};
use crate::profiler::ncu::capture::trace;
use crate::profiler::ncu::observe::launch_durations::LaunchDurations;
use crate::profiler::ncu::observe::report_source::launch_durations;
use crate::profiler::ncu::observe::trace::source::{scope_of, TraceSource};
use crate::profiler::ncu::plan::{FirstPass, NcuPlan};
use crate::profiler::ncu::readers::trace::TraceInput;
use crate::run::{fresh_path, ncu_report_file, DeepWorkerRecord, PassRecord, RunDir, RunRecord};

use super::coverage::{expected_results, results_taken, LaunchFilter};
use super::workers::{files, worker_flags, Sizing, Worker};

/// What the deep pass's workers run with.
pub(crate) struct DeepRun<'a> {
    pub config: &'a Config,
    pub plan: &'a NcuPlan,
    pub run: &'a RunDir,
    /// The workload's command line (a rank that is not a deep rank runs it unprofiled).
    pub workload: &'a [String],
    pub grace: Duration,
    pub display: &'a Display,
}

/// The deep pass as configured, alone: what runs where the first pass's launches are unknown.
pub(crate) fn configured(deep: &Pass) -> Pass {
    Pass {
        name: deep.name,
        cli: deep.cli.clone(),
        log: deep.log.clone(),
        gpu: None,
    }
}

/// One worker for every name at `count`, its results unknown: the deep pass as configured, as a
/// worker (a turn of one rank, say).
pub(crate) fn whole_worker(count: u32) -> Worker {
    Worker {
        names: None,
        count,
        gpu: None,
        keys: 0,
        cost: 0,
    }
}

/// The sampling settings the deep pass is sized by. A job of several processes (a launcher's
/// ranks, or one rank of it) runs its deep pass as one worker: two copies of it at once would join
/// each other's collectives. Adaptive counts need one worker per count, so there every key takes
/// `launch_count`, with a note.
pub(crate) fn sizing_settings(sampling: &SamplingConfig, one_job: bool) -> SamplingConfig {
    let mut settings = sampling.clone();
    if one_job && sampling.adaptive {
        err_line(&format!(
            "note: {ONE_JOB} (two copies of the job at once would join each other's collectives): each launch key takes pipeline.ncu.sampling.launch_count={} deep sample(s)",
            sampling.launch_count
        ));
        settings.adaptive = false;
    }
    settings
}

/// The GPUs the workers spread over: none for a job of several processes (`one_job`), whose deep
/// pass is one worker on the GPUs its launcher gives each rank, said in a note when `deep_gpus`
/// asked for more.
pub(crate) fn gpus_for(gpus: Vec<String>, one_job: bool) -> Vec<String> {
    if one_job && !gpus.is_empty() {
        err_line("note: pipeline.ncu.sampling.deep_gpus is left aside: a job of several processes runs its deep pass as one ncu worker, on the GPUs its launcher gives each rank");
        return Vec::new();
    }
    gpus
}

/// Worker `index`'s pass: the deep pass's command line `deep` with the worker's launch filter,
/// report file, log and GPU.
pub(crate) fn worker_pass(
    deep: &NcuCli,
    config: &Config,
    dir: &Path,
    index: usize,
    worker: &Worker,
) -> Pass {
    let sampling = &config.pipeline.ncu.sampling;
    let flags = super::deep_flags(
        &config.pipeline.ncu.ncu_cli,
        sampling.launch_count,
        sampling.skip_cold_start,
    );
    let (report, log) = files(index);
    Pass {
        name: "ncu's deep pass",
        cli: deep
            .clone()
            .with_flags(worker_flags(&flags, worker), &dir.join(report)),
        log,
        gpu: worker.gpu.clone(),
    }
}

/// Whether `worker` profiles the kernel name `name` (a worker without names profiles every one).
fn profiles(worker: &Worker, name: &str) -> bool {
    worker
        .names
        .as_ref()
        .is_none_or(|names| names.iter().any(|n| n == name))
}

/// The launch keys of `durations` whose names `worker` profiles.
pub(crate) fn keys_of(durations: &LaunchDurations, worker: &Worker) -> u64 {
    let keys = durations
        .keys()
        .filter(|(name, _, _)| profiles(worker, name));
    keys.count() as u64
}

/// The results worker `worker` takes of the first pass's launches (`None`: not certain, or
/// `countable` is false: the pass then runs to the workload's end).
pub(crate) fn expected(
    durations: &LaunchDurations,
    worker: &Worker,
    skip: u32,
    countable: bool,
) -> Option<u64> {
    let filter = LaunchFilter {
        skip,
        count: worker.count,
    };
    countable
        .then(|| expected_results(durations, filter, |name| profiles(worker, name)))
        .flatten()
}

/// The results worker `worker` takes of these launches, certain or not (its planned cost, shown
/// against the results it took).
pub(crate) fn cost_of(durations: &LaunchDurations, worker: &Worker, skip: u32) -> u64 {
    let filter = LaunchFilter {
        skip,
        count: worker.count,
    };
    results_taken(durations, filter, |name| profiles(worker, name)).0
}

/// How a deep pass's workers run.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Schedule {
    /// All at once; else one after another (ranks of one job taking turns).
    pub together: bool,
    /// Whether a worker that failed runs once more: not for one rank of a launch, whose workload
    /// run alone would wait in its collectives for peers that have moved on.
    pub reruns: bool,
}

/// Runs `passes` (each with its `expected` results) as `schedule` says (one after another, a
/// signal stops the rest), records how each ended (a signal's too), reruns each that failed once,
/// alone, after the others (on the next GPU where there are several) where the schedule allows, and
/// returns how the first pass a signal stopped ended (`None`: none was).
pub(crate) fn run_workers(
    ctx: &DeepRun<'_>,
    passes: Vec<(Pass, Option<u64>)>,
    schedule: Schedule,
    record: &mut RunRecord,
) -> Result<Option<Finished>> {
    let ran = match schedule.together {
        true => at_once(ctx, &passes),
        false => in_turns(ctx, &passes),
    };
    let (mut failed, mut stopped) = (Vec::new(), None);
    for (at, outcome) in ran.into_iter().enumerate() {
        match outcome {
            Ok((finished, covered)) => {
                record.deep_workers[at].pass.finish(&finished, covered);
                if finished.interrupted_by.is_some() {
                    stopped.get_or_insert(finished);
                } else if !record.deep_workers[at].pass.ended_well() {
                    failed.push(at);
                }
            }
            Err(e) => {
                err_line(&format!(
                    "warning: a worker of ncu's deep pass could not be run ({e})"
                ));
                failed.push(at);
            }
        }
    }
    sync_deep_pass(record);
    record.interrupted_by = stopped.as_ref().and_then(|f| f.interrupted_by);
    ctx.run.write_record(record)?;
    if stopped.is_some() {
        return Ok(stopped);
    }
    if !schedule.reruns && !failed.is_empty() {
        for &at in &failed {
            err_line(&super::failed_worker(
                ctx.run,
                at,
                &record.deep_workers[at],
                false,
            ));
        }
        return Ok(None);
    }
    let gpus: Vec<Option<String>> = passes.iter().map(|(p, _)| p.gpu.clone()).collect();
    for at in failed {
        let (pass, expected) = &passes[at];
        let again = Pass {
            name: pass.name,
            cli: pass.cli.clone(),
            log: pass.log.clone(),
            gpu: next_gpu(&gpus, at),
        };
        if let Some(stopped) = rerun_alone(ctx, at, &again, *expected, record)? {
            return Ok(Some(stopped));
        }
    }
    Ok(None)
}

/// Every pass at once, one thread each; how each ended, in order.
fn at_once(
    ctx: &DeepRun<'_>,
    passes: &[(Pass, Option<u64>)],
) -> Vec<Result<(Finished, Option<u64>)>> {
    std::thread::scope(|scope| {
        let handles: Vec<_> = passes
            .iter()
            .map(|(pass, expected)| {
                scope.spawn(move || run_pass(pass, ctx.run, ctx.grace, ctx.display, *expected))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            })
            .collect()
    })
}

/// The passes one after another, until one a signal stopped; how each that ran ended, in order.
fn in_turns(
    ctx: &DeepRun<'_>,
    passes: &[(Pass, Option<u64>)],
) -> Vec<Result<(Finished, Option<u64>)>> {
    let mut ran = Vec::new();
    for (pass, expected) in passes {
        let outcome = run_pass(pass, ctx.run, ctx.grace, ctx.display, *expected);
        let stopped = matches!(&outcome, Ok((finished, _)) if finished.interrupted_by.is_some());
        ran.push(outcome);
        if stopped {
            break;
        }
    }
    ran
}

/// Worker `at`'s second try, `again`, alone: its failed try's files moved aside and its record kept
/// as `failed_try`. Returns how it ended if a signal stopped it.
fn rerun_alone(
    ctx: &DeepRun<'_>,
    at: usize,
    again: &Pass,
    expected: Option<u64>,
    record: &mut RunRecord,
) -> Result<Option<Finished>> {
    let aside = keep_aside(ctx.run, at)?;
    let worker = &mut record.deep_workers[at];
    let failed = std::mem::take(&mut worker.pass);
    worker.pass.command = failed.command.clone();
    worker.failed_try = Some(failed);
    worker.gpu = again.gpu.clone();
    err_line(&format!(
        "warning: worker {at} of ncu's deep pass failed (see {}); running its {} launch keys once more, alone",
        aside.display(),
        worker.keys
    ));
    ctx.run.write_record(record)?;
    let outcome = run_pass(again, ctx.run, ctx.grace, ctx.display, expected);
    let worker = &mut record.deep_workers[at];
    match outcome {
        Ok((finished, covered)) => {
            worker.pass.finish(&finished, covered);
            if !worker.pass.ended_well() && finished.interrupted_by.is_none() {
                err_line(&super::failed_worker(ctx.run, at, worker, true));
            }
            sync_deep_pass(record);
            if finished.interrupted_by.is_some() {
                record.interrupted_by = finished.interrupted_by;
                ctx.run.write_record(record)?;
                return Ok(Some(finished));
            }
        }
        Err(e) => err_line(&format!(
            "warning: worker {at} of ncu's deep pass could not be run again ({e}); its launch keys have no deep results (unmatched)"
        )),
    }
    sync_deep_pass(record);
    ctx.run.write_record(record)?;
    Ok(None)
}

/// A rerun's GPU: the next of the workers' GPUs after its own, so a GPU that failed it is not
/// asked again where there is another; its own where all share one.
fn next_gpu(gpus: &[Option<String>], at: usize) -> Option<String> {
    let mut distinct: Vec<&Option<String>> = Vec::new();
    for gpu in gpus {
        if !distinct.contains(&gpu) {
            distinct.push(gpu);
        }
    }
    let own = distinct.iter().position(|g| **g == gpus[at]).unwrap_or(0);
    distinct[(own + 1) % distinct.len()].clone()
}

/// Worker 0's pass is the deep pass run.json has always recorded, ended when its last worker ended.
fn sync_deep_pass(record: &mut RunRecord) {
    if let Some(first) = record.deep_workers.first() {
        let mut pass = first.pass.clone();
        // The deep pass ends with its last worker (workers stamp their own ends).
        let ends = record
            .deep_workers
            .iter()
            .filter_map(|w| w.pass.finished.as_deref());
        pass.finished = crate::run::latest_time(ends).or(pass.finished);
        record.deep_pass = Some(pass);
    }
}

/// Moves worker `at`'s report file and log of a failed try aside (`…failed.ncu-rep`,
/// `…failed.log`): kept, but never read as the worker's. Returns where its log went.
fn keep_aside(run: &RunDir, at: usize) -> Result<PathBuf> {
    let (report, log) = files(at);
    let log_aside = fresh_path(
        run.root(),
        &format!("{}.failed", log.trim_end_matches(".log")),
        "log",
    );
    let moves = [
        (
            run.path(&ncu_report_file(&report)),
            fresh_path(run.root(), &format!("{report}.failed"), "ncu-rep"),
        ),
        (run.path(&log), log_aside.clone()),
    ];
    for (from, to) in moves {
        if from.is_file() {
            std::fs::rename(&from, &to).map_err(|source| Error::Write { path: to, source })?;
        }
    }
    Ok(log_aside)
}

/// run.json's record of the workers before they start; the first is worker `first`.
pub(crate) fn worker_records(
    workers: &[Worker],
    passes: &[(Pass, Option<u64>)],
    first: usize,
) -> Vec<DeepWorkerRecord> {
    workers
        .iter()
        .zip(passes)
        .enumerate()
        .map(|(at, (worker, (pass, expected)))| {
            let (report, log) = files(first + at);
            DeepWorkerRecord {
                report: ncu_report_file(&report),
                log,
                gpu: worker.gpu.clone(),
                devices: pass.cli.devices().map(str::to_string),
                count: worker.count,
                names: worker.names.as_ref().map_or(0, |n| n.len() as u64),
                keys: worker.keys,
                expected_results: expected.unwrap_or(worker.cost),
                pass: PassRecord {
                    command: pass.command(),
                    ..PassRecord::default()
                },
                failed_try: None,
                rerun_of: None,
            }
        })
        .collect()
}

/// The names each worker that ended well was given and never profiled (no key of them in its
/// report file), run once more as new workers after the others, each on the next GPU; a worker
/// whose file cannot be read is not checked. Names of which it profiled some keys stay as they are:
/// run again, its other keys would count twice. `planned`: the workers as run; `durations`: the
/// first pass's launches. Returns how a rerun a signal stopped ended.
pub(crate) fn rerun_unseen(
    ctx: &DeepRun<'_>,
    deep: &NcuCli,
    planned: &[Worker],
    durations: &LaunchDurations,
    countable: bool,
    record: &mut RunRecord,
) -> Result<Option<Finished>> {
    let gpus: Vec<Option<String>> = planned.iter().map(|w| w.gpu.clone()).collect();
    let mut again: Vec<(usize, Worker)> = Vec::new();
    for (at, worker) in planned.iter().enumerate() {
        let (Some(names), true) = (&worker.names, record.deep_workers[at].pass.ended_well()) else {
            continue;
        };
        let report = ctx.run.path(&record.deep_workers[at].report);
        let Ok(seen) = launch_durations(
            &ctx.plan.analysis,
            &report,
            ctx.plan.max_block_bytes,
            Some(0.0),
        ) else {
            continue;
        };
        let unseen: Vec<String> = names
            .iter()
            .filter(|name| {
                !durations
                    .keys()
                    .any(|(n, shape, _)| n == name.as_str() && seen.contains(n, shape))
            })
            .cloned()
            .collect();
        if unseen.is_empty() {
            continue;
        }
        let keys = durations
            .keys()
            .filter(|(n, _, _)| unseen.iter().any(|u| u == n))
            .count() as u64;
        err_line(&format!(
            "warning: worker {at} of ncu's deep pass profiled none of the launch keys of {} of its kernel names; running them once more on another worker",
            unseen.len()
        ));
        again.push((
            at,
            Worker {
                names: Some(unseen),
                count: worker.count,
                gpu: next_gpu(&gpus, at),
                keys,
                cost: keys,
            },
        ));
    }
    for (of, worker) in again {
        let index = record.deep_workers.len();
        let skip = u32::from(ctx.config.pipeline.ncu.sampling.skip_cold_start);
        let planned = [(
            worker_pass(deep, ctx.config, ctx.run.root(), index, &worker),
            expected(durations, &worker, skip, countable),
        )];
        let mut added = worker_records(std::slice::from_ref(&worker), &planned, index);
        for added in &mut added {
            added.rerun_of = Some(of);
        }
        record.deep_workers.extend(added);
        ctx.run.write_record(record)?;
        let [(pass, expected)] = &planned;
        let (finished, covered) = match run_pass(pass, ctx.run, ctx.grace, ctx.display, *expected) {
            Ok(ran) => ran,
            Err(e) => {
                err_line(&format!(
                    "warning: worker {index} of ncu's deep pass could not be run ({e}); the launch keys it was given have no deep results (unmatched)"
                ));
                continue;
            }
        };
        record.deep_workers[index].pass.finish(&finished, covered);
        ctx.run.write_record(record)?;
        if finished.interrupted_by.is_some() {
            record.interrupted_by = finished.interrupted_by;
            ctx.run.write_record(record)?;
            return Ok(Some(finished));
        }
    }
    Ok(None)
}

/// run.json's `adaptive` for samples sized before the deep pass: every key's count is in its
/// worker's `--launch-count`, so no top-up pass runs.
fn adaptive_record(config: &Config, sizing: Sizing) -> AdaptiveRecord {
    let sampling = &config.pipeline.ncu.sampling;
    AdaptiveRecord {
        error: sampling.error,
        max_samples: sampling.budget(),
        keys: sizing.keys,
        keys_topped_up: sizing.above_launch_count,
        keys_capped: sizing.capped,
        topup_failed: false,
        sizing_failed: None,
        per_region: sampling.error_scope == ErrorScope::Region,
    }
}

/// Why a job of several processes takes no adaptive counts (run.json's `adaptive.sizing_failed`).
pub(crate) const ONE_JOB: &str = "a job of several processes runs its deep pass as one ncu worker, and adaptive counts need one worker per count";

/// run.json's `adaptive` for a run whose keys were sized (`sizing`), or, for a job of several
/// processes (`one_job`), that were not: every key then has `launch_count`.
pub(crate) fn sized_record(config: &Config, sizing: Sizing, one_job: bool) -> AdaptiveRecord {
    match one_job {
        true => AdaptiveRecord {
            sizing_failed: Some(ONE_JOB.to_string()),
            ..adaptive_record(config, Sizing::default())
        },
        false => adaptive_record(config, sizing),
    }
}

/// run.json's `adaptive` when the first pass's launches could not be read: every key has the deep
/// pass's `launch_count`.
pub(crate) fn sizing_failed(config: &Config, why: String) -> AdaptiveRecord {
    err_line(&format!(
        "warning: the adaptive deep samples could not be sized ({why}); every launch key gets launch_count deep samples"
    ));
    AdaptiveRecord {
        sizing_failed: Some(why),
        ..adaptive_record(config, Sizing::default())
    }
}

/// The run's traces (`inputs`) opened as the report reads them: the regions the plan selects,
/// their scopes as the configuration names them.
pub(crate) fn open_traces<'p>(
    config: &Config,
    plan: &'p NcuPlan,
    inputs: &[TraceInput],
) -> Result<TraceSource<'p>> {
    TraceSource::open(
        &plan.analysis,
        inputs,
        scope_of(config),
        plan.regions.excluded(),
        None,
    )
}

/// Each launch key's launches and durations in the first pass (ncu's timing pass, or the CUPTI
/// trace under `timing: trace`), over the launches the later passes' filters select.
pub(crate) fn first_pass_durations(
    config: &Config,
    plan: &NcuPlan,
    run: &RunDir,
    record: &RunRecord,
) -> Result<LaunchDurations> {
    let rank = record.rank.as_ref().map(|r| r.rank);
    Ok(match plan.passes.first {
        FirstPass::Trace => {
            let inputs = trace::traces(run, rank, config.pipeline.ncu.trace.max_mib)?;
            open_traces(config, plan, &inputs)?.launch_durations()?
        }
        FirstPass::Ncu => launch_durations(
            &plan.analysis,
            &run.report_file(),
            plan.max_block_bytes,
            None,
        )?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_job_of_several_processes_keeps_its_deep_pass_on_its_own_gpus() {
        let two = vec!["0".to_string(), "1".to_string()];
        assert_eq!(gpus_for(two.clone(), false), two);
        assert!(gpus_for(two, true).is_empty());
        assert!(gpus_for(Vec::new(), true).is_empty());
    }

    #[test]
    fn a_rerun_goes_to_the_next_gpu_where_there_is_one() {
        let two = [
            Some("0".to_string()),
            Some("1".to_string()),
            Some("1".to_string()),
        ];
        assert_eq!(next_gpu(&two, 0).as_deref(), Some("1"));
        assert_eq!(next_gpu(&two, 2).as_deref(), Some("0"));
        assert_eq!(next_gpu(&[None, None], 1), None, "one GPU: its own");
    }
}
