//! One worker's system events as phases: each event is a phase named by the events that enclose it
//! and its own name (`train_step/nrt_execute/nc_exec_running`), and every instant of the worker's
//! timeline belongs to the innermost event open at it. An event that outlasts the one it starts in
//! is cut at that one's end, so the phases nest and their self times add up to the time covered.
//!
//! The pieces (a phase's own time between its children, and each collective whole) come out in time
//! order, as the cross-rank diagnosis reads a rank's results: what ran before each collective.

use std::collections::HashMap;

use crate::profiler::neuron::readers::model::system::SystemEvent;

/// A phase of one worker: every event with the same path.
#[derive(Debug, Clone, PartialEq)]
pub struct Phase {
    /// Enclosing event names, outermost first, then the event's own.
    pub path: Vec<String>,
    /// The phase that encloses it (index into [`Sweep::phases`]), `None` at the top.
    pub parent: Option<usize>,
    /// Events with this path.
    pub count: u64,
    /// Their time, each cut at the end of the event that encloses it (ns).
    pub inclusive_ns: u64,
    /// The part of it no enclosed event covers (ns).
    pub self_ns: u64,
}

/// A stretch of a worker's timeline: a phase's own time, or a collective from arrival to end.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PhasePiece {
    /// Index into [`Sweep::phases`]: the phase the time is the own time of, or the collective's.
    pub phase: usize,
    pub start_ns: u64,
    pub len_ns: u64,
    pub collective: bool,
}

/// A worker's phases (in the order they first start) and its pieces (in time order).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Sweep {
    pub phases: Vec<Phase>,
    pub pieces: Vec<PhasePiece>,
    /// Each event's phase and its span as cut, in the order the events were given.
    pub spans: Vec<(usize, u64, u64)>,
    /// Event time cut off where an event outlasts the one it starts in (a device execution that
    /// runs on after the host's range has ended), summed over the events cut (ns).
    pub cut_ns: u64,
}

/// An event open on the sweep's stack.
struct Open {
    phase: usize,
    end: u64,
    /// Whether it is a collective or runs inside one: the collective, given whole, owns its time.
    in_collective: bool,
}

/// Sweeps one worker's events, in start order with the longer first at one start (as
/// `SystemProfile::by_worker` gives them); `is_collective` tells collectives by name.
pub fn sweep(events: &[&SystemEvent], is_collective: &dyn Fn(&str) -> bool) -> Sweep {
    let mut out = Sweep::default();
    // A phase by its parent and its own name: found again without building its path.
    let mut index: HashMap<(Option<usize>, &str), usize> = HashMap::new();
    let mut stack: Vec<Open> = Vec::new();
    let mut cursor = events.first().map_or(0, |e| e.start_ns);
    for e in events {
        while stack.last().is_some_and(|top| top.end <= e.start_ns) {
            if let Some(top) = stack.pop() {
                out.own_time(&top, cursor, top.end);
                cursor = cursor.max(top.end);
            }
        }
        let end = stack.last().map_or(e.end_ns, |top| e.end_ns.min(top.end));
        out.cut_ns += e.end_ns - end;
        if let Some(top) = stack.last() {
            out.own_time(top, cursor, e.start_ns);
        }
        cursor = cursor.max(e.start_ns);
        let parent = stack.last().map(|top| top.phase);
        let phases = &mut out.phases;
        let phase = *index.entry((parent, e.name.as_str())).or_insert_with(|| {
            let mut path = parent.map_or_else(Vec::new, |p| phases[p].path.clone());
            path.push(e.name.clone());
            phases.push(Phase {
                path,
                parent,
                count: 0,
                inclusive_ns: 0,
                self_ns: 0,
            });
            phases.len() - 1
        });
        let collective = is_collective(&e.name);
        let inside = stack.last().is_some_and(|top| top.in_collective);
        out.spans.push((phase, e.start_ns, end));
        let p = &mut out.phases[phase];
        p.count += 1;
        p.inclusive_ns += end - e.start_ns;
        if collective && !inside {
            p.self_ns += end - e.start_ns;
            out.pieces.push(PhasePiece {
                phase,
                start_ns: e.start_ns,
                len_ns: end - e.start_ns,
                collective,
            });
        }
        stack.push(Open {
            phase,
            end,
            in_collective: collective || inside,
        });
    }
    while let Some(top) = stack.pop() {
        out.own_time(&top, cursor, top.end);
        cursor = cursor.max(top.end);
    }
    out
}

/// How deeply the events nest (1: none holds another), as [`sweep`] nests them: known before any
/// path is built, since a path per event costs the square of the depth.
pub fn deepest(events: &[&SystemEvent]) -> usize {
    let mut ends: Vec<u64> = Vec::new();
    let mut deepest = 0;
    for e in events {
        while ends.last().is_some_and(|&end| end <= e.start_ns) {
            ends.pop();
        }
        let end = ends.last().map_or(e.end_ns, |&top| e.end_ns.min(top));
        ends.push(end);
        deepest = deepest.max(ends.len());
    }
    deepest
}

