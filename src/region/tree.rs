//! The region tree: groups results by (scope, region path, kernel name) while streaming, then derives
//! inclusive parents, exclusive self values and per-region kernel lists.
//!
//! Memory grows with the number of distinct (scope, region, kernel) groups, never with the number of
//! results: each result is folded into its group's accumulators and dropped.
//!
//! Floor: region (see `crate::region`): imports the ground floor only.

mod build;

pub use super::path::{RegionKind, RegionPath};
use serde::Serialize;
use std::collections::BTreeMap;

use super::rollup::{Cell, Group, MetricSpec};
use crate::fast_map::FastMap;
use crate::parallel;
use build::build_subtree;

/// Groups by kernel name. Unordered: every list made from one is sorted (longest time first, then by
/// name) before anyone sees it.
type KernelMap = FastMap<String, Group>;

/// Where results come from: one process on one device of one host.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct ScopeKey {
    pub host: String,
    pub process_id: String,
    pub process_name: String,
    pub device: String,
    /// The launcher rank whose run directory the result came from; empty when unknown. Part of the
    /// key because ranks on different nodes can share a host name (profilers often record `127.0.0.1`),
    /// a process id and a device index.
    pub rank: String,
}

/// One profiler result as the region core sees it: the event of the profiler seam.
#[derive(Debug, Clone, Copy)]
pub struct Observation<'a> {
    pub scope: &'a ScopeKey,
    /// Range paths, one per stack family (the first is the main one, such as a default domain; then
    /// each other domain, segments prefixed so families never share a path), outermost first. Each
    /// family forms its own tree; an empty path means no range of that family was open.
    pub stacks: &'a [Vec<String>],
    /// Instance ids parallel to `stacks` (one per segment), when the source tells two visits of a
    /// range apart; `None` when it cannot (CSV exports).
    pub instances: Option<&'a [Vec<u64>]>,
    /// Names of the flat ranges (marks) open when the result ran.
    pub marks: &'a [String],
    /// The call stack that launched the result (Python frames as `function (file:line)`, outermost
    /// first), where the source records one; only the `stack_frames` regioner reads it.
    pub call_stack: Option<&'a [String]>,
    /// Kernel name (or a placeholder such as `range` for range-replay results).
    pub kernel: &'a str,
    /// Duration of the result in the time metric's unit, if the export has it.
    pub time: Option<f64>,
    /// When the result started on the device, in ns on the source's clock (one clock for the
    /// processes of one host); `None` where the source has no in-place times (a profiler that
    /// replays each result). What the cross-rank diagnosis matches collectives by.
    pub start: Option<u64>,
    /// The duration that weighs rate and percentage metrics, when it is not `time`: a trace-timed
    /// sampled run's deep values were measured over the deep pass's serialized duration, so that
    /// duration weighs them, as in full replay. `None`: `time`.
    pub weight: Option<f64>,
    /// One cell per [`MetricSpec`], in the same order.
    pub values: &'a [Cell<'a>],
    /// Whether the deep metrics among `values` were measured on this launch (always, unless the
    /// source joined two passes).
    pub coverage: super::Coverage,
    /// The launch key whose twins gave the deep values (a sampled run's joined results), unique
    /// within one reading; `None` when the values were not taken from twins.
    pub key: Option<u64>,
}

#[derive(Debug, Clone, Default)]
struct Node {
    first_seen: u64,
    /// Results of this region whose kernels the kernel selection dropped.
    excluded: u64,
    kernels: KernelMap,
}

/// Inclusive time per instance id of one stack region, for sources that tell instances apart.
type InstanceTimes = FastMap<u64, f64>;

#[derive(Debug, Clone)]
struct ScopeAcc {
    first_seen: u64,
    total: Group,
    excluded: u64,
    outside: KernelMap,
    regions: FastMap<RegionPath, Node>,
    /// Per stack region, its instances' inclusive times in instance order; absent when the source
    /// gave no instance ids.
    instances: FastMap<RegionPath, Vec<f64>>,
}

