//! The time profile-run's own rules estimate a region would save: each rule names its formula in the
//! rule file (`saving:`), evaluated kernel by kernel over the region, so that the summary can count
//! each kernel's time under one finding only (docs/insights.md, "Estimated time saved").

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::report::model::{Kernel, Region};

/// How a rule's saving is estimated.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Saving {
    /// Launches of kernels shorter than `below_ns` on average: fusing them (or capturing them in
    /// one graph) leaves one launch; every other launch saves the least time a launch takes here.
    LaunchOverhead { below_ns: f64 },
    /// Kernels whose busiest unit (the largest of `metrics`, percent of peak) stays below `target`:
    /// at `target` percent they would take `busiest / target` of their time.
    BusyBelow { metrics: Vec<String>, target: f64 },
    /// Kernels whose `achieved` value stays below `theoretical` (percents of peak): the missing
    /// fraction of their time.
    RatioBelow {
        achieved: String,
        theoretical: String,
    },
    /// No estimate: the reason, shown where the finding is listed.
    NotQuantified(String),
}

impl Saving {
    /// The metrics the formula reads (checked against the rule file's vocabulary).
    pub fn metrics(&self) -> Vec<&str> {
        match self {
            Saving::BusyBelow { metrics, .. } => metrics.iter().map(String::as_str).collect(),
            Saving::RatioBelow {
                achieved,
                theoretical,
            } => vec![achieved, theoretical],
            Saving::LaunchOverhead { .. } | Saving::NotQuantified(_) => Vec::new(),
        }
    }

    /// The formula's name, kept with the finding (`launch_overhead` findings take their kernels
    /// before any other in the summary: no other change makes a launch-bound kernel shorter).
    pub fn name(&self) -> &'static str {
        match self {
            Saving::LaunchOverhead { .. } => "launch_overhead",
            Saving::BusyBelow { .. } => "busy_below",
            Saving::RatioBelow { .. } => "ratio_below",
            Saving::NotQuantified(_) => "not_quantified",
        }
    }
}

/// What a region's saving is computed from besides its kernels.
#[derive(Debug, Clone, Copy)]
pub struct RegionTimes<'a> {
    /// The time metric's name.
    pub metric: &'a str,
    /// The shortest single result of the region: the least time a launch takes on this GPU.
    pub floor: f64,
    /// The GPU's idle time between the region's kernels, where a trace of the run gives it: the
    /// most that removing launches can save. `None` without one.
    pub idle: Option<f64>,
}

