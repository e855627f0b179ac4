//! Metric aggregation: how one metric's per-result values combine into a region value.
//!
//! Every accumulator is mergeable (`merge` is associative and commutative), which is what lets the tree
//! compute inclusive parents as "self merged with children" and the aggregate as "scopes merged".

use serde::Serialize;

/// How values of one metric combine across results.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Rollup {
    /// Counters and durations: values add up.
    Sum,
    /// Rates and percentages: the mean weighted by each result's duration.
    Mean,
    /// Largest value seen.
    Max,
    /// Smallest value seen.
    Min,
    /// Attributes (launch configuration, device properties): the set of distinct values, never summed.
    Distinct,
    /// Computed for each region from its own events by the formula its adapter documents (an
    /// interval union, a ratio of two sums); never combined from per-result values.
    Derived,
}

impl Rollup {
    pub fn parse(text: &str) -> Option<Rollup> {
        Some(match text {
            "sum" => Rollup::Sum,
            "mean" => Rollup::Mean,
            "max" => Rollup::Max,
            "min" => Rollup::Min,
            "distinct" => Rollup::Distinct,
            _ => return None,
        })
    }
}

/// One metric the report carries: its name, its unit (after unit normalisation) and its rollup.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MetricSpec {
    pub name: String,
    pub unit: String,
    pub rollup: Rollup,
}

/// One value of one result, as the adapter read it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Cell<'a> {
    Num(f64),
    Text(&'a str),
    Missing,
}

/// Distinct values kept per attribute; beyond this the set stops growing and says so.
pub const MAX_DISTINCT: usize = 16;

/// The running aggregate of one metric.
#[derive(Debug, Clone, PartialEq)]
pub enum Acc {
    /// `lo`/`hi`: the smallest and largest single result, for the per-result view; never the total.
    Sum {
        sum: f64,
        n: u64,
        lo: f64,
        hi: f64,
    },
    /// Results with a duration go into the weighted sum; those without one into a plain average,
    /// which is the value only when no result had a duration.
    Mean {
        weighted: f64,
        weight: f64,
        n: u64,
        plain: f64,
        plain_n: u64,
        /// Per-result view: unweighted sum, smallest and largest single result.
        raw: f64,
        lo: f64,
        hi: f64,
    },
    Max {
        max: f64,
        n: u64,
    },
    Min {
        min: f64,
        n: u64,
    },
    Distinct {
        /// Sorted as text. A handful of values at most, so a sorted `Vec` is both smaller and faster
        /// than a tree set: each of the many (region, kernel) groups holds a few of these.
        values: Vec<String>,
        overflow: bool,
        /// Bits of the last number added: an attribute repeats one value across a kernel's results,
        /// so most results are known to be in `values` (or past the cap) without formatting.
        last: Option<u64>,
    },
}

impl Acc {
    pub fn new(rollup: Rollup) -> Acc {
        match rollup {
            Rollup::Sum => Acc::Sum {
                sum: 0.0,
                n: 0,
                lo: f64::INFINITY,
                hi: f64::NEG_INFINITY,
            },
            Rollup::Mean => Acc::Mean {
                weighted: 0.0,
                weight: 0.0,
                n: 0,
                plain: 0.0,
                plain_n: 0,
                raw: 0.0,
                lo: f64::INFINITY,
                hi: f64::NEG_INFINITY,
            },
            Rollup::Max => Acc::Max {
                max: f64::NEG_INFINITY,
                n: 0,
            },
            Rollup::Min => Acc::Min {
                min: f64::INFINITY,
                n: 0,
            },
            Rollup::Distinct => Acc::Distinct {
                values: Vec::new(),
                overflow: false,
                last: None,
            },
            // Never accumulated: adapters that combine results do not declare it and `report.rollups`
            // refuses it. Should one slip through, the largest value is kept, not a meaningless sum.
            Rollup::Derived => Acc::Max {
                max: f64::NEG_INFINITY,
                n: 0,
            },
        }
    }

