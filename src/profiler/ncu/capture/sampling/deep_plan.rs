//! Which kernels the deep pass profiles, and how it runs: a pure function of the run's plan and of
//! what the first pass found ([`FirstFindings`]) into groups of passes for the executor
//! ([`DeepPlan`]). It starts no process and opens no file (`tests/it/architecture/planner.rs`).
//!
//! Floor: profiler (see `crate::profiler`): imports run, process, analysis, insights, report,
//! config, region and the ground floor, and its own profiler's rooms.
//!
//! In order: the deep step the ranks chose (`ranks`); the names `min_time_share` keeps (`share`);
//! each launch key's sample count, sized from its durations (`workers::needs`) and split into
//! strata; the workers, one per count (`workers::plan`), placed on the chosen ranks' devices or
//! taking turns (`ranks::placed`); the results each is expected to give, after which its workload
//! stops (`coverage`); and what happens to a worker that fails. Where the first pass's launches
//! are unknown the deep pass runs as configured, to the workload's end.

use std::collections::BTreeSet;
use std::path::Path;

use crate::analysis::AdaptiveRecord;
use crate::config::{CacheControl, Config, NcuCliConfig};
use crate::error::{Error, Result};
use crate::profiler::ncu::nvtx::NvtxPlan;
use crate::profiler::ncu::observe::launch_durations::LaunchDurations;
use crate::profiler::ncu::plan::Passes;
use crate::run::{
    ncu_report_file, DeepWorkerRecord, Finding, PassGroup, PassRecord, PassSpec, Rank, Rerun, Slot,
    Stage, NCU_UNPROFILED_LOG,
};

use super::super::passes::{ncu_cli, under_ncu, unprofiled};
use super::super::run::cli::NcuCli;
use super::coverage::{self, expected_results, results_taken, LaunchFilter};
use super::in_process;
use super::ranks::{self, DeepStep, FirstFindings};
use super::share::{self, DeepSelection};
use super::workers::{self, files, worker_flags, Sizing, Worker};
use super::{deep_flags, in_extra_args, DEEP_LOG, DEEP_REPORT_BASE};

/// What the deep pass is planned for.
pub(crate) struct DeepInputs<'a> {
    pub config: &'a Config,
    /// The run's passes (what the first pass is).
    pub passes: Passes,
    /// The NVTX filter every ncu pass takes.
    pub nvtx: &'a NvtxPlan,
    /// The run directory, as the command lines name it.
    pub dir: &'a Path,
    pub workload: &'a [String],
    /// This run's rank under a launcher, one profile-run per rank.
    pub rank: Option<&'a Rank>,
}

/// The deep pass, planned.
pub(crate) struct DeepPlan {
    pub stages: Vec<Stage>,
    /// How adaptive samples were sized (run.json's `adaptive`).
    pub adaptive: Option<AdaptiveRecord>,
    /// Notes and warnings to say before it runs.
    pub notes: Vec<String>,
    /// The workers to check once they ended for names they were given and never profiled (run
    /// again on new workers); `None`: none are checked.
    pub unseen: Option<Unseen>,
}

/// What the check for names never profiled needs.
pub(crate) struct Unseen {
    pub workers: Vec<Worker>,
    pub durations: LaunchDurations,
    pub countable: bool,
}

/// The deep pass for `found`.
pub(crate) fn plan(inputs: &DeepInputs<'_>, found: FirstFindings) -> Result<DeepPlan> {
    let ends_alone = ranks::ends_alone(inputs.rank, found.job_world_size);
    match found.step {
        DeepStep::Unprofiled => Ok(DeepPlan::of(vec![Stage::Run(PassGroup {
            passes: vec![unprofiled(
                inputs.workload,
                Slot::Unprofiled,
                NCU_UNPROFILED_LOG,
                "not a deep rank: running the workload unprofiled".to_string(),
            )],
            at_once: false,
            rerun: Rerun::Warn,
        })])),
        DeepStep::InRounds { mine, ranks } => {
            let own = planned(inputs, DeepStep::AsPlanned, found.durations, ends_alone);
            let (mut own, mut notes) = match own {
                Ok(plan) => (Some(Ok(plan.groups())), plan.notes),
                Err(e) => (Some(Err(e)), Vec::new()),
            };
            let stages = ranks
                .iter()
                .enumerate()
                .map(|(round, &deep_rank)| match Some(round) == mine {
                    // Its own round: its deep pass (or why it could not be planned).
                    true => Stage::Guarded {
                        what: format!("rank {deep_rank}'s deep pass"),
                        groups: own.take().expect("one own round"),
                        then: Box::new(Finding::OwnRound(deep_rank)),
                    },
                    false => Stage::Run(round_unprofiled(inputs, round, &ranks)),
                })
                .collect();
            notes.retain(|_| mine.is_some());
            Ok(DeepPlan {
                stages,
                notes,
                ..DeepPlan::of(Vec::new())
            })
        }
        step => planned(inputs, step, found.durations, ends_alone),
    }
}

