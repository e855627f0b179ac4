//! Neuron's group metrics: each region's duration and collective time against the median of the regions
//! that share its base name (`MLP[0]`, `MLP[1]` … → `MLP`), set before the rules run so rules can use
//! them. The distributions shown in reports are the report's ([`crate::report::distribution`]).

use std::collections::BTreeMap;

use super::metrics::RuleMetrics;
use crate::region::percentile;

/// One region as the group ratios see it: its base name and its metrics.
pub type Member<'a> = (&'a str, &'a mut RuleMetrics);

fn metric(m: &RuleMetrics, k: &str) -> Option<f64> {
    m.get(k).copied().flatten()
}

fn median_of(regions: &[Member], members: &[usize], k: &str) -> Option<f64> {
    let mut v: Vec<f64> = members
        .iter()
        .filter_map(|&i| metric(regions[i].1, k))
        .collect();
    v.sort_by(f64::total_cmp);
    percentile(&v, 0.5)
}

/// `duration_vs_group_median` and `cc_op_time_vs_group_median`, for groups of two or more.
pub fn set_group_ratios(regions: &mut [Member]) {
    let mut groups: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (i, r) in regions.iter().enumerate() {
        groups.entry(r.0.to_string()).or_default().push(i);
    }
    for members in groups.into_values() {
        let single = members.len() < 2;
        for (k, out) in [
            ("total_time", "duration_vs_group_median"),
            ("cc_op_active_time", "cc_op_time_vs_group_median"),
        ] {
            let median = median_of(regions, &members, k).filter(|m| *m > 0.0 && !single);
            for &i in &members {
                let v = metric(regions[i].1, k).zip(median).map(|(v, m)| v / m);
                regions[i].1.insert(out.to_string(), v);
            }
        }
    }
}
