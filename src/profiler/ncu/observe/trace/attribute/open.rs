//! The ranges open at a moment, swept forward in time: ranges enter in order of start and leave by a
//! heap of ends, so each range is added and removed once, whatever the number of kernels. Push/pop
//! ranges are kept by thread (threads in order of their first push/pop range) and start; a thread's
//! own are one contiguous run of them.

use std::cmp::Reverse;
use std::collections::{BTreeSet, BinaryHeap};

use crate::fast_map::FastMap;
use crate::profiler::ncu::readers::trace::{Range, RangeKind};

pub(super) struct Open {
    /// The first range not yet started (ranges are sorted by start).
    next: usize,
    /// When each open range that ends does: (end, index).
    ends: BinaryHeap<Reverse<(u64, u32)>>,
    /// Open push/pop ranges: (their thread's rank, index).
    pushed: BTreeSet<(u32, u32)>,
    /// Open start/end ranges, by index.
    marks: BTreeSet<u32>,
    /// Each thread's rank: the order of its first push/pop range.
    ranks: FastMap<u32, u32>,
}

impl Open {
    pub(super) fn new(ranges: &[Range]) -> Open {
        let mut first: FastMap<u32, u64> = FastMap::default();
        for r in ranges.iter().filter(|r| r.kind == RangeKind::PushPop) {
            let start = first.entry(r.thread).or_insert(r.start);
            *start = (*start).min(r.start);
        }
        let mut threads: Vec<(u64, u32)> = first.into_iter().map(|(t, s)| (s, t)).collect();
        threads.sort_unstable();
        let ranks = threads
            .iter()
            .enumerate()
            .map(|(rank, &(_, thread))| (thread, rank as u32))
            .collect();
        Open {
            next: 0,
            ends: BinaryHeap::new(),
            pushed: BTreeSet::new(),
            marks: BTreeSet::new(),
            ranks,
        }
    }

    /// Moves to `at` (never backwards): ranges that started before it are open, those that ended at
    /// or before it are not. Whether the open set changed.
    pub(super) fn advance(&mut self, ranges: &[Range], at: u64) -> bool {
        let mut changed = false;
        while let Some(range) = ranges.get(self.next).filter(|r| r.start < at) {
            let index = self.next as u32;
            self.next += 1;
            if let Some(end) = range.end {
                self.ends.push(Reverse((end, index)));
            }
            self.enter(range, index, true);
            changed = true;
        }
        while let Some(&Reverse((end, index))) = self.ends.peek() {
            if end > at {
                break;
            }
            self.ends.pop();
            self.enter(&ranges[index as usize], index, false);
            changed = true;
        }
        changed
    }

    fn enter(&mut self, range: &Range, index: u32, open: bool) {
        match range.kind {
            RangeKind::StartEnd if open => {
                self.marks.insert(index);
            }
            RangeKind::StartEnd => {
                self.marks.remove(&index);
            }
            RangeKind::PushPop => {
                let key = (self.rank(range.thread).unwrap_or(u32::MAX), index);
                if open {
                    self.pushed.insert(key);
                } else {
                    self.pushed.remove(&key);
                }
            }
        }
    }

    fn rank(&self, thread: u32) -> Option<u32> {
        self.ranks.get(&thread).copied()
    }

    pub(super) fn mark_count(&self) -> usize {
        self.marks.len()
    }

    /// The open start/end ranges, by start.
    pub(super) fn marks(&self) -> Vec<u32> {
        self.marks.iter().copied().collect()
    }

    /// The open push/pop ranges `viewer` sees, threads in rank order and each thread's by start:
    /// every thread's (`None`), one launching thread's, or none (a kernel with no launch).
    pub(super) fn pushed(&self, viewer: Option<Option<u32>>) -> Box<dyn Iterator<Item = u32> + '_> {
        let index = |&(_, index): &(u32, u32)| index;
        match viewer {
            None => Box::new(self.pushed.iter().map(index)),
            Some(thread) => match thread.and_then(|t| self.rank(t)) {
                Some(rank) => Box::new(self.pushed.range((rank, 0)..=(rank, u32::MAX)).map(index)),
                None => Box::new(std::iter::empty()),
            },
        }
    }
}
