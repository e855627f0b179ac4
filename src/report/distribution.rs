//! Distributions of same-named regions, for every profiler: regions whose paths differ only in instance
//! indices (`segment[0]`, `segment[1]` … → `segment`; `model/Layer[2]` → `model/Layer`) form a group, and
//! a group of two or more gets min, median, p90 and max of the time metric, with outliers against the
//! group median.

use std::collections::BTreeMap;

use super::model::{Distribution, DistributionEntry, Region};
use crate::region::methods::base_name;
use crate::region::percentile;

/// The outlier factor where no setting gives one (GPU reports; Neuron's is
/// `neuron.distribution.outlier_factor`, 1.5 by default too).
pub const OUTLIER_FACTOR: f64 = 1.5;

/// One distribution per base with at least two regions, in base order; `metric` is read from each
/// region's inclusive metrics, in its unit (regions without a value are left out). An outlier lies above
/// `factor × median` or below `median / factor`.
pub fn distributions(regions: &[Region], metric: &str, factor: f64) -> Vec<Distribution> {
    let mut groups: BTreeMap<String, Vec<(&Region, f64)>> = BTreeMap::new();
    let mut unit = None;
    for r in regions {
        let value = r.inclusive.get(metric);
        if let Some(v) = value.and_then(|m| m.value) {
            unit = unit.or_else(|| value.map(|m| m.unit.to_string()));
            groups
                .entry(base_name(&r.segments.join("/")))
                .or_default()
                .push((r, v));
        }
    }
    groups
        .into_iter()
        .filter(|(_, members)| members.len() >= 2)
        .filter_map(|(base, members)| {
            let mut sorted: Vec<f64> = members.iter().map(|m| m.1).collect();
            sorted.sort_by(f64::total_cmp);
            let median = percentile(&sorted, 0.5)?;
            Some(Distribution {
                base,
                metric: metric.to_string(),
                unit: unit.clone().unwrap_or_default(),
                count: sorted.len() as u64,
                min: sorted[0],
                median,
                p90: percentile(&sorted, 0.9)?,
                max: sorted[sorted.len() - 1],
                outlier_factor: factor,
                regions: members
                    .iter()
                    .map(|(r, v)| DistributionEntry {
                        path: r.path.clone(),
                        value: *v,
                        outlier: *v > median * factor || *v < median / factor,
                    })
                    .collect(),
            })
        })
        .collect()
}
