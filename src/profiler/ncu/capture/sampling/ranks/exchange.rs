//! One profile-run per rank: how the ranks agree on the deep ranks without talking. Each rank
//! writes its signature (a digest of the launch keys its first pass launched in the selected
//! regions) into the launch's shared run directory (`<output.root>/<run name>/deep-ranks/`), then
//! waits, at most `deep_ranks_wait_seconds`, for every rank's file; every rank then makes the same
//! choice from the same files. A rank that gives up waiting chooses from the files it has, with a
//! warning, and never hangs.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::time::{Duration, Instant};

use crate::config::{Config, DeepRanks};
use crate::console::err_line;
use crate::error::{Error, Result};
use crate::process::received_signal;
use crate::profiler::ncu::observe::launch_durations::LaunchDurations;
use crate::profiler::ncu::observe::trace::source::ranks::{digest, key_text};
use crate::profiler::ncu::plan::NcuPlan;
use crate::report::write::write_atomic;
use crate::run::{DeepRanksRecord, Rank, RunDir};

use super::super::first_pass::first_pass_durations;
use super::{choose, DeepStep, FirstFindings};

/// The folder of the ranks' signature files, in the launch's shared run directory.
pub const SIGNATURES_DIR: &str = "deep-ranks";

/// How often a waiting rank looks for its peers' files.
const POLL: Duration = Duration::from_millis(200);

/// This rank's deep step, one profile-run per rank, with the choice for run.json and the first
/// pass's launches where choosing read them (`signature`).
pub(super) fn per_rank(
    config: &Config,
    plan: &NcuPlan,
    run: &RunDir,
    me: &Rank,
) -> Result<FirstFindings> {
    let sampling = &config.pipeline.ncu.sampling;
    let Some((chosen, warning, read)) = chosen_ranks(config, plan, run, me)? else {
        return Ok(found(DeepStep::AsPlanned, None, None));
    };
    // A signal ended the wait: nothing is chosen, and no deep pass starts (the capture checks).
    if received_signal().is_some() {
        return Ok(found(DeepStep::AsPlanned, None, None));
    }
    if let Some(warning) = &warning {
        err_line(&format!("warning: {warning}"));
    }
    let deep = chosen.contains(&me.rank);
    err_line(&format!(
        "note: rank {} {} (deep ranks: {}; pipeline.ncu.sampling.deep_ranks={})",
        me.rank,
        if deep {
            "runs the deep pass"
        } else {
            "is not a deep rank: it runs its deep-pass step unprofiled"
        },
        super::list(&chosen),
        sampling.deep_ranks
    ));
    if deep && (sampling.stop_when_covered || sampling.adaptive) {
        err_line(&format!(
            "note: rank {} runs its deep pass to the workload's end: the other ranks run the workload beside it, unprofiled, and would wait in their collectives for a rank that stopped early",
            me.rank
        ));
    }
    let ranks: Vec<u32> = chosen.iter().copied().collect();
    let step = step_of(me, deep, ranks.clone(), warning.is_none());
    let deep_ranks = DeepRanksRecord {
        chosen: ranks,
        warning,
        ..DeepRanksRecord::default()
    };
    Ok(found(step, Some(deep_ranks), read))
}

/// What one profile-run per rank found: no world size to place it on, ranks on no other host.
fn found(
    step: DeepStep,
    deep_ranks: Option<DeepRanksRecord>,
    durations: Option<LaunchDurations>,
) -> FirstFindings {
    FirstFindings {
        step,
        durations: durations.map(Ok),
        deep_ranks,
        job_world_size: None,
    }
}

/// The deep ranks `deep_ranks` chooses, the warning when they were chosen from part of the
/// signatures, and the first pass's launches where choosing read them; `None`: nothing to choose
/// (a launch of one rank, or one whose size is unknown under `all`, with a warning).
fn chosen_ranks(
    config: &Config,
    plan: &NcuPlan,
    run: &RunDir,
    me: &Rank,
) -> Result<Option<Chosen>> {
    Ok(Some(match &config.pipeline.ncu.sampling.deep_ranks {
        // Every rank, in rounds; a launch whose size is unknown cannot count them.
        DeepRanks::All => match me.world_size {
            Some(world) if world > 1 => ((0..world).collect(), None, None),
            Some(_) => return Ok(None),
            None => {
                err_line(&format!(
                    "warning: rank {}'s launcher gave no world size ({} alone), so deep_ranks=all cannot take the ranks in rounds: every rank runs its deep pass at once, and ranks of one host that wait on each other's collectives may stall there (ncu profiles one process at a time); set the world size (WORLD_SIZE, …) or deep_ranks=signature",
                    me.rank, me.source
                ));
                return Ok(None);
            }
        },
        DeepRanks::List(ranks) => {
            let world = me.world_size.unwrap_or(u32::MAX);
            if let Some(beyond) = ranks.iter().find(|&&r| r >= world) {
                return Err(Error::Usage(format!(
                    "pipeline.ncu.sampling.deep_ranks names rank {beyond}, but the launcher started {world} rank(s) (the world size beside {}); name ranks below {world}, or set deep_ranks=signature",
                    me.source
                )));
            }
            (ranks.iter().copied().collect(), None, None)
        }
        DeepRanks::Signature => by_signature(config, plan, run, me)?,
    }))
}

