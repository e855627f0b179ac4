//! The region × scope table report.md shows right after its summary when there are several scopes:
//! each region's time in every scope (process, device or rank), its fastest and slowest scope and the
//! spread between them, so a straggler rank shows at a glance.

use std::collections::HashMap;
use std::sync::Arc;

use serde::Serialize;

use crate::region::RegionKind;
use crate::report::format;
use crate::report::model::Scope;
use crate::report::model::{past_side_by_side, MetricValue, Percentiles, RegionAcross, Report};

#[derive(Serialize)]
pub(super) struct Matrix {
    /// One per scope, in report order: the short label heading its column.
    pub(super) columns: Vec<String>,
    pub(super) rows: Vec<MatrixRow>,
    /// Regions not in the table (report.json has them all).
    pub(super) hidden: usize,
    /// More scopes than report.md shows side by side ([`past_side_by_side`]): each row shows its distribution
    /// across scopes and the slowest scopes by name instead of a column per scope.
    pub(super) wide: bool,
}

/// A region's time across the scopes that have it, for a wide table.
#[derive(Serialize)]
pub(super) struct Across {
    /// Over the scopes that have the region (`count`: how many), from `Report::across_scopes`.
    pub(super) spread: Percentiles,
    pub(super) unit: String,
    /// The slowest scopes (at most three), slowest first, with their times.
    pub(super) slowest: Vec<(String, MetricValue)>,
}

#[derive(Serialize)]
pub(super) struct MatrixRow {
    pub(super) name: String,
    pub(super) path: String,
    pub(super) depth: usize,
    /// The region's section in the aggregate, when report.md has one.
    pub(super) anchor: Option<String>,
    /// The region's time in each scope; `none` where the scope does not have the region.
    pub(super) times: Vec<Option<MetricValue>>,
    /// Short labels of the scopes with the least and the most time; `none` when the times are equal or
    /// fewer than two scopes have the region.
    pub(super) fastest: Option<String>,
    pub(super) slowest: Option<String>,
    /// Slowest minus fastest time.
    pub(super) spread: Option<MetricValue>,
    /// The spread over the slowest time, 0..1.
    pub(super) spread_share: Option<f64>,
    /// The distribution across scopes, for a wide table; `none` otherwise or where no scope has the
    /// region.
    pub(super) across: Option<Across>,
}

/// The rows of the table: `(kind, path, name, depth, aggregate anchor)` of the regions to show.
pub(super) type RowKey = (RegionKind, String, String, usize, Option<String>);

/// Short, unique labels for the scopes' columns and files: `rank 3`, else `pid 1606`, with the device
/// when a process has several; `scope N` when even that repeats.
pub(super) fn short_labels(report: &Report) -> Vec<String> {
    let one = |s: &Scope, device: bool| match (s.rank, s.process_id) {
        (Some(rank), _) => format!("rank {rank}"),
        (None, Some(pid)) if device && s.device.is_some() => {
            format!("pid {pid}, device {}", s.device.as_deref().unwrap_or(""))
        }
        (None, Some(pid)) => format!("pid {pid}"),
        (None, None) => String::new(),
    };
    let unique = |labels: &[String]| {
        let mut seen = std::collections::HashSet::new();
        labels.iter().all(|l| !l.is_empty() && seen.insert(l))
    };
    for device in [false, true] {
        let labels: Vec<String> = report.scopes.iter().map(|s| one(s, device)).collect();
        if unique(&labels) {
            return labels;
        }
    }
    (1..=report.scopes.len())
        .map(|i| format!("scope {i}"))
        .collect()
}

