//! The aggregate of several Neuron profiles (a sweep, or one workload's NeuronCores): times, counts,
//! bytes and FLOPs add up; shares (%) are weighted by time, which is exact for the tool's shares
//! (each is a part over the run's time, MFU included); arithmetic intensity is recomputed from the
//! summed FLOPs and bytes; any other figure is kept only where every profile has the same value.
//! Regions with the same path across profiles are one aggregate region.

use std::sync::Arc;

use super::report_region::TIME_METRIC;
use crate::region::Rollup;
use crate::report::model::{
    Idle, Kernel, MetricInfo, MetricMap, MetricValue, Region, Scope, Totals,
};

/// How one metric combines over profiles.
#[derive(Clone, Copy, PartialEq)]
enum Combine {
    Sum,
    TimeWeighted,
    Intensity,
    Same,
}

fn combine_of(info: &MetricInfo) -> Combine {
    match info.unit.as_str() {
        _ if info.name == "mm_arithmetic_intensity" => Combine::Intensity,
        "%" => Combine::TimeWeighted,
        "ns" | "byte" | "flop" | "cycle" => Combine::Sum,
        _ if info.name.ends_with("_count") || info.rollup == Rollup::Sum => Combine::Sum,
        _ => Combine::Same,
    }
}

/// `parts`: each profile's metric map, with its time (ns).
fn combine(metrics: &[MetricInfo], parts: &[(&MetricMap, f64)]) -> MetricMap {
    let time: f64 = parts.iter().map(|(_, t)| t).sum();
    let mut out = MetricMap::default();
    for info in metrics {
        let values: Vec<(f64, f64)> = parts
            .iter()
            .filter_map(|(m, t)| Some((m.get(&info.name)?.value?, *t)))
            .collect();
        let Some(unit) = parts
            .iter()
            .find_map(|(m, _)| m.get(&info.name).map(|v| v.unit.clone()))
        else {
            continue;
        };
        let value = match combine_of(info) {
            _ if values.is_empty() => None,
            Combine::Sum => Some(values.iter().map(|(v, _)| v).sum()),
            Combine::TimeWeighted => {
                (time > 0.0).then(|| values.iter().map(|(v, t)| v * t).sum::<f64>() / time)
            }
            Combine::Same => values
                .iter()
                .all(|(v, _)| *v == values[0].0)
                .then_some(values[0].0),
            Combine::Intensity => None,
        };
        out.0.push((
            Arc::from(info.name.as_str()),
            MetricValue {
                value,
                unit,
                values: None,
                interval95: None,
            },
        ));
    }
    let sum = |name: &str| out.get(name).and_then(|v| v.value);
    let intensity = sum("hardware_flops").zip(
        sum("hbm_read_bytes")
            .zip(sum("hbm_write_bytes"))
            .map(|(r, w)| r + w),
    );
    if let Some((_, v)) = out
        .0
        .iter_mut()
        .find(|(n, _)| &**n == "mm_arithmetic_intensity")
    {
        v.value = intensity.filter(|(_, b)| *b > 0.0).map(|(f, b)| f / b);
    }
    out
}

fn time_of(map: &MetricMap) -> f64 {
    map.get(TIME_METRIC).and_then(|v| v.value).unwrap_or(0.0)
}

/// The same instruction names over several lists: counts and times added.
fn merge_kernels(lists: &[&[Kernel]]) -> Vec<Kernel> {
    let mut out: Vec<Kernel> = Vec::new();
    for k in lists.iter().flat_map(|l| l.iter()) {
        match out.iter_mut().find(|o| o.name == k.name) {
            Some(o) => {
                o.count += k.count;
                for (name, v) in &mut o.metrics.0 {
                    let add = k.metrics.get(name).and_then(|x| x.value);
                    v.value = v.value.zip(add).map(|(a, b)| a + b).or(v.value);
                }
            }
            None => out.push(k.clone()),
        }
    }
    out.sort_by(|a, b| time_of(&b.metrics).total_cmp(&time_of(&a.metrics)));
    out
}