    /// Adds one result's value; `weight` is the result's duration, `None` when it has none.
    pub fn add(&mut self, cell: Cell<'_>, weight: Option<f64>) {
        match (self, cell) {
            (_, Cell::Missing) => {}
            // Attributes repeat the same few values for every result: look the value up first and
            // allocate only for a new one.
            (
                Acc::Distinct {
                    values, overflow, ..
                },
                Cell::Text(t),
            ) => {
                insert_distinct(values, overflow, t);
            }
            (Acc::Distinct { last, .. }, Cell::Num(v)) if *last == Some(v.to_bits()) => {}
            (
                Acc::Distinct {
                    values,
                    overflow,
                    last,
                },
                Cell::Num(v),
            ) => FORMATTED.with(|buf| {
                *last = Some(v.to_bits());
                let mut buf = buf.borrow_mut();
                buf.clear();
                write_number(&mut buf, v);
                insert_distinct(values, overflow, &buf);
            }),
            (Acc::Sum { sum, n, lo, hi }, Cell::Num(v)) => {
                *sum += v;
                *n += 1;
                *lo = lo.min(v);
                *hi = hi.max(v);
            }
            (
                Acc::Mean {
                    weighted,
                    weight: w,
                    n,
                    plain,
                    plain_n,
                    raw,
                    lo,
                    hi,
                },
                Cell::Num(v),
            ) => {
                *raw += v;
                *lo = lo.min(v);
                *hi = hi.max(v);
                match weight {
                    Some(weight) => {
                        *weighted += v * weight;
                        *w += weight;
                        *n += 1;
                    }
                    None => {
                        *plain += v;
                        *plain_n += 1;
                    }
                }
            }
            (Acc::Max { max, n }, Cell::Num(v)) => {
                *max = max.max(v);
                *n += 1;
            }
            (Acc::Min { min, n }, Cell::Num(v)) => {
                *min = min.min(v);
                *n += 1;
            }
            // Text in a numeric metric (an odd export): not a number, so it cannot take part.
            (_, Cell::Text(_)) => {}
        }
    }

    pub fn merge(&mut self, other: &Acc) {
        match (self, other) {
            (
                Acc::Sum { sum, n, lo, hi },
                Acc::Sum {
                    sum: s2,
                    n: n2,
                    lo: lo2,
                    hi: hi2,
                },
            ) => {
                *sum += s2;
                *n += n2;
                *lo = lo.min(*lo2);
                *hi = hi.max(*hi2);
            }
            (
                Acc::Mean {
                    weighted,
                    weight,
                    n,
                    plain,
                    plain_n,
                    raw,
                    lo,
                    hi,
                },
                Acc::Mean {
                    weighted: w2,
                    weight: wt2,
                    n: n2,
                    plain: p2,
                    plain_n: pn2,
                    raw: r2,
                    lo: lo2,
                    hi: hi2,
                },
            ) => {
                *raw += r2;
                *lo = lo.min(*lo2);
                *hi = hi.max(*hi2);
                *weighted += w2;
                *weight += wt2;
                *n += n2;
                *plain += p2;
                *plain_n += pn2;
            }
            (Acc::Max { max, n }, Acc::Max { max: m2, n: n2 }) => {
                *max = max.max(*m2);
                *n += n2;
            }
            (Acc::Min { min, n }, Acc::Min { min: m2, n: n2 }) => {
                *min = min.min(*m2);
                *n += n2;
            }
            (
                Acc::Distinct {
                    values, overflow, ..
                },
                Acc::Distinct {
                    values: v2,
                    overflow: o2,
                    ..
                },
            ) => {
                *overflow |= *o2;
                for v in v2 {
                    insert_distinct(values, overflow, v);
                }
            }
            (this, other) => unreachable!("merging {this:?} with {other:?}: rollups differ"),
        }
    }

    /// The aggregated number, or `None` when no result had a value (or for attributes).
    pub fn value(&self) -> Option<f64> {
        match *self {
            Acc::Sum { sum, n, .. } => (n > 0).then_some(sum),
            Acc::Mean {
                weighted,
                weight,
                n,
                plain,
                plain_n,
                ..
            } => {
                if n > 0 {
                    (weight > 0.0).then(|| weighted / weight)
                } else {
                    (plain_n > 0).then(|| plain / plain_n as f64)
                }
            }
            Acc::Max { max, n } => (n > 0).then_some(max),
            Acc::Min { min, n } => (n > 0).then_some(min),
            Acc::Distinct { .. } => None,
        }
    }

    /// The value as an interval needs it ([`super::Estimate`]): a sum, or a duration-weighted mean
    /// with its total weight; `None` for extremes, attributes, an unweighted mean and no value.
    pub fn estimate(&self, rollup: Rollup) -> Option<super::Estimate> {
        let value = self.value()?;
        match (rollup, self) {
            (Rollup::Sum, Acc::Sum { .. }) => Some(super::Estimate::Sum(value)),
            (Rollup::Mean, Acc::Mean { weight, n, .. }) if *n > 0 && *weight > 0.0 => {
                Some(super::Estimate::Mean {
                    value,
                    weight: *weight,
                })
            }
            _ => None,
        }
    }

