//! Turns the region core's [`ScopeStats`] into the report model: metric maps with units, time shares,
//! kernel lists and the per-region notes.

use std::sync::Arc;

use crate::region::{
    Acc, Group, KeySamples, MetricSpec, RegionPath, RegionStats, RunToRun, ScopeKey, ScopeStats,
    Tallies,
};

use super::model::{
    CoverageShares, Insight, Kernel, MetricMap, MetricValue, PerResultMap, PerResultValue,
    Percentiles, Region, Scope, Totals,
};
use crate::region;

/// Builds report scopes from finished region statistics.
pub struct ScopeBuilder<'a> {
    specs: &'a [MetricSpec],
    /// Each metric's name and unit, allocated once and shared by every value in the report.
    names: Vec<Arc<str>>,
    units: Vec<Arc<str>>,
    /// True when results carry a duration, so time shares mean something.
    has_time: bool,
    /// True for a sampled reading: every region says how its deep metrics were obtained.
    sampled: bool,
    /// The method that made the regions.
    origin: &'a str,
    /// The profiler's findings for a region of a scope (`None`: of the aggregate), if it gave any.
    insights: &'a (dyn Fn(Option<&ScopeKey>, &RegionPath) -> Vec<Insight> + Sync),
    /// A sampled reading's deep samples per launch key: estimated deep values get 95% intervals.
    samples: Option<&'a KeySamples>,
}

/// The scope being built: its tallies (each launch key's duration spread) and how much two runs of
/// the workload differ ([`KeySamples::run_to_run`]).
type ScopeTallies<'t> = (&'t Tallies, &'t RunToRun);

impl<'a> ScopeBuilder<'a> {
    pub fn new(
        specs: &'a [MetricSpec],
        has_time: bool,
        sampled: bool,
        origin: &'a str,
        insights: &'a (dyn Fn(Option<&ScopeKey>, &RegionPath) -> Vec<Insight> + Sync),
    ) -> ScopeBuilder<'a> {
        ScopeBuilder {
            specs,
            names: specs.iter().map(|s| Arc::from(s.name.as_str())).collect(),
            units: specs.iter().map(|s| Arc::from(s.unit.as_str())).collect(),
            has_time,
            sampled,
            origin,
            insights,
            samples: None,
        }
    }

    /// Gives estimated deep values 95% intervals from these deep samples.
    pub fn with_samples(mut self, samples: Option<&'a KeySamples>) -> ScopeBuilder<'a> {
        self.samples = samples;
        self
    }

    pub fn scope(&self, stats: ScopeStats, is_aggregate: bool) -> Scope {
        let scope_time = stats.total.time;
        let scope_tallies = stats.total.tallies.clone();
        let rerun = self
            .samples
            .map(|s| s.run_to_run(&scope_tallies))
            .unwrap_or_default();
        let tallies = (&scope_tallies, &rerun);
        let key = (!is_aggregate).then_some(&stats.key);
        let regions = stats
            .regions
            .into_iter()
            .map(|r| {
                let insights = (self.insights)(key, &r.path);
                let mut region = self.region(r, scope_time, tallies);
                region.insights = insights;
                region
            })
            .collect();
        let mut notes = Vec::new();
        if stats.excluded > 0 {
            notes.push(format!(
                "{} result(s) were left out by report.kernels; totals cover the selected kernels only.",
                stats.excluded
            ));
        }
        let (label, rank, process_id, process_name, host, device) = if is_aggregate {
            ("aggregate".to_string(), None, None, None, None, None)
        } else {
            let key = &stats.key;
            (
                scope_label(key),
                key.rank.parse().ok(),
                key.process_id.parse().ok(),
                non_empty(&key.process_name),
                non_empty(&key.host),
                non_empty(&key.device),
            )
        };
        Scope {
            label,
            rank,
            process_id,
            process_name,
            host,
            device,
            summary: Default::default(),
            total: Totals {
                kernel_count: stats.total.count,
                coverage: self.coverage(&stats.total),
                metrics: self.metric_map(&stats.total, tallies),
                kernels: Vec::new(),
            },
            outside_regions: Totals {
                kernel_count: stats.outside.count,
                coverage: self.coverage(&stats.outside),
                metrics: self.metric_map(&stats.outside, tallies),
                kernels: self.kernels(stats.outside_kernels, tallies),
            },
            regions,
            insights: Vec::new(),
            distributions: Vec::new(),
            notes,
            // A GPU trace has no idle device timeline of its own here.
            idle: None,
        }
    }

    fn region(&self, stats: RegionStats, scope_time: f64, tallies: ScopeTallies<'_>) -> Region {
        let path = &stats.path;
        let mut notes = Vec::new();
        if stats.inclusive.count == 0 {
            if stats.excluded > 0 {
                notes.push(format!(
                    "No selected kernels: all {} result(s) of this region were left out by report.kernels; metrics are zero.",
                    stats.excluded
                ));
            } else {
                notes.push("No results in this region; metrics are zero.".to_string());
            }
        } else if stats.excluded > 0 {
            notes.push(format!(
                "{} result(s) left out by report.kernels; totals cover the selected kernels only.",
                stats.excluded
            ));
        }
        let time_share =
            (self.has_time && scope_time > 0.0).then(|| stats.inclusive.time / scope_time);
        Region {
            path: path.display(),
            segments: path.segments.clone(),
            name: path.name().to_string(),
            kind: path.kind,
            origin: self.origin.to_string(),
            parent: path.parent().map(|p| p.display()),
            depth: path.depth(),
            kernel_count: stats.inclusive.count,
            self_kernel_count: stats.exclusive.count,
            time_share,
            coverage: self.coverage(&stats.inclusive),
            inclusive: self.metric_map(&stats.inclusive, tallies),
            exclusive: self.metric_map(&stats.exclusive, tallies),
            per_result: self.per_result(&stats.inclusive),
            collectives: None,
            kernels: self.kernels(stats.kernels, tallies),
            instances: stats
                .instances
                .as_deref()
                .and_then(Percentiles::nearest_rank),
            insights: Vec::new(),
            notes,
            idle: None,
        }
    }

    /// A region with no results at all, carrying `note`.
    pub fn empty_region(&self, path: RegionPath, note: String) -> Region {
        let mut region = self.region(
            RegionStats {
                inclusive: Group::new(self.specs),
                exclusive: Group::new(self.specs),
                kernels: Vec::new(),
                excluded: 0,
                instances: None,
                path,
            },
            0.0,
            (&Tallies::default(), &RunToRun::default()),
        );
        region.notes = vec![note];
        region
    }

    fn kernels(&self, kernels: Vec<(String, Group)>, tallies: ScopeTallies<'_>) -> Vec<Kernel> {
        kernels
            .into_iter()
            .map(|(name, group)| Kernel {
                function: region::function_name(&name).to_string(),
                count: group.count,
                metrics: self.metric_map(&group, tallies),
                name,
            })
            .collect()
    }

    /// How a group's deep metrics were obtained, in a sampled reading with results in the group.
    fn coverage(&self, group: &Group) -> Option<CoverageShares> {
        if !self.sampled {
            return None;
        }
        let [measured, estimated, unmatched, not_measured] = group.coverage.shares()?;
        Some(CoverageShares {
            measured_time_share: measured,
            estimated_time_share: estimated,
            unmatched_time_share: unmatched,
            not_measured_time_share: not_measured,
            estimated: !group.coverage.all_measured(),
        })
    }

    /// Smallest, largest and mean single result of each numeric metric of `group`.
    fn per_result(&self, group: &Group) -> PerResultMap {
        PerResultMap(
            self.names
                .iter()
                .zip(&self.units)
                .zip(&group.accs)
                .filter_map(|((name, unit), acc)| {
                    let p = acc.per_result()?;
                    Some((
                        name.clone(),
                        PerResultValue {
                            min: p.min,
                            max: p.max,
                            mean: p.mean,
                            unit: unit.clone(),
                        },
                    ))
                })
                .collect(),
        )
    }

    /// Empty groups give zeroed sums (an empty region really did take no time), `null` otherwise.
    /// In a sampled reading each deep value carries its 95% interval (`tallies`: the scope's).
    fn metric_map(&self, group: &Group, tallies: ScopeTallies<'_>) -> MetricMap {
        MetricMap(
            self.names
                .iter()
                .zip(&self.units)
                .zip(self.specs.iter().zip(&group.accs))
                .enumerate()
                .map(|(at, ((name, unit), (spec, acc)))| {
                    let mut value = metric_value(unit, acc, group.count == 0);
                    value.interval95 = self.samples.and_then(|samples| {
                        let estimate = acc.estimate(spec.rollup)?;
                        samples.interval95(at, estimate, &group.tallies, tallies)
                    });
                    (name.clone(), value)
                })
                .collect(),
        )
    }
}

