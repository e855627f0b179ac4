//! Regions whose values a profiler gives whole (each region's own figures over its span, such as a
//! Neuron layer record), nested by path, with each parent's exclusive values derived from its
//! inclusive ones and its children's by each metric's rollup. Results streamed into the tree
//! ([`super::RegionAccumulator`]) get their exclusive values from the results themselves instead.
//!
//! Floor: region (see `crate::region`): imports the ground floor only.

use std::collections::HashMap;

use super::path::RegionKind;
use super::rollup::{MetricSpec, Rollup};

/// One region as its profiler gives it: its path and its inclusive value of each metric, in the
/// order of the specs (`None`: unknown).
#[derive(Debug, Clone, Copy)]
pub struct WholeRegion<'a> {
    pub kind: RegionKind,
    pub segments: &'a [String],
    pub inclusive: &'a [Option<f64>],
}

/// Where a region sits in the tree and what is its own.
#[derive(Debug, Clone, PartialEq)]
pub struct Nested {
    /// The index of the nearest enclosing region (a stack region whose path is the longest proper
    /// prefix of this one's); `None` for a top-level region and for every mark.
    pub parent: Option<usize>,
    /// 0 for a top-level region.
    pub depth: usize,
    /// The children (direct), in input order.
    pub children: Vec<usize>,
    /// The exclusive value of each metric: a sum less its children's (never below 0); a
    /// time-weighted mean recomputed over the time left to the region itself; a maximum (minimum)
    /// kept where no child reaches it; unknown (`None`) for a distinct set or a derived metric of a
    /// region with children (its profiler recomputes those from the sums). A region without
    /// children keeps its inclusive values.
    pub exclusive: Vec<Option<f64>>,
}

/// Nests `regions` and derives each one's exclusive values; `time`: the index of the time metric
/// among `specs`, the weight of the means.
pub fn nest(specs: &[MetricSpec], time: Option<usize>, regions: &[WholeRegion<'_>]) -> Vec<Nested> {
    let parents = parents(regions);
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); regions.len()];
    for (child, parent) in parents.iter().enumerate() {
        if let Some(p) = *parent {
            children[p].push(child);
        }
    }
    parents
        .iter()
        .zip(children)
        .enumerate()
        .map(|(i, (&parent, children))| {
            let mut depth = 0;
            let mut up = parent;
            while let Some(p) = up {
                depth += 1;
                up = parents[p];
            }
            let exclusive = exclusive(specs, time, &regions[i], &children, regions);
            Nested {
                parent,
                depth,
                children,
                exclusive,
            }
        })
        .collect()
}

