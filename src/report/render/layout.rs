//! A synthetic timeline of a scope's regions, shared by the charts and the trace: the report holds
//! aggregates, not launch timestamps, so each region is laid out as one span as long as its inclusive
//! time, its children end to end from its start in program order and its self time after them.
//! Top-level regions follow one another from 0 within their [`Lane`]: the default domain's tree,
//! another NVTX domain's tree, or the flat (start/end) ranges, each of which may overlap the others.

use std::collections::HashMap;

use crate::region::RegionKind;
use crate::report::model::MetricMap;
use crate::report::model::{Region, Scope};

/// Regions that may overlap regions of another lane, so each lane starts at 0.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Lane {
    /// Push/pop ranges of the default NVTX domain.
    Stack,
    /// Flat start/end ranges.
    Marks,
    /// Push/pop ranges of another domain (`NCCL` for `NCCL@ncclCommInitRankConfig`).
    Domain(String),
}

impl Lane {
    pub fn of(region: &Region) -> Lane {
        if region.kind == RegionKind::Mark {
            return Lane::Marks;
        }
        match domain(&region.path) {
            Some(domain) => Lane::Domain(domain),
            None => Lane::Stack,
        }
    }
}

/// The domain of a path's outermost segment: the text before its first `@` that no `\` escapes.
fn domain(path: &str) -> Option<String> {
    let mut escaped = false;
    for (i, ch) in path.char_indices() {
        match ch {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            '@' => return Some(path[..i].to_string()),
            '/' => return None,
            _ => {}
        }
    }
    None
}

/// Where a region lies on the synthetic timeline, in the time metric's unit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TimelineSpan {
    pub start: f64,
    /// The inclusive time.
    pub length: f64,
    /// Where the children end and the region's own (self) time begins.
    pub self_start: f64,
}

impl TimelineSpan {
    pub fn end(&self) -> f64 {
        self.start + self.length
    }
}

/// The time metric's value in a metric map; 0 when missing (a region without a value is drawn empty).
pub fn time_of(map: &MetricMap, time: &str) -> f64 {
    map.get(time)
        .and_then(|v| v.value)
        .filter(|v| v.is_finite() && *v > 0.0)
        .unwrap_or(0.0)
}

/// One span per region of `regions` (tree order: parents before children), by index.
pub fn spans(regions: &[Region], time: &str) -> Vec<TimelineSpan> {
    let index: HashMap<(RegionKind, &str), usize> = regions
        .iter()
        .enumerate()
        .map(|(i, r)| ((r.kind, r.path.as_str()), i))
        .collect();
    let mut spans: Vec<TimelineSpan> = Vec::with_capacity(regions.len());
    // Where the next child of each region starts.
    let mut cursor: Vec<f64> = Vec::with_capacity(regions.len());
    let mut top: HashMap<Lane, f64> = HashMap::new();
    for region in regions {
        let length = time_of(&region.inclusive, time);
        let parent = region
            .parent
            .as_deref()
            .and_then(|p| index.get(&(region.kind, p)).copied());
        let start = match parent {
            Some(p) => {
                let at = cursor[p];
                cursor[p] += length;
                at
            }
            None => {
                let lane = top.entry(Lane::of(region)).or_insert(0.0);
                let at = *lane;
                *lane += length;
                at
            }
        };
        spans.push(TimelineSpan {
            start,
            length,
            self_start: start,
        });
        cursor.push(start);
    }
    for (span, next) in spans.iter_mut().zip(&cursor) {
        span.self_start = next.min(span.end());
    }
    spans
}

/// The end of the laid-out timeline: the scope's total time, or further when a lane's regions
/// overlapped one another (flat ranges laid end to end).
pub fn extent(scope: &Scope, spans: &[TimelineSpan], time: &str) -> f64 {
    let total = time_of(&scope.total.metrics, time);
    spans.iter().map(TimelineSpan::end).fold(total, f64::max)
}

/// The kernels that ran directly in each region (its own results, not its children's): the region's
/// kernels less its children's, by name, with the time and count that remain.
pub fn self_kernels(regions: &[Region], time: &str) -> Vec<Vec<(String, u64, f64)>> {
    let index: HashMap<(RegionKind, &str), usize> = regions
        .iter()
        .enumerate()
        .map(|(i, r)| ((r.kind, r.path.as_str()), i))
        .collect();
    // What the children ran, per parent and kernel name: one pass, whatever the fan-out.
    let mut nested: HashMap<(usize, &str), (u64, f64)> = HashMap::new();
    for region in regions {
        let Some(p) = region
            .parent
            .as_deref()
            .and_then(|p| index.get(&(region.kind, p)).copied())
        else {
            continue;
        };
        for kernel in &region.kernels {
            let entry = nested.entry((p, kernel.name.as_str())).or_default();
            entry.0 += kernel.count;
            entry.1 += time_of(&kernel.metrics, time);
        }
    }
    regions
        .iter()
        .enumerate()
        .map(|(i, r)| {
            r.kernels
                .iter()
                .filter_map(|k| {
                    let (count, t) = nested
                        .get(&(i, k.name.as_str()))
                        .copied()
                        .unwrap_or_default();
                    let count = k.count.saturating_sub(count);
                    let t = time_of(&k.metrics, time) - t;
                    (count > 0 && t > 0.0).then(|| (k.name.clone(), count, t))
                })
                .collect()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::domain;

    #[test]
    fn a_domain_is_the_text_before_an_unescaped_at_of_the_first_segment() {
        assert_eq!(
            domain("NCCL@ncclCommInitRankConfig").as_deref(),
            Some("NCCL")
        );
        assert_eq!(domain("NCCL@a/b").as_deref(), Some("NCCL"));
        assert_eq!(domain("train_step/x@y"), None);
        assert_eq!(domain("a\\@x"), None);
        assert_eq!(domain("a\\/b@c").as_deref(), Some("a\\/b"));
    }
}
