//! Neuron metrics in the report's terms: each metric's report unit and the factor from the
//! analysis' unit (seconds → ns, 0–1 fractions → %), how it is derived (a sum over the region's
//! events, or a per-region formula), the group it is shown under, and the conversion of a metric map.

use std::collections::BTreeSet;
use std::sync::Arc;

use crate::insights::Units;
use crate::profiler::neuron::observe::metrics::{
    label, RuleMetrics, REGION_METRICS, SUMMARY_ONLY_METRICS,
};
use crate::profiler::neuron::readers::model::SummaryLayout;
use crate::region::Rollup;
use crate::report::model::{MetricInfo, MetricMap, MetricValue};

/// Name, report unit and factor from the analysis' unit, of one metric.
pub type UnitRow = (Arc<str>, Arc<str>, f64);

/// A metric's unit in the report and the factor from the analysis' unit.
fn report_unit(analysis_unit: &str) -> (&'static str, f64) {
    match analysis_unit {
        "s" => ("ns", 1e9),
        "0–1" => ("%", 100.0),
        "B" => ("byte", 1.0),
        "FLOP" => ("flop", 1.0),
        "FLOP/byte" => ("flop/byte", 1.0),
        "×" => ("x", 1.0),
        "ns" => ("ns", 1.0),
        "cycle" => ("cycle", 1.0),
        _ => ("", 1.0),
    }
}

/// The analysis unit of a metric only the tool's summary (or a `layer_summary` record) has, from its
/// name as the tool spells it: the tool writes `*_percent` as 0–1 fractions and `*_time` in seconds.
fn summary_only_unit(name: &str) -> &'static str {
    if name.ends_with("_bytes") {
        "B"
    } else if name.ends_with("_percent") {
        "0–1"
    } else if name.ends_with("_ns") {
        "ns"
    } else if name.ends_with("_time") {
        "s"
    } else if name.ends_with("_flops") || name.ends_with("flop_count") {
        "FLOP"
    } else if name.ends_with("_cycles") || name.ends_with("cycle_count") {
        "cycle"
    } else {
        ""
    }
}

/// Metrics that add up over disjoint spans: sums over the region's instructions, transfers or
/// collectives, and the lengths of its windows and of the busy or collective time in them.
const SUMS: &[&str] = &[
    "total_time",
    "total_active_time",
    "cc_op_active_time",
    "hardware_flops",
    "transpose_flops",
    "model_flops",
    "hbm_read_bytes",
    "hbm_write_bytes",
    "sbuf_read_bytes",
    "sbuf_write_bytes",
    "spill_save_bytes",
    "spill_reload_bytes",
    "dma_wait_time",
    "dma_transfer_count",
    "dma_transfer_total_bytes",
    "cc_op_count",
];

/// Metrics that are a part of the region's time (a time, or FLOPs or bytes at the peak rate, over
/// `total_time`): the mean of the parts weighted by their time.
const TIME_SHARES: &[&str] = &[
    "active_time_percent",
    "tensor_engine_active_time_percent",
    "vector_engine_active_time_percent",
    "scalar_engine_active_time_percent",
    "gpsimd_engine_active_time_percent",
    "sync_engine_active_time_percent",
    "mfu_estimated_percent",
    "hfu_estimated_percent",
    "mbu_estimated_percent",
    "dma_wait_percent",
    "cc_op_time_percent",
];

/// How a metric combines over the parts of a region (what a parent's exclusive value follows), from
/// its name and report unit: sums and times add up, time shares are weighted by time, and the
/// ratios are derived per region by the formulas in docs/neuron.md. The tool's own fields (a
/// summary's or a layer record's) follow their unit: times, bytes, FLOPs, cycles and counts add
/// up, shares are weighted by time.
pub fn rollup_of(name: &str, unit: &str) -> Rollup {
    if SUMS.contains(&name) {
        return Rollup::Sum;
    }
    if TIME_SHARES.contains(&name) {
        return Rollup::Mean;
    }
    if REGION_METRICS.iter().any(|d| d.name == name) {
        return Rollup::Derived;
    }
    match unit {
        "ns" | "byte" | "flop" | "cycle" => Rollup::Sum,
        _ if name.ends_with("_count") => Rollup::Sum,
        "%" => Rollup::Mean,
        _ => Rollup::Derived,
    }
}

/// The group a metric is shown under.
fn group(name: &str) -> &'static str {
    match name {
        n if n.contains("engine") || n.starts_with("total_") || n == "active_time_percent" => {
            "time"
        }
        n if n.contains("flops") || n.contains("fu_") || n == "mm_arithmetic_intensity" => {
            "compute"
        }
        n if n.starts_with("dma_") => "dma",
        n if n.starts_with("cc_") => "collectives",
        n if n.contains("group_median") => "group",
        // The core slowed by its power or utilization limit: how the hardware ran, not memory.
        n if n.starts_with("throttle_") => "throttling",
        _ => "memory",
    }
}

