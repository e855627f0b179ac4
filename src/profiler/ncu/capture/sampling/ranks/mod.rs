//! The deep pass on one rank per group (`pipeline.ncu.sampling.deep_ranks`): data-parallel ranks
//! launch the same kernels, so deep metrics are needed once per distinct set of launch keys. After
//! the first pass, around a launcher, the chosen ranks' devices go to the deep pass as ncu's
//! `--devices` (the other ranks run unprofiled inside the same launch, so collectives complete),
//! one chosen rank per launch of the job when there are several (they take turns);
//! one profile-run per rank, a rank that is not chosen runs its deep-pass step as a plain run of the
//! workload (`exchange` has how ranks agree on a signature choice without talking). Every rank's
//! kernels then take deep metrics by launch key, whichever rank measured them.
//!
//! Floor: profiler (see `crate::profiler`): imports run, process, analysis, insights, report,
//! config, region and the ground floor, and its own profiler's rooms.

mod exchange;

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use crate::config::{Config, DeepRanks, TargetProcesses};
use crate::console::err_line;
use crate::error::{Error, Result};
use crate::profiler::ncu::observe::launch_durations::LaunchDurations;
use crate::profiler::ncu::observe::trace::source::ranks::ProcessLaunches;
use crate::profiler::ncu::plan::{FirstPass, NcuPlan, Passes};
use crate::run::{DeepRanksRecord, Rank, RunDir};

use super::super::trace;
use super::first_pass::open_traces;
use super::workers::Worker;

/// What this run's deep pass does once the ranks are chosen.
#[derive(Debug, Clone, PartialEq)]
pub enum DeepStep {
    /// Run it as planned (one process, every rank chosen, or nothing to choose from).
    AsPlanned,
    /// Run it on these devices only (ncu's `--devices`), around the launcher.
    OnDevices(BTreeSet<u32>),
    /// Run it once per chosen rank, one launch of the job after another, each on that rank's
    /// devices alone: ncu profiles one process's kernel at a time host-wide, and a profiled rank
    /// whose kernel waits for its own collective (whose peers wait for their turn to be profiled)
    /// never gets it back. Seen with DDP on 4 × H200: deep passes on all four ranks at once stopped
    /// after 40 kernels of rank 0 (docs/multi-gpu.md, "Deep metrics on one rank per group").
    InTurns(Vec<BTreeSet<u32>>),
    /// One profile-run per rank with several deep ranks: the deep-pass step runs once per deep rank
    /// in `ranks`' order, one launch of the job each, under ncu in this rank's own round (`mine`)
    /// and unprofiled in the others, for the reason of [`DeepStep::InTurns`].
    InRounds {
        mine: Option<usize>,
        ranks: Vec<u32>,
    },
    /// Run the workload unprofiled instead: this rank is not a deep rank.
    Unprofiled,
}

/// What the first pass found that the deep pass is planned from, read once.
pub(crate) struct FirstFindings {
    /// What this run's deep pass does once the ranks are chosen.
    pub step: DeepStep,
    /// Each launch key's launches and durations in the first pass, where the plan needs them
    /// (`None`: not needed; an error: they could not be read, and the deep pass runs as
    /// configured).
    pub durations: Option<Result<LaunchDurations>>,
    /// Which ranks take the deep pass, for run.json.
    pub deep_ranks: Option<DeepRanksRecord>,
    /// The job's world size where it has ranks on other hosts.
    pub job_world_size: Option<u32>,
}

impl FirstFindings {
    /// Nothing found: the deep pass as configured (`--dry-run`, or a first pass never read).
    pub fn none() -> FirstFindings {
        FirstFindings {
            step: DeepStep::AsPlanned,
            durations: None,
            deep_ranks: None,
            job_world_size: None,
        }
    }
}

