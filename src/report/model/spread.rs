//! How values spread: min, median, p90 and max with their count. The one summary for a region's
//! visits (`Region::instances`), same-named regions ([`super::Distribution`]), the rows of a table
//! of scopes ([`super::MetricSpread`]) and a region's time across many scopes ([`RegionAcross`]),
//! in report.json and report.md alike.

use serde::Serialize;

use crate::region::{percentile, RegionKind};

/// Min, median, p90 and max of `count` values: interpolated between closest ranks
/// ([`Percentiles::of_sorted`]), or by nearest rank for a region's visits, as a profiler's own
/// per-range summary takes them ([`Percentiles::nearest_rank`]).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Percentiles {
    pub count: u64,
    pub min: f64,
    pub median: f64,
    /// 90th percentile.
    pub p90: f64,
    pub max: f64,
}

impl Percentiles {
    /// The spread of `sorted` (ascending); `None` when it is empty.
    pub fn of_sorted(sorted: &[f64]) -> Option<Percentiles> {
        Some(Percentiles {
            count: sorted.len() as u64,
            min: *sorted.first()?,
            median: percentile(sorted, 0.5)?,
            p90: percentile(sorted, 0.9)?,
            max: *sorted.last()?,
        })
    }

    /// The spread of `values` by nearest rank: the smallest value with at least a quantile's share
    /// of them at or below it; `None` when there are none (a region whose results the kernel
    /// selection all left out has no visit with a time).
    pub fn nearest_rank(values: &[f64]) -> Option<Percentiles> {
        let mut sorted = values.to_vec();
        sorted.sort_by(f64::total_cmp);
        let rank = |q: f64| {
            let at = ((q * sorted.len() as f64).ceil() as usize).max(1);
            sorted.get(at - 1).copied()
        };
        Some(Percentiles {
            count: sorted.len() as u64,
            min: *sorted.first()?,
            median: rank(0.5)?,
            p90: rank(0.9)?,
            max: *sorted.last()?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::Percentiles;

    #[test]
    fn nearest_rank_takes_a_value_of_the_set_and_none_for_no_value() {
        let i = Percentiles::nearest_rank(&[5.0, 1.0, 3.0, 2.0, 4.0, 6.0, 7.0, 8.0, 9.0, 10.0]);
        let i = i.expect("ten values");
        assert_eq!(
            (i.count, i.min, i.median, i.p90, i.max),
            (10, 1.0, 5.0, 9.0, 10.0)
        );
        let interpolated =
            Percentiles::of_sorted(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0]);
        assert_eq!(interpolated.map(|p| (p.median, p.p90)), Some((5.5, 9.1)));
        assert_eq!(Percentiles::nearest_rank(&[]), None);
    }
}

/// One region's time metric across the scopes that have it, in a report of more scopes than
/// report.md shows side by side (`Report::across_scopes`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RegionAcross {
    pub path: String,
    pub kind: RegionKind,
    /// The time metric's unit.
    pub unit: String,
    /// `count` is the scopes that have the region.
    #[serde(flatten)]
    pub spread: Percentiles,
}
