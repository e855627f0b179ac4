//! A synthetic timeline of a scope's regions, shared by the charts and the trace: the report holds
//! aggregates, not launch timestamps, so each region is laid out as one span as long as its inclusive
//! time, its children end to end from its start in program order and its self time after them;
//! top-level regions follow one another from 0.

use std::collections::HashMap;

use crate::region::RegionKind;
use crate::report::model::{Kernel, Region, Scope};

/// Where a region lies on the synthetic timeline, in the time metric's unit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Span {
    pub start: f64,
    /// The inclusive time.
    pub length: f64,
    /// Where the children end and the region's own (self) time begins.
    pub self_start: f64,
}

impl Span {
    pub fn end(&self) -> f64 {
        self.start + self.length
    }
}

/// The time metric's value in a metric map; 0 when missing (a region without a value is drawn empty).
pub fn time_of(map: &crate::report::model::MetricMap, time: &str) -> f64 {
    map.get(time)
        .and_then(|v| v.value)
        .filter(|v| v.is_finite() && *v > 0.0)
        .unwrap_or(0.0)
}

/// One span per region of `regions` (tree order: parents before children), by index.
pub fn spans(regions: &[Region], time: &str) -> Vec<Span> {
    let index: HashMap<(RegionKind, &str), usize> = regions
        .iter()
        .enumerate()
        .map(|(i, r)| ((r.kind, r.path.as_str()), i))
        .collect();
    let mut spans: Vec<Span> = Vec::with_capacity(regions.len());
    // Where the next child of each region starts.
    let mut cursor: Vec<f64> = Vec::with_capacity(regions.len());
    let mut top = 0.0;
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
                let at = top;
                top += length;
                at
            }
        };
        spans.push(Span {
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

/// The end of the laid-out timeline: the scope's total time, or further when regions overlap
/// (marks laid end to end with the stack regions they overlapped).
pub fn extent(scope: &Scope, spans: &[Span], time: &str) -> f64 {
    let total = time_of(&scope.total.metrics, time);
    spans.iter().map(Span::end).fold(total, f64::max)
}

/// The kernels that ran directly in each region (its own results, not its children's): the region's
/// kernels less its children's, by name, with the time and count that remain.
pub fn self_kernels(regions: &[Region], time: &str) -> Vec<Vec<(String, u64, f64)>> {
    let index: HashMap<(RegionKind, &str), usize> = regions
        .iter()
        .enumerate()
        .map(|(i, r)| ((r.kind, r.path.as_str()), i))
        .collect();
    let mut own: Vec<Vec<(String, u64, f64)>> = regions
        .iter()
        .map(|r| kernel_rows(&r.kernels, time))
        .collect();
    for region in regions {
        let Some(p) = region
            .parent
            .as_deref()
            .and_then(|p| index.get(&(region.kind, p)).copied())
        else {
            continue;
        };
        for kernel in &region.kernels {
            if let Some(row) = own[p].iter_mut().find(|(name, _, _)| *name == kernel.name) {
                row.1 = row.1.saturating_sub(kernel.count);
                row.2 -= time_of(&kernel.metrics, time);
            }
        }
    }
    for rows in &mut own {
        rows.retain(|(_, count, t)| *count > 0 && *t > 0.0);
    }
    own
}

fn kernel_rows(kernels: &[Kernel], time: &str) -> Vec<(String, u64, f64)> {
    kernels
        .iter()
        .map(|k| (k.name.clone(), k.count, time_of(&k.metrics, time)))
        .collect()
}