/// The nearest enclosing stack region of each region, found by path.
fn parents(regions: &[WholeRegion<'_>]) -> Vec<Option<usize>> {
    let index: HashMap<&[String], usize> = regions
        .iter()
        .enumerate()
        .filter(|(_, r)| r.kind == RegionKind::Stack)
        .map(|(i, r)| (r.segments, i))
        .collect();
    regions
        .iter()
        .map(|r| {
            if r.kind != RegionKind::Stack {
                return None;
            }
            (1..r.segments.len())
                .rev()
                .find_map(|n| index.get(&r.segments[..n]).copied())
        })
        .collect()
}

fn exclusive(
    specs: &[MetricSpec],
    time: Option<usize>,
    region: &WholeRegion<'_>,
    children: &[usize],
    regions: &[WholeRegion<'_>],
) -> Vec<Option<f64>> {
    if children.is_empty() {
        return region.inclusive.to_vec();
    }
    let child = |c: usize, m: usize| regions[c].inclusive.get(m).copied().flatten();
    let own_sum = |m: usize| {
        let total = region.inclusive.get(m).copied().flatten()?;
        let inner: f64 = children.iter().filter_map(|&c| child(c, m)).sum();
        Some((total - inner).max(0.0))
    };
    let own_time = time.and_then(own_sum);
    specs
        .iter()
        .enumerate()
        .map(|(m, spec)| {
            let total = region.inclusive.get(m).copied().flatten()?;
            match spec.rollup {
                Rollup::Sum => own_sum(m),
                Rollup::Mean => {
                    let (t, own_t) = (time?, own_time.filter(|t| *t > 0.0)?);
                    let whole = total * region.inclusive.get(t).copied().flatten()?;
                    let inner = children
                        .iter()
                        .map(|&c| Some(child(c, m)? * child(c, t)?))
                        .sum::<Option<f64>>()?;
                    Some(((whole - inner) / own_t).max(0.0))
                }
                Rollup::Max => children
                    .iter()
                    .all(|&c| child(c, m).is_none_or(|v| v < total))
                    .then_some(total),
                Rollup::Min => children
                    .iter()
                    .all(|&c| child(c, m).is_none_or(|v| v > total))
                    .then_some(total),
                Rollup::Distinct | Rollup::Derived => None,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(name: &str, rollup: Rollup) -> MetricSpec {
        MetricSpec {
            name: name.into(),
            unit: String::new(),
            rollup,
        }
    }

    fn path(text: &str) -> Vec<String> {
        text.split('/').map(str::to_string).collect()
    }

    #[test]
    fn a_parent_keeps_by_rollup_what_its_children_do_not_hold() {
        let specs = [
            spec("time", Rollup::Sum),
            spec("flops", Rollup::Sum),
            spec("busy", Rollup::Mean),
            spec("peak", Rollup::Max),
            spec("ratio", Rollup::Derived),
        ];
        let paths = [
            path("sg00"),
            path("sg00/a"),
            path("sg00/a/x"),
            path("sg00/b"),
        ];
        let values = [
            [Some(100.0), Some(50.0), Some(0.5), Some(9.0), Some(1.0)],
            [Some(40.0), Some(30.0), Some(0.75), Some(9.0), Some(2.0)],
            [Some(10.0), Some(5.0), Some(1.0), Some(3.0), Some(3.0)],
            [Some(20.0), None, Some(0.0), Some(4.0), Some(4.0)],
        ];
        let regions: Vec<WholeRegion> = paths
            .iter()
            .zip(&values)
            .map(|(p, v)| WholeRegion {
                kind: RegionKind::Stack,
                segments: p,
                inclusive: v,
            })
            .collect();
        let nested = nest(&specs, Some(0), &regions);
        assert_eq!(nested[0].parent, None);
        assert_eq!(nested[2].parent, Some(1));
        assert_eq!(nested[2].depth, 2);
        assert_eq!(nested[0].children, [1, 3]);
        // 100 − 40 − 20 of time; 50 − 30 of flops (b's unknown flops count as none); busy time
        // 50 − 30 − 0 over the 40 left; the maximum is a child's, so unknown; derived: unknown.
        assert_eq!(
            nested[0].exclusive,
            [Some(40.0), Some(20.0), Some(0.5), None, None]
        );
        assert_eq!(nested[1].exclusive[3], Some(9.0));
        assert_eq!(nested[3].exclusive, values[3]);
    }

    #[test]
    fn marks_and_unrelated_paths_stay_top_level() {
        let specs = [spec("time", Rollup::Sum)];
        let (a, b) = (path("a"), path("a/b"));
        let v = [Some(1.0)];
        let regions = [
            WholeRegion {
                kind: RegionKind::Mark,
                segments: &a,
                inclusive: &v,
            },
            WholeRegion {
                kind: RegionKind::Stack,
                segments: &b,
                inclusive: &v,
            },
        ];
        let nested = nest(&specs, Some(0), &regions);
        assert!(nested.iter().all(|n| n.parent.is_none() && n.depth == 0));
    }

    proptest::proptest! {
        /// A parent's own sum plus its children's is its inclusive sum, and its own time-weighted
        /// mean, weighted by its own time, adds up with its children's to its inclusive one.
        #[test]
        fn own_values_and_childrens_add_up_to_the_inclusive_ones(
            children in proptest::collection::vec((1.0f64..1e6, 0.0f64..1.0, 0.0f64..1e9), 1..6),
            own_time in 1.0f64..1e6,
            own_share in 0.0f64..1.0,
            own_flops in 0.0f64..1e9,
        ) {
            let specs = [spec("time", Rollup::Sum), spec("share", Rollup::Mean), spec("flops", Rollup::Sum)];
            let time = own_time + children.iter().map(|c| c.0).sum::<f64>();
            let busy = own_share * own_time + children.iter().map(|c| c.0 * c.1).sum::<f64>();
            let flops = own_flops + children.iter().map(|c| c.2).sum::<f64>();
            let mut paths = vec![path("p")];
            let mut values = vec![[Some(time), Some(busy / time), Some(flops)]];
            for (n, (t, share, f)) in children.iter().enumerate() {
                paths.push(path(&format!("p/c{n}")));
                values.push([Some(*t), Some(*share), Some(*f)]);
            }
            let regions: Vec<WholeRegion> = paths
                .iter()
                .zip(&values)
                .map(|(p, v)| WholeRegion { kind: RegionKind::Stack, segments: p, inclusive: v })
                .collect();
            let own = &nest(&specs, Some(0), &regions)[0].exclusive;
            let near = |a: f64, b: f64| (a - b).abs() <= 1e-6 * a.abs().max(b.abs()).max(1.0);
            proptest::prop_assert!(near(own[0].unwrap(), own_time), "{own:?}");
            proptest::prop_assert!(near(own[1].unwrap(), own_share), "{own:?}");
            proptest::prop_assert!(near(own[2].unwrap(), own_flops), "{own:?}");
        }
    }
}
