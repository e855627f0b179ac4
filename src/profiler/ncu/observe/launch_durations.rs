//! Each launch key's durations in a sampled run's first pass (ncu's timing pass or the CUPTI trace):
//! how many launches it had per process and how much their durations vary, which is what the
//! adaptive deep samples per key are sized by (`capture::topup`).

use crate::fast_map::FastMap;
use crate::region::Moments;

use super::launch_key::{Process, Shape};

/// One launch key's durations and its launches per process.
#[derive(Debug, Default, Clone)]
pub(crate) struct KeyDurations {
    per_process: FastMap<Process, u32>,
    durations: Moments,
}

impl KeyDurations {
    fn add(&mut self, process: Process, duration: f64) {
        *self.per_process.entry(process).or_default() += 1;
        self.durations.add(duration);
    }

    /// The coefficient of variation of the key's durations ([`Moments::cv`]).
    pub fn cv(&self) -> f64 {
        self.durations.cv()
    }

    /// The key's launches in each process (pid, device), in no particular order.
    pub fn per_process(&self) -> impl Iterator<Item = (Process, u32)> + '_ {
        self.per_process.iter().map(|(process, n)| (*process, *n))
    }
}

/// Every launch key's durations, keys in the order first seen.
#[derive(Debug, Default)]
pub(crate) struct LaunchDurations {
    at: FastMap<(String, Shape), usize>,
    keys: Vec<(String, Shape, KeyDurations)>,
}

impl LaunchDurations {
    pub fn add(&mut self, mangled: &str, shape: Shape, process: Process, duration: f64) {
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
        self.keys[at].2.add(process, duration);
    }

    /// Whether the key was seen.
    pub fn contains(&self, mangled: &str, shape: &Shape) -> bool {
        self.at.contains_key(&(mangled.to_string(), *shape))
    }

    /// Each key: its mangled name, launch configuration and durations.
    pub fn keys(&self) -> impl Iterator<Item = (&str, &Shape, &KeyDurations)> {
        self.keys
            .iter()
            .map(|(name, shape, d)| (name.as_str(), shape, d))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_keys_variation_and_launches_are_counted_per_key_and_process() {
        let mut d = LaunchDurations::default();
        for (process, ns) in [(1, 10.0), (1, 12.0), (1, 14.0), (2, 12.0)] {
            d.add("_Z4gemm", Shape::of_grid(8), (process, Some(0)), ns);
        }
        d.add("_Z4gemm", Shape::of_grid(16), (1, Some(0)), 99.0);
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
}