/// What `--dry-run` says of the choice of deep ranks, for a sampled run around a launcher
/// (`ncu_cli.target_processes: all`) that does not take every rank.
pub fn dry_run_note(config: &Config, passes: Passes) -> Option<(&'static str, String)> {
    let ncu = &config.pipeline.ncu;
    let around = ncu.ncu_cli.target_processes == Some(TargetProcesses::All);
    if !passes.deep || !around || ncu.sampling.deep_ranks == DeepRanks::All {
        return None;
    }
    Some((
        "the deep pass runs on the chosen ranks",
        format!(
            "# after the first pass, pipeline.ncu.sampling.deep_ranks={} chooses the ranks of the deep pass from each traced process's rank, devices and launch keys; its command then gets --devices of the chosen ranks' devices (several chosen ranks take turns, one launch of the job each) and the other ranks run unprofiled in the same launch (one profile-run per rank: a rank not chosen runs the workload unprofiled instead)",
            ncu.sampling.deep_ranks
        ),
    ))
}

/// The ranks that take the deep pass among `signatures` (rank → signature): every one, the listed
/// ones, or the lowest rank of each distinct signature.
pub fn choose(deep_ranks: &DeepRanks, signatures: &BTreeMap<u32, u64>) -> BTreeSet<u32> {
    match deep_ranks {
        DeepRanks::All => signatures.keys().copied().collect(),
        DeepRanks::List(ranks) => ranks.iter().copied().collect(),
        DeepRanks::Signature => {
            let mut lowest: BTreeMap<u64, u32> = BTreeMap::new();
            for (&rank, &signature) in signatures {
                lowest.entry(signature).or_insert(rank);
            }
            lowest.into_values().collect()
        }
    }
}

/// Decides this run's deep step after its first pass, with the choice for run.json. Around a
/// launcher the trace tells the ranks and their devices apart; one profile-run per rank (the
/// launcher's rank in this process's environment, `rank`) agrees with its peers through files.
/// Holds the first pass's launches too where choosing read them (the deep pass is sized by them).
pub(crate) fn deep_step(
    config: &Config,
    plan: &NcuPlan,
    run: &RunDir,
    rank: Option<&Rank>,
) -> Result<FirstFindings> {
    if plan.passes.first != FirstPass::Trace {
        // ncu's timing pass joins each capture to its own deep pass only (`merge` pools the deep
        // results of traced runs alone), so every rank keeps its own.
        if rank.is_some() && config.pipeline.ncu.sampling.deep_ranks != DeepRanks::All {
            err_line("note: pipeline.ncu.sampling.deep_ranks chooses deep ranks of runs timed by the trace (pipeline.ncu.timing=trace); this run is timed by ncu, so every rank runs its own deep pass");
        }
        return Ok(FirstFindings::none());
    }
    if let Some(me) = rank {
        return exchange::per_rank(config, plan, run, me);
    }
    let inputs = trace::traces(run, None, config.pipeline.ncu.trace.max_mib)?;
    if inputs.is_empty() {
        return Ok(FirstFindings::none());
    }
    let read = open_traces(config, plan, &inputs).and_then(|traces| traces.process_launches());
    let (processes, first) = match read {
        Ok(read) => read,
        // One process (maybe one rank of a job across nodes): a trace that cannot be read here is
        // the deep pass's to warn of, as for any run of one process.
        Err(_) if inputs.len() < 2 => return Ok(FirstFindings::none()),
        Err(e) => return Err(e),
    };
    let job_world_size = ranks_elsewhere(&processes);
    let (step, chosen) = around_launcher(&config.pipeline.ncu.sampling.deep_ranks, &processes)?;
    let mut deep_ranks = None;
    if let Some(chosen) = chosen {
        let (devices, turns) = match &step {
            DeepStep::OnDevices(devices) => (Some(list(devices)), Vec::new()),
            DeepStep::InTurns(turns) => (None, turns.iter().map(list).collect()),
            _ => (None, Vec::new()),
        };
        let how = match (&devices, turns.as_slice()) {
            (Some(d), _) => format!(", ncu --devices {d}; the other ranks run unprofiled"),
            (None, []) => String::new(),
            (None, turns) => format!(
                ", one rank at a time (ncu --devices {}, one launch of the job each; the other ranks run unprofiled), as ncu profiles one process at a time and ranks profiled at once would wait on each other's collectives",
                turns.join(", then ")
            ),
        };
        err_line(&format!(
            "note: the deep pass runs on rank(s) {} of {} (pipeline.ncu.sampling.deep_ranks={}){how}",
            list(&chosen),
            processes.len(),
            config.pipeline.ncu.sampling.deep_ranks,
        ));
        deep_ranks = Some(DeepRanksRecord {
            chosen: chosen.into_iter().collect(),
            devices,
            turns,
            ..DeepRanksRecord::default()
        });
    }
    Ok(FirstFindings {
        step,
        durations: Some(Ok(first)),
        deep_ranks,
        job_world_size,
    })
}

