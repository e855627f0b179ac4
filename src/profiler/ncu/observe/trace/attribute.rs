//! A traced kernel's regions, the way ncu gives them: the NVTX ranges open when the API call that
//! launched it started (the kernel's correlation id names that call; a CUDA graph's node kernels name
//! the graph launch, so they take the ranges open at graph launch). Push/pop ranges form one stack per
//! domain, chaining every thread with an open range (process scope) or only the launching thread's
//! (thread scope); start/end ranges open anywhere are marks. Pure: the tests feed it traces.
//!
//! One sweep in launch order over the ranges sorted by start ([`open::Open`]): work and memory grow
//! with the ranges and kernels, never with kernels × depth. A kernel's stacks are rebuilt only when a
//! range opened or closed since the one before (only their changed tail), handed over by reference,
//! and `regions.max_depth` is checked on the open ranges' count before a string is made, so a range
//! pushed in a loop and never popped is refused at the first kernel past the limit.
//!
//! Floor: profiler (see `crate::profiler`): imports run, process, analysis, insights, report,
//! config, region and the ground floor, and its own profiler's rooms.

mod open;

use crate::fast_map::FastMap;
use crate::profiler::ncu::readers::export::nvtx_cell::{path_segment, DEFAULT_DOMAIN, UNNAMED};
use crate::region::Renames;

use crate::profiler::ncu::readers::trace::{ProcessTrace, Range, TracedKernel};

/// Whose push/pop ranges a kernel sees: the setting itself (`--nvtx-push-pop-scope`), named here
/// for the attribution that follows it.
pub use crate::config::PushPopScope;

/// One kernel with its regions, in launch order.
#[derive(Debug, Clone, PartialEq)]
pub struct Attributed<'w> {
    pub kernel: &'w TracedKernel,
    /// One path per domain (the default domain's first), outermost first.
    pub stacks: &'w [Vec<String>],
    /// The ranges' ids, parallel to `stacks`.
    pub ids: &'w [Vec<u64>],
    pub marks: &'w [String],
    /// Whether the trace holds the API call that launched it (else it was placed by its own start).
    pub launched: bool,
    /// Changes whenever `stacks` or `marks` differ from the previous kernel's, so what is worked out
    /// from them alone can be kept until it changes.
    pub generation: u64,
}

/// What is worked out from a kernel's regions alone (whether they are wanted, their path), kept
/// while the next kernels have the same ones ([`Attributed::generation`]).
#[derive(Default)]
pub struct PerRegions<T> {
    generation: Option<u64>,
    value: T,
}

impl<T> PerRegions<T> {
    /// `a`'s value: `work` of it, unless the kernel before it had the same regions.
    pub fn of(&mut self, a: &Attributed<'_>, work: impl FnOnce(&Attributed<'_>) -> T) -> &T {
        if self.generation != Some(a.generation) {
            self.generation = Some(a.generation);
            self.value = work(a);
        }
        &self.value
    }
}

/// A kernel inside more open ranges than `regions.max_depth` allows; `at`: its launch. The count is
/// the most any kernel of the trace could see, so that a limit this high reads the whole trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TooMany {
    /// One domain's stack this deep.
    Levels { depth: usize, at: u64 },
    /// This many start/end ranges open.
    Marks { count: usize, at: u64 },
    /// This many domains with a push/pop range open.
    Domains { count: usize, at: u64 },
}

/// Hands every kernel of `trace` with its regions to `each`, in launch order (launch start, then
/// correlation id); stops at the first kernel inside more ranges than `max_depth`.
pub fn attribute(
    trace: &ProcessTrace,
    scope: PushPopScope,
    renames: &Renames,
    max_depth: usize,
    mut each: impl FnMut(&Attributed<'_>),
) -> Result<(), TooMany> {
    let mut open = open::Open::new(&trace.ranges);
    let mut regions = Regions::new(trace, renames, max_depth);
    let mut seen: Option<Option<u32>> = None;
    let refused = |too_many: TooMany| {
        // Counted to the last kernel, so that the limit the refusal suggests reads the whole trace.
        let until = trace.kernels.last().map_or(0, |k| k.launched_at());
        let by_thread = scope == PushPopScope::Thread;
        let most = |counted| open::most_open(&trace.ranges, until, counted, by_thread);
        match too_many {
            TooMany::Levels { depth, at } => TooMany::Levels {
                depth: depth.max(most(open::Counted::Levels)),
                at,
            },
            TooMany::Marks { count, at } => TooMany::Marks {
                count: count.max(most(open::Counted::Marks)),
                at,
            },
            TooMany::Domains { count, at } => TooMany::Domains {
                count: count.max(most(open::Counted::Domains)),
                at,
            },
        }
    };
    for kernel in &trace.kernels {
        let at = kernel.launched_at();
        let thread = kernel.launch.map(|l| l.thread);
        let changed = open.advance(&trace.ranges, at);
        // Thread scope: another thread's kernel sees other stacks.
        let viewer = match scope {
            PushPopScope::Process => None,
            PushPopScope::Thread => Some(thread),
        };
        if changed || seen != viewer {
            regions.rebuild(&open, viewer, at).map_err(refused)?;
            seen = viewer;
        }
        each(&Attributed {
            kernel,
            stacks: &regions.stacks,
            ids: &regions.ids,
            marks: &regions.marks,
            launched: thread.is_some(),
            generation: regions.generation,
        });
    }
    Ok(())
}

/// The regions of the kernel being handed over, kept for the next: its stacks and marks, and the
/// ranges they were made from.
struct Regions<'t> {
    trace: &'t ProcessTrace,
    renames: &'t Renames,
    max_depth: usize,
    /// Path segments by (domain, name) text, made once each.
    segments: FastMap<(Option<u32>, Option<u32>), String>,
    stacks: Vec<Vec<String>>,
    ids: Vec<Vec<u64>>,
    marks: Vec<String>,
    /// Per stack, its domain and the ranges its levels are; the marks' ranges.
    domains: Vec<Option<u32>>,
    members: Vec<Vec<u32>>,
    mark_members: Vec<u32>,
    /// The next rebuild's ranges per stack, kept to reuse their memory.
    scratch: Vec<Vec<u32>>,
    generation: u64,
}