impl Sweep {
    /// The open event's own time from `from` to `to`; a collective's is given whole at its start,
    /// with that of the events inside it.
    fn own_time(&mut self, open: &Open, from: u64, to: u64) {
        if to <= from || open.in_collective {
            return;
        }
        self.phases[open.phase].self_ns += to - from;
        self.pieces.push(PhasePiece {
            phase: open.phase,
            start_ns: from,
            len_ns: to - from,
            collective: false,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profiler::neuron::readers::model::intervals::{length, union};

    fn ev(name: &str, start: u64, end: u64) -> SystemEvent {
        SystemEvent {
            name: name.into(),
            start_ns: start,
            end_ns: end,
            ..SystemEvent::default()
        }
    }

    #[test]
    fn nested_events_are_phases_whose_own_times_cover_the_timeline_once() {
        let events = [
            ev("step", 0, 100),
            ev("load", 10, 30),
            ev("execute", 40, 60),
            ev("nc_exec_running", 45, 70), // outlasts `execute`: cut at 60
            ev("cc_running", 70, 90),
            ev("idle_gap_after", 120, 130),
        ];
        let refs: Vec<&SystemEvent> = events.iter().collect();
        let s = sweep(&refs, &|n| n == "cc_running");
        let by_path = |p: &str| {
            s.phases
                .iter()
                .find(|ph| ph.path.join("/") == p)
                .unwrap_or_else(|| panic!("{p} in {:?}", s.phases))
        };
        assert_eq!(by_path("step").inclusive_ns, 100);
        assert_eq!(by_path("step").self_ns, 100 - 20 - 20 - 20);
        assert_eq!(by_path("step/execute").self_ns, 5);
        assert_eq!(by_path("step/execute/nc_exec_running").inclusive_ns, 15);
        assert_eq!(by_path("step/cc_running").self_ns, 20);
        assert_eq!(by_path("idle_gap_after").self_ns, 10);
        let covered: u64 = s.pieces.iter().map(|p| p.len_ns).sum();
        assert_eq!(covered, 110);
        assert!(s.pieces.windows(2).all(|w| w[0].start_ns <= w[1].start_ns));
        let cc: Vec<&PhasePiece> = s.pieces.iter().filter(|p| p.collective).collect();
        assert_eq!((cc.len(), cc[0].start_ns, cc[0].len_ns), (1, 70, 20));
        assert_eq!(deepest(&refs), 3);
        assert_eq!(s.cut_ns, 10);
    }

    #[test]
    fn events_each_inside_the_last_nest_as_deep_as_they_are_many() {
        let events: Vec<SystemEvent> = (0..50).map(|i| ev("range", i, 1_000 - i)).collect();
        let refs: Vec<&SystemEvent> = events.iter().collect();
        assert_eq!(deepest(&refs), 50);
        // side by side: one level
        let flat: Vec<SystemEvent> = (0..50).map(|i| ev("range", 10 * i, 10 * i + 10)).collect();
        assert_eq!(deepest(&flat.iter().collect::<Vec<_>>()), 1);
    }

    proptest::proptest! {
        #[test]
        fn pieces_cover_the_cut_events_once_in_time_order(
            raw in proptest::collection::vec((0u64..1_000, 1u64..300, 0u8..4), 0..60),
        ) {
            let names = ["step", "execute", "cc_running", "copy"];
            let mut events: Vec<SystemEvent> = raw
                .iter()
                .map(|&(start, len, n)| ev(names[n as usize], start, start + len))
                .collect();
            events.sort_by_key(|e| (e.start_ns, std::cmp::Reverse(e.end_ns)));
            let refs: Vec<&SystemEvent> = events.iter().collect();
            let s = sweep(&refs, &|n| n == "cc_running");
            let cut: Vec<(u64, u64)> = s.spans.iter().map(|&(_, a, b)| (a, b)).collect();
            let covered = length(&union(cut));
            let pieces: u64 = s.pieces.iter().map(|p| p.len_ns).sum();
            let own: u64 = s.phases.iter().map(|p| p.self_ns).sum();
            proptest::prop_assert_eq!(pieces, covered);
            proptest::prop_assert_eq!(own, covered);
            // in time order, never overlapping
            proptest::prop_assert!(s
                .pieces
                .windows(2)
                .all(|w| w[0].start_ns + w[0].len_ns <= w[1].start_ns));
            proptest::prop_assert_eq!(s.phases.iter().map(|p| p.count).sum::<u64>(), events.len() as u64);
            proptest::prop_assert!(deepest(&refs) <= events.len());
        }
    }
}
