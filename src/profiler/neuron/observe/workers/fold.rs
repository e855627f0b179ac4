//! A worker's phases past [`PHASES_KEPT`]: the longest are kept, and the rest are folded, under the
//! kept phase that holds them (or at the top), into one phase [`OTHER`] with their events and time.
//! A phase is never longer than the phase that holds it, so the longest phases form a tree. The
//! report then costs what a reader can use, not one region per distinct event name: a million names
//! is 18 MB of Parquet, and would be gigabytes of regions.

use std::collections::HashMap;

use super::phases::{Phase, Sweep};

/// The most phases one worker's report keeps (its regions), besides the [`OTHER`] phases.
pub const PHASES_KEPT: usize = 10_000;

/// The name of a phase holding the phases folded under one kept phase.
pub const OTHER: &str = "(other phases)";

/// Keeps the `keep` longest phases of `swept` (by time; at equal time, the first to run) and folds
/// the rest into [`OTHER`] phases, their pieces and event spans with them. Returns how many phases
/// were folded.
pub fn fold(swept: &mut Sweep, keep: usize) -> usize {
    let n = swept.phases.len();
    if n <= keep {
        return 0;
    }
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_unstable_by_key(|&i| (std::cmp::Reverse(swept.phases[i].inclusive_ns), i));
    let mut kept = vec![false; n];
    for &i in &order[..keep] {
        // Its ancestors are at least as long and ran first; marked anyway, so the tree is whole.
        let mut at = Some(i);
        while let Some(p) = at.filter(|&p| !kept[p]) {
            kept[p] = true;
            at = swept.phases[p].parent;
        }
    }
    let phases = std::mem::take(&mut swept.phases);
    let mut moved = vec![0usize; n];
    let mut others: HashMap<Option<usize>, usize> = HashMap::new();
    let mut out: Vec<Phase> = Vec::with_capacity(keep + 1);
    for (i, p) in phases.into_iter().enumerate() {
        let parent = p.parent.map(|up| moved[up]);
        if kept[i] {
            moved[i] = out.len();
            out.push(Phase { parent, ..p });
            continue;
        }
        // The first folded phase of a kept parent is a root of a folded subtree: its time is the
        // subtree's; the folded phases below it add their events only.
        let root = p.parent.is_none_or(|up| kept[up]);
        let other = match root {
            true => *others.entry(parent).or_insert_with(|| {
                let mut path = parent.map_or_else(Vec::new, |up| out[up].path.clone());
                path.push(OTHER.to_string());
                out.push(Phase {
                    path,
                    parent,
                    count: 0,
                    inclusive_ns: 0,
                    self_ns: 0,
                });
                out.len() - 1
            }),
            false => parent.unwrap_or_default(),
        };
        moved[i] = other;
        let o = &mut out[other];
        o.count += p.count;
        o.self_ns += p.self_ns;
        if root {
            o.inclusive_ns += p.inclusive_ns;
        }
    }
    swept.phases = out;
    for span in &mut swept.spans {
        span.0 = moved[span.0];
    }
    for piece in &mut swept.pieces {
        piece.phase = moved[piece.phase];
    }
    kept.iter().filter(|&&k| !k).count()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profiler::neuron::observe::workers::phases::sweep;
    use crate::profiler::neuron::readers::model::system::SystemEvent;

    fn ev(name: &str, start: u64, end: u64) -> SystemEvent {
        SystemEvent {
            name: name.into(),
            start_ns: start,
            end_ns: end,
            ..SystemEvent::default()
        }
    }

    #[test]
    fn the_shortest_phases_fold_under_the_phase_that_holds_them_and_no_time_is_lost() {
        // a step holding ops of 1..=6 ns, each inside a wrapper of its own name, then a long tail
        let mut events = vec![ev("step", 0, 1_000)];
        for k in 1..=6u64 {
            let at = k * 100;
            events.push(ev(&format!("op{k}"), at, at + 2 * k));
            events.push(ev(&format!("inner{k}"), at, at + k));
        }
        events.push(ev("tail", 2_000, 2_050));
        let refs: Vec<&SystemEvent> = events.iter().collect();
        let whole = sweep(&refs, &|_| false);
        let mut folded = whole.clone();
        assert_eq!(fold(&mut folded, 5), 9);
        let paths: Vec<String> = folded.phases.iter().map(|p| p.path.join("/")).collect();
        assert_eq!(
            paths,
            [
                "step",
                "step/(other phases)",
                "step/op4",
                "step/op4/(other phases)",
                "step/op5",
                "step/op5/(other phases)",
                "step/op6",
                "step/op6/(other phases)",
                "tail"
            ]
        );
        // op1..op3 whole (2 + 4 + 6 ns), the inner ones inside them: six events
        let other = &folded.phases[1];
        assert_eq!(
            (other.inclusive_ns, other.self_ns, other.count),
            (12, 12, 6)
        );
        assert_eq!(folded.phases[3].inclusive_ns, 4);
        // every instant and event still counted once
        let own = |s: &Sweep| s.phases.iter().map(|p| p.self_ns).sum::<u64>();
        assert_eq!(own(&folded), own(&whole));
        let pieces = |s: &Sweep| s.pieces.iter().map(|p| p.len_ns).sum::<u64>();
        assert_eq!(pieces(&folded), pieces(&whole));
        assert_eq!(folded.phases.iter().map(|p| p.count).sum::<u64>(), 14);
        assert!(folded.spans.iter().all(|s| s.0 < folded.phases.len()));
        // few phases: nothing folded
        let mut same = whole.clone();
        assert_eq!(fold(&mut same, 100), 0);
        assert_eq!(same, whole);
    }
}