/// The deep step around a launcher, from each traced process's rank, devices and signature, and
/// the ranks chosen (`None`: nothing to choose, the processes carry no rank). Several chosen ranks
/// take turns, each on its own devices. Refused when a chosen rank shares a device index with one
/// that is not, or, where only some ranks are chosen, with another chosen rank: ncu's `--devices`
/// could not tell them apart.
pub fn around_launcher(
    deep_ranks: &DeepRanks,
    processes: &[ProcessLaunches],
) -> Result<(DeepStep, Option<BTreeSet<u32>>)> {
    let ranked: BTreeMap<u32, &ProcessLaunches> = processes
        .iter()
        .filter_map(|p| Some((p.rank?, p)))
        .collect();
    let elsewhere = ranks_elsewhere(processes);
    if let (Some(world), DeepRanks::List(_)) = (elsewhere, deep_ranks) {
        return Err(Error::Usage(format!(
            "pipeline.ncu.sampling.deep_ranks is a list, but the job has {world} ranks and ranks {} alone ran under this profile-run (the others on other hosts, or they left no trace here): each node's profile-run around its launcher chooses among its own ranks and launches the job once per chosen rank, so a list that names ranks of some nodes leaves the others' launches waiting at the rendezvous; set deep_ranks=signature or all, or run one profile-run per rank, whose ranks agree on a list through the shared run directory (docs/running.md, \"Deep metrics on one rank per group\")",
            list(ranked.keys())
        )));
    }
    if processes.len() < 2 || ranked.len() < processes.len() {
        if let Some(unranked) = processes.iter().find(|p| p.rank.is_none()) {
            if processes.len() > 1 && *deep_ranks != DeepRanks::All {
                err_line(&format!(
                    "warning: the trace of process {} holds no launcher rank, so pipeline.ncu.sampling.deep_ranks cannot choose among the processes: the deep pass profiles all of them (an injection library that records ranks, or one profile-run per rank, lets it choose)",
                    unranked.pid
                ));
            }
        }
        return Ok((DeepStep::AsPlanned, None));
    }
    let signatures = ranked.iter().map(|(r, p)| (*r, p.signature)).collect();
    let chosen = choose(deep_ranks, &signatures);
    if let Some(missing) = chosen.iter().find(|r| !ranked.contains_key(r)) {
        return Err(Error::Usage(format!(
            "pipeline.ncu.sampling.deep_ranks names rank {missing}, but the trace holds ranks {} only; name ranks that ran, or set deep_ranks=signature",
            list(ranked.keys())
        )));
    }
    let (shared, turns) = own_devices(&chosen, &ranked);
    if let (Some(world), true) = (elsewhere, turns.len() > 1) {
        if *deep_ranks == DeepRanks::Signature {
            err_line(&format!(
                "warning: the job has {world} ranks, {} of them here: this node's deep pass launches the job {} times (once per distinct signature here), and every other node's profile-run must launch it as often, or the extra launches wait at the launcher's rendezvous; with nodes whose ranks launch different kernels, run one profile-run per rank, whose ranks agree through the shared run directory",
                ranked.len(),
                turns.len()
            ));
        }
    }
    if chosen.len() == ranked.len() {
        if let Some((a, b, device)) = shared {
            err_line(&format!(
                "warning: ranks {a} and {b} both ran on device {device} as their processes number devices, so they cannot take turns in the deep pass (ncu's --devices would profile both): every rank is profiled at once, and a job with collectives may stall there (ncu profiles one process at a time); one profile-run per rank, or deep_ranks=signature, avoids it"
            ));
            return Ok((DeepStep::AsPlanned, Some(chosen)));
        }
        return Ok((DeepStep::InTurns(turns), Some(chosen)));
    }
    let deep_devices: BTreeSet<u32> = turns.iter().flatten().copied().collect();
    let unchosen_sharing =
        ranked
            .iter()
            .filter(|(r, _)| !chosen.contains(r))
            .find_map(|(rank, process)| {
                let device = process.devices.iter().find(|d| deep_devices.contains(d))?;
                let other = chosen.iter().find(|r| ranked[r].devices.contains(device))?;
                Some((*other, *rank, *device))
            });
    if let Some((other, rank, shared)) = unchosen_sharing.or(shared) {
        return Err(Error::Usage(format!(
            "ranks {other} and {rank} both ran on device {shared} as their processes number devices (each rank sees its own GPU as device {shared}, as with CUDA_VISIBLE_DEVICES per rank), so ncu's --devices cannot profile one without the other around the launcher; run one profile-run per rank under the launcher (docs/running.md, \"Deep metrics on one rank per group\")"
        )));
    }
    match turns.len() {
        1 => Ok((DeepStep::OnDevices(deep_devices), Some(chosen))),
        _ => Ok((DeepStep::InTurns(turns), Some(chosen))),
    }
}

