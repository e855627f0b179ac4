//! Regions side by side (at most 3, as in Neuron Explorer) and the duration distribution of regions that
//! share a base name (`MLP[0]`, `MLP[1]`… → `MLP`), with outliers against the group median.

use std::collections::BTreeMap;

use serde::Serialize;

use super::analysis::Region;
use super::error::{NeuronError, Result};
use super::metrics::REGION_METRICS;

/// The most regions shown side by side: the same bound as `report.compare` everywhere.
pub use crate::report::compare::MAX_COMPARED;

/// Durations of one group, in seconds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Distribution {
    pub base: String,
    pub count: usize,
    pub min: f64,
    pub median: f64,
    pub p90: f64,
    pub max: f64,
    /// Regions longer than `factor × median` or shorter than `median / factor`.
    pub outliers: Vec<String>,
}

/// A metric's values across the compared regions (`None`: unknown for that region).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ComparisonRow {
    pub metric: String,
    pub values: Vec<Option<f64>>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    pub regions: Vec<String>,
    pub rows: Vec<ComparisonRow>,
}

/// Linear interpolation between closest ranks (numpy's default) over sorted values.
pub fn percentile(sorted: &[f64], p: f64) -> Option<f64> {
    let last = sorted.len().checked_sub(1)?;
    let pos = p.clamp(0.0, 1.0) * last as f64;
    let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
    Some(sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo as f64))
}

fn metric(r: &Region, k: &str) -> Option<f64> {
    r.metrics.get(k).copied().flatten()
}

fn groups(regions: &[Region]) -> BTreeMap<&str, Vec<usize>> {
    let mut g: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, r) in regions.iter().enumerate() {
        g.entry(r.base.as_str()).or_default().push(i);
    }
    g
}

fn median_of(regions: &[Region], members: &[usize], k: &str) -> Option<f64> {
    let mut v: Vec<f64> = members
        .iter()
        .filter_map(|&i| metric(&regions[i], k))
        .collect();
    v.sort_by(f64::total_cmp);
    percentile(&v, 0.5)
}

/// `duration_vs_group_median` and `cc_op_time_vs_group_median`, for groups of two or more.
pub fn set_group_ratios(regions: &mut [Region]) {
    let groups: Vec<Vec<usize>> = groups(regions).into_values().collect();
    for members in groups {
        let single = members.len() < 2;
        for (k, out) in [
            ("total_time", "duration_vs_group_median"),
            ("cc_op_active_time", "cc_op_time_vs_group_median"),
        ] {
            let median = median_of(regions, &members, k).filter(|m| *m > 0.0 && !single);
            for &i in &members {
                let v = metric(&regions[i], k).zip(median).map(|(v, m)| v / m);
                regions[i].metrics.insert(out.to_string(), v);
            }
        }
    }
}

/// One distribution per base name with at least two regions.
pub fn distributions(regions: &[Region], factor: f64) -> Vec<Distribution> {
    groups(regions)
        .into_iter()
        .filter(|(_, m)| m.len() >= 2)
        .filter_map(|(base, members)| {
            let mut d: Vec<f64> = members
                .iter()
                .filter_map(|&i| metric(&regions[i], "total_time"))
                .collect();
            d.sort_by(f64::total_cmp);
            let median = percentile(&d, 0.5)?;
            let outliers = members
                .iter()
                .filter(|&&i| {
                    metric(&regions[i], "total_time")
                        .is_some_and(|t| t > median * factor || t < median / factor)
                })
                .map(|&i| regions[i].name.clone())
                .collect();
            Some(Distribution {
                base: base.to_string(),
                count: d.len(),
                min: d[0],
                median,
                p90: percentile(&d, 0.9)?,
                max: d[d.len() - 1],
                outliers,
            })
        })
        .collect()
}

/// Find a region by exact name, or by a unique `/`-suffix (`NeuronLlamaDecoderLayer[1]`).
fn find<'a>(regions: &'a [Region], name: &str) -> Result<&'a Region> {
    if let Some(r) = regions.iter().find(|r| r.name == name) {
        return Ok(r);
    }
    let suffix = format!("/{name}");
    let hits: Vec<&Region> = regions
        .iter()
        .filter(|r| r.name.ends_with(&suffix))
        .collect();
    match hits.as_slice() {
        [one] => Ok(one),
        [] => {
            let known: Vec<&str> = regions.iter().take(8).map(|r| r.name.as_str()).collect();
            let more = if regions.len() > 8 { ", …" } else { "" };
            Err(NeuronError::Compare(format!(
                "`report.compare`: no region named `{name}` (regions: {}{more})",
                if known.is_empty() {
                    "none".to_string()
                } else {
                    known.join(", ")
                }
            )))
        }
        many => Err(NeuronError::Compare(format!(
            "`report.compare`: `{name}` matches {} regions ({}); give the full name",
            many.len(),
            many.iter()
                .map(|r| r.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ))),
    }
}

/// Up to [`MAX_COMPARED`] regions, every region metric as a row.
pub fn compare(regions: &[Region], names: &[String]) -> Result<Comparison> {
    if names.len() > MAX_COMPARED {
        return Err(NeuronError::Compare(format!(
            "`report.compare` lists {} regions; at most {MAX_COMPARED} are compared side by side",
            names.len()
        )));
    }
    let picked: Vec<&Region> = names
        .iter()
        .map(|n| find(regions, n))
        .collect::<Result<_>>()?;
    let rows = REGION_METRICS
        .iter()
        .map(|d| ComparisonRow {
            metric: d.name.to_string(),
            values: picked.iter().map(|r| metric(r, d.name)).collect(),
        })
        .collect();
    Ok(Comparison {
        regions: picked.iter().map(|r| r.name.clone()).collect(),
        rows,
    })
}
