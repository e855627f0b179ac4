//! What each traced process of a multi-process run launched, for choosing the ranks of the deep
//! pass (`pipeline.ncu.sampling.deep_ranks`): its launcher rank, the devices its kernels ran on,
//! and its signature, the set of launch keys it launched in the selected regions.

use std::collections::{BTreeMap, BTreeSet, HashSet};

use crate::error::Result;
use crate::profiler::ncu::observe::launch_durations::LaunchDurations;
use crate::profiler::ncu::observe::launch_key::Shape;
use crate::profiler::ncu::readers::trace as file;
use crate::report::model::RankCoverage;

use super::{deep, TraceSource, Wanted};

/// One traced process: who it is, where its kernels ran, and what it launched.
#[derive(Debug, Clone, PartialEq)]
pub struct ProcessLaunches {
    pub pid: u32,
    /// Its launcher rank (the run's, one profile-run per rank; else the trace's own).
    pub rank: Option<u32>,
    /// How many ranks its launcher started, on every host (the trace's record).
    pub world_size: Option<u32>,
    /// The devices its kernels ran on, as the process numbered them.
    pub devices: BTreeSet<u32>,
    /// A digest of its launch keys in the selected regions, equal for two processes that launched
    /// the same keys whatever their order and counts.
    pub signature: u64,
    /// Its distinct launch keys in the selected regions.
    pub keys: usize,
}

impl TraceSource<'_> {
    /// Every trace's process, in input order (a process with no kernel is left out: a launcher's
    /// own agent, a data loader), with each launch key's in-place durations over the kernels in the
    /// requested regions, as [`TraceSource::launch_durations`] gives them: one reading of the
    /// traces chooses the deep ranks and sizes their deep pass.
    pub(crate) fn process_launches(&self) -> Result<(Vec<ProcessLaunches>, LaunchDurations)> {
        let mut processes = Vec::new();
        let mut durations = LaunchDurations::default();
        for input in &self.inputs {
            let trace = file::read_input(input)?;
            let mut devices = BTreeSet::new();
            // Each distinct key once (a name's index and its shape); its text only once per key,
            // not per launch: the launch durations are read for every sampled run.
            let mut keys = HashSet::new();
            let mut wanted = Wanted::default();
            self.attribute(&trace, |a| {
                devices.insert(a.kernel.device);
                if !*wanted.of(a, |a| self.wanted(a)) {
                    return;
                }
                let launch = trace.shape(a.kernel);
                let shape = deep::shape(launch);
                keys.insert((launch.name, shape));
                let process = (trace.pid, Some(u64::from(a.kernel.device)));
                let name = &trace.names[launch.name];
                durations.add(name, shape, process, a.kernel.duration_ns(), a.stacks);
            })?;
            if devices.is_empty() {
                continue;
            }
            let mut texts: Vec<String> = keys
                .iter()
                .map(|(name, shape)| key_text(&trace.names[*name], shape))
                .collect();
            texts.sort_unstable();
            texts.dedup();
            processes.push(ProcessLaunches {
                pid: trace.pid,
                rank: input.rank.or(trace.rank),
                world_size: trace.world_size,
                devices,
                signature: digest(texts.iter().map(String::as_str)),
                keys: texts.len(),
            });
        }
        Ok((processes, durations))
    }
}

/// A launch key as one line of text, the same for a trace's launch and ncu's result.
pub(crate) fn key_text(mangled: &str, shape: &Shape) -> String {
    format!(
        "{mangled} {:?} {:?} {} {} {}",
        shape.grid, shape.block, shape.registers, shape.shared_static, shape.shared_dynamic
    )
}

/// Whether a process of `rank` had deep results of its own: every process when the run chose no
/// ranks (`deep_ranks` `None`), else only those of the ranks that ran the deep pass.
pub(super) fn measures_itself(rank: Option<u32>, deep_ranks: Option<&[u32]>) -> bool {
    match (rank, deep_ranks) {
        (_, None) => true,
        (Some(rank), Some(deep)) => deep.contains(&rank),
        (None, Some(_)) => false,
    }
}

/// Each rank's share of time with deep metrics measured on itself, on another rank (by launch
/// key), or none, from its time [with deep metrics, without]; empty for a run of one process that
/// chose no ranks.
pub(super) fn coverage(
    rank_time: &BTreeMap<u32, [f64; 2]>,
    deep_ranks: Option<&[u32]>,
) -> Vec<RankCoverage> {
    if deep_ranks.is_none() && rank_time.len() < 2 {
        return Vec::new();
    }
    rank_time
        .iter()
        .map(|(&rank, &[with, without])| {
            let time = with + without;
            let share = |t: f64| if time > 0.0 { t / time } else { 0.0 };
            let own = measures_itself(Some(rank), deep_ranks);
            RankCoverage {
                rank,
                deep_rank: own,
                time,
                on_itself_share: share(if own { with } else { 0.0 }),
                on_another_rank_share: share(if own { 0.0 } else { with }),
                none_share: share(without),
            }
        })
        .collect()
}

/// FNV-1a over the keys in order, each ended by a newline: the same on every host and build, so
/// ranks that compare signatures through files agree.
pub fn digest<'k>(keys: impl Iterator<Item = &'k str>) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for key in keys {
        for byte in key.bytes().chain(std::iter::once(b'\n')) {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    hash
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_digest_is_fnv_1a_and_depends_on_every_key() {
        // FNV-1a of "a\n": the published offset basis and prime, byte by byte.
        assert_eq!(digest(["a"].into_iter()), 0x089b_dc07_b544_e7b2);
        assert_ne!(digest(["a", "b"].into_iter()), digest(["a"].into_iter()));
        assert_ne!(digest(["ab"].into_iter()), digest(["a", "b"].into_iter()));
    }

    #[test]
    fn a_rank_that_ran_no_deep_pass_takes_its_deep_metrics_from_another() {
        let mut time = BTreeMap::new();
        time.insert(0, [90.0, 10.0]);
        time.insert(1, [80.0, 20.0]);
        let shares = coverage(&time, Some(&[0]));
        assert_eq!(shares.len(), 2);
        assert!(shares[0].deep_rank);
        assert_eq!(shares[0].on_itself_share, 0.9);
        assert_eq!(shares[0].on_another_rank_share, 0.0);
        assert!(!shares[1].deep_rank);
        assert_eq!(shares[1].on_itself_share, 0.0);
        assert_eq!(shares[1].on_another_rank_share, 0.8);
        assert_eq!(shares[1].none_share, 0.2);
        assert_eq!(shares[1].time, 100.0);
        // No ranks chosen: every process measured itself; one process alone shows nothing.
        assert_eq!(coverage(&time, None)[1].on_itself_share, 0.8);
        time.remove(&1);
        assert!(coverage(&time, None).is_empty());
        assert!(!measures_itself(None, Some(&[0])));
        assert!(measures_itself(None, None));
    }
}