/// A scope while results stream in: regions keyed so that a result's stack, borrowed from the
/// reader, finds its node without building a [`RegionPath`].
#[derive(Debug, Clone)]
struct StreamScope {
    first_seen: u64,
    total: Group,
    excluded: u64,
    outside: KernelMap,
    stacks: FastMap<Vec<String>, Node>,
    marks: FastMap<String, Node>,
    /// Per full stack, each level's instance times: a result hashes its stack once, not every
    /// prefix of it (which cost the square of the depth per result); prefixes are summed at the end.
    instances: FastMap<Vec<String>, Vec<InstanceTimes>>,
}

impl StreamScope {
    fn into_acc(self) -> ScopeAcc {
        let stacks = self.stacks.into_iter().map(|(segments, node)| {
            let kind = RegionKind::Stack;
            (RegionPath { kind, segments }, node)
        });
        let marks = self.marks.into_iter().map(|(name, node)| {
            let kind = RegionKind::Mark;
            let segments = vec![name];
            (RegionPath { kind, segments }, node)
        });
        ScopeAcc {
            first_seen: self.first_seen,
            total: self.total,
            excluded: self.excluded,
            outside: self.outside,
            regions: stacks.chain(marks).collect(),
            instances: by_prefix(self.instances)
                .into_iter()
                .map(|(segments, times)| {
                    let mut times: Vec<(u64, f64)> = times.into_iter().collect();
                    times.sort_unstable_by_key(|(id, _)| *id);
                    let path = RegionPath {
                        kind: RegionKind::Stack,
                        segments,
                    };
                    (path, times.into_iter().map(|(_, t)| t).collect())
                })
                .collect(),
        }
    }

    /// Folds in a scope that came later in the input; its sequence numbers are shifted by `offset`.
    fn merge(&mut self, other: StreamScope, offset: u64) {
        self.total.merge(&other.total);
        self.excluded += other.excluded;
        merge_owned_kernel_maps(&mut self.outside, other.outside);
        merge_nodes(&mut self.stacks, other.stacks, offset);
        merge_nodes(&mut self.marks, other.marks, offset);
        for (path, levels) in other.instances {
            let mine = self.instances.entry(path).or_default();
            mine.resize_with(mine.len().max(levels.len()), InstanceTimes::default);
            for (mine, times) in mine.iter_mut().zip(levels) {
                for (id, time) in times {
                    *mine.entry(id).or_default() += time;
                }
            }
        }
    }

    fn shift(&mut self, offset: u64) {
        self.first_seen += offset;
        for node in self.stacks.values_mut().chain(self.marks.values_mut()) {
            node.first_seen += offset;
        }
    }
}

fn merge_nodes<K: std::hash::Hash + Eq>(
    into: &mut FastMap<K, Node>,
    from: FastMap<K, Node>,
    offset: u64,
) {
    for (key, mut node) in from {
        match into.get_mut(&key) {
            // Already seen earlier in the input, so its first_seen stays.
            Some(mine) => {
                mine.excluded += node.excluded;
                merge_owned_kernel_maps(&mut mine.kernels, node.kernels);
            }
            None => {
                node.first_seen += offset;
                into.insert(key, node);
            }
        }
    }
}

fn merge_owned_kernel_maps(into: &mut KernelMap, from: KernelMap) {
    for (name, group) in from {
        match into.get_mut(&name) {
            Some(g) => g.merge(&group),
            None => {
                into.insert(name, group);
            }
        }
    }
}

/// Streaming builder of the region tree.
#[derive(Debug)]
pub struct RegionAccumulator {
    specs: Vec<MetricSpec>,
    scopes: FastMap<ScopeKey, StreamScope>,
    seq: u64,
}