/// Every metric the report shows, in report order, with its unit and how it is derived.
pub fn metric_infos() -> Vec<MetricInfo> {
    metric_table(&BTreeSet::new(), &SummaryLayout::default()).0
}

/// The report's metrics and their units: profile-run's own, then `extra` (fields the profiles'
/// summaries and layer records carry under the tool's own names). With the tool's layout, the list
/// follows `summary_group_order`, each metric under its `summary_groups` group; metrics the tool does
/// not group (profile-run's derived ones) come last, in their own order.
pub fn metric_table(
    extra: &BTreeSet<String>,
    layout: &SummaryLayout,
) -> (Vec<MetricInfo>, Vec<UnitRow>) {
    let known: Vec<(&str, &str)> = REGION_METRICS
        .iter()
        .map(|d| (d.name, d.unit))
        .chain(
            SUMMARY_ONLY_METRICS
                .iter()
                .map(|n| (*n, summary_only_unit(n))),
        )
        .collect();
    let further = extra
        .iter()
        .filter(|n| !known.iter().any(|(k, _)| k == n))
        .map(|n| (n.as_str(), summary_only_unit(n)));
    let mut rows: Vec<(usize, &str, &str)> = known
        .iter()
        .copied()
        .chain(further)
        .enumerate()
        .map(|(i, (n, u))| (i, n, u))
        .collect();
    rows.sort_by_key(|&(i, name, _)| (layout.position(name).0, i));
    let infos = rows
        .iter()
        .map(|&(_, name, unit)| MetricInfo {
            label: label(name).map(String::from),
            name: name.to_string(),
            unit: report_unit(unit).0.to_string(),
            rollup: rollup_of(name, report_unit(unit).0),
            group: layout
                .groups
                .get(name)
                .map_or_else(|| group(name).to_string(), String::clone),
            description: layout.terminology.get(name).cloned(),
        })
        .collect();
    let units = rows
        .iter()
        .map(|&(_, name, unit)| {
            let (u, f) = report_unit(unit);
            (Arc::from(name), Arc::from(u), f)
        })
        .collect();
    (infos, units)
}

/// Converts an analysis metric map into report units, in report order (absent metrics left out).
pub fn metric_map(metrics: &RuleMetrics, infos: &[UnitRow]) -> MetricMap {
    let mut values: Vec<_> = infos
        .iter()
        .filter_map(|(name, unit, factor)| {
            let value = metrics.get(&**name)?;
            Some((
                name.clone(),
                MetricValue {
                    value: value.map(|v| v * factor),
                    unit: unit.clone(),
                    values: None,
                    interval95: None,
                },
            ))
        })
        .collect();
    // One map per scope, and a profile may have 200,000: no spare capacity kept.
    values.shrink_to_fit();
    MetricMap(values)
}

/// The units a rule's message shows its placeholders in (`1.61 GB`, not `1,610,612,736`): byte
/// counts only, the one report unit whose values the analysis already holds as they are shown
/// (times are seconds there and percents 0–1 fractions, which messages format with `{name:%}`).
pub fn message_units() -> Units {
    unit_table()
        .into_iter()
        .filter(|(_, unit, factor)| &**unit == "byte" && *factor == 1.0)
        .map(|(name, unit, _)| (name.to_string(), unit.to_string()))
        .collect()
}

/// Name, report unit and factor of every metric, shared by every value.
pub fn unit_table() -> Vec<UnitRow> {
    metric_table(&BTreeSet::new(), &SummaryLayout::default()).1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_analysis_unit_has_a_report_unit() {
        for d in REGION_METRICS {
            let (unit, factor) = report_unit(d.unit);
            assert!(
                d.unit.is_empty() || !unit.is_empty(),
                "{}: {}",
                d.name,
                d.unit
            );
            assert!(factor > 0.0);
        }
        assert_eq!(report_unit("s"), ("ns", 1e9));
        assert_eq!(report_unit("0–1"), ("%", 100.0));
    }

    #[test]
    fn sums_and_time_shares_are_region_metrics_and_the_rest_is_derived() {
        let infos = metric_infos();
        for name in SUMS.iter().chain(TIME_SHARES) {
            assert!(REGION_METRICS.iter().any(|d| d.name == *name), "{name}");
        }
        let rollup = |n: &str| infos.iter().find(|i| i.name == n).unwrap().rollup;
        assert_eq!(rollup("hbm_read_bytes"), Rollup::Sum);
        assert_eq!(rollup("total_active_time"), Rollup::Sum);
        assert_eq!(rollup("dma_wait_percent"), Rollup::Mean);
        assert_eq!(rollup("mm_arithmetic_intensity"), Rollup::Derived);
        assert_eq!(rollup("dma_transfer_average_bytes"), Rollup::Derived);
        assert_eq!(rollup("weight_size_bytes"), Rollup::Sum);
        assert_eq!(rollup("dma_active_time_percent"), Rollup::Mean);
        assert_eq!(
            infos.len(),
            REGION_METRICS.len() + SUMMARY_ONLY_METRICS.len()
        );
    }
}
