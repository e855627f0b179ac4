//! Neuron regions as report regions: their paths, their notes and their instructions by engine and
//! opcode; a region `regions.include` names that the profile lacks, shown empty.

use super::units::{metric_map, rollup_of, UnitRow};
use crate::insights::FiredRule;
use crate::profiler::neuron::observe::opcodes::OpcodeTime;
use crate::profiler::neuron::observe::{Bound, NeuronRegion};
use crate::profiler::neuron::settings::RegionMethod;
use crate::region::{display_of, RegionFilter, RegionKind, Rollup};
use crate::report::model::{Idle, Insight, Kernel, MetricMap, MetricValue, Region};

/// Who found the rules' insights.
pub(super) const INSIGHT_SOURCE: &str = "profile-run";
/// The time metric: each region's length, which gives its time share.
pub(super) const TIME_METRIC: &str = "total_time";

/// The rules' findings in report form, their evidence in the report unit of each metric (a fraction
/// shown as the % the tables show, seconds as ns), so evidence reads like the tables beside it.
pub(super) fn insights(
    found: &[FiredRule],
    time_ns: Option<f64>,
    units: &[UnitRow],
) -> Vec<Insight> {
    found
        .iter()
        .cloned()
        .map(|i| {
            let mut insight = i.into_report(INSIGHT_SOURCE);
            insight.evidence.time = time_ns.unwrap_or(0.0);
            for (name, value) in &mut insight.evidence.metrics {
                if let Some((_, _, factor)) = units.iter().find(|u| &*u.0 == name.as_str()) {
                    *value *= factor;
                }
            }
            insight
        })
        .collect()
}

/// Rules judging a region's span, not the work in it: they keep the region's whole time.
const SPAN_RULES: [&str; 2] = ["slow_instance", "collective_outlier"];

/// A region's or scope's findings: where it is mostly idle, the idle finding first; the rules'
/// busy-time advice then weighs the time something ran (`evidence.time` is the active time), and is
/// not offered at all where nothing ran.
pub(super) fn findings(
    found: &[FiredRule],
    time_ns: Option<f64>,
    idle: Option<&Idle>,
    units: &[UnitRow],
) -> Vec<Insight> {
    let mut out = insights(found, time_ns, units);
    let Some(idle) = idle else { return out };
    out.retain_mut(|i| {
        if SPAN_RULES.contains(&i.rule.as_str()) {
            return true;
        }
        i.evidence.time = idle.active_ns;
        idle.active_ns > 0.0
    });
    if idle.mostly_idle() {
        out.insert(0, super::idle_finding::finding(idle));
    }
    out
}

/// Every region of one profile, each alone (`nesting.rs` nests them).
pub fn regions(found: &[NeuronRegion], units: &[UnitRow], total_ns: Option<f64>) -> Vec<Region> {
    found.iter().map(|r| region(r, units, total_ns)).collect()
}

/// A region `regions.include` names by its path that the profile does not have still shows, empty
/// and with a note, as it does for ncu: "nothing there" is visible rather than silently absent.
pub fn add_requested_empty(filter: &RegionFilter, units: &[UnitRow], regions: &mut Vec<Region>) {
    for (pattern, segments) in filter.requested_paths() {
        if regions.iter().any(|r| r.segments == segments) {
            continue;
        }
        // Nothing ran there: its times, counts, bytes and FLOPs are zero; its ratios unknown.
        let metrics = MetricMap(
            units
                .iter()
                .map(|(name, unit, _)| {
                    let value = (rollup_of(name, unit) == Rollup::Sum).then_some(0.0);
                    let (values, interval95) = (None, None);
                    let unit = unit.clone();
                    let value = MetricValue {
                        value,
                        unit,
                        values,
                        interval95,
                    };
                    (name.clone(), value)
                })
                .collect(),
        );
        regions.push(Region {
            coverage: None,
            name: segments.last().cloned().unwrap_or_default(),
            path: display_of(&segments),
            depth: 0,
            parent: None,
            kernels: Vec::new(),
            kind: RegionKind::Stack,
            origin: "regions.include".to_string(),
            segments,
            kernel_count: 0,
            self_kernel_count: 0,
            time_share: Some(0.0),
            exclusive: metrics.clone(),
            inclusive: metrics,
            per_result: Default::default(),
            collectives: None,
            instances: None,
            insights: Vec::new(),
            notes: vec![format!(
                "Requested in regions.include (`{pattern}`) but this profile has no such region; its times and counts are zero."
            )],
            idle: None,
        });
    }
}