    /// Statistics over the single results (smallest, largest, plain mean), as a profiler's per-range summary
    /// shows them: a different view from [`Acc::value`], which is the region's total (or time-weighted
    /// rate). `None` for attributes, extremes, and when no result had a value.
    pub fn per_result(&self) -> Option<PerResult> {
        let (total, n, lo, hi) = match *self {
            Acc::Sum { sum, n, lo, hi } => (sum, n, lo, hi),
            Acc::Mean {
                n,
                plain_n,
                raw,
                lo,
                hi,
                ..
            } => (raw, n + plain_n, lo, hi),
            _ => return None,
        };
        (n > 0).then(|| PerResult {
            min: lo,
            max: hi,
            mean: total / n as f64,
        })
    }

    /// Distinct values for attributes; `None` for numeric rollups.
    pub fn distinct(&self) -> Option<(&[String], bool)> {
        match self {
            Acc::Distinct {
                values, overflow, ..
            } => Some((values, *overflow)),
            _ => None,
        }
    }
}

/// One metric over the single results of a group: not the group's total.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PerResult {
    pub min: f64,
    pub max: f64,
    /// Plain (unweighted) mean over the results with a value.
    pub mean: f64,
}

/// Adds `value` to the sorted `values` unless present; past [`MAX_DISTINCT`] only flags the overflow.
/// Allocates only for a value not seen before.
fn insert_distinct(values: &mut Vec<String>, overflow: &mut bool, value: &str) {
    match values.binary_search_by(|v| v.as_str().cmp(value)) {
        Ok(_) => {}
        Err(_) if values.len() >= MAX_DISTINCT => *overflow = true,
        Err(at) => values.insert(at, value.to_string()),
    }
}

thread_local! {
    /// Scratch space for formatting attribute numbers before looking them up.
    static FORMATTED: std::cell::RefCell<String> = const { std::cell::RefCell::new(String::new()) };
}

/// Formats a number without a trailing `.0` for integers, so attribute values read as the profiler printed them.
fn write_number(out: &mut String, v: f64) {
    use std::fmt::Write;
    let _ = if v.fract() == 0.0 && v.abs() < 1e15 {
        write!(out, "{}", v as i64)
    } else {
        write!(out, "{v}")
    };
}

/// The aggregate of a set of results: how many, their total weight, and one accumulator per metric.
#[derive(Debug, Clone, PartialEq)]
pub struct Group {
    pub count: u64,
    /// Sum of the results' durations (the time metric); 0 when the export has none.
    pub time: f64,
    pub accs: Vec<Acc>,
    /// How the results' deep metrics were obtained (sampled runs; all measured otherwise).
    pub coverage: super::CoverageTimes,
    /// Per launch key, the launches that took twins' values (sampled runs; empty otherwise): what
    /// the 95% intervals of its deep values are computed from.
    pub tallies: super::Tallies,
}

impl Group {
    pub fn new(specs: &[MetricSpec]) -> Group {
        Group {
            count: 0,
            time: 0.0,
            accs: specs.iter().map(|s| Acc::new(s.rollup)).collect(),
            coverage: super::CoverageTimes::default(),
            tallies: super::Tallies::default(),
        }
    }

