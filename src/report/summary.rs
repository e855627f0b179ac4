//! Each scope's opening: where its time goes (regions by self time, kernels by function and time)
//! and what would save the most (findings by the time they save that no better finding claims),
//! computed from the finished scope.
//!
//! Floor: report (see `crate::report`): imports config, region and the ground floor only.

mod savings;

use std::collections::HashMap;

use super::model::{Region, Scope, ScopeSummary, SummaryKernel, SummaryRegion};
use crate::region::RegionKind;

/// Entries per list.
pub const TOP: usize = 5;

/// Sets `scope.summary` from its regions, kernels and findings; `time_metric` names the time.
pub fn fill(scope: &mut Scope, time_metric: Option<&str>) {
    scope.summary = summarize(scope, time_metric);
}

pub fn summarize(scope: &Scope, time_metric: Option<&str>) -> ScopeSummary {
    let Some(metric) = time_metric else {
        return ScopeSummary::default();
    };
    let total = scope.total.metrics.get(metric).and_then(|v| v.value);
    let share = |t: f64| total.filter(|s| *s > 0.0).map(|s| t / s);
    // Nested ranges share time with their parents, so self time is the one that adds up; start/end
    // ranges overlap the stack, so they count only when there is no stack at all, and are listed
    // apart as overlapping otherwise.
    let has_stack = scope.regions.iter().any(|r| r.kind == RegionKind::Stack);
    let counted = |r: &&Region| !has_stack || r.kind == RegionKind::Stack;
    let mut regions: Vec<SummaryRegion> = scope
        .regions
        .iter()
        .filter(counted)
        .filter_map(|r| {
            let self_time = r.exclusive.get(metric)?.value.filter(|t| *t > 0.0)?;
            Some(SummaryRegion {
                path: r.path.clone(),
                self_time,
                self_time_share: share(self_time),
                time_share: r.time_share,
            })
        })
        .collect();
    regions.sort_by(|a, b| b.self_time.total_cmp(&a.self_time));
    regions.truncate(TOP);
    let mut overlapping_regions: Vec<SummaryRegion> = scope
        .regions
        .iter()
        .filter(|r| !counted(r) && r.depth == 0)
        .filter_map(|r| {
            let time = r.inclusive.get(metric)?.value.filter(|t| *t > 0.0)?;
            Some(SummaryRegion {
                path: r.path.clone(),
                self_time: time,
                self_time_share: share(time),
                time_share: r.time_share,
            })
        })
        .collect();
    overlapping_regions.sort_by(|a, b| b.self_time.total_cmp(&a.self_time));
    let findings = savings::allocate(scope, &share);
    ScopeSummary {
        time: total,
        top_regions: regions,
        top_kernels: top_kernels(scope, metric, has_stack, &share),
        top_insights: findings.counted,
        overlapping: findings.overlapping,
        not_quantified: savings::not_quantified(scope),
        overlapping_regions,
    }
}

/// Kernels over the whole scope: the top-level regions' lists (which hold their nested kernels) and
/// the kernels outside every region, grouped by function as the region tables group them; the name
/// kept is the variant with the most time.
fn top_kernels(
    scope: &Scope,
    metric: &str,
    has_stack: bool,
    share: &dyn Fn(f64) -> Option<f64>,
) -> Vec<SummaryKernel> {
    struct Group<'a> {
        names: HashMap<&'a str, f64>,
        count: u64,
        time: f64,
    }
    let mut by_function: HashMap<&str, Group> = HashMap::new();
    let lists = scope
        .regions
        .iter()
        .filter(|r| r.depth == 0 && (!has_stack || r.kind == RegionKind::Stack))
        .map(|r| &r.kernels)
        .chain([&scope.outside_regions.kernels]);
    for list in lists {
        for k in list {
            let time = k.metrics.get(metric).and_then(|v| v.value).unwrap_or(0.0);
            let group = by_function.entry(&k.function).or_insert(Group {
                names: HashMap::new(),
                count: 0,
                time: 0.0,
            });
            *group.names.entry(&k.name).or_default() += time;
            group.count += k.count;
            group.time += time;
        }
    }
    let mut kernels: Vec<SummaryKernel> = by_function
        .into_iter()
        .filter(|(_, g)| g.time > 0.0)
        .map(|(function, g)| {
            let name = g
                .names
                .iter()
                .max_by(|a, b| a.1.total_cmp(b.1).then(b.0.cmp(a.0)))
                .map_or(function, |(n, _)| n);
            SummaryKernel {
                name: name.to_string(),
                function: function.to_string(),
                variants: g.names.len() as u64,
                count: g.count,
                time: g.time,
                time_share: share(g.time),
                mostly_in: None,
            }
        })
        .collect();
    kernels.sort_by(|a, b| b.time.total_cmp(&a.time).then(a.function.cmp(&b.function)));
    kernels.truncate(TOP);
    for k in &mut kernels {
        k.mostly_in = kernel_home(scope, metric, has_stack, &k.function, k.time);
    }
    kernels
}

/// The innermost region whose kernel list gives `function` at least half of its `time` over the
/// scope.
fn kernel_home(
    scope: &Scope,
    metric: &str,
    has_stack: bool,
    function: &str,
    time: f64,
) -> Option<String> {
    scope
        .regions
        .iter()
        .filter(|r| !has_stack || r.kind == RegionKind::Stack)
        .filter_map(|r| {
            let t: f64 = r
                .kernels
                .iter()
                .filter(|k| k.function == function)
                .filter_map(|k| k.metrics.get(metric)?.value)
                .sum();
            (t > 0.0 && t >= time / 2.0).then_some((r, t))
        })
        .max_by(|a, b| a.0.depth.cmp(&b.0.depth).then(a.1.total_cmp(&b.1)))
        .map(|(r, _)| r.path.clone())
}
