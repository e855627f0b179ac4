//! `hierarchy` without a depth on GPU results: the results are read one at a time, so the method
//! first keeps every range, then — once every range is known — cuts the tree at the layer level, the
//! first depth where siblings repeat ([`crate::region::methods::hierarchy::layer_depth`], the rule
//! Neuron's timeline uses), by folding each deeper region into its ancestor at that depth.

use crate::region::methods::hierarchy::layer_depth;
use crate::region::{RegionKind, Regioner, ScopeStats};

/// Cuts every scope (and the aggregate) at the layer level when `hierarchy` was given no depth.
pub(super) fn cut(
    regioner: &Regioner,
    scopes: &mut [ScopeStats],
    aggregate: Option<&mut ScopeStats>,
) {
    if !regioner.cuts_at_layers() {
        return;
    }
    let depth = depth_of(
        &scopes
            .iter()
            .chain(aggregate.as_deref())
            .collect::<Vec<_>>(),
    );
    for scope in scopes.iter_mut().chain(aggregate) {
        fold(scope, depth);
    }
}

/// The layer level over every scope's range paths.
pub(super) fn depth_of(scopes: &[&ScopeStats]) -> usize {
    layer_depth(
        scopes
            .iter()
            .flat_map(|s| s.regions.iter())
            .filter(|r| r.path.kind == RegionKind::Stack)
            .map(|r| r.path.segments.as_slice()),
    )
}

/// Cuts one scope's range tree at `depth`: deeper ranges go, and a range at the cut owns all of its
/// subtree's results (its self values become its inclusive ones).
pub(super) fn fold(scope: &mut ScopeStats, depth: usize) {
    scope
        .regions
        .retain(|r| r.path.kind != RegionKind::Stack || r.path.segments.len() <= depth);
    for r in &mut scope.regions {
        if r.path.kind == RegionKind::Stack && r.path.segments.len() == depth {
            r.exclusive = r.inclusive.clone();
        }
    }
}
