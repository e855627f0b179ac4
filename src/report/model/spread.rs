//! How values spread: min, median, p90 and max with their count. The one summary for same-named
//! regions ([`super::Distribution`]), the rows of a table of scopes ([`super::MetricSpread`]) and a
//! region's time across many scopes ([`RegionAcross`]), in report.json and report.md alike.

use serde::Serialize;

use crate::region::{percentile, RegionKind};

/// Min, median, p90 (linear interpolation between closest ranks) and max of `count` values.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Percentiles {
    pub count: u64,
    pub min: f64,
    pub median: f64,
    /// 90th percentile, linear interpolation between closest ranks.
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
