//! SVG charts, per scope: the region time breakdown (an indented icicle on the synthetic timeline of
//! [`layout`](super::layout), self time solid) and the spread of region instance times. Hand-written
//! SVG 1.1: deterministic (same report, same bytes), with `<title>`/`<desc>` and every name escaped.
//!
//! Written beside report.md as `charts/<scope>-time.svg`, `charts/<scope>-instances.svg` and, for
//! regions from Python call stacks, `charts/<scope>-flame.svg` (a flame graph, [`flame`])
//! (`<scope>` is the scope's anchor: `scope-1`, …, `aggregate`); a report whose scopes are whole
//! profiles gets `charts/sweep.svg` on its aggregate ([`sweep`]). report.html inlines the same charts.
//!
//! Floor: report (see `crate::report`): imports config, region and the ground floor only.

use std::fmt::Write as _;
use std::path::PathBuf;

use super::layout::{self, time_of, TimelineSpan};
use crate::region::RegionKind;
use crate::report::format::{self, escape_html as esc};
use crate::report::model::{Percentiles, Region, Report, Scope};
use crate::report::RenderError;

mod draw;
mod flame;
mod instances;
mod sweep;

use draw::{
    axis, colour, label, legend, legend_extra, n, open, scale, value, PLOT_X, ROW, TOP, VALUE_X,
};
use instances::instances_chart;

/// Which chart of a scope.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChartKind {
    Time,
    Instances,
    /// GPU time by Python call stack (scopes with `stack_frames` regions).
    Flame,
    /// Total time and MFU per profile, when the scopes are whole profiles (on the aggregate).
    Sweep,
}

/// One rendered chart.
#[derive(Debug, Clone)]
pub struct Chart {
    /// Index into [`Report::scopes`], or `None` for the aggregate.
    pub scope: Option<usize>,
    pub kind: ChartKind,
    /// Relative to the report directory: `charts/scope-1-time.svg`.
    pub file: String,
    /// What the chart shows, in words (its `<title>`).
    pub title: String,
    /// The `<svg>` element, without an XML declaration, ready to inline into HTML.
    pub svg: String,
}

/// The SVG charts of a report as files under `charts/`; no main file of its own.
pub struct Svg {
    /// Regions per chart (the longest by inclusive time, with their ancestors).
    pub max_regions: usize,
}

impl super::Output for Svg {
    fn file_name(&self) -> &'static str {
        "charts"
    }

    fn writes_main_file(&self) -> bool {
        false
    }

    fn render(
        &self,
        report: &Report,
        _out: &mut dyn std::io::Write,
    ) -> Result<Vec<(PathBuf, Vec<u8>)>, RenderError> {
        Ok(charts(report, self.max_regions)
            .into_iter()
            .map(|c| (PathBuf::from(&c.file), svg_file(&c.svg).into_bytes()))
            .collect())
    }
}

/// A chart as a standalone file.
pub fn svg_file(svg: &str) -> String {
    format!("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n{svg}\n")
}

/// Rows a chart draws at most: the longest regions with their ancestors; the rest are summed up in
/// one line ("others") below them, and listed in report.md and report.json.
pub const CHART_ROWS: usize = 40;

/// The scopes that get charts, with their anchors: every scope, and the aggregate when there are
/// several scopes (with one it equals that scope).
pub fn chart_scopes(report: &Report) -> Vec<(Option<usize>, String, &Scope)> {
    let mut out: Vec<_> = report
        .scopes
        .iter()
        .enumerate()
        .map(|(i, s)| (Some(i), format!("scope-{}", i + 1), s))
        .collect();
    if report.scopes.len() > 1 {
        if let Some(aggregate) = &report.aggregate {
            out.push((None, "aggregate".to_string(), aggregate));
        }
    }
    out
}

/// A chart to draw: where it goes and which regions it shows, decided without drawing it.
#[derive(Debug, Clone)]
pub struct Planned {
    pub scope: Option<usize>,
    pub kind: ChartKind,
    pub file: String,
    pub title: String,
    /// Indices into the scope's regions, in tree order.
    rows: Vec<usize>,
    anchor: String,
}

