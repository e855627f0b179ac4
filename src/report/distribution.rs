//! Distributions of same-named regions, for every profiler: regions whose paths differ only in instance
//! indices (`segment[0]`, `segment[1]` … → `segment`; `model/Layer[2]` → `model/Layer`) form a group, and
//! a group of two or more gets min, median, p90 and max of the time metric, with outliers against the
//! group median. With many scopes, each region's time across them.

use std::collections::BTreeMap;

use super::model::{Distribution, DistributionEntry, Percentiles, Region, RegionAcross, Scope};
use crate::fast_map::FastMap;
use crate::region::methods::base_name;
use crate::region::RegionKind;

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
            let spread = Percentiles::of_sorted(&sorted)?;
            let median = spread.median;
            Some(Distribution {
                base,
                metric: metric.to_string(),
                unit: unit.clone().unwrap_or_default(),
                spread,
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

/// Each region's `metric` across the `scopes` that have it, in the order regions are first met.
pub fn across_scopes(scopes: &[Scope], metric: &str) -> Vec<RegionAcross> {
    let mut at: FastMap<(RegionKind, &str), usize> = FastMap::default();
    let mut found: Vec<(&Region, String, Vec<f64>)> = Vec::new();
    for region in scopes.iter().flat_map(|s| &s.regions) {
        let Some(value) = region.inclusive.get(metric) else {
            continue;
        };
        let Some(v) = value.value else { continue };
        let i = *at
            .entry((region.kind, region.path.as_str()))
            .or_insert_with(|| {
                found.push((region, value.unit.to_string(), Vec::new()));
                found.len() - 1
            });
        found[i].2.push(v);
    }
    found
        .into_iter()
        .filter_map(|(region, unit, mut values)| {
            values.sort_by(f64::total_cmp);
            Some(RegionAcross {
                path: region.path.clone(),
                kind: region.kind,
                unit,
                spread: Percentiles::of_sorted(&values)?,
            })
        })
        .collect()
}