/// The chosen ranks, the warning when some peers' signatures did not come, the launches read.
type Chosen = (BTreeSet<u32>, Option<String>, Option<LaunchDurations>);

/// This rank's step among the deep `ranks`: rounds, one launch of the job per deep rank, where
/// there are several and every rank chose from every signature (`agreed`: a choice from part of
/// them may differ from a peer's, and ranks that count different rounds would leave each other
/// waiting in their collectives, so such a choice runs at once); else its deep pass, or the
/// workload unprofiled where it is no deep rank (`deep`).
fn step_of(me: &Rank, deep: bool, ranks: Vec<u32>, agreed: bool) -> DeepStep {
    if ranks.len() > 1 && !agreed {
        err_line(&format!(
            "warning: rank {} chose its deep ranks ({}) from part of the signatures, so they cannot take rounds (a peer may have chosen otherwise): each runs its deep pass at once, and ranks of one host that wait on each other's collectives may stall there",
            me.rank,
            super::list(&ranks)
        ));
    }
    if ranks.len() > 1 && agreed {
        err_line(&format!(
            "note: the deep ranks take turns: rank {} runs the workload {} times, once per deep rank ({}), under ncu in its own turn only, as ncu profiles one process at a time on a host and deep ranks profiled at once would wait on each other's collectives",
            me.rank,
            ranks.len(),
            super::list(&ranks)
        ));
        let mine = ranks.iter().position(|r| *r == me.rank);
        return DeepStep::InRounds { mine, ranks };
    }
    match deep {
        true => DeepStep::AsPlanned,
        false => DeepStep::Unprofiled,
    }
}

/// The deep ranks chosen by signature: this rank's first-pass launch keys digested and exchanged
/// with its peers' through the launch's shared run directory; with the warning when some peers'
/// did not come, and the first pass's launches read.
fn by_signature(config: &Config, plan: &NcuPlan, run: &RunDir, me: &Rank) -> Result<Chosen> {
    let durations = first_pass_durations(config, plan, run, Some(me))?;
    let mut keys: Vec<String> = durations
        .keys()
        .map(|(name, shape, _)| key_text(name, shape))
        .collect();
    keys.sort_unstable();
    let signature = digest(keys.iter().map(String::as_str));
    let shared = run.root().parent().unwrap_or(run.root());
    let wait = Duration::from_secs(config.pipeline.ncu.sampling.deep_ranks_wait_seconds);
    let (signatures, warning) = exchange(&shared.join(SIGNATURES_DIR), me, signature, wait)?;
    let chosen = choose(&DeepRanks::Signature, &signatures);
    Ok((chosen, warning, Some(durations)))
}

/// Writes this rank's signature into `dir` and reads every rank's, waiting at most `wait` for
/// `me.world_size` of them, and no longer once profile-run has received a signal; the signatures
/// read (this rank's among them) and, when some did not come in time, a warning saying so.
pub fn exchange(
    dir: &Path,
    me: &Rank,
    signature: u64,
    wait: Duration,
) -> Result<(BTreeMap<u32, u64>, Option<String>)> {
    std::fs::create_dir_all(dir).map_err(|source| Error::Write {
        path: dir.to_path_buf(),
        source,
    })?;
    let mine = dir.join(format!("rank{}.signature", me.rank));
    write_atomic(&mine, format!("{signature:016x}\n").as_bytes())?;
    let Some(world) = me.world_size else {
        let read = read_signatures(dir);
        let warning = format!(
            "the launcher did not say how many ranks it started ({} is set without its world size), so rank {} could not wait for every rank's signature: it chose from the {} it found in {}",
            me.source,
            me.rank,
            read.len(),
            dir.display()
        );
        return Ok((read, Some(warning)));
    };
    let started = Instant::now();
    loop {
        let read = read_signatures(dir);
        // A signal ends the wait at once, not when the wait would have: the run is stopping.
        if read.len() >= world as usize || received_signal().is_some() {
            return Ok((read, None));
        }
        if started.elapsed() >= wait {
            let missing: BTreeSet<u32> = (0..world).filter(|r| !read.contains_key(r)).collect();
            let missing: Vec<String> = missing.iter().map(u32::to_string).collect();
            return Ok((read.clone(), Some(format!(
                "rank {} waited {} s (pipeline.ncu.sampling.deep_ranks_wait_seconds) for every rank's signature in {}, and rank(s) {} did not write one: it chose from the {} of {} it has, so its own group's lowest known rank runs the deep pass; raise deep_ranks_wait_seconds if the ranks' first passes end far apart",
                me.rank,
                wait.as_secs(),
                dir.display(),
                missing.join(","),
                read.len(),
                world
            ))));
        }
        std::thread::sleep(POLL);
    }
}

/// The signatures in `dir`, by rank: `rank<N>.signature` files holding a hexadecimal digest; a
/// file half written or of another shape is not one yet.
fn read_signatures(dir: &Path) -> BTreeMap<u32, u64> {
    let mut read = BTreeMap::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(rank) = name
            .strip_prefix("rank")
            .and_then(|n| n.strip_suffix(".signature"))
            .and_then(|n| n.parse().ok())
        else {
            continue;
        };
        let text = crate::run::read_run_text(&entry.path());
        if let Ok(signature) = u64::from_str_radix(text.trim(), 16) {
            read.insert(rank, signature);
        }
    }
    read
}