fn metric_value(unit: &Arc<str>, acc: &Acc, empty: bool) -> MetricValue {
    let values = acc.distinct().map(|(set, overflow)| {
        let mut list: Vec<String> = set.to_vec();
        // Launch shapes read best in numeric order (4, 16, 128), not text order (128, 16, 4).
        if list.iter().all(|v| v.parse::<f64>().is_ok()) {
            list.sort_by(|a, b| {
                a.parse::<f64>()
                    .unwrap_or(0.0)
                    .total_cmp(&b.parse::<f64>().unwrap_or(0.0))
            });
        }
        if overflow {
            list.push("…".to_string());
        }
        list
    });
    let value = match (acc.value(), acc) {
        (None, Acc::Sum { .. }) if empty => Some(0.0),
        (v, _) => v,
    };
    MetricValue {
        value,
        unit: unit.clone(),
        values,
        interval95: None,
    }
}

fn non_empty(text: &str) -> Option<String> {
    (!text.is_empty()).then(|| text.to_string())
}

/// `python3.12 (pid 1606) on 127.0.0.1, device 0`.
pub fn scope_label(key: &ScopeKey) -> String {
    let mut label = if key.process_name.is_empty() {
        "process".to_string()
    } else {
        key.process_name.clone()
    };
    if !key.process_id.is_empty() {
        label.push_str(&format!(" (pid {})", key.process_id));
    }
    if !key.host.is_empty() {
        label.push_str(&format!(" on {}", key.host));
    }
    if !key.device.is_empty() {
        label.push_str(&format!(", device {}", key.device));
    }
    if !key.rank.is_empty() {
        label.push_str(&format!(", rank {}", key.rank));
    }
    label
}
