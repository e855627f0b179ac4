//! Each launch key's durations in a sampled run's first pass (ncu's timing pass or the CUPTI trace):
//! how many launches it had per process and how much their durations vary, which is what the
//! adaptive deep samples per key are sized by (`capture::sampling::workers`), and how much of each
//! region's time it takes, which is what `pipeline.ncu.sampling.min_time_share` leaves keys out of
//! the deep pass by (`capture::sampling::share`).

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use crate::fast_map::FastMap;
use crate::region::Moments;

use super::launch_key::{Process, Shape};
use super::strata::Strata;

/// A region of one process: the process's whole time, or one prefix of one of its range stacks
/// (hashed: a key's share is compared region by region, never shown).
type Region = (Process, u64);

/// One launch key's durations and its launches per process.
#[derive(Debug, Default, Clone)]
pub(crate) struct KeyDurations {
    /// Each process's durations of the key, in launch order.
    per_process: FastMap<Process, Vec<f64>>,
    durations: Moments,
    /// The key's time in each region it appears in.
    regions: FastMap<Region, f64>,
}

impl KeyDurations {
    fn add(&mut self, process: Process, duration: f64, regions: &[Region]) {
        self.per_process.entry(process).or_default().push(duration);
        self.durations.add(duration);
        for region in regions {
            *self.regions.entry(*region).or_default() += duration;
        }
    }

    /// The coefficient of variation of the key's durations ([`Moments::cv`]).
    pub fn cv(&self) -> f64 {
        self.durations.cv()
    }

    /// The key's launches in each process (pid, device), in no particular order.
    pub fn per_process(&self) -> impl Iterator<Item = (Process, u32)> + '_ {
        self.per_process
            .iter()
            .map(|(process, d)| (*process, u32::try_from(d.len()).unwrap_or(u32::MAX)))
    }

    /// Each process with its durations of the key in launch order.
    pub fn processes(&self) -> impl Iterator<Item = (Process, &[f64])> + '_ {
        self.per_process.iter().map(|(p, d)| (*p, d.as_slice()))
    }

    /// Each process's durations of the key in launch order (processes in a fixed order).
    pub fn in_launch_order(&self) -> Vec<&[f64]> {
        let mut processes: Vec<(&Process, &Vec<f64>)> = self.per_process.iter().collect();
        processes.sort_by_key(|(process, _)| **process);
        processes.into_iter().map(|(_, d)| d.as_slice()).collect()
    }

    /// The key's strata ([`Strata`]), cut from all its durations.
    pub fn strata(&self) -> Strata {
        let all: Vec<f64> = self.per_process.values().flatten().copied().collect();
        Strata::of(&all)
    }

    /// The coefficient of variation of the durations of stratum `stratum` of `strata` alone.
    pub fn stratum_cv(&self, strata: &Strata, stratum: usize) -> f64 {
        let mut m = Moments::default();
        for d in self.per_process.values().flatten() {
            if strata.of_duration(*d) == stratum {
                m.add(*d);
            }
        }
        m.cv()
    }
}

/// A first pass's launches as the run's planning read them from its report file, kept for the
/// report of the same run: the file is read once to plan and once to report. Clones share it.
#[derive(Debug, Clone, Default)]
pub struct FirstRead(Arc<OnceLock<(PathBuf, LaunchDurations)>>);

impl FirstRead {
    /// Keeps `durations`, read from `path`; the first kept stays.
    pub(crate) fn keep(&self, path: &Path, durations: &LaunchDurations) {
        let _ = self.0.set((path.to_path_buf(), durations.clone()));
    }

    /// What planning read from `path`, if it read that file.
    pub(crate) fn of(&self, path: &Path) -> Option<&LaunchDurations> {
        self.0.get().filter(|(p, _)| p == path).map(|(_, d)| d)
    }
}

/// Every launch key's durations, keys in the order first seen.
#[derive(Debug, Default, Clone)]
pub(crate) struct LaunchDurations {
    at: FastMap<(String, Shape), usize>,
    keys: Vec<(String, Shape, KeyDurations)>,
    /// Every region's time, over all keys.
    region_time: FastMap<Region, f64>,
}

impl LaunchDurations {
    /// One launch of a key in `process`, inside the range `stacks` (one path per stack family,
    /// outermost first): it counts in the process's whole time and in every prefix of each path.
    pub fn add(
        &mut self,
        mangled: &str,
        shape: Shape,
        process: Process,
        duration: f64,
        stacks: &[Vec<String>],
    ) {
        let regions = regions_of(process, stacks);
        for region in &regions {
            *self.region_time.entry(*region).or_default() += duration;
        }
        let at = match self.at.get(&(mangled.to_string(), shape)) {
            Some(at) => *at,
            None => {
                self.keys
                    .push((mangled.to_string(), shape, KeyDurations::default()));
                self.at
                    .insert((mangled.to_string(), shape), self.keys.len() - 1);
                self.keys.len() - 1
            }
        };
        self.keys[at].2.add(process, duration, &regions);
    }

    /// Whether `key`'s time is below `share` of every region it appears in (never, for a share of
    /// 0 or a region without time).
    pub fn below_share(&self, key: &KeyDurations, share: f64) -> bool {
        key.regions.iter().all(|(region, time)| {
            let whole = self.region_time.get(region).copied().unwrap_or(0.0);
            *time < share * whole
        })
    }

    /// The largest share of a region's time (in one process) that `key` holds, in [0, 1]; 1 for a
    /// key whose regions have no time.
    pub fn largest_share(&self, key: &KeyDurations) -> f64 {
        key.regions
            .iter()
            .map(|(region, time)| {
                let whole = self.region_time.get(region).copied().unwrap_or(0.0);
                if whole > 0.0 {
                    (time / whole).min(1.0)
                } else {
                    1.0
                }
            })
            .fold(0.0, f64::max)
    }