impl DeepPlan {
    fn of(stages: Vec<Stage>) -> DeepPlan {
        DeepPlan {
            stages,
            adaptive: None,
            notes: Vec::new(),
            unseen: None,
        }
    }

    /// Its groups of passes, in order (the stages of a plan without rounds).
    fn groups(&self) -> Vec<PassGroup> {
        self.stages
            .iter()
            .filter_map(|stage| match stage {
                Stage::Run(group) => Some(group.clone()),
                Stage::Guarded { .. } => None,
            })
            .collect()
    }

    /// Every pass's shell line, in order (`--dry-run`).
    pub fn lines(&self) -> Vec<String> {
        self.groups()
            .iter()
            .flat_map(|g| g.passes.iter().map(|p| p.line.clone()))
            .collect()
    }
}

/// Another deep rank's round: this rank runs the workload unprofiled, so that collectives complete.
fn round_unprofiled(inputs: &DeepInputs<'_>, round: usize, ranks: &[u32]) -> PassGroup {
    let deep_rank = ranks[round];
    let status = format!(
        "round {} of {}: rank {deep_rank}'s deep pass; running the workload unprofiled",
        round + 1,
        ranks.len()
    );
    PassGroup {
        passes: vec![unprofiled(
            inputs.workload,
            Slot::Round { deep_rank },
            &format!("unprofiled.round{round}.log"),
            status,
        )],
        at_once: false,
        rerun: Rerun::Warn,
    }
}

/// The deep pass of a run whose deep step is `step`: sized and placed from the first pass's
/// launches where they could be read, else as configured.
fn planned(
    inputs: &DeepInputs<'_>,
    step: DeepStep,
    first: Option<Result<LaunchDurations>>,
    ends_alone: bool,
) -> Result<DeepPlan> {
    let config = inputs.config;
    let sampling = &config.pipeline.ncu.sampling;
    let countable = coverage::uncountable(config, inputs.passes).is_none();
    let first = first.map(|read| read.map(|first| ranks::deep_launches(first, &step)));
    let mut notes = Vec::new();
    let selection = keep_where_it_matters(config, first.as_ref(), &mut notes)?;
    let durations = match first {
        Some(Ok(durations)) => durations,
        Some(Err(e)) => {
            let mut plan = as_configured(inputs, &step, ends_alone);
            if sampling.adaptive {
                notes.push(format!("warning: the adaptive deep samples could not be sized ({e}); every launch key gets launch_count deep samples"));
                plan.adaptive = Some(sizing_failed(config, e.to_string()));
            }
            notes.push(format!(
                "warning: the first pass's launches could not be read ({e}); the deep pass runs as configured, to the workload's end"
            ));
            plan.notes.splice(0..0, notes);
            return Ok(plan);
        }
        None => {
            let mut plan = as_configured(inputs, &step, ends_alone);
            plan.notes.splice(0..0, notes);
            return Ok(plan);
        }
    };
    let skip = u32::from(sampling.skip_cold_start);
    let kept = |name: &str| {
        selection
            .as_ref()
            .is_none_or(|s| s.kept.iter().any(|k| k == name))
    };
    let one_job = inputs.rank.is_some() || ranks::one_worker(&step, &durations);
    let mut sizing_settings = sampling.clone();
    if one_job && sampling.adaptive {
        notes.push(format!(
            "note: {ONE_JOB} (two copies of the job at once would join each other's collectives): each launch key takes pipeline.ncu.sampling.launch_count={} deep sample(s)",
            sampling.launch_count
        ));
        sizing_settings.adaptive = false;
    }
    let (needs, sizing) = workers::needs(&durations, &sizing_settings, skip, kept);
    let adaptive = sampling
        .adaptive
        .then(|| sized_record(config, sizing, one_job));
    let placed = ranks::placed(workers::plan(&needs, selection.is_some()), &step);
    let countable = countable && ends_alone;
    let (planned, passes) = placed_passes(inputs, placed, Some(&durations), countable);
    let reruns = ends_alone;
    let group = workers_group(inputs, &planned, passes, ranks::in_turns(&step), reruns);
    Ok(DeepPlan {
        stages: vec![Stage::Run(group)],
        adaptive,
        notes,
        // A rerun of names never seen would profile every rank of a job at once (or one rank of a
        // launch alone): there what a worker never saw stays unmatched, or comes from another rank.
        unseen: (reruns && !one_job).then_some(Unseen {
            workers: planned,
            durations,
            countable,
        }),
    })
}

