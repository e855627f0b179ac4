//! `stack_frames` nested in the ranges `regions.include` names: the frame regions below a range are
//! reduced to the frames that explain its time. A frame region with exactly one child region and no
//! result of its own adds nothing its child does not say (same time, same results), so such
//! single-child chains collapse into their innermost frame: `step/<module>/step/_call_impl/forward`
//! becomes `step/forward (linear.py:134)` when nothing branches on the way.

use std::collections::{HashMap, HashSet};

use crate::region::{RegionKind, RegionPath};
use crate::report::model::Scope;

/// Collapses the single-child chains of frame regions (those whose last segment is in `frames`) and
/// gives frame regions the origin `stack_frames`.
pub(super) fn collapse_frame_chains(scope: &mut Scope, frames: &HashSet<String>) {
    let is_frame = |segments: &[String]| segments.last().is_some_and(|s| frames.contains(s));
    let mut children: HashMap<&[String], usize> = HashMap::new();
    for r in &scope.regions {
        if r.kind == RegionKind::Stack && r.segments.len() > 1 {
            *children
                .entry(&r.segments[..r.segments.len() - 1])
                .or_default() += 1;
        }
    }
    let removed: HashSet<Vec<String>> = scope
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
    scope.regions.retain(|r| !removed.contains(&r.segments));
    for r in &mut scope.regions {
        if r.kind != RegionKind::Stack {
            continue;
        }
        if is_frame(&r.segments) {
            r.origin = "stack_frames".to_string();
        }
        if removed.is_empty() {
            continue;
        }
        let kept: Vec<String> = (0..r.segments.len())
            .filter(|&k| !removed.contains(&r.segments[..=k]))
            .map(|k| r.segments[k].clone())
            .collect();
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