/// The charts of a report, scope by scope: a time chart where the scope has regions and the report a
/// time metric, an instances chart where a shown region has more than one visit with a time.
pub fn plan(report: &Report, max_regions: usize) -> Vec<Planned> {
    let Some(time) = report.time_metric.as_deref() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (index, anchor, scope) in chart_scopes(report) {
        if scope.regions.is_empty() {
            continue;
        }
        let rows = max_regions.min(CHART_ROWS);
        let shown = super::shown::shown_regions(&scope.regions, Some(time), rows);
        let name = if index.is_none() {
            "the aggregate".to_string()
        } else {
            scope.label.clone()
        };
        let with_instances: Vec<usize> = shown
            .iter()
            .copied()
            // A region visited once has no spread to draw.
            .filter(|&i| instances(&scope.regions[i]).is_some_and(|inst| inst.count > 1))
            .collect();
        out.push(Planned {
            scope: index,
            kind: ChartKind::Time,
            file: format!("charts/{anchor}-time.svg"),
            title: format!("Region time breakdown: {name}"),
            rows: shown,
            anchor: anchor.clone(),
        });
        if flame::has_frames(scope) {
            out.push(Planned {
                scope: index,
                kind: ChartKind::Flame,
                file: format!("charts/{anchor}-flame.svg"),
                title: format!("GPU time by Python call stack: {name}"),
                rows: Vec::new(),
                anchor: anchor.clone(),
            });
        }
        if !with_instances.is_empty() {
            out.push(Planned {
                scope: index,
                kind: ChartKind::Instances,
                file: format!("charts/{anchor}-instances.svg"),
                title: format!("Region instance times: {name}"),
                rows: with_instances,
                anchor,
            });
        }
    }
    if report.aggregate.is_some() && sweep::has_sweep(report, time) {
        out.push(Planned {
            scope: None,
            kind: ChartKind::Sweep,
            file: "charts/sweep.svg".to_string(),
            title: "Sweep: total time and MFU per profile".to_string(),
            rows: Vec::new(),
            anchor: "sweep".to_string(),
        });
    }
    out
}

/// Every chart of the report, drawn.
pub fn charts(report: &Report, max_regions: usize) -> Vec<Chart> {
    let Some(time) = report.time_metric.as_deref() else {
        return Vec::new();
    };
    let unit = report
        .metrics
        .iter()
        .find(|m| m.name == time)
        .map_or("ns", |m| m.unit.as_str());
    plan(report, max_regions)
        .into_iter()
        .map(|p| {
            let scope = match p.scope {
                Some(i) => &report.scopes[i],
                None => report
                    .aggregate
                    .as_ref()
                    .expect("planned from the aggregate"),
            };
            let svg = match p.kind {
                ChartKind::Time => {
                    let id = format!("{}-time", p.anchor);
                    let what = (time, unit, report.item_noun.one);
                    time_chart(scope, &p.rows, what, &id, &p.title)
                }
                ChartKind::Instances => {
                    let id = format!("{}-instances", p.anchor);
                    instances_chart(scope, &p.rows, unit, &id, &p.title)
                }
                ChartKind::Flame => {
                    let id = format!("{}-flame", p.anchor);
                    flame::flame_chart(scope, time, unit, &id, &p.title)
                }
                ChartKind::Sweep => sweep::sweep_chart(report, time, unit, "sweep", &p.title),
            };
            Chart {
                scope: p.scope,
                kind: p.kind,
                file: p.file,
                title: p.title,
                svg,
            }
        })
        .collect()
}

/// A region's instances when they have times to draw.
fn instances(region: &Region) -> Option<&Percentiles> {
    let i = region.instances.as_ref()?;
    [i.min, i.median, i.p90, i.max]
        .iter()
        .all(|v| v.is_finite())
        .then_some(i)
}

