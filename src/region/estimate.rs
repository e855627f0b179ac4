//! Error bars of a sampled run: the 95% interval of each deep value that stands, in part, on twin
//! launches (docs/attribution.md, "Intervals"). A group tallies, per launch key, how many of its
//! launches took their twins' values and with what weight; the key's deep samples and the spread of
//! its durations then say how far the group's value may be from what full replay would measure.

use std::collections::BTreeMap;

use crate::fast_map::FastMap;

use super::{Coverage, Moments};

/// The normal quantile of a two-sided 95% interval.
pub const Z95: f64 = 1.96;

/// What one group holds of one launch key.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct KeyTally {
    /// The durations of every launch of the key in the group: the key's coefficient of variation in
    /// a scope comes from its scope total.
    pub durations: Moments,
    /// Durations of the launches counted as measured (the ones the deep pass profiled), and of
    /// those estimated: how atypical the profiled launches were (a cold first launch).
    pub measured: u64,
    pub measured_time: f64,
    pub estimated_time: f64,
    /// Launches whose deep values were estimated from the key's twins.
    pub estimated: u64,
    /// Their weights (the duration that weighs rates) and the sum of squared weights.
    pub weight: f64,
    pub weight_sq: f64,
}

/// A group's tallies by launch key (an id unique within one reading; see [`KeySamples`]), in key
/// order: the variances summed over keys then add up in the same order in every run (a float sum
/// in hash order could differ in its last bits), with no sort per metric.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Tallies(BTreeMap<u64, KeyTally>);

impl Tallies {
    /// Counts one launch of `key`; `weight` is what weighs its rates (`None`: unweighted).
    pub fn add(&mut self, key: u64, coverage: Coverage, time: Option<f64>, weight: Option<f64>) {
        let tally = self.0.entry(key).or_default();
        if let Some(t) = time {
            tally.durations.add(t);
        }
        match (coverage, time) {
            (Coverage::Measured, Some(t)) => {
                tally.measured += 1;
                tally.measured_time += t;
            }
            (Coverage::Estimated, Some(t)) => tally.estimated_time += t,
            _ => {}
        }
        if coverage == Coverage::Estimated {
            let w = weight.unwrap_or(0.0);
            tally.estimated += 1;
            tally.weight += w;
            tally.weight_sq += w * w;
        }
    }

    pub fn merge(&mut self, other: &Tallies) {
        for (key, o) in &other.0 {
            let t = self.0.entry(*key).or_default();
            t.durations.merge(&o.durations);
            t.measured += o.measured;
            t.measured_time += o.measured_time;
            t.estimated_time += o.estimated_time;
            t.estimated += o.estimated;
            t.weight += o.weight;
            t.weight_sq += o.weight_sq;
        }
    }

    pub fn get(&self, key: u64) -> Option<&KeyTally> {
        self.0.get(&key)
    }

    /// The coefficient of variation (sample standard deviation over mean) of `key`'s durations in
    /// this group; 0 with fewer than two timed launches, `None` for a key the group never saw.
    pub fn cv(&self, key: u64) -> Option<f64> {
        Some(self.0.get(&key)?.durations.cv())
    }

    /// How far the measured launches' mean duration lies from the estimated ones', relative to the
    /// latter: a deep pass that profiled a cold first launch measured an atypical one, and its deep
    /// values are off by about as much. 0 when either side is missing.
    pub fn measured_offset(&self, key: u64) -> f64 {
        let Some(t) = self.0.get(&key) else {
            return 0.0;
        };
        if t.measured == 0 || t.estimated == 0 || t.estimated_time <= 0.0 {
            return 0.0;
        }
        let measured = t.measured_time / t.measured as f64;
        let estimated = t.estimated_time / t.estimated as f64;
        (measured / estimated - 1.0).abs()
    }
}

/// A group's value of one metric as an interval needs it: a sum, or a mean weighted by a total
/// weight (extremes and attributes have no interval).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Estimate {
    Sum(f64),
    Mean { value: f64, weight: f64 },
}

/// How far a rerun of the workload may land from this one, relative ([`KeySamples::run_to_run`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunToRun {
    /// Each key's own deviation between the two passes.
    pub per_key: FastMap<u64, f64>,
    /// The whole run's.
    pub shift: f64,
}