/// The deep pass as configured, to the workload's end, where the first pass's launches are not
/// known: on the chosen ranks' devices, or once per rank taking its turn.
fn as_configured(inputs: &DeepInputs<'_>, step: &DeepStep, ends_alone: bool) -> DeepPlan {
    if !ranks::in_turns(step) {
        let mut cli = configured(inputs);
        if let DeepStep::OnDevices(devices) = step {
            cli = cli.on_devices(&ranks::list(devices));
        }
        let pass = deep_spec(
            Slot::Deep,
            &cli,
            DEEP_REPORT_BASE,
            DEEP_LOG.to_string(),
            None,
        );
        return DeepPlan::of(vec![Stage::Run(PassGroup::alone(pass))]);
    }
    let whole = Worker {
        names: None,
        count: inputs.config.pipeline.ncu.sampling.launch_count,
        keys: 0,
        cost: 0,
    };
    let placed = ranks::placed(vec![whole], step);
    let (planned, passes) = placed_passes(inputs, placed, None, false);
    let group = workers_group(inputs, &planned, passes, true, ends_alone);
    DeepPlan::of(vec![Stage::Run(group)])
}

/// The deep pass as configured: the run's ncu command with the deep flags, into
/// `profile.deep.ncu-rep`.
fn configured(inputs: &DeepInputs<'_>) -> NcuCli {
    ncu_cli(inputs.nvtx, inputs.config, inputs.dir, inputs.workload)
        .with_flags(flags(inputs), &inputs.dir.join(DEEP_REPORT_BASE))
}

/// The run's ncu flags with the deep pass's own (`deep_flags`).
fn flags(inputs: &DeepInputs<'_>) -> NcuCliConfig {
    let sampling = &inputs.config.pipeline.ncu.sampling;
    deep_flags(
        &inputs.config.pipeline.ncu.ncu_cli,
        sampling.launch_count,
        sampling.skip_cold_start,
    )
}

/// One deep pass or worker under ncu, writing `report` (a report base) and `log`.
fn deep_spec(
    slot: Slot,
    cli: &NcuCli,
    report: &str,
    log: String,
    expected: Option<u64>,
) -> PassSpec {
    let mut pass = under_ncu(
        "ncu's deep pass",
        slot,
        cli,
        &log,
        vec![ncu_report_file(report)],
    );
    pass.expected = expected;
    pass
}

/// A placed worker, ready to run: its command line and the results it is expected to give.
struct Placed {
    cli: NcuCli,
    expected: Option<u64>,
}

/// Each placed worker's command line (its file, flags and devices) with the results it is expected
/// to take of the first pass's launches (`durations`; `None`: unknown, and so are its results). A
/// worker limited to some devices (a rank's turn) counts its launch keys, cost and results on
/// theirs alone. `countable`: whether the pass may end once it has them (`stop_when_covered`).
fn placed_passes(
    inputs: &DeepInputs<'_>,
    placed: Vec<(Worker, Option<BTreeSet<u32>>)>,
    durations: Option<&LaunchDurations>,
    countable: bool,
) -> (Vec<Worker>, Vec<Placed>) {
    let skip = u32::from(inputs.config.pipeline.ncu.sampling.skip_cold_start);
    let deep = configured(inputs);
    placed
        .into_iter()
        .enumerate()
        .map(|(at, (mut worker, devices))| {
            let cli = worker_cli(inputs, &deep, at, &worker);
            let Some(devices) = devices else {
                let expected = durations.and_then(|d| expected(d, &worker, skip, countable));
                return (worker, Placed { cli, expected });
            };
            let expected = durations.and_then(|d| {
                let on_them = ranks::launches_on(d.clone(), &devices);
                worker.keys = keys_of(&on_them, &worker);
                // What it takes on its devices, whether or not the pass may end on that count
                // (run.json and the reports hold a turn's results against it).
                worker.cost = cost_of(&on_them, &worker, skip);
                expected(&on_them, &worker, skip, countable)
            });
            let cli = cli.on_devices(&ranks::list(&devices));
            (worker, Placed { cli, expected })
        })
        .unzip()
}