/// The saving of `saving` in `region`, kernel name → ns (empty when nothing is saved).
pub fn by_kernel(saving: &Saving, region: &Region, times: RegionTimes) -> BTreeMap<String, f64> {
    let kernels = region
        .kernels
        .iter()
        .filter_map(|k| Some((k, k.metrics.get(times.metric)?.value?)))
        .filter(|(k, time)| k.count > 0 && *time > 0.0);
    let floor = times.floor.max(0.0);
    // The part of a kernel's time another change could remove: never its launches' own cost.
    let above_floor = |k: &Kernel, time: f64| (time - k.count as f64 * floor).max(0.0);
    let mut out: BTreeMap<String, f64> = match saving {
        Saving::LaunchOverhead { below_ns } => {
            let short: Vec<(&Kernel, f64)> = kernels
                .filter(|(k, time)| time / (k.count as f64) < *below_ns)
                .collect();
            let launches: u64 = short.iter().map(|(k, _)| k.count).sum();
            if launches < 2 {
                return BTreeMap::new();
            }
            // One launch stays: every kernel gives up its share of the others.
            let kept = (launches - 1) as f64 / launches as f64;
            let mut out: BTreeMap<String, f64> = short
                .iter()
                .map(|(k, time)| {
                    let per_launch = floor.min(time / k.count as f64);
                    (k.name.clone(), k.count as f64 * per_launch * kept)
                })
                .collect();
            if let Some(idle) = times.idle {
                let total: f64 = out.values().sum();
                if total > idle {
                    let scale = idle.max(0.0) / total;
                    out.values_mut().for_each(|v| *v *= scale);
                }
            }
            out
        }
        Saving::BusyBelow { metrics, target } => kernels
            .filter_map(|(k, time)| {
                let busiest = metrics
                    .iter()
                    .filter_map(|m| k.metrics.get(m)?.value)
                    .fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.max(v))))?;
                (busiest < *target && *target > 0.0).then(|| {
                    (
                        k.name.clone(),
                        above_floor(k, time) * (1.0 - busiest / target),
                    )
                })
            })
            .collect(),
        Saving::RatioBelow {
            achieved,
            theoretical,
        } => kernels
            .filter_map(|(k, time)| {
                let a = k.metrics.get(achieved)?.value?;
                let t = k.metrics.get(theoretical)?.value.filter(|t| *t > 0.0)?;
                (a < t).then(|| (k.name.clone(), above_floor(k, time) * (1.0 - a / t)))
            })
            .collect(),
        Saving::NotQuantified(_) => BTreeMap::new(),
    };
    out.retain(|_, v| *v > 0.0);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::region::RegionKind;
    use crate::report::model::{Kernel, MetricMap, MetricValue, Region};
    use std::sync::Arc;

    fn kernel(name: &str, count: u64, time: f64, busy: f64) -> Kernel {
        let value = |v: f64, unit: &str| MetricValue {
            value: Some(v),
            unit: Arc::from(unit),
            values: None,
            interval95: None,
        };
        Kernel {
            name: name.into(),
            function: name.into(),
            count,
            metrics: MetricMap(vec![
                (Arc::from("t"), value(time, "ns")),
                (Arc::from("busy"), value(busy, "%")),
            ]),
        }
    }

    fn region(kernels: Vec<Kernel>) -> Region {
        Region {
            path: "r".into(),
            segments: vec!["r".into()],
            name: "r".into(),
            kind: RegionKind::Stack,
            origin: String::new(),
            parent: None,
            depth: 0,
            kernel_count: kernels.iter().map(|k| k.count).sum(),
            self_kernel_count: 0,
            time_share: None,
            coverage: None,
            inclusive: MetricMap::default(),
            exclusive: MetricMap::default(),
            per_result: Default::default(),
            collectives: None,
            kernels,
            instances: None,
            insights: Vec::new(),
            notes: Vec::new(),
            idle: None,
        }
    }

    #[test]
    fn launch_overhead_keeps_one_launch_and_respects_an_idle_bound() {
        // 400 launches of 2.7 µs, and one long kernel the rule leaves alone.
        let r = region(vec![
            kernel("small", 400, 400.0 * 2_700.0, 5.0),
            kernel("big", 1, 50_000.0, 80.0),
        ]);
        let rule = Saving::LaunchOverhead { below_ns: 5_000.0 };
        let times = RegionTimes {
            metric: "t",
            floor: 2_500.0,
            idle: None,
        };
        let saved = by_kernel(&rule, &r, times);
        assert_eq!(saved.len(), 1);
        assert!((saved["small"] - 399.0 * 2_500.0).abs() < 1e-6);
        let bounded = by_kernel(
            &rule,
            &r,
            RegionTimes {
                idle: Some(100_000.0),
                ..times
            },
        );
        assert!((bounded["small"] - 100_000.0).abs() < 1e-6);
    }

    #[test]
    fn busy_below_never_removes_the_launch_floor() {
        let r = region(vec![kernel("small", 400, 400.0 * 2_700.0, 5.0)]);
        let rule = Saving::BusyBelow {
            metrics: vec!["busy".into()],
            target: 40.0,
        };
        let times = RegionTimes {
            metric: "t",
            floor: 2_500.0,
            idle: None,
        };
        let saved = by_kernel(&rule, &r, times)["small"];
        // Only the 200 ns above the floor of each launch can go, 7/8 of it at 5 % of a 40 % target.
        assert!((saved - 400.0 * 200.0 * (1.0 - 5.0 / 40.0)).abs() < 1e-6);
        let launch = by_kernel(&Saving::LaunchOverhead { below_ns: 5_000.0 }, &r, times)["small"];
        assert!(launch > saved);
    }
}