/// The table for `rows`, or `None` without a time metric (there is nothing to compare).
pub(super) fn build(
    report: &Report,
    labels: &[String],
    rows: Vec<RowKey>,
    hidden: usize,
) -> Option<Matrix> {
    let time = report.time_metric.as_deref()?;
    let index: HashMap<(RegionKind, &str), usize> = rows
        .iter()
        .enumerate()
        .map(|(i, r)| ((r.0, r.1.as_str()), i))
        .collect();
    let mut cells: Vec<Vec<Option<MetricValue>>> =
        vec![vec![None; report.scopes.len()]; rows.len()];
    // One pass over every scope's regions with a small map of the shown rows.
    for (s, scope) in report.scopes.iter().enumerate() {
        for region in &scope.regions {
            if let Some(&row) = index.get(&(region.kind, region.path.as_str())) {
                cells[row][s] = region.inclusive.get(time).cloned();
            }
        }
    }
    let wide = past_side_by_side(labels.len());
    let spreads: HashMap<(RegionKind, &str), &RegionAcross> = (report.across_scopes.iter())
        .map(|a| ((a.kind, a.path.as_str()), a))
        .collect();
    let rows = rows
        .into_iter()
        .zip(cells)
        .map(|((kind, path, name, depth, anchor), times)| {
            let found = spreads.get(&(kind, path.as_str())).copied();
            let mut row = row(path, name, depth, anchor, times, labels);
            if wide {
                row.across = across(&row.times, labels, found);
                // The per-scope cells are not shown; report.json has every scope's regions.
                row.times = Vec::new();
            }
            row
        })
        .collect();
    Some(Matrix {
        columns: labels.to_vec(),
        rows,
        hidden,
        wide,
    })
}

fn row(
    path: String,
    name: String,
    depth: usize,
    anchor: Option<String>,
    times: Vec<Option<MetricValue>>,
    labels: &[String],
) -> MatrixRow {
    let present: Vec<(usize, f64)> = times
        .iter()
        .enumerate()
        .filter_map(|(i, t)| Some((i, t.as_ref()?.value?)))
        .collect();
    // Ties go to the first scope, so the table is the same from one run to the next.
    let fastest = present
        .iter()
        .copied()
        .reduce(|a, b| if b.1 < a.1 { b } else { a });
    let slowest = present
        .iter()
        .copied()
        .reduce(|a, b| if b.1 > a.1 { b } else { a });
    let unit: Option<Arc<str>> = times.iter().flatten().map(|t| t.unit.clone()).next();
    let (spread, spread_share) = match (fastest, slowest, unit) {
        (Some(f), Some(s), Some(unit)) if present.len() > 1 => (
            Some(MetricValue::number(Some(s.1 - f.1), unit)),
            (s.1 > 0.0).then(|| (s.1 - f.1) / s.1),
        ),
        _ => (None, None),
    };
    // Fastest and slowest name scopes only when the times differ: with all equal there is neither.
    let differ = matches!((fastest, slowest), (Some(f), Some(s)) if s.1 > f.1);
    let label = |p: Option<(usize, f64)>| p.filter(|_| differ).map(|(i, _)| labels[i].clone());
    MatrixRow {
        name,
        path,
        depth,
        anchor,
        fastest: label(fastest),
        slowest: label(slowest),
        spread,
        spread_share,
        times,
        across: None,
    }
}

/// A region's spread across the scopes (`found`, from the model) and its three slowest scopes.
fn across(
    times: &[Option<MetricValue>],
    labels: &[String],
    found: Option<&RegionAcross>,
) -> Option<Across> {
    let found = found?;
    let mut present: Vec<(usize, f64, &MetricValue)> = (times.iter().enumerate())
        .filter_map(|(i, t)| Some((i, t.as_ref()?.value?, t.as_ref()?)))
        .collect();
    // Slowest first; ties keep scope order, so the table is the same from one run to the next.
    present.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    let slowest = (present.iter().take(3)).map(|&(i, v, t)| {
        (
            labels[i].clone(),
            MetricValue::number(Some(v), t.unit.clone()),
        )
    });
    Some(Across {
        spread: found.spread,
        unit: found.unit.clone(),
        slowest: slowest.collect(),
    })
}

/// `scopes/rank-3.md`: a file name per scope from its short label, unique.
pub(super) fn file_names(labels: &[String]) -> Vec<String> {
    let mut used = std::collections::HashSet::new();
    labels
        .iter()
        .enumerate()
        .map(|(i, label)| {
            let slug = format::slug(label);
            let mut name = if slug.is_empty() {
                format!("scope-{}", i + 1)
            } else {
                slug
            };
            if !used.insert(name.clone()) {
                name = format!("{name}-{}", i + 1);
                used.insert(name.clone());
            }
            format!("scopes/{name}.md")
        })
        .collect()
}
