//! The region tree built from its flat nodes: inclusive values folded up from the leaves, in
//! pre-order, without recursion.

use std::collections::BTreeMap;

use super::{by_name, merge_owned_kernel_maps, sorted_kernels, KernelMap, Node, RegionStats};
use crate::fast_map::FastMap;
use crate::region::rollup::{Group, MetricSpec};
use crate::region::RegionPath;

/// Children are folded in first, so a parent's inclusive values are its self values merged with its
/// children's inclusive values; the parent's slot is pushed before them so `out` stays in pre-order.
/// An explicit stack, not recursion: a tree thousands of levels deep cannot overflow the thread's.
pub(super) fn build_subtree(
    root: &RegionPath,
    nodes: &mut FastMap<RegionPath, Node>,
    children: &BTreeMap<Option<RegionPath>, Vec<RegionPath>>,
    specs: &[MetricSpec],
    out: &mut Vec<RegionStats>,
) {
    let mut open = vec![open_level(root, nodes, children, specs, out)];
    while let Some(level) = open.last_mut() {
        if let Some(child) = level.pending.pop() {
            let child = open_level(child, nodes, children, specs, out);
            open.push(child);
            continue;
        }
        let Some(done) = open.pop() else { break };
        let (excluded, kernels) = (done.excluded, done.kernels.clone());
        let stats = &mut out[done.slot];
        stats.inclusive = done.inclusive;
        stats.exclusive = done.exclusive;
        stats.kernels = sorted_kernels(done.kernels);
        stats.excluded = excluded;
        if let Some(parent) = open.last_mut() {
            for (_, group) in by_name(&kernels) {
                parent.inclusive.merge(group);
            }
            merge_owned_kernel_maps(&mut parent.kernels, kernels);
            parent.excluded += excluded;
        }
    }
}

/// A region whose children are still being folded in.
struct OpenLevel<'c> {
    slot: usize,
    exclusive: Group,
    inclusive: Group,
    kernels: KernelMap,
    excluded: u64,
    /// Children not yet visited, the next one last.
    pending: Vec<&'c RegionPath>,
}

fn open_level<'c>(
    path: &RegionPath,
    nodes: &mut FastMap<RegionPath, Node>,
    children: &'c BTreeMap<Option<RegionPath>, Vec<RegionPath>>,
    specs: &[MetricSpec],
    out: &mut Vec<RegionStats>,
) -> OpenLevel<'c> {
    let node = nodes.remove(path).expect("every path has a node");
    let mut exclusive = Group::new(specs);
    for (_, group) in by_name(&node.kernels) {
        exclusive.merge(group);
    }
    let slot = out.len();
    out.push(RegionStats {
        path: path.clone(),
        inclusive: Group::new(specs),
        exclusive: Group::new(specs),
        kernels: Vec::new(),
        excluded: 0,
        instances: None,
    });
    let pending = children
        .get(&Some(path.clone()))
        .map(|kids| kids.iter().rev().collect())
        .unwrap_or_default();
    OpenLevel {
        slot,
        inclusive: exclusive.clone(),
        exclusive,
        kernels: node.kernels,
        excluded: node.excluded,
        pending,
    }
}
