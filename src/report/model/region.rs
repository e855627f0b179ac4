//! A region of the report: its values, its instances and its findings.

use serde::Serialize;

use crate::region::RegionKind;

use super::{CollectiveTime, CoverageShares, Idle, Insight, Kernel, MetricMap, PerResultMap};

#[derive(Debug, Clone, Serialize)]
pub struct Region {
    /// Range names from the outermost, joined by `/` (a `/` or `\` inside a name is escaped with `\`).
    pub path: String,
    /// The same path as a list of exact range names.
    pub segments: Vec<String>,
    pub name: String,
    /// `stack` (nested ranges) or `mark` (flat, may overlap anything).
    pub kind: RegionKind,
    /// The method that made the region, as its adapter names it (the program's own ranges, a
    /// regioner's cut).
    pub origin: String,
    pub parent: Option<String>,
    /// 0 for a top-level region.
    pub depth: usize,
    /// Results in this region and everything nested in it.
    pub kernel_count: u64,
    /// Results whose innermost range is this region.
    pub self_kernel_count: u64,
    /// Inclusive time over the scope's total time, 0..1 (`null` without a time metric).
    pub time_share: Option<f64>,
    /// How the inclusive deep metrics were obtained (sampled runs; `null` otherwise).
    pub coverage: Option<CoverageShares>,
    pub inclusive: MetricMap,
    pub exclusive: MetricMap,
    /// Per-result statistics over the region's results (nested regions included): the smallest,
    /// largest and mean single result of each numeric metric, as a profiler's per-range summary shows
    /// them. A different view from `inclusive`, which holds the region's totals.
    pub per_result: PerResultMap,
    /// Kernels run in the region (nested ones included), longest total time first.
    pub kernels: Vec<Kernel>,
    /// How the region's instances (visits) are distributed in time; `null` when the source cannot
    /// tell two visits of a range apart (CSV exports) and for flat regions.
    pub instances: Option<Instances>,
    /// Findings for the results in this region (nested regions included), most important first;
    /// empty when there are none or the profiler's were not exported.
    pub insights: Vec<Insight>,
    pub notes: Vec<String>,
    /// Where the device sat idle in the region's time (`null` where the profile holds no device
    /// timeline).
    pub idle: Option<Idle>,
    /// Its collective kernels' wait for the last rank and transfer (`report.cross_rank`); `null`
    /// where it launched none or no cross-rank diagnosis was made.
    pub collectives: Option<CollectiveTime>,
}

/// The instances of a region and the spread of their inclusive times (in the time metric's unit).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Instances {
    pub count: u64,
    /// `null` when the region has no instance with results.
    pub min: Option<f64>,
    pub median: Option<f64>,
    /// 90th percentile, nearest rank.
    pub p90: Option<f64>,
    pub max: Option<f64>,
}

impl Instances {
    pub fn of(times: &[f64]) -> Instances {
        let mut sorted = times.to_vec();
        sorted.sort_by(f64::total_cmp);
        // Nearest rank: the smallest value with at least q of the instances at or below it.
        // A region whose results the kernel selection all left out has no visit with a time.
        let rank = |q: f64| {
            let at = ((q * sorted.len() as f64).ceil() as usize).max(1);
            sorted.get(at - 1).copied()
        };
        Instances {
            count: sorted.len() as u64,
            min: sorted.first().copied(),
            median: rank(0.5),
            p90: rank(0.9),
            max: sorted.last().copied(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Instances;

    #[test]
    fn instances_spread_by_nearest_rank_and_none_for_no_visit() {
        let i = Instances::of(&[5.0, 1.0, 3.0, 2.0, 4.0, 6.0, 7.0, 8.0, 9.0, 10.0]);
        assert_eq!(
            (i.count, i.min, i.median, i.p90, i.max),
            (10, Some(1.0), Some(5.0), Some(9.0), Some(10.0))
        );
        let none = Instances::of(&[]);
        assert_eq!(
            (none.count, none.min, none.median, none.p90, none.max),
            (0, None, None, None, None)
        );
    }
}