    /// Adds one result: its `time` to the group's time, its cells weighed by `weight` (the
    /// duration its rates were measured over: its own time, or a trace-timed kernel's twins'
    /// serialized duration, which is not its time).
    pub fn add(&mut self, values: &[Cell<'_>], time: Option<f64>, weight: Option<f64>) {
        self.count += 1;
        self.time += time.unwrap_or(0.0);
        for (acc, cell) in self.accs.iter_mut().zip(values) {
            acc.add(*cell, weight);
        }
    }

    pub fn merge(&mut self, other: &Group) {
        self.count += other.count;
        self.time += other.time;
        self.coverage.merge(&other.coverage);
        self.tallies.merge(&other.tallies);
        for (acc, o) in self.accs.iter_mut().zip(&other.accs) {
            acc.merge(o);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::region::Estimate;

    fn spec(rollup: Rollup) -> Vec<MetricSpec> {
        vec![MetricSpec {
            name: "m".into(),
            unit: "".into(),
            rollup,
        }]
    }

    #[test]
    fn sums_and_weighted_means_are_what_an_interval_is_drawn_around() {
        let mut sum = Acc::new(Rollup::Sum);
        sum.add(Cell::Num(3.0), Some(1.0));
        sum.add(Cell::Num(4.0), None);
        assert_eq!(sum.estimate(Rollup::Sum), Some(Estimate::Sum(7.0)));
        let mut mean = Acc::new(Rollup::Mean);
        mean.add(Cell::Num(10.0), Some(1.0));
        mean.add(Cell::Num(40.0), Some(3.0));
        assert_eq!(
            mean.estimate(Rollup::Mean),
            Some(Estimate::Mean {
                value: 32.5,
                weight: 4.0
            })
        );
        let mut unweighted = Acc::new(Rollup::Mean);
        unweighted.add(Cell::Num(10.0), None);
        assert_eq!(unweighted.estimate(Rollup::Mean), None);
        let mut max = Acc::new(Rollup::Max);
        max.add(Cell::Num(1.0), None);
        assert_eq!(max.estimate(Rollup::Max), None);
    }

    #[test]
    fn mean_is_weighted_by_duration() {
        let mut g = Group::new(&spec(Rollup::Mean));
        g.add(&[Cell::Num(10.0)], Some(1.0), Some(1.0));
        g.add(&[Cell::Num(40.0)], Some(3.0), Some(3.0));
        assert_eq!(g.accs[0].value(), Some(32.5));
        assert_eq!(g.time, 4.0);
    }

    #[test]
    fn results_without_a_duration_stay_out_of_a_weighted_mean() {
        let mut g = Group::new(&spec(Rollup::Mean));
        g.add(&[Cell::Num(90.0)], None, None);
        assert_eq!(
            g.accs[0].value(),
            Some(90.0),
            "no duration anywhere: plain average"
        );
        g.add(&[Cell::Num(10.0)], Some(2000.0), Some(2000.0));
        g.add(&[Cell::Num(40.0)], Some(6000.0), Some(6000.0));
        assert_eq!(g.accs[0].value(), Some(32.5));
        let mut other = Group::new(&spec(Rollup::Mean));
        other.add(&[Cell::Num(70.0)], None, None);
        g.merge(&other);
        assert_eq!(g.accs[0].value(), Some(32.5));
    }

    #[test]
    fn missing_values_do_not_count_but_results_do() {
        let mut g = Group::new(&spec(Rollup::Sum));
        g.add(&[Cell::Missing], Some(1.0), Some(1.0));
        assert_eq!(g.count, 1);
        assert_eq!(g.accs[0].value(), None);
    }

    #[test]
    fn distinct_values_are_capped_and_flagged() {
        let mut acc = Acc::new(Rollup::Distinct);
        for i in 0..(MAX_DISTINCT + 3) {
            acc.add(Cell::Num(i as f64), Some(1.0));
        }
        let (values, overflow) = acc.distinct().unwrap();
        assert_eq!(values.len(), MAX_DISTINCT);
        assert!(overflow);
    }

    #[test]
    fn per_result_spread_is_its_own_view_beside_the_total() {
        let mut g = Group::new(&spec(Rollup::Sum));
        for v in [4.0, 10.0, 1.0] {
            g.add(&[Cell::Num(v)], Some(1.0), Some(1.0));
        }
        assert_eq!(g.accs[0].value(), Some(15.0));
        let p = g.accs[0].per_result().unwrap();
        assert_eq!((p.min, p.max, p.mean), (1.0, 10.0, 5.0));
        let mut rate = Group::new(&spec(Rollup::Mean));
        rate.add(&[Cell::Num(10.0)], Some(1.0), Some(1.0));
        rate.add(&[Cell::Num(40.0)], Some(3.0), Some(3.0));
        let p = rate.accs[0].per_result().unwrap();
        assert_eq!((p.min, p.max, p.mean), (10.0, 40.0, 25.0));
        assert_eq!(Group::new(&spec(Rollup::Sum)).accs[0].per_result(), None);
    }

    #[test]
    fn merge_equals_adding_everything_to_one() {
        let specs = spec(Rollup::Max);
        let mut a = Group::new(&specs);
        let mut b = Group::new(&specs);
        let mut all = Group::new(&specs);
        for (i, v) in [3.0, 9.0, 1.0, 7.0].into_iter().enumerate() {
            let target = if i % 2 == 0 { &mut a } else { &mut b };
            target.add(&[Cell::Num(v)], Some(1.0), Some(1.0));
            all.add(&[Cell::Num(v)], Some(1.0), Some(1.0));
        }
        a.merge(&b);
        assert_eq!(a, all);
    }
}