/// A launch key's deep samples of one metric.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Spread {
    /// Deep results with a number for the metric.
    pub samples: u32,
    pub mean: f64,
    /// Their sample standard deviation, from two samples on.
    pub sd: Option<f64>,
}

/// Every launch key's deep samples, per metric (`None` where the key has no number), and which
/// metrics are deep ones (estimated from twins; the others were measured on every launch).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct KeySamples {
    pub deep: Vec<bool>,
    pub keys: FastMap<u64, Vec<Option<Spread>>>,
    /// The time metric's spec, when the deep pass timed its launches the same way the first pass
    /// did (the profiler's serialized replay both times): then the two passes' durations of the
    /// same launches tell how much two runs of the workload differ.
    pub comparable_time: Option<usize>,
}

impl KeySamples {
    /// How much two runs of the workload differ: the ratio of the deep pass's duration of each key
    /// to the first pass's duration of the same (measured) launches, each key's own deviation from
    /// the time-weighted mean ratio, and that mean's distance from 1 (the whole run's shift). None
    /// known (all 0) when the passes timed launches differently (in place against serialized).
    pub fn run_to_run(&self, scope: &Tallies) -> RunToRun {
        let Some(time) = self.comparable_time else {
            return RunToRun::default();
        };
        let ratios: Vec<(u64, f64, f64)> = scope
            .0
            .iter()
            .filter(|(_, t)| t.measured > 0 && t.measured_time > 0.0)
            .filter_map(|(key, t)| {
                let deep = (*self.keys.get(key)?.get(time)?)?;
                let first = t.measured_time / t.measured as f64;
                Some((*key, t.measured_time, deep.mean / first))
            })
            .collect();
        let weight: f64 = ratios.iter().map(|(_, w, _)| w).sum();
        if weight <= 0.0 {
            return RunToRun::default();
        }
        let mean = ratios.iter().map(|(_, w, r)| w * r).sum::<f64>() / weight;
        RunToRun {
            per_key: ratios
                .iter()
                .map(|(key, _, r)| (*key, (r / mean - 1.0).abs()))
                .collect(),
            shift: (mean - 1.0).abs(),
        }
    }

