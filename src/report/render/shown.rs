//! Which regions a summary shows when a scope has more than fit (report.md's table, report.html's
//! table and the SVG time chart all show the same ones).

use std::collections::HashMap;

use crate::report::model::Region;

/// Indices of the regions for the summary table: the longest `max` by inclusive time (kernel count
/// without a time metric), each taken with its ancestors while they fit, returned in tree order.
pub fn shown_regions(regions: &[Region], time: Option<&str>, max: usize) -> Vec<usize> {
    if regions.len() <= max {
        return (0..regions.len()).collect();
    }
    let index: HashMap<(_, &str), usize> = regions
        .iter()
        .enumerate()
        .map(|(i, r)| ((r.kind, r.path.as_str()), i))
        .collect();
    // Keys looked up once: a metric lookup is a scan of the region's metric map.
    let mut order: Vec<(f64, u64, usize)> = regions
        .iter()
        .enumerate()
        .map(|(i, r)| {
            (
                time.and_then(|t| r.inclusive.get(t))
                    .and_then(|m| m.value)
                    .unwrap_or(0.0),
                r.kernel_count,
                i,
            )
        })
        .collect();
    order.sort_unstable_by(|a, b| b.0.total_cmp(&a.0).then(b.1.cmp(&a.1)).then(a.2.cmp(&b.2)));
    let mut chosen = vec![false; regions.len()];
    let mut count = 0;
    for (_, _, i) in order {
        if count == max {
            break;
        }
        let mut chain = Vec::new();
        let mut next = Some(i);
        while let Some(j) = next.filter(|&j| !chosen[j]) {
            chain.push(j);
            next = regions[j]
                .parent
                .as_deref()
                .and_then(|p| index.get(&(regions[j].kind, p)).copied());
        }
        if count + chain.len() <= max {
            count += chain.len();
            for j in chain {
                chosen[j] = true;
            }
        }
    }
    (0..regions.len()).filter(|&i| chosen[i]).collect()
}