/// Two ranks and the device index both ran on.
type SharedDevice = (u32, u32, u32);

/// Each chosen rank's devices, in rank order, and the first two chosen ranks that share a device
/// index (with it), if any: they could not take turns.
fn own_devices(
    chosen: &BTreeSet<u32>,
    ranked: &BTreeMap<u32, &ProcessLaunches>,
) -> (Option<SharedDevice>, Vec<BTreeSet<u32>>) {
    let mut owner: BTreeMap<u32, u32> = BTreeMap::new();
    let mut shared = None;
    let mut turns = Vec::new();
    for rank in chosen {
        let devices: BTreeSet<u32> = ranked[rank].devices.iter().copied().collect();
        for device in &devices {
            if let Some(first) = owner.insert(*device, *rank) {
                shared = shared.or(Some((first, *rank, *device)));
            }
        }
        turns.push(devices);
    }
    (shared, turns)
}

/// Numbers as ncu's `--devices` takes them: `0,2`.
pub(crate) fn list<'a>(numbers: impl IntoIterator<Item = &'a u32>) -> String {
    let numbers: Vec<String> = numbers.into_iter().map(u32::to_string).collect();
    numbers.join(",")
}

/// Whether this run's deep pass may end on its own (once covered): not so for one profile-run per
/// rank of a launch of several ranks, whatever `deep_ranks` chose: its peers run the workload beside
/// its deep pass (unprofiled, or under their own deep pass) to the end, and their collectives would
/// wait for a rank that stopped early. Around a launcher the whole job ends together, unless the
/// job has ranks on other hosts (`job_world_size`), whose profile-runs do not know of the stop.
pub(crate) fn ends_alone(rank: Option<&Rank>, job_world_size: Option<u32>) -> bool {
    job_world_size.is_none() && rank.is_none_or(|rank| rank.world_size == Some(1))
}

/// The job's world size where its traces say it has more ranks than ran here (the others on other
/// hosts, under their own profile-run around their node's launcher).
pub(crate) fn ranks_elsewhere(processes: &[ProcessLaunches]) -> Option<u32> {
    let here: BTreeSet<u32> = processes.iter().filter_map(|p| p.rank).collect();
    let world = processes.iter().filter_map(|p| p.world_size).max()?;
    (world as usize > here.len()).then_some(world)
}