/// Final numbers of one region.
#[derive(Debug, Clone)]
pub struct RegionStats {
    pub path: RegionPath,
    /// This region's results plus those of every region nested in it.
    pub inclusive: Group,
    /// Results whose innermost range is this region.
    pub exclusive: Group,
    /// Kernels run inside the region (nested regions included), longest total time first.
    pub kernels: Vec<(String, Group)>,
    /// Results in this region (nested ones included) that the kernel selection dropped.
    pub excluded: u64,
    /// Inclusive time of each instance (visit) of the region, in instance order; `None` when the
    /// source cannot tell instances apart, and for marks.
    pub instances: Option<Vec<f64>>,
}

/// Final numbers of one scope (or of the aggregate).
#[derive(Debug, Clone)]
pub struct ScopeStats {
    pub key: ScopeKey,
    /// Every selected result of the scope, counted once.
    pub total: Group,
    /// Selected results that ran outside every range.
    pub outside: Group,
    pub outside_kernels: Vec<(String, Group)>,
    /// Results the kernel selection dropped, in the whole scope.
    pub excluded: u64,
    /// Regions in depth-first order; siblings in the order they were first seen.
    pub regions: Vec<RegionStats>,
}

impl RegionAccumulator {
    pub fn new(specs: Vec<MetricSpec>) -> RegionAccumulator {
        RegionAccumulator {
            specs,
            scopes: FastMap::default(),
            seq: 0,
        }
    }

    pub fn specs(&self) -> &[MetricSpec] {
        &self.specs
    }

    /// Folds one selected result into its regions.
    pub fn add(&mut self, obs: &Observation<'_>) {
        self.visit(obs, true);
    }

    /// Records that a result existed in its regions but its kernel was not selected: the regions still
    /// appear (with a note), the metrics do not include it.
    pub fn add_excluded(&mut self, obs: &Observation<'_>) {
        self.visit(obs, false);
    }

    /// Folds in an accumulator that read the results following this one's (a later chunk or
    /// file), as if its results had been added here one by one after this one's.
    pub fn merge(&mut self, later: RegionAccumulator) {
        let offset = self.seq;
        for (key, mut scope) in later.scopes {
            match self.scopes.get_mut(&key) {
                Some(mine) => mine.merge(scope, offset),
                None => {
                    scope.shift(offset);
                    self.scopes.insert(key, scope);
                }
            }
        }
        self.seq += later.seq;
    }

    fn visit(&mut self, obs: &Observation<'_>, selected: bool) {
        // Two sequence numbers per result: regions first seen with it in another stack family take the
        // odd one, so on a tie the default domain's tree comes first.
        self.seq += 2;
        let seq = self.seq;
        let specs = &self.specs;
        if !self.scopes.contains_key(obs.scope) {
            self.scopes.insert(
                obs.scope.clone(),
                StreamScope {
                    first_seen: seq,
                    total: Group::new(specs),
                    excluded: 0,
                    outside: KernelMap::default(),
                    stacks: FastMap::default(),
                    marks: FastMap::default(),
                    instances: FastMap::default(),
                },
            );
        }
        let scope = self.scopes.get_mut(obs.scope).expect("inserted above");
        if selected {
            add_result(&mut scope.total, obs);
        } else {
            scope.excluded += 1;
        }
        let mut in_region = false;
        for (family, path) in obs.stacks.iter().enumerate() {
            if path.is_empty() {
                continue;
            }
            if !scope.stacks.contains_key(path) {
                let first_seen = if family == 0 { seq } else { seq + 1 };
                scope.stacks.insert(path.clone(), new_node(first_seen));
            }
            let node = scope.stacks.get_mut(path).expect("inserted above");
            add_to_node(node, obs, selected, specs);
            in_region = true;
            let ids = obs.instances.and_then(|all| all.get(family));
            if let (Some(ids), true) = (ids, selected) {
                add_instances(&mut scope.instances, path, ids, obs.time.unwrap_or(0.0));
            }
        }
        for (at, name) in obs.marks.iter().enumerate() {
            // Overlapping instances of one range (two open `epoch`s) are one region: count once.
            if obs.marks[..at].contains(name) {
                continue;
            }
            if !scope.marks.contains_key(name) {
                scope.marks.insert(name.clone(), new_node(seq));
            }
            let node = scope.marks.get_mut(name).expect("inserted above");
            add_to_node(node, obs, selected, specs);
            in_region = true;
        }
        if !in_region && selected {
            add_result(group_for(&mut scope.outside, obs.kernel, specs), obs);
        }
    }