impl<'t> Regions<'t> {
    fn new(trace: &'t ProcessTrace, renames: &'t Renames, max_depth: usize) -> Regions<'t> {
        Regions {
            trace,
            renames,
            max_depth,
            segments: FastMap::default(),
            stacks: vec![Vec::new()],
            ids: vec![Vec::new()],
            marks: Vec::new(),
            domains: vec![None],
            members: vec![Vec::new()],
            mark_members: Vec::new(),
            scratch: Vec::new(),
            generation: 0,
        }
    }

    /// Remakes the stacks and marks from the open ranges `viewer` sees (`None`: every thread's;
    /// `Some(thread)`: that launching thread's, none for a kernel with no launch), keeping what did
    /// not change; refuses before making any string when there are too many.
    fn rebuild(
        &mut self,
        open: &open::Open,
        viewer: Option<Option<u32>>,
        at: u64,
    ) -> Result<(), TooMany> {
        let ranges = &self.trace.ranges;
        let count = open.mark_count();
        if count > self.max_depth {
            return Err(TooMany::Marks { count, at });
        }
        // Stacks by domain: the default domain's first, then the others in order of appearance.
        let mut domains: Vec<Option<u32>> = vec![None];
        let mut slot_of: FastMap<u32, usize> = FastMap::default();
        for list in &mut self.scratch {
            list.clear();
        }
        if self.scratch.is_empty() {
            self.scratch.push(Vec::new());
        }
        for index in open.pushed(viewer) {
            let slot = match ranges[index as usize].domain {
                None => 0,
                Some(d) => *slot_of.entry(d).or_insert_with(|| {
                    domains.push(Some(d));
                    domains.len() - 1
                }),
            };
            if slot >= self.scratch.len() {
                self.scratch.push(Vec::new());
            }
            self.scratch[slot].push(index);
        }
        let count = domains.len() - 1;
        if count > self.max_depth {
            return Err(TooMany::Domains { count, at });
        }
        if let Some(depth) = self
            .scratch
            .iter()
            .map(Vec::len)
            .max()
            .filter(|d| *d > self.max_depth)
        {
            return Err(TooMany::Levels { depth, at });
        }
        let mut changed = self.rebuild_marks(open.marks());
        let slots = domains.len();
        changed |= slots != self.stacks.len();
        self.stacks.resize_with(slots, Vec::new);
        self.ids.resize_with(slots, Vec::new);
        self.members.resize_with(slots, Vec::new);
        for (slot, domain) in domains.iter().enumerate() {
            if self.domains.get(slot) != Some(domain) {
                self.members[slot].clear();
            }
            changed |= self.rebuild_stack(slot);
        }
        self.domains = domains;
        self.generation += u64::from(changed);
        Ok(())
    }

    /// Stack `slot` made from `scratch[slot]`, keeping the levels it shares with the last one.
    fn rebuild_stack(&mut self, slot: usize) -> bool {
        let new = &self.scratch[slot];
        let old = &mut self.members[slot];
        let kept = common_prefix(old, new);
        if kept == old.len() && kept == new.len() {
            return false;
        }
        let (stack, ids) = (&mut self.stacks[slot], &mut self.ids[slot]);
        stack.truncate(kept);
        ids.truncate(kept);
        for &index in &new[kept..] {
            let range = &self.trace.ranges[index as usize];
            stack.push(segment(&mut self.segments, self.trace, self.renames, range).clone());
            ids.push(u64::from(range.id));
        }
        old.clear();
        old.extend_from_slice(new);
        true
    }

    /// The marks made from the open start/end ranges, keeping those shared with the last ones.
    fn rebuild_marks(&mut self, open: Vec<u32>) -> bool {
        let kept = common_prefix(&self.mark_members, &open);
        if kept == open.len() && kept == self.mark_members.len() {
            return false;
        }
        self.marks.truncate(kept);
        for &index in &open[kept..] {
            let range = &self.trace.ranges[index as usize];
            let mark = segment(&mut self.segments, self.trace, self.renames, range).clone();
            self.marks.push(mark);
        }
        self.mark_members = open;
        true
    }
}

fn common_prefix(a: &[u32], b: &[u32]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

/// A range's path segment (`domain@name` outside the default domain, renamed), made once per pair.
fn segment<'s>(
    segments: &'s mut FastMap<(Option<u32>, Option<u32>), String>,
    trace: &ProcessTrace,
    renames: &Renames,
    range: &Range,
) -> &'s String {
    segments
        .entry((range.domain, range.name))
        .or_insert_with(|| {
            let name = range
                .name
                .map(|n| trace.text(n))
                .filter(|n| !n.is_empty())
                .unwrap_or(UNNAMED);
            let domain = range.domain.map_or(DEFAULT_DOMAIN, |d| trace.text(d));
            path_segment(domain, &renames.apply(name))
        })
}

#[cfg(test)]
mod tests;