    /// Whether the key was seen.
    pub fn contains(&self, mangled: &str, shape: &Shape) -> bool {
        self.at.contains_key(&(mangled.to_string(), *shape))
    }

    /// Keeps the launches of the processes `keep` accepts (the deep ranks' own, when the deep pass
    /// profiles only them); a key none of them launched is dropped. A key's spread stays the one
    /// over every process: ranks that launch alike vary alike.
    pub fn retain_processes(&mut self, keep: impl Fn(Process) -> bool) {
        self.region_time.retain(|(process, _), _| keep(*process));
        for (_, _, key) in &mut self.keys {
            key.per_process.retain(|process, _| keep(*process));
            key.regions.retain(|(process, _), _| keep(*process));
        }
        self.keys.retain(|(_, _, key)| !key.per_process.is_empty());
        self.at = self
            .keys
            .iter()
            .enumerate()
            .map(|(at, (name, shape, _))| ((name.clone(), *shape), at))
            .collect();
    }

    /// How many processes launched the keys.
    pub fn processes(&self) -> usize {
        let processes: std::collections::BTreeSet<Process> = self
            .keys
            .iter()
            .flat_map(|(_, _, key)| key.per_process.keys().copied())
            .collect();
        processes.len()
    }

    /// Each key: its mangled name, launch configuration and durations.
    pub fn keys(&self) -> impl Iterator<Item = (&str, &Shape, &KeyDurations)> {
        self.keys
            .iter()
            .map(|(name, shape, d)| (name.as_str(), shape, d))
    }
}

/// The regions a launch in `process` inside `stacks` counts in: the process's whole time, and
/// each prefix of each stack family's path.
fn regions_of(process: Process, stacks: &[Vec<String>]) -> Vec<Region> {
    let prefixes = stacks.iter().enumerate().flat_map(|(family, path)| {
        (1..=path.len()).map(move |depth| {
            let mut hasher = DefaultHasher::new();
            (family, &path[..depth]).hash(&mut hasher);
            hasher.finish()
        })
    });
    std::iter::once(0)
        .chain(prefixes)
        .map(|region| (process, region))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_keys_variation_and_launches_are_counted_per_key_and_process() {
        let mut d = LaunchDurations::default();
        for (process, ns) in [(1, 10.0), (1, 12.0), (1, 14.0), (2, 12.0)] {
            d.add("_Z4gemm", Shape::of_grid(8), (process, Some(0)), ns, &[]);
        }
        d.add("_Z4gemm", Shape::of_grid(16), (1, Some(0)), 99.0, &[]);
        let keys: Vec<_> = d.keys().collect();
        assert_eq!(keys.len(), 2, "one key per shape");
        let (name, s, gemm8) = keys[0];
        assert_eq!((name, *s), ("_Z4gemm", Shape::of_grid(8)));
        let mut per: Vec<u32> = gemm8.per_process().map(|(_, n)| n).collect();
        per.sort();
        assert_eq!(per, [1, 3], "launches per process");
        // Mean 12, sample variance (4 + 0 + 4 + 0) / 3 = 8/3: cv = sqrt(8/3) / 12.
        assert!((gemm8.cv() - (8.0f64 / 3.0).sqrt() / 12.0).abs() < 1e-12);
        assert_eq!(keys[1].2.cv(), 0.0, "a key launched once varies by nothing");
        assert_eq!(keys[1].2.per_process().map(|(_, n)| n).sum::<u32>(), 1);
        assert!(d.contains("_Z4gemm", &Shape::of_grid(16)));
        assert!(!d.contains("_Z4gemm", &Shape::of_grid(32)));
    }

    #[test]
    fn only_the_kept_processes_launches_remain() {
        let mut d = LaunchDurations::default();
        d.add("_Z4gemm", Shape::of_grid(8), (1, Some(0)), 10.0, &[]);
        d.add("_Z4gemm", Shape::of_grid(8), (2, Some(1)), 12.0, &[]);
        d.add("_Z4only", Shape::of_grid(8), (2, Some(1)), 12.0, &[]);
        d.retain_processes(|(_, device)| device == Some(0));
        let keys: Vec<_> = d
            .keys()
            .map(|(n, _, k)| (n, k.per_process().count()))
            .collect();
        assert_eq!(keys, [("_Z4gemm", 1)]);
        assert!(!d.contains("_Z4only", &Shape::of_grid(8)));
        assert!(d.contains("_Z4gemm", &Shape::of_grid(8)));
    }

    #[test]
    fn a_key_is_below_a_share_only_where_it_is_small_in_every_region() {
        let mut d = LaunchDurations::default();
        let (a, b) = (vec![vec!["a".to_string()]], vec![vec!["b".to_string()]]);
        let p = (1, Some(0));
        d.add("_Z3big", Shape::of_grid(1), p, 990.0, &a);
        d.add("_Z4tiny", Shape::of_grid(1), p, 10.0, &a);
        // Alone in region b: 100% of it, though 1% of a and of the process.
        d.add("_Z5alone", Shape::of_grid(1), p, 10.0, &b);
        let below = |name: &str, share: f64| {
            let (_, _, key) = d.keys().find(|(n, _, _)| *n == name).unwrap();
            d.below_share(key, share)
        };
        assert!(below("_Z4tiny", 0.02), "10 of a's 1000");
        assert!(!below("_Z4tiny", 0.01), "1% is not below 1%");
        assert!(!below("_Z5alone", 0.5), "the whole of region b");
        assert!(!below("_Z3big", 0.5));
        assert!(!below("_Z4tiny", 0.0), "a share of 0 leaves nothing out");
    }
}
