//! The keys of one capture's first pass that ran different work, each split into strata
//! ([`crate::profiler::ncu::observe::strata`]), with an id per stratum among the reading's keys: what
//! the trace-timed and the ncu-timed joins both look a launch's twins up in.

use std::hash::Hash;

use crate::fast_map::FastMap;
use crate::profiler::ncu::observe::strata::MAX_STRATA;
use crate::region::Spread;

use super::twins::{StratifiedTwins, Twins};

/// Split keys by `K` (a key's place in the index, with its process where a capture holds several),
/// each with the id of its first stratum.
#[derive(Debug)]
pub(crate) struct SplitKeys<K> {
    keys: FastMap<K, (StratifiedTwins, u64)>,
}

impl<K> Default for SplitKeys<K> {
    fn default() -> Self {
        SplitKeys {
            keys: FastMap::default(),
        }
    }
}

impl<K: Hash + Eq> SplitKeys<K> {
    /// The split keys in this order, their strata numbered from `first` on ([`MAX_STRATA`] ids a
    /// key, so ids stay the same for the same inputs).
    pub fn new(splits: impl IntoIterator<Item = (K, StratifiedTwins)>, first: u64) -> Self {
        let keys = splits
            .into_iter()
            .zip((first..).step_by(MAX_STRATA))
            .map(|((key, split), id)| (key, (split, id)))
            .collect();
        SplitKeys { keys }
    }

    /// The twins of the stratum a launch of `key` lasting `duration` falls in, that stratum's id, and
    /// whether its values were taken from another stratum; `None` for a key not split.
    pub fn twins(&self, key: &K, duration: f64) -> Option<(&Twins, u64, bool)> {
        let (split, first) = self.keys.get(key)?;
        let stratum = split.strata.of_duration(duration);
        let (twins, from) = &split.twins[stratum];
        Some((twins, first + stratum as u64, from.is_some()))
    }

    /// Keys split.
    pub fn len(&self) -> u64 {
        self.keys.len() as u64
    }

    /// Every stratum's deep samples under its id, for the intervals.
    pub fn spreads(&self) -> impl Iterator<Item = (u64, Vec<Option<Spread>>)> + '_ {
        self.keys.values().flat_map(|(split, first)| {
            split
                .twins
                .iter()
                .enumerate()
                .map(move |(s, (twins, _))| (first + s as u64, twins.spread_of_specs()))
        })
    }
}