fn totals(metrics: &[MetricInfo], parts: &[&Totals]) -> Totals {
    let maps: Vec<(&MetricMap, f64)> = parts
        .iter()
        .map(|t| (&t.metrics, time_of(&t.metrics)))
        .collect();
    Totals {
        kernel_count: parts.iter().map(|t| t.kernel_count).sum(),
        coverage: None,
        metrics: combine(metrics, &maps),
        kernels: merge_kernels(&parts.iter().map(|t| &t.kernels[..]).collect::<Vec<_>>()),
    }
}

/// Regions sharing a path, first seen first.
fn regions(metrics: &[MetricInfo], scopes: &[Scope], total: f64) -> Vec<Region> {
    let mut paths: Vec<&str> = Vec::new();
    for r in scopes.iter().flat_map(|s| &s.regions) {
        if !paths.contains(&r.path.as_str()) {
            paths.push(&r.path);
        }
    }
    paths
        .into_iter()
        .map(|path| {
            let same: Vec<&Region> = scopes
                .iter()
                .flat_map(|s| s.regions.iter().filter(|r| r.path == path))
                .collect();
            let part = |f: fn(&Region) -> &MetricMap| -> Vec<(&MetricMap, f64)> {
                same.iter().map(|r| (f(r), time_of(f(r)))).collect()
            };
            let inclusive = combine(metrics, &part(|r| &r.inclusive));
            let mut region = same[0].clone();
            region.time_share = (total > 0.0).then(|| time_of(&inclusive) / total);
            region.exclusive = combine(metrics, &part(|r| &r.exclusive));
            region.inclusive = inclusive;
            region.kernel_count = same.iter().map(|r| r.kernel_count).sum();
            region.self_kernel_count = same.iter().map(|r| r.self_kernel_count).sum();
            region.kernels =
                merge_kernels(&same.iter().map(|r| &r.kernels[..]).collect::<Vec<_>>());
            region.insights = Vec::new();
            region.notes = vec![format!("{} profile(s) have this region", same.len())];
            region
        })
        .collect()
}

/// The aggregate scope of `scopes`.
pub fn aggregate(metrics: &[MetricInfo], scopes: &[Scope]) -> Scope {
    let total = totals(
        metrics,
        &scopes.iter().map(|s| &s.total).collect::<Vec<_>>(),
    );
    let outside = totals(
        metrics,
        &scopes
            .iter()
            .map(|s| &s.outside_regions)
            .collect::<Vec<_>>(),
    );
    let time = time_of(&total.metrics);
    Scope {
        label: "aggregate".to_string(),
        rank: None,
        process_id: None,
        process_name: None,
        host: None,
        device: None,
        summary: Default::default(),
        regions: regions(metrics, scopes, time),
        total,
        outside_regions: outside,
        insights: Vec::new(),
        distributions: Vec::new(),
        notes: vec![format!(
            "The {} profiles together: times, counts, bytes and FLOPs add up; shares (%, MFU \
             included) are weighted by each profile's time; arithmetic intensity is recomputed from \
             the summed FLOPs and bytes; other figures are shown only where every profile has the \
             same value.",
            scopes.len()
        )],
        idle: idle_of(scopes),
    }
}

/// The profiles' windows, active and idle times added up, as their times are; their gaps stay each
/// profile's own. `None` unless every profile has a timeline.
fn idle_of(scopes: &[Scope]) -> Option<Idle> {
    let all: Vec<&Idle> = scopes
        .iter()
        .map(|s| s.idle.as_ref())
        .collect::<Option<_>>()?;
    let sum = |f: fn(&Idle) -> f64| all.iter().map(|i| f(i)).sum::<f64>();
    let (window_ns, active_ns) = (sum(|i| i.window_ns), sum(|i| i.active_ns));
    Some(Idle {
        window_ns,
        active_ns,
        idle_ns: sum(|i| i.idle_ns),
        busy_share: (window_ns > 0.0).then(|| active_ns / window_ns),
        gaps: Vec::new(),
    })
}