    /// Finishes every scope (ordered by first appearance) and, when asked, the aggregate over all scopes.
    pub fn finish(self, aggregate: bool) -> (Vec<ScopeStats>, Option<ScopeStats>) {
        self.finish_on(aggregate, 1)
    }

    /// [`RegionAccumulator::finish`] with the scopes' trees (and the aggregate's) finished on up to
    /// `threads` threads (0: one per core); each tree is finished alone, so the result is the same.
    pub fn finish_on(
        self,
        aggregate: bool,
        threads: usize,
    ) -> (Vec<ScopeStats>, Option<ScopeStats>) {
        let specs = self.specs;
        let mut scopes: Vec<(ScopeKey, ScopeAcc)> = self
            .scopes
            .into_iter()
            .map(|(key, scope)| (key, scope.into_acc()))
            .collect();
        scopes.sort_by_key(|(_, s)| s.first_seen);
        if aggregate {
            let key = ScopeKey {
                host: "*".into(),
                process_id: "*".into(),
                process_name: "*".into(),
                device: "*".into(),
                rank: "*".into(),
            };
            let merged = merge_scopes(&scopes, &specs);
            // First in line: the aggregate is the largest tree.
            scopes.insert(0, (key, merged));
        }
        let mut finished =
            parallel::map(scopes, threads, |(key, acc)| finish_scope(key, acc, &specs));
        let aggregate = aggregate.then(|| finished.remove(0));
        (finished, aggregate)
    }
}

/// Folds one result's values, time and coverage into a group.
fn add_result(group: &mut Group, obs: &Observation<'_>) {
    group.add(obs.values, obs.time, obs.weight.or(obs.time));
    group.coverage.add(obs.coverage, obs.time);
    if let Some(key) = obs.key {
        group
            .tallies
            .add(key, obs.coverage, obs.time, obs.weight.or(obs.time));
    }
}

fn group_for<'m>(map: &'m mut KernelMap, kernel: &str, specs: &[MetricSpec]) -> &'m mut Group {
    if !map.contains_key(kernel) {
        map.insert(kernel.to_string(), Group::new(specs));
    }
    map.get_mut(kernel).expect("inserted above")
}

/// Adds a result's time to the instance it ran in, at every level of its path (inclusive).
fn add_instances(
    into: &mut FastMap<Vec<String>, Vec<InstanceTimes>>,
    path: &[String],
    ids: &[u64],
    time: f64,
) {
    if !into.contains_key(path) {
        into.insert(path.to_vec(), vec![InstanceTimes::default(); path.len()]);
    }
    let levels = into.get_mut(path).expect("inserted above");
    for (times, id) in levels.iter_mut().zip(ids) {
        *times.entry(*id).or_default() += time;
    }
}

/// Each stack region's instance times, summed over every full stack that passes through it.
fn by_prefix(
    stacks: FastMap<Vec<String>, Vec<InstanceTimes>>,
) -> FastMap<Vec<String>, InstanceTimes> {
    let mut prefixes: FastMap<Vec<String>, InstanceTimes> = FastMap::default();
    for (path, levels) in stacks {
        for (depth, times) in levels.into_iter().enumerate() {
            if times.is_empty() {
                continue;
            }
            let into = prefixes.entry(path[..=depth].to_vec()).or_default();
            for (id, time) in times {
                *into.entry(id).or_default() += time;
            }
        }
    }
    prefixes
}

fn new_node(first_seen: u64) -> Node {
    Node {
        first_seen,
        ..Node::default()
    }
}

fn add_to_node(node: &mut Node, obs: &Observation<'_>, selected: bool, specs: &[MetricSpec]) {
    if selected {
        add_result(group_for(&mut node.kernels, obs.kernel, specs), obs);
    } else {
        node.excluded += 1;
    }
}

