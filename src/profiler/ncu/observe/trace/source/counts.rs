//! What the traces of one reading gave, trace by trace and summed: results, their coverage, kernels
//! left out, the first trace's libcupti, why traces are partial and the launcher ranks they hold.

use std::collections::BTreeMap;

impl Counts {
    /// What `trace` says of itself before its kernels are read.
    pub(super) fn of(trace: &crate::profiler::ncu::readers::trace::ProcessTrace) -> Counts {
        Counts {
            has_ranges: !trace.ranges.is_empty(),
            unfinished: trace.unfinished,
            libcupti: Some(trace.libcupti.clone()),
            recorder: trace.recorder,
            partial: trace.partial.clone().into_iter().collect(),
            ..Counts::default()
        }
    }

    pub(super) fn add(&mut self, other: Counts) {
        self.results += other.results;
        self.in_ranges += other.in_ranges;
        self.unlaunched += other.unlaunched;
        self.unfinished += other.unfinished;
        self.has_ranges |= other.has_ranges;
        for (sum, n) in self.coverage.iter_mut().zip(other.coverage) {
            *sum += n;
        }
        if self.libcupti.is_none() {
            self.libcupti = other.libcupti;
            self.recorder = other.recorder;
        }
        self.partial.extend(other.partial);
        for (rank, world_size) in other.ranks {
            let known = self.ranks.entry(rank).or_default();
            *known = (*known).max(world_size);
        }
        self.strata.add(other.strata);
        self.inprocess.add(other.inprocess);
        for (rank, [with, without]) in other.rank_time {
            let sum = self.rank_time.entry(rank).or_default();
            sum[0] += with;
            sum[1] += without;
        }
    }
}

/// What one trace gave.
#[derive(Default)]
pub(super) struct Counts {
    pub(super) results: u64,
    /// Results measured, estimated, unmatched (a sampled run).
    pub(super) coverage: [u64; 4],
    pub(super) in_ranges: u64,
    pub(super) unlaunched: u64,
    /// Kernels CUPTI handed over unfinished, left out by the reader.
    pub(super) unfinished: u64,
    pub(super) has_ranges: bool,
    /// The libcupti of the first trace read.
    pub(super) libcupti: Option<String>,
    /// The tool that recorded the first trace read, where it was imported.
    pub(super) recorder: Option<&'static str>,
    /// Why traces hold only part of their process's run, in input order.
    pub(super) partial: Vec<String>,
    /// Each launcher rank's time in the regions: [with deep metrics, without] (a sampled run).
    pub(super) rank_time: BTreeMap<u32, [f64; 2]>,
    /// Each launcher rank read, with the world size its trace records.
    pub(super) ranks: BTreeMap<u32, Option<u32>>,
    /// The strata of keys that ran different work (a sampled run): their deep samples per stratum,
    /// for the intervals, and how their launches took their values.
    pub(super) strata: super::super::deep::StrataCounts,
    /// How the launches took the traces' own deep counters (the in-process engine).
    pub(super) inprocess: super::super::inprocess::Tally,
}