/// Whether the deep pass must run as one worker: the job has several processes (a launcher's
/// ranks in the first pass; one rank of a launch is told by the caller), and two copies of it at
/// once would join each other's collectives.
pub(crate) fn one_worker(step: &DeepStep, first: &LaunchDurations) -> bool {
    matches!(step, DeepStep::OnDevices(_) | DeepStep::InTurns(_)) || first.processes() > 1
}

/// Where each planned worker runs, with the devices it is limited to: once on the chosen devices
/// (`OnDevices`), once per turn, one launch of the job after another (`InTurns`), else as planned.
pub(crate) fn placed(
    planned: Vec<Worker>,
    step: &DeepStep,
) -> Vec<(Worker, Option<BTreeSet<u32>>)> {
    match step {
        DeepStep::OnDevices(devices) => planned
            .into_iter()
            .map(|w| (w, Some(devices.clone())))
            .collect(),
        DeepStep::InTurns(turns) => turns
            .iter()
            .flat_map(|devices| planned.iter().map(|w| (w.clone(), Some(devices.clone()))))
            .collect(),
        DeepStep::AsPlanned | DeepStep::Unprofiled | DeepStep::InRounds { .. } => {
            planned.into_iter().map(|w| (w, None)).collect()
        }
    }
}

/// Whether the deep pass's workers run one after another (several ranks taking turns) rather than
/// all at once.
pub(crate) fn in_turns(step: &DeepStep) -> bool {
    matches!(step, DeepStep::InTurns(turns) if turns.len() > 1)
}

/// The first pass's launches the deep pass will profile: those of the chosen ranks' devices when
/// it runs on them alone, so that a covered pass ends once they are profiled and the samples are
/// sized by them.
pub(crate) fn deep_launches(first: LaunchDurations, step: &DeepStep) -> LaunchDurations {
    match step {
        DeepStep::OnDevices(devices) => launches_on(first, devices),
        DeepStep::InTurns(turns) => launches_on(first, &turns.iter().flatten().copied().collect()),
        DeepStep::AsPlanned | DeepStep::Unprofiled | DeepStep::InRounds { .. } => first,
    }
}

/// The launches of `first` on `devices` alone (a rank's turn takes its own).
pub(crate) fn launches_on(mut first: LaunchDurations, devices: &BTreeSet<u32>) -> LaunchDurations {
    first.retain_processes(|(_, device)| {
        device.is_some_and(|d| u32::try_from(d).is_ok_and(|d| devices.contains(&d)))
    });
    first
}

/// Adds `rank` to the ranks whose own deep results a reading holds (`measured`: its run directory
/// holds a deep pass's report file).
pub fn count_deep_rank(deep_ranks: &mut Option<Vec<u32>>, rank: u32, measured: bool) {
    let ranks = deep_ranks.get_or_insert_with(Vec::new);
    if measured && !ranks.contains(&rank) {
        ranks.push(rank);
        ranks.sort_unstable();
    }
}

/// Several traced runs' deep passes join into one reading only as the ranks of one job: each from
/// a run that knows its rank, no rank twice.
pub fn check_deep_passes(deep: &[(PathBuf, Option<u32>)]) -> Result<()> {
    if deep.len() < 2 {
        return Ok(());
    }
    let mut seen = BTreeSet::new();
    let unranked = deep
        .iter()
        .find(|(_, rank)| !rank.is_some_and(|r| seen.insert(r)));
    match unranked {
        None => Ok(()),
        Some(_) => Err(Error::Usage(format!(
            "{} sampled runs timed by the trace are given ({}), but not as the ranks of one job (each run's run.json names a distinct rank); report each run on its own",
            deep.len(),
            deep.iter()
                .map(|(p, _)| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ))),
    }
}

#[cfg(test)]
mod tests;