/// Worker `index`'s command line: the deep pass's with the worker's launch filter and report file.
fn worker_cli(inputs: &DeepInputs<'_>, deep: &NcuCli, index: usize, worker: &Worker) -> NcuCli {
    let (report, _) = files(index);
    deep.clone().with_flags(
        worker_flags(&flags(inputs), worker),
        &inputs.dir.join(report),
    )
}

/// The placed workers as one group: a deep pass of one worker is run.json's `deep_pass`; of
/// several, `deep_workers`, all at once unless ranks take turns, and a failed one runs once more,
/// alone, after the others where `reruns` (else a warning: one rank of a launch cannot run alone).
fn workers_group(
    inputs: &DeepInputs<'_>,
    planned: &[Worker],
    placed: Vec<Placed>,
    in_turns: bool,
    reruns: bool,
) -> PassGroup {
    if placed.len() == 1 {
        let Placed { cli, expected } = &placed[0];
        let (report, log) = files(0);
        return PassGroup::alone(deep_spec(Slot::Deep, cli, &report, log, *expected));
    }
    if placed.is_empty() {
        let pass = deep_spec(
            Slot::Deep,
            &configured(inputs),
            DEEP_REPORT_BASE,
            DEEP_LOG.to_string(),
            None,
        );
        return PassGroup::alone(pass);
    }
    let passes = planned
        .iter()
        .zip(placed)
        .enumerate()
        .map(|(index, (worker, placed))| worker_spec(index, worker, placed, None))
        .collect();
    PassGroup {
        passes,
        at_once: !in_turns,
        rerun: match reruns {
            true => Rerun::Alone,
            false => Rerun::Warn,
        },
    }
}

/// Worker `index`, as run.json records it before it starts (`rerun_of`: the worker whose unseen
/// names it takes).
fn worker_spec(index: usize, worker: &Worker, placed: Placed, rerun_of: Option<usize>) -> PassSpec {
    let (report, log) = files(index);
    let planned = DeepWorkerRecord {
        report: ncu_report_file(&report),
        log: log.clone(),
        gpu: None,
        devices: placed.cli.devices().map(str::to_string),
        count: worker.count,
        names: worker.names.as_ref().map_or(0, |n| n.len() as u64),
        keys: worker.keys,
        expected_results: placed.expected.unwrap_or(worker.cost),
        pass: PassRecord::default(),
        failed_try: None,
        rerun_of,
    };
    let slot = Slot::Worker {
        index,
        planned: Box::new(planned),
    };
    deep_spec(slot, &placed.cli, &report, log, placed.expected)
}

/// New workers, one after another, for the names each worker of `unseen` was given and never
/// profiled (`again`: the worker's index and the new worker), numbered from `first`.
pub(crate) fn unseen_group(
    inputs: &DeepInputs<'_>,
    unseen: &Unseen,
    again: Vec<(usize, Worker)>,
    first: usize,
) -> PassGroup {
    let skip = u32::from(inputs.config.pipeline.ncu.sampling.skip_cold_start);
    let deep = configured(inputs);
    let passes = again
        .into_iter()
        .enumerate()
        .map(|(at, (of, worker))| {
            let index = first + at;
            let placed = Placed {
                cli: worker_cli(inputs, &deep, index, &worker),
                expected: expected(&unseen.durations, &worker, skip, unseen.countable),
            };
            worker_spec(index, &worker, placed, Some(of))
        })
        .collect();
    PassGroup {
        passes,
        at_once: false,
        rerun: Rerun::Quietly,
    }
}

/// The deep pass under ncu for the launch keys an in-process run could not measure, those that
/// ran only inside CUDA graphs (`names`, mangled; `sampling.graph_kernels: ncu`): the run's ncu
/// command with the deep flags, limited to those names, each graph node's kernel a result of its
/// own (ncu's default `--graph-profiling node`), to the workload's end; run.json's `deep_pass`.
/// With `ncu_cli.cache_control` unset the caches are not flushed (`--cache-control none`): the
/// in-process counters beside these values are read that way (kernel replay flushes nothing), and
/// a region holding kernels of both reads one way throughout. It collects every metric the
/// counters collect (`--metrics`, beside ncu's sections), so that those kernels miss none of them.
pub(crate) fn graph_kernels(inputs: &DeepInputs<'_>, names: Vec<String>) -> PassGroup {
    let worker = Worker {
        names: Some(names),
        count: inputs.config.pipeline.ncu.sampling.launch_count,
        keys: 0,
        cost: 0,
    };
    let mut flags = flags(inputs);
    if !in_extra_args(&flags, "--cache-control") {
        flags.cache_control.get_or_insert(CacheControl::None);
    }
    for metric in in_process::metrics(inputs.config).collected {
        if !flags.metrics.contains(&metric) {
            flags.metrics.push(metric);
        }
    }
    let (report, log) = files(0);
    let cli = ncu_cli(inputs.nvtx, inputs.config, inputs.dir, inputs.workload)
        .with_flags(worker_flags(&flags, &worker), &inputs.dir.join(&report));
    PassGroup::alone(deep_spec(Slot::Deep, &cli, &report, log, None))
}

