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

/// What a refusal counts: one stack's levels, start/end ranges, or domains with a push/pop range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Counted {
    Levels,
    Marks,
    Domains,
}

/// The most ranges of one kind open at once before `until` (the last kernel's launch), one thread's
/// at a time when `by_thread`: never fewer than any kernel saw, so a limit this high reads the trace.
/// One sweep, counts only.
pub(super) fn most_open(ranges: &[Range], until: u64, counted: Counted, by_thread: bool) -> usize {
    let mut ends: BinaryHeap<Reverse<(u64, usize)>> = BinaryHeap::new();
    // Open ranges per (thread, domain) key, and per thread the domains with one open.
    let mut levels: FastMap<(Option<u32>, Option<u32>), usize> = FastMap::default();
    let mut domains: FastMap<Option<u32>, usize> = FastMap::default();
    let (mut open, mut most) = (0usize, 0usize);
    let wanted = |r: &Range| match counted {
        Counted::Marks => r.kind == RangeKind::StartEnd,
        Counted::Levels | Counted::Domains => r.kind == RangeKind::PushPop,
    };
    let mut change = |r: &Range, up: bool| {
        let thread = by_thread.then_some(r.thread);
        let count = levels.entry((thread, r.domain)).or_default();
        let before = *count;
        *count = if up { before + 1 } else { before - 1 };
        let now = *count;
        let distinct = domains.entry(thread).or_default();
        match (before, now, r.domain.is_some()) {
            (0, 1, true) => *distinct += 1,
            (1, 0, true) => *distinct -= 1,
            _ => {}
        }
        let distinct = *distinct;
        open = if up { open + 1 } else { open - 1 };
        match counted {
            Counted::Levels => now,
            Counted::Marks => open,
            Counted::Domains => distinct,
        }
    };
    for (index, range) in ranges.iter().enumerate() {
        if range.start >= until {
            break;
        }
        while let Some(&Reverse((end, closing))) = ends.peek() {
            if end > range.start {
                break;
            }
            ends.pop();
            change(&ranges[closing], false);
        }
        if !wanted(range) {
            continue;
        }
        if let Some(end) = range.end {
            ends.push(Reverse((end, index)));
        }
        most = most.max(change(range, true));
    }
    most
}