/// A region's (or the outside's) instructions by engine and opcode, as the report's list of results.
pub fn opcode_list(opcodes: &[OpcodeTime], units: &[UnitRow]) -> Vec<Kernel> {
    let unit = units
        .iter()
        .find(|u| &*u.0 == TIME_METRIC)
        .map(|u| u.1.clone());
    opcodes
        .iter()
        .map(|o| {
            let name = format!("{} {}", o.engine, o.opcode);
            let mut metrics = MetricMap::default();
            if let Some(unit) = &unit {
                metrics.0.push((
                    TIME_METRIC.into(),
                    MetricValue {
                        value: Some(o.time_ns as f64),
                        unit: unit.clone(),
                        values: None,
                        interval95: None,
                    },
                ));
            }
            Kernel {
                function: name.clone(),
                name,
                count: o.count,
                metrics,
            }
        })
        .collect()
}

/// The path of a region: hierarchy names are layer paths already; other names are one segment, a
/// `/` or `\` in them escaped.
fn segments(r: &NeuronRegion) -> (String, Vec<String>) {
    if r.method == RegionMethod::Hierarchy {
        let segments = r.name.split('/').map(str::to_string).collect();
        return (r.name.clone(), segments);
    }
    let escaped = r.name.replace('\\', "\\\\").replace('/', "\\/");
    (escaped, vec![r.name.clone()])
}

pub fn region(r: &NeuronRegion, units: &[UnitRow], total_ns: Option<f64>) -> Region {
    let (path, segments) = segments(r);
    let metrics = metric_map(&r.metrics, units);
    let time_ns = r
        .metrics
        .get(TIME_METRIC)
        .copied()
        .flatten()
        .map(|s| s * 1e9);
    let mut notes = vec![format!(
        "window {} ns – {} ns from the profile start",
        r.start_ns, r.end_ns
    )];
    notes.extend(r.notes.iter().cloned());
    if let Some(bound) = r.bound {
        let g = |k: &str| r.metrics.get(k).copied().flatten().unwrap_or(f64::NAN);
        let (ai, ratio) = (
            g("mm_arithmetic_intensity"),
            g("peak_flops_bandwidth_ratio"),
        );
        notes.push(match bound {
            Bound::Memory => format!(
                "memory-bound: arithmetic intensity {ai:.1} FLOP/byte, below the machine balance of {ratio:.1}"
            ),
            Bound::Compute => format!(
                "compute-bound: arithmetic intensity {ai:.1} FLOP/byte, at or above the machine balance of {ratio:.1}"
            ),
        });
    }
    Region {
        coverage: None,
        // The last segment, as a GPU region's name: `report.compare` finds a layer by it alone.
        name: segments.last().cloned().unwrap_or_default(),
        path,
        depth: 0,
        parent: None,
        kernels: opcode_list(&r.opcodes, units),
        kind: if r.method == RegionMethod::Hierarchy {
            RegionKind::Stack
        } else {
            RegionKind::Mark
        },
        origin: r.method.as_str().to_string(),
        segments,
        kernel_count: r.instructions.len() as u64,
        self_kernel_count: r.instructions.len() as u64,
        time_share: time_ns
            .zip(total_ns)
            .filter(|(_, t)| *t > 0.0)
            .map(|(r, t)| r / t),
        exclusive: metrics.clone(),
        inclusive: metrics,
        per_result: Default::default(),
        collectives: None,
        instances: None,
        insights: findings(&r.insights, time_ns, r.idle.as_ref(), units),
        notes,
        idle: r.idle.clone(),
    }
}