/// Whether `worker` profiles the kernel name `name` (a worker without names profiles every one).
pub(crate) fn profiles(worker: &Worker, name: &str) -> bool {
    worker
        .names
        .as_ref()
        .is_none_or(|names| names.iter().any(|n| n == name))
}

/// The launch keys of `durations` whose names `worker` profiles.
fn keys_of(durations: &LaunchDurations, worker: &Worker) -> u64 {
    let keys = durations
        .keys()
        .filter(|(name, _, _)| profiles(worker, name));
    keys.count() as u64
}

/// The results `worker` takes of the first pass's launches (`None`: not certain, or `countable`
/// is false: the pass then runs to the workload's end).
fn expected(
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

/// The results `worker` takes of these launches, certain or not (its planned cost).
fn cost_of(durations: &LaunchDurations, worker: &Worker, skip: u32) -> u64 {
    let filter = LaunchFilter {
        skip,
        count: worker.count,
    };
    results_taken(durations, filter, |name| profiles(worker, name)).0
}

/// The names the deep pass keeps under `sampling.min_time_share` (`None`: it keeps every name, as
/// at 0, or when the first pass's launches could not be read, said in `notes`). Leaving out every
/// name is refused: the deep pass would measure nothing.
fn keep_where_it_matters(
    config: &Config,
    first: Option<&Result<LaunchDurations>>,
    notes: &mut Vec<String>,
) -> Result<Option<DeepSelection>> {
    let share = config.pipeline.ncu.sampling.min_time_share;
    let durations = match first {
        Some(Ok(durations)) if share > 0.0 => durations,
        Some(Err(e)) if share > 0.0 => {
            notes.push(format!(
                "warning: the first pass's launches could not be read ({e}); pipeline.ncu.sampling.min_time_share leaves nothing out, the deep pass profiles every launch key"
            ));
            return Ok(None);
        }
        _ => return Ok(None),
    };
    let selection = share::select(durations, share);
    if selection.left_out.is_empty() {
        return Ok(None);
    }
    if selection.kept.is_empty() {
        return Err(Error::Usage(format!(
            "pipeline.ncu.sampling.min_time_share is {share}, and every launch key of the first pass is below that share of each of its regions: the deep pass would measure nothing; lower min_time_share (0 leaves nothing out)"
        )));
    }
    let (keys, keys_left_out) = selection.keys;
    notes.push(format!(
        "note: pipeline.ncu.sampling.min_time_share={share} leaves {} of {} kernel names ({keys_left_out} of {keys} launch keys) out of the deep pass; their deep metrics are not measured",
        selection.left_out.len(),
        selection.left_out.len() + selection.kept.len()
    ));
    Ok(Some(selection))
}

/// run.json's `adaptive` for samples sized before the deep pass: every key's count is in its
/// worker's `--launch-count`.
fn adaptive_record(config: &Config, sizing: Sizing) -> AdaptiveRecord {
    let sampling = &config.pipeline.ncu.sampling;
    AdaptiveRecord {
        error: sampling.error,
        max_samples: sampling.budget(),
        keys: sizing.keys,
        keys_topped_up: sizing.above_launch_count,
        keys_capped: sizing.capped,
        sizing_failed: None,
        per_region: sampling.error_scope == crate::config::ErrorScope::Region,
    }
}

/// Why a job of several processes takes no adaptive counts (run.json's `adaptive.sizing_failed`).
pub(crate) const ONE_JOB: &str = "a job of several processes runs its deep pass as one ncu worker, and adaptive counts need one worker per count";

/// run.json's `adaptive` for a run whose keys were sized (`sizing`), or, for a job of several
/// processes (`one_job`), that were not: every key then has `launch_count`.
fn sized_record(config: &Config, sizing: Sizing, one_job: bool) -> AdaptiveRecord {
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
fn sizing_failed(config: &Config, why: String) -> AdaptiveRecord {
    AdaptiveRecord {
        sizing_failed: Some(why),
        ..adaptive_record(config, Sizing::default())
    }
}

#[cfg(test)]
mod tests;