    /// The interval of a group's value of metric `spec` (`estimate`, see `Acc::estimate`), the
    /// group having `group`'s tallies, in a scope with `scope`'s; `None` for a metric that is not a
    /// deep one.
    ///
    /// Each key's mean is uncertain by σ/√n (n deep samples; σ the larger of their own spread and
    /// the key's duration CV times the mean, STEM's proxy), and each estimated launch by σ itself;
    /// the profiled launches may also be atypical as a whole, by the offset δ of their durations
    /// from the estimated launches' (times the mean). A sum over e estimated launches varies by
    /// σ²·(e²/n + e) + (δ·e)², a weighted mean by (σ²·(W²/n + Σw²) + (δ·W)²)/W_total². Keys are
    /// independent, so their variances add. A rerun moves each key's value by its own deviation
    /// ρ_k between the two passes (over all c launches: (ρ_k·m·c)², by weight for a mean) and the
    /// whole value by the run's shift s: (s·value)². The low end of a value that is not negative
    /// stops at 0.
    pub fn interval95(
        &self,
        spec: usize,
        estimate: Estimate,
        group: &Tallies,
        scope: (&Tallies, &RunToRun),
    ) -> Option<[f64; 2]> {
        let (scope, rerun) = scope;
        if !self.deep.get(spec).copied().unwrap_or(false) {
            return None;
        }
        let (value, total_weight) = match estimate {
            Estimate::Sum(value) => (value, None),
            Estimate::Mean { value, weight } => (value, Some(weight)),
        };
        let variance: f64 = group
            .0
            .iter()
            .filter_map(|(key, t)| {
                let spread = (*self.keys.get(key)?.get(spec)?)?;
                let cv = scope.cv(*key).unwrap_or(0.0);
                let sigma = spread.sd.unwrap_or(0.0).max(cv * spread.mean.abs());
                let offset = scope.measured_offset(*key) * spread.mean.abs();
                let rerun = rerun.per_key.get(key).copied().unwrap_or(0.0) * spread.mean.abs();
                let n = f64::from(spread.samples.max(1));
                let e = t.estimated as f64;
                Some(match total_weight {
                    None => {
                        sigma * sigma * (e * e / n + e)
                            + (offset * e).powi(2)
                            + (rerun * t.durations.count() as f64).powi(2)
                    }
                    Some(w) => {
                        (sigma * sigma * (t.weight * t.weight / n + t.weight_sq)
                            + (offset * t.weight).powi(2)
                            + (rerun * t.durations.total()).powi(2))
                            / (w * w)
                    }
                })
            })
            .sum::<f64>()
            + (rerun.shift * value).powi(2);
        let half = Z95 * variance.sqrt();
        // Counters, durations and percentages are never negative: neither is the low end.
        let lo = if value >= 0.0 {
            (value - half).max(0.0)
        } else {
            value - half
        };
        Some([lo, value + half])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn samples(spread: Spread) -> KeySamples {
        let mut keys = FastMap::default();
        keys.insert(7, vec![Some(spread)]);
        KeySamples {
            deep: vec![true],
            keys,
            comparable_time: None,
        }
    }

    #[test]
    fn cv_is_the_sample_spread_of_durations_over_their_mean() {
        let mut t = Tallies::default();
        for d in [90.0, 100.0, 110.0] {
            t.add(7, Coverage::Estimated, Some(d), Some(d));
        }
        // Sample sd of 90, 100, 110 is 10; mean 100.
        assert!((t.cv(7).unwrap() - 0.1).abs() < 1e-12);
        assert_eq!(t.cv(8), None);
        let mut once = Tallies::default();
        once.add(1, Coverage::Measured, Some(5.0), None);
        assert_eq!(once.cv(1), Some(0.0));
    }

    #[test]
    fn a_sum_of_estimated_launches_widens_with_their_count_and_the_key_spread() {
        let mut group = Tallies::default();
        // 4 launches of one key: 1 measured, 3 estimated; durations 90/100/110/100 (cv 0.0816).
        for (i, d) in [90.0, 100.0, 110.0, 100.0].into_iter().enumerate() {
            let coverage = if i == 0 {
                Coverage::Measured
            } else {
                Coverage::Estimated
            };
            group.add(7, coverage, Some(d), Some(d));
        }
        let one = samples(Spread {
            samples: 1,
            mean: 50.0,
            sd: None,
        });
        let [lo, hi] = one
            .interval95(
                0,
                Estimate::Sum(200.0),
                &group,
                (&group, &RunToRun::default()),
            )
            .unwrap();
        let sigma = group.cv(7).unwrap() * 50.0;
        // The measured launch ran 90 against the estimated ones' 103.33: 12.9% off, for all three.
        let offset = (90.0 / (310.0 / 3.0) - 1.0f64).abs();
        assert!((group.measured_offset(7) - offset).abs() < 1e-12);
        let half = Z95 * (sigma * sigma * (9.0 + 3.0) + (offset * 50.0 * 3.0).powi(2)).sqrt();
        assert!((hi - 200.0 - half).abs() < 1e-9 && (200.0 - lo - half).abs() < 1e-9);
        // A wider spread among the deep samples themselves wins over the duration proxy.
        let spread = samples(Spread {
            samples: 4,
            mean: 50.0,
            sd: Some(20.0),
        });
        let [lo4, hi4] = spread
            .interval95(
                0,
                Estimate::Sum(200.0),
                &group,
                (&group, &RunToRun::default()),
            )
            .unwrap();
        let half4 = Z95 * (400.0f64 * (9.0 / 4.0 + 3.0) + (offset * 50.0 * 3.0).powi(2)).sqrt();
        assert!((hi4 - lo4 - 2.0 * half4).abs() < 1e-9);
    }

    #[test]
    fn a_rerun_moves_each_key_by_its_own_deviation_and_the_run_by_its_shift() {
        // Key 7: the first pass timed its measured launch 100, the deep pass 110 (ratio 1.1);
        // key 8: 300 against 297 (0.99). Weighted mean ratio (100·1.1 + 300·0.99)/400 = 1.0175.
        let mut scope = Tallies::default();
        scope.add(7, Coverage::Measured, Some(100.0), Some(100.0));
        scope.add(8, Coverage::Measured, Some(300.0), Some(300.0));
        let mut keys = FastMap::default();
        let time = |mean| {
            Some(Spread {
                samples: 1,
                mean,
                sd: None,
            })
        };
        keys.insert(7, vec![time(110.0), time(50.0)]);
        keys.insert(8, vec![time(297.0), time(20.0)]);
        let samples = KeySamples {
            deep: vec![false, true],
            keys,
            comparable_time: Some(0),
        };
        let rerun = samples.run_to_run(&scope);
        assert!((rerun.shift - 0.0175).abs() < 1e-12);
        assert!((rerun.per_key[&7] - (1.1 / 1.0175 - 1.0)).abs() < 1e-12);
        assert!((rerun.per_key[&8] - (1.0 - 0.99 / 1.0175)).abs() < 1e-12);
        // All measured, so only the rerun terms widen a sum of the deep metric (50 + 20).
        let [lo, hi] = samples
            .interval95(1, Estimate::Sum(70.0), &scope, (&scope, &rerun))
            .unwrap();
        let variance = (rerun.per_key[&7] * 50.0).powi(2)
            + (rerun.per_key[&8] * 20.0).powi(2)
            + (rerun.shift * 70.0).powi(2);
        assert!((hi - lo - 2.0 * Z95 * variance.sqrt()).abs() < 1e-9);
        // Passes that time differently (in place against serialized) say nothing of a rerun.
        let in_place = KeySamples {
            comparable_time: None,
            ..samples
        };
        assert_eq!(in_place.run_to_run(&scope), RunToRun::default());
    }

    #[test]
    fn the_low_end_of_a_count_stops_at_zero() {
        // One estimated launch of a key whose samples spread by 10 around a mean of 1.
        let mut group = Tallies::default();
        group.add(7, Coverage::Estimated, Some(10.0), Some(10.0));
        let s = samples(Spread {
            samples: 2,
            mean: 1.0,
            sd: Some(10.0),
        });
        let [lo, hi] = s
            .interval95(
                0,
                Estimate::Sum(1.0),
                &group,
                (&group, &RunToRun::default()),
            )
            .unwrap();
        assert_eq!(lo, 0.0);
        assert!((hi - (1.0 + Z95 * (100.0f64 * 1.5).sqrt())).abs() < 1e-9);
    }

    #[test]
    fn measured_groups_and_non_deep_metrics_have_no_width_or_no_interval() {
        let mut group = Tallies::default();
        group.add(7, Coverage::Measured, Some(10.0), Some(10.0));
        group.add(7, Coverage::Measured, Some(30.0), Some(30.0));
        let s = samples(Spread {
            samples: 1,
            mean: 40.0,
            sd: None,
        });
        assert_eq!(
            s.interval95(
                0,
                Estimate::Mean {
                    value: 40.0,
                    weight: 40.0,
                },
                &group,
                (&group, &RunToRun::default())
            ),
            Some([40.0, 40.0])
        );
        let not_deep = KeySamples {
            deep: vec![false],
            ..s.clone()
        };
        assert_eq!(
            not_deep.interval95(
                0,
                Estimate::Mean {
                    value: 40.0,
                    weight: 40.0,
                },
                &group,
                (&group, &RunToRun::default())
            ),
            None
        );
    }

    #[test]
    fn a_weighted_mean_weighs_each_key_by_its_share_of_the_weight() {
        let mut group = Tallies::default();
        // Key 7: two estimated launches of weight 10 (cv 0 in durations), sd 4 over 2 samples.
        // Key 8: one measured launch of weight 20.
        for _ in 0..2 {
            group.add(7, Coverage::Estimated, Some(10.0), Some(10.0));
        }
        group.add(8, Coverage::Measured, Some(20.0), Some(20.0));
        let s = samples(Spread {
            samples: 2,
            mean: 60.0,
            sd: Some(4.0),
        });
        let [lo, hi] = s
            .interval95(
                0,
                Estimate::Mean {
                    value: 45.0,
                    weight: 40.0,
                },
                &group,
                (&group, &RunToRun::default()),
            )
            .unwrap();
        // Value (2·10·60 + 20·30) / 40 = 45; variance 16·(20²/2 + 200)/40² = 4.
        assert!((lo - (45.0 - Z95 * 2.0)).abs() < 1e-9);
        assert!((hi - (45.0 + Z95 * 2.0)).abs() < 1e-9);
    }
}
