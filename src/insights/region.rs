//! Rules per region: each region's inclusive metrics plus values derived from it (kernel count,
//! mean kernel duration, time share, the share of matrix-multiply kernels, the profiler's own
//! estimated speedups) are evaluated against a rule set, and the findings are merged with the
//! profiler's own, most important first.

use std::cmp::Ordering;

use super::saving::{self, RegionTimes};
use super::{Metrics, RuleSet, Units};
use crate::report::model::{Insight as ReportInsight, Region, Scope, Severity as ReportSeverity};

/// Who profile-run's own findings are from.
pub const SOURCE: &str = "profile-run";

/// The most findings a region shows.
pub const MAX_PER_REGION: usize = 4;

/// Values a rule may name besides the region's metrics (conf/rules/gpu.yaml explains each).
pub const DERIVED: [&str; 5] = [
    "kernel_count",
    "mean_kernel_duration",
    "time_share",
    "matmul_time_share",
    "profiler_speedup",
];

/// Substrings (lower case) that mark a kernel as a matrix multiply.
const MATMUL_NAMES: [&str; 7] = [
    "gemm", "matmul", "xmma", "hmma", "wgmma", "cutlass", "cublas",
];

/// Evaluates `rules` on every region of `scope` and merges the findings into its insights.
pub fn apply(rules: &RuleSet, time_metric: Option<&str>, scope: &mut Scope) {
    if rules.rules.is_empty() {
        for region in &mut scope.regions {
            let time = time_metric.and_then(|t| region.inclusive.get(t)?.value);
            cap_savings(&mut region.insights, time);
        }
        return;
    }
    for region in &mut scope.regions {
        let time = time_metric.and_then(|t| region.inclusive.get(t)?.value);
        cap_savings(&mut region.insights, time);
        let metrics = region_metrics(region, time_metric);
        let units = region_units(region, time_metric);
        // The profiler's findings are all kept; profile-run adds its own up to the cap, and at least
        // two when that many fire, so a region with many profiler findings still gets a diagnosis.
        let room = MAX_PER_REGION.saturating_sub(region.insights.len()).max(2);
        let fired = rules.evaluate(&metrics, &units, room);
        let mut ours: Vec<ReportInsight> = fired
            .into_iter()
            .map(|i| {
                let formula = i.saving.clone();
                let mut insight = i.into_report(SOURCE);
                insight.evidence.results = region.kernel_count;
                insight.evidence.time = time.unwrap_or(0.0);
                if let (Some(formula), Some(times)) = (formula, region_times(region, time_metric)) {
                    let by_kernel = saving::by_kernel(&formula, region, times);
                    if !matches!(formula, saving::Saving::NotQuantified(_)) {
                        insight.estimated_saving_ns = Some(by_kernel.values().sum());
                    }
                    insight.saving_by_kernel = by_kernel;
                }
                insight
            })
            .collect();
        cap_savings(&mut ours, time);
        let mut merged: Vec<ReportInsight> = std::mem::take(&mut region.insights);
        merged.extend(ours);
        rank(&mut merged, time);
        region.insights = merged;
    }
}

/// What the saving formulas read of a region besides its kernels; `None` without a time metric or
/// results with a time.
fn region_times<'a>(region: &Region, time_metric: Option<&'a str>) -> Option<RegionTimes<'a>> {
    let metric = time_metric?;
    let floor = region
        .per_result
        .0
        .iter()
        .find(|(name, _)| &**name == metric)
        .map(|(_, v)| v.min)?;
    // No trace of the run is read yet: launch overhead is bounded by the region's time alone.
    Some(RegionTimes {
        metric,
        floor,
        idle: None,
    })
}

/// The unit of each value a rule message may show: the region's metrics' own, the time metric's
/// for the mean kernel duration, percent for the profiler's speedup.
pub fn region_units(region: &Region, time_metric: Option<&str>) -> Units {
    let mut units: Units = region
        .inclusive
        .0
        .iter()
        .map(|(name, v)| (name.to_string(), v.unit.to_string()))
        .collect();
    if let Some(unit) = time_metric.and_then(|t| region.inclusive.get(t)) {
        units.insert("mean_kernel_duration".into(), unit.unit.to_string());
    }
    units.insert("profiler_speedup".into(), "%".into());
    units
}

