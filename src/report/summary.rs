//! Each scope's opening: where its time goes (regions by self time, kernels by time) and what would
//! save the most (findings by estimated time saved in the scope), computed from the finished scope.

use std::collections::HashMap;

use super::model::{Kernel, Region, Scope, Summary, SummaryInsight, SummaryKernel, SummaryRegion};
use crate::region::RegionKind;

/// Entries per list.
pub const TOP: usize = 5;

/// Sets `scope.summary` from its regions, kernels and findings; `time_metric` names the time.
pub fn fill(scope: &mut Scope, time_metric: Option<&str>) {
    scope.summary = summarize(scope, time_metric);
}

pub fn summarize(scope: &Scope, time_metric: Option<&str>) -> Summary {
    let Some(metric) = time_metric else {
        return Summary::default();
    };
    let total = scope.total.metrics.get(metric).and_then(|v| v.value);
    let share = |t: f64| total.filter(|s| *s > 0.0).map(|s| t / s);
    // Nested ranges share time with their parents, so self time is the one that adds up; start/end
    // ranges overlap the stack, so they count only when there is no stack at all.
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

    Summary {
        time: total,
        top_regions: regions,
        top_kernels: top_kernels(scope, metric, has_stack, &share),
        top_insights: top_insights(scope, &share),
    }
}

/// Kernels over the whole scope: the top-level regions' lists (which hold their nested kernels) and
/// the kernels outside every region, by function-and-signature name.
fn top_kernels(
    scope: &Scope,
    metric: &str,
    has_stack: bool,
    share: &dyn Fn(f64) -> Option<f64>,
) -> Vec<SummaryKernel> {
    let mut by_name: HashMap<&str, (&Kernel, u64, f64)> = HashMap::new();
    let lists = scope
        .regions
        .iter()
        .filter(|r| r.depth == 0 && (!has_stack || r.kind == RegionKind::Stack))
        .map(|r| &r.kernels)
        .chain([&scope.outside_regions.kernels]);
    for list in lists {
        for k in list {
            let time = k.metrics.get(metric).and_then(|v| v.value).unwrap_or(0.0);
            let entry = by_name.entry(&k.name).or_insert((k, 0, 0.0));
            entry.1 += k.count;
            entry.2 += time;
        }
    }
    let mut kernels: Vec<SummaryKernel> = by_name
        .into_values()
        .filter(|(_, _, time)| *time > 0.0)
        .map(|(k, count, time)| SummaryKernel {
            name: k.name.clone(),
            function: k.function.clone(),
            count,
            time,
            time_share: share(time),
            mostly_in: None,
        })
        .collect();
    kernels.sort_by(|a, b| b.time.total_cmp(&a.time).then(a.name.cmp(&b.name)));
    kernels.truncate(TOP);
    for k in &mut kernels {
        k.mostly_in = kernel_home(scope, metric, has_stack, &k.name, k.time);
    }
    kernels
}

/// The innermost region whose kernel list gives `name` at least half of its `time` over the scope.
fn kernel_home(
    scope: &Scope,
    metric: &str,
    has_stack: bool,
    name: &str,
    time: f64,
) -> Option<String> {
    scope
        .regions
        .iter()
        .filter(|r| !has_stack || r.kind == RegionKind::Stack)
        .filter_map(|r| {
            let k = r.kernels.iter().find(|k| k.name == name)?;
            let t = k.metrics.get(metric)?.value?;
            (t >= time / 2.0).then_some((r, t))
        })
        .max_by(|a, b| a.0.depth.cmp(&b.0.depth).then(a.1.total_cmp(&b.1)))
        .map(|(r, _)| r.path.clone())
}

/// Findings with an estimated saving, across the scope's regions, largest saving first. A rule fires
/// in a region and in every region around it: once it is listed for a region, the regions nested in
/// it or around it are not listed again for it (their time is the same time); among equal savings the
/// innermost region is the one named.
fn top_insights(scope: &Scope, share: &dyn Fn(f64) -> Option<f64>) -> Vec<SummaryInsight> {
    let mut all: Vec<(&Region, &super::model::Insight, f64)> = scope
        .regions
        .iter()
        .flat_map(|r| {
            r.insights
                .iter()
                .filter_map(move |i| Some((r, i, i.estimated_saving_ns.filter(|s| *s > 0.0)?)))
        })
        .collect();
    all.sort_by(|a, b| {
        b.2.total_cmp(&a.2)
            .then(b.0.depth.cmp(&a.0.depth))
            .then(a.0.path.cmp(&b.0.path))
    });
    let mut seen: Vec<(&str, &str, &Region)> = Vec::new();
    let mut out = Vec::new();
    for (region, insight, saving) in all {
        let (source, rule) = (insight.source.as_str(), insight.rule.as_str());
        if seen
            .iter()
            .any(|(s, r, other)| *s == source && *r == rule && nested(region, other))
        {
            continue;
        }
        seen.push((source, rule, region));
        let focus = mostly_in(scope, region, source, rule, saving);
        out.push(SummaryInsight {
            mostly_in: focus.map(|(r, _)| r.path.clone()),
            mostly_in_saving_ns: focus.map(|(_, s)| s),
            region: region.path.clone(),
            source: insight.source.clone(),
            rule: insight.rule.clone(),
            severity: insight.severity,
            message: insight.message.clone(),
            kernel: insight.evidence.kernel.clone(),
            estimated_speedup: insight.estimated_speedup,
            estimated_saving_ns: saving,
            saving_share: share(saving),
        });
        if out.len() == TOP {
            break;
        }
    }
    out
}

/// The innermost region nested in `outer` where the same rule saves at least half of `saving`.
fn mostly_in<'a>(
    scope: &'a Scope,
    outer: &Region,
    source: &str,
    rule: &str,
    saving: f64,
) -> Option<(&'a Region, f64)> {
    scope
        .regions
        .iter()
        .filter(|r| r.depth > outer.depth && r.kind == outer.kind && nested(outer, r))
        .filter_map(|r| {
            let s = r
                .insights
                .iter()
                .find(|i| i.source == source && i.rule == rule)?
                .estimated_saving_ns?;
            (s >= saving / 2.0).then_some((r, s))
        })
        .max_by(|a, b| a.0.depth.cmp(&b.0.depth).then(a.1.total_cmp(&b.1)))
}

/// Whether one region holds the other (or they are the same): their results overlap.
fn nested(a: &Region, b: &Region) -> bool {
    if a.kind != b.kind {
        // A start/end range may overlap anything.
        return true;
    }
    let prefix = |outer: &Region, inner: &Region| {
        outer.segments.len() <= inner.segments.len()
            && inner.segments[..outer.segments.len()] == outer.segments[..]
    };
    prefix(a, b) || prefix(b, a)
}