/// `what`: the time metric, its unit, and what one result is called (`kernel`, `instruction`).
fn time_chart(
    scope: &Scope,
    shown: &[usize],
    (time, unit, noun): (&str, &str, &str),
    id: &str,
    title: &str,
) -> String {
    let spans = layout::spans(&scope.regions, time);
    let extent = layout::extent(scope, &spans, time);
    let others = others(scope, shown, time);
    let rows = shown.len() + usize::from(others.is_some());
    let height = TOP + ROW * rows as f64 + 48.0 + legend_extra(TIME_LEGEND);
    let total = time_of(&scope.total.metrics, time);
    let desc = format!(
        "Each region's inclusive time as a bar on one {} timeline ({} in the scope), nested regions \
         indented under their parent and laid end to end inside it; the solid part is the region's \
         self time. {} of {} regions shown.",
        "synthetic",
        value(total, unit),
        shown.len(),
        scope.regions.len()
    );
    let mut out = String::new();
    open(&mut out, id, title, &desc, height);
    let bottom = TOP + ROW * rows as f64;
    axis(&mut out, extent, unit, bottom);
    for (row, &i) in shown.iter().enumerate() {
        let y = TOP + ROW * row as f64;
        time_row(
            &mut out,
            &scope.regions[i],
            &spans[i],
            (y, extent),
            (time, unit, noun),
        );
    }
    if let Some((count, others_time)) = others {
        let _ = writeln!(
            out,
            "<text x=\"{}\" y=\"{}\" fill=\"#555555\">others: {} more regions, {} \
             (report.md and report.json list them)</text>",
            n(8.0),
            n(TOP + ROW * shown.len() as f64 + 12.0),
            format::count(count as f64),
            esc(&value(others_time, unit)),
        );
    }
    legend(&mut out, bottom + 24.0, TIME_LEGEND);
    out.push_str("</svg>");
    out
}

const TIME_LEGEND: &str =
    "Light: time in nested regions · solid: self time · dashed outline: flat \
     (start/end) range · colour: depth. Laid end to end, each NVTX domain and the flat ranges from \
     0: the report holds totals, not timestamps.";

/// The regions a chart leaves out, and the inclusive time of those whose parent it draws (a left-out
/// region's children are in its time already); `None` when it draws them all.
fn others(scope: &Scope, shown: &[usize], time: &str) -> Option<(usize, f64)> {
    let hidden = scope
        .regions
        .len()
        .checked_sub(shown.len())
        .filter(|h| *h > 0)?;
    let drawn: std::collections::HashSet<&str> = shown
        .iter()
        .map(|&i| scope.regions[i].path.as_str())
        .collect();
    let time: f64 = scope
        .regions
        .iter()
        .filter(|r| !drawn.contains(r.path.as_str()))
        .filter(|r| r.parent.as_deref().is_none_or(|p| drawn.contains(p)))
        .map(|r| time_of(&r.inclusive, time))
        .sum();
    Some((hidden, time))
}

fn time_row(
    out: &mut String,
    region: &Region,
    span: &TimelineSpan,
    (y, extent): (f64, f64),
    (time, unit, noun): (&str, &str, &str),
) {
    let inclusive = span.length;
    let own = time_of(&region.exclusive, time);
    let tip = format!(
        "{} — {} ({} of the scope), self {}, {} {noun} result(s)",
        region.segments.join(" / "),
        value(inclusive, unit),
        format::share(region.time_share),
        value(own, unit),
        region.kernel_count
    );
    let c = colour(region.depth);
    let x = PLOT_X + scale(span.start, extent);
    let w = scale(span.end(), extent) - scale(span.start, extent);
    let sx = PLOT_X + scale(span.self_start, extent);
    let sw = (PLOT_X + scale(span.end(), extent) - sx).max(0.0);
    let dash = if region.kind == RegionKind::Mark {
        " stroke-dasharray=\"3 2\""
    } else {
        ""
    };
    let _ = writeln!(out, "<g><title>{}</title>", esc(&tip));
    label(out, region, y);
    let _ = writeln!(
        out,
        "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"16\" fill=\"{c}\" fill-opacity=\"0.3\" stroke=\"{c}\"{dash}/>\n\
         <rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"16\" fill=\"{c}\"/>\n\
         <text x=\"{}\" y=\"{}\" fill=\"#333333\">{} · {} · self {}</text>\n</g>",
        n(x),
        n(y),
        n(w.max(0.5)),
        n(sx),
        n(y),
        n(sw),
        n(VALUE_X),
        n(y + 12.0),
        esc(&value(inclusive, unit)),
        esc(&format::share(region.time_share)),
        esc(&value(own, unit)),
    );
}