/// A region's inclusive metrics and the derived values.
pub fn region_metrics(region: &Region, time_metric: Option<&str>) -> Metrics {
    let mut m: Metrics = region
        .inclusive
        .0
        .iter()
        .map(|(name, v)| (name.to_string(), v.value))
        .collect();
    let time = time_metric.and_then(|t| region.inclusive.get(t)?.value);
    let count = region.kernel_count as f64;
    m.insert("kernel_count".into(), Some(count));
    m.insert(
        "mean_kernel_duration".into(),
        time.filter(|_| count > 0.0).map(|t| t / count),
    );
    m.insert("time_share".into(), region.time_share);
    m.insert(
        "matmul_time_share".into(),
        matmul_share(region, time_metric, time),
    );
    m.insert(
        "profiler_speedup".into(),
        profiler_speedup(&region.insights, time),
    );
    m
}

fn matmul_share(region: &Region, time_metric: Option<&str>, time: Option<f64>) -> Option<f64> {
    let (metric, total) = (time_metric?, time.filter(|t| *t > 0.0)?);
    let matmul: f64 = region
        .kernels
        .iter()
        .filter(|k| {
            let name = k.name.to_lowercase();
            MATMUL_NAMES.iter().any(|p| name.contains(p))
        })
        .filter_map(|k| k.metrics.get(metric)?.value)
        .sum();
    Some(matmul / total)
}

/// A finding cannot save more than the region's time: savings of one rule over many results add up,
/// but each is an estimate, and together they may claim more than there is. The per-kernel savings
/// shrink in proportion, so they still add up to the finding's saving.
pub fn cap_savings(insights: &mut [ReportInsight], time: Option<f64>) {
    if let Some(time) = time {
        for i in insights {
            if let Some(saving) = i.estimated_saving_ns.as_mut() {
                if *saving > time && *saving > 0.0 {
                    let scale = time / *saving;
                    i.saving_by_kernel.values_mut().for_each(|v| *v *= scale);
                    *saving = time;
                }
            }
        }
    }
}

/// The profiler's estimated savings in percent of the region's time: each finding's saving is its
/// results' kernel-local speedups times their own times; the findings' savings add up, capped at the
/// whole region.
fn profiler_speedup(insights: &[ReportInsight], time: Option<f64>) -> Option<f64> {
    let total = time.filter(|t| *t > 0.0)?;
    let saved: f64 = insights
        .iter()
        .filter(|i| i.source != SOURCE)
        .filter_map(|i| i.estimated_saving_ns)
        .sum();
    Some((saved / total * 100.0).min(100.0))
}

/// Tier of a finding: 0 first. profile-run's by severity (high, medium, low, info); the profiler's by
/// its estimated speedup over the region's time (10 % or more, some, none), its notes last.
fn tier(insight: &ReportInsight, time: Option<f64>) -> (u8, f64) {
    if insight.source == SOURCE {
        let severity = insight.evidence.labels.get("severity").map(String::as_str);
        let priority = insight
            .evidence
            .labels
            .get("priority")
            .and_then(|p| p.parse().ok())
            .unwrap_or(0.0);
        let tier = match severity {
            Some("high") => 0,
            Some("medium") => 1,
            Some("low") => 2,
            _ => 3,
        };
        return (tier, priority);
    }
    if insight.severity == ReportSeverity::Info {
        return (3, 0.0);
    }
    let weighted = profiler_speedup(std::slice::from_ref(insight), time).unwrap_or(0.0);
    match weighted {
        w if w >= 10.0 => (0, w),
        w if w > 0.0 => (1, w),
        _ => (2, 0.0),
    }
}

/// Most important first: lower tier, then profile-run's before the profiler's within a tier, then
/// higher priority or estimated speedup; otherwise the order they came in.
pub fn rank(insights: &mut [ReportInsight], time: Option<f64>) {
    insights.sort_by(|a, b| {
        let (ta, sa) = tier(a, time);
        let (tb, sb) = tier(b, time);
        ta.cmp(&tb)
            .then((a.source != SOURCE).cmp(&(b.source != SOURCE)))
            .then(sb.partial_cmp(&sa).unwrap_or(Ordering::Equal))
    });
}
