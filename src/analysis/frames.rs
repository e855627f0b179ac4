//! `stack_frames` nested in the ranges `regions.include` names: the frame regions below a range are
//! reduced to the frames that explain its time. A frame region with exactly one child region and no
//! result of its own adds nothing its child does not say (same time, same results), so such
//! single-child chains collapse into their innermost frame: `step/<module>/step/_call_impl/forward`
//! becomes `step/forward (linear.py:134)` when nothing branches on the way.

use std::collections::{HashMap, HashSet};

use crate::region::{RegionKind, RegionPath, Regioner};
use crate::report::model::Scope;

/// For `stack_frames` nested in ranges: collapses the single-child chains of frame regions (those whose
/// last segment is in `frames`) and gives frame regions the origin `stack_frames`.
pub(super) fn collapse_frame_chains(
    regioner: &Regioner,
    scope: &mut Scope,
    frames: &HashSet<String>,
) {
    if !regioner.nests_frames() {
        return;
    }
    let is_frame = |segments: &[String]| segments.last().is_some_and(|s| frames.contains(s));
    let mut children: HashMap<&[String], usize> = HashMap::new();
    for r in &scope.regions {
        if r.kind == RegionKind::Stack && r.segments.len() > 1 {
            *children
                .entry(&r.segments[..r.segments.len() - 1])
                .or_default() += 1;
        }
    }
    let mut removed: HashSet<Vec<String>> = scope
        .regions
        .iter()
        .filter(|r| {
            r.kind == RegionKind::Stack
                && is_frame(&r.segments)
                && r.self_kernel_count == 0
                && children.get(r.segments.as_slice()) == Some(&1)
        })
        .map(|r| r.segments.clone())
        .collect();
    // Two chains that collapse onto the same path (`a/x/c` and `a/y/c` both becoming `a/c`) would
    // make two regions of one path; those chains keep their frames. Each round only restores
    // frames, so this ends.
    let collapsed = loop {
        let collapsed: Vec<Option<Vec<String>>> = scope
            .regions
            .iter()
            .map(|r| {
                (r.kind == RegionKind::Stack && !removed.contains(&r.segments))
                    .then(|| kept_segments(&r.segments, &removed))
            })
            .collect();
        let mut seen: HashMap<&[String], usize> = HashMap::new();
        let mut clashing = Vec::new();
        for (i, segments) in collapsed.iter().enumerate() {
            let Some(segments) = segments else { continue };
            if let Some(&first) = seen.get(segments.as_slice()) {
                clashing.push((first, i));
            } else {
                seen.insert(segments, i);
            }
        }
        if clashing.is_empty() {
            break collapsed;
        }
        // Only the frames below where the two stacks part are restored: the chain they share
        // above that says nothing that tells them apart.
        let before = removed.len();
        for (a, b) in clashing {
            let (a, b) = (&scope.regions[a].segments, &scope.regions[b].segments);
            let common = a.iter().zip(b).take_while(|(x, y)| x == y).count();
            for segments in [a, b] {
                for k in common..segments.len() {
                    removed.remove(&segments[..=k]);
                }
            }
        }
        assert!(
            removed.len() < before,
            "a clash restores at least one frame"
        );
    };
    let mut index = 0;
    scope.regions.retain(|r| {
        index += 1;
        r.kind != RegionKind::Stack || collapsed[index - 1].is_some()
    });
    let mut renamed = collapsed.into_iter().flatten();
    for r in &mut scope.regions {
        if r.kind != RegionKind::Stack {
            continue;
        }
        let kept = renamed
            .next()
            .expect("one collapsed path per kept stack region");
        if is_frame(&r.segments) {
            r.origin = "stack_frames".to_string();
        }
        if kept.len() == r.segments.len() {
            continue;
        }
        let path = RegionPath {
            kind: r.kind,
            segments: kept,
        };
        r.path = path.display();
        r.parent = path.parent().map(|p| p.display());
        r.depth = path.depth();
        r.segments = path.segments;
    }
}

/// A region's segments without the collapsed frames on its way.
fn kept_segments(segments: &[String], removed: &HashSet<Vec<String>>) -> Vec<String> {
    (0..segments.len())
        .filter(|&k| !removed.contains(&segments[..=k]))
        .map(|k| segments[k].clone())
        .collect()
}

/// What `stack_frames` says about results without a call stack: none at all (the input cannot hold
/// them), or how many there are and where they went.
pub(super) fn call_stack_note(
    regioner: &Regioner,
    with_stack: u64,
    results: u64,
    no_call_stacks_hint: &str,
) -> Option<String> {
    if !matches!(regioner, Regioner::StackFrames { .. })
        || (with_stack > 0 && with_stack >= results)
    {
        return None;
    }
    let without = results.saturating_sub(with_stack);
    Some(if with_stack == 0 {
        format!(
            "regions.auto.method is stack_frames, but no result carries a call stack: {no_call_stacks_hint}."
        )
    } else if regioner.nests_frames() {
        format!(
            "{without} of {results} results carry no Python call stack: they stay in their range, in its self time \
             (PyTorch's backward pass runs on its autograd thread, which runs no Python code)."
        )
    } else {
        format!(
            "{without} of {results} results carry no Python call stack and are outside every region: they were \
             launched from a thread running no Python code (PyTorch's backward pass runs on its autograd thread)."
        )
    })
}