fn merge_kernel_maps(into: &mut KernelMap, from: &KernelMap) {
    for (name, group) in from {
        match into.get_mut(name) {
            Some(g) => g.merge(group),
            None => {
                into.insert(name.clone(), group.clone());
            }
        }
    }
}

fn merge_scopes(scopes: &[(ScopeKey, ScopeAcc)], specs: &[MetricSpec]) -> ScopeAcc {
    let mut merged = ScopeAcc {
        first_seen: 0,
        total: Group::new(specs),
        excluded: 0,
        outside: KernelMap::default(),
        regions: FastMap::default(),
        instances: FastMap::default(),
    };
    for (_, acc) in scopes {
        // Instances of different scopes are different visits: the aggregate lists them all.
        for (path, times) in &acc.instances {
            merged
                .instances
                .entry(path.clone())
                .or_default()
                .extend(times);
        }
        merged.total.merge(&acc.total);
        merged.excluded += acc.excluded;
        merge_kernel_maps(&mut merged.outside, &acc.outside);
        for (path, node) in &acc.regions {
            let target = merged.regions.entry(path.clone()).or_insert_with(|| Node {
                first_seen: u64::MAX,
                ..Node::default()
            });
            // Scopes are visited in first-seen order, so this keeps program order across processes.
            target.first_seen = target.first_seen.min(node.first_seen);
            target.excluded += node.excluded;
            merge_kernel_maps(&mut target.kernels, &node.kernels);
        }
    }
    merged
}

/// The groups in name order, so sums over them add up in the same order on every run and however the
/// input was split between reader threads.
fn by_name(map: &KernelMap) -> Vec<(&String, &Group)> {
    let mut groups: Vec<_> = map.iter().collect();
    groups.sort_unstable_by(|a, b| a.0.cmp(b.0));
    groups
}

fn sorted_kernels(map: KernelMap) -> Vec<(String, Group)> {
    let mut kernels: Vec<(String, Group)> = map.into_iter().collect();
    kernels.sort_by(|a, b| b.1.time.total_cmp(&a.1.time).then_with(|| a.0.cmp(&b.0)));
    kernels
}

fn finish_scope(key: ScopeKey, acc: ScopeAcc, specs: &[MetricSpec]) -> ScopeStats {
    let mut nodes = acc.regions;
    // A region with no results of its own still exists when something is nested in it.
    let paths: Vec<RegionPath> = nodes.keys().cloned().collect();
    for path in paths {
        let first_seen = nodes[&path].first_seen;
        let mut current = path.parent();
        while let Some(parent) = current {
            let node = nodes.entry(parent.clone()).or_insert_with(|| Node {
                first_seen,
                ..Node::default()
            });
            node.first_seen = node.first_seen.min(first_seen);
            current = parent.parent();
        }
    }

    let mut children: BTreeMap<Option<RegionPath>, Vec<RegionPath>> = BTreeMap::new();
    for path in nodes.keys() {
        children
            .entry(path.parent())
            .or_default()
            .push(path.clone());
    }
    for list in children.values_mut() {
        list.sort_by(|a, b| {
            (a.kind, nodes[a].first_seen, a).cmp(&(b.kind, nodes[b].first_seen, b))
        });
    }

    let mut regions = Vec::with_capacity(nodes.len());
    for root in children.get(&None).into_iter().flatten() {
        build_subtree(root, &mut nodes, &children, specs, &mut regions);
    }
    let mut instances = acc.instances;
    if !instances.is_empty() {
        for region in regions
            .iter_mut()
            .filter(|r| r.path.kind == RegionKind::Stack)
        {
            region.instances = Some(instances.remove(&region.path).unwrap_or_default());
        }
    }

    let mut outside = Group::new(specs);
    for (_, group) in by_name(&acc.outside) {
        outside.merge(group);
    }
    ScopeStats {
        key,
        total: acc.total,
        outside,
        outside_kernels: sorted_kernels(acc.outside),
        excluded: acc.excluded,
        regions,
    }
}
