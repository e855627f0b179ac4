//! SVG charts, per scope: the region time breakdown (an indented icicle on the synthetic timeline of
//! [`layout`](super::layout), self time solid) and the spread of region instance times. Hand-written
//! SVG 1.1: deterministic (same report, same bytes), with `<title>`/`<desc>` and every name escaped.
//!
//! Written beside report.md as `charts/<scope>-time.svg` and `charts/<scope>-instances.svg`
//! (`<scope>` is the scope's anchor: `scope-1`, …, `aggregate`); report.html inlines the same charts.

use std::fmt::Write as _;
use std::path::PathBuf;

use super::layout::{self, time_of, Span};
use crate::region::RegionKind;
use crate::report::format::{self, escape_html as esc};
use crate::report::model::{Instances, Region, Report, Scope};
use crate::report::RenderError;

/// Colours by region depth (Okabe–Ito, distinguishable with the common colour-vision deficiencies).
const DEPTH_COLOURS: [&str; 6] = [
    "#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00",
];
const WIDTH: f64 = 1160.0;
const LABEL_X: f64 = 8.0;
const PLOT_X: f64 = 300.0;
const PLOT_W: f64 = 440.0;
const VALUE_X: f64 = 752.0;
const ROW: f64 = 22.0;
const TOP: f64 = 64.0;
/// Characters of a label at depth 0; deeper labels lose what their indentation takes.
const LABEL_CHARS: usize = 40;
const FONT: &str =
    "font-family=\"system-ui, -apple-system, 'Segoe UI', sans-serif\" font-size=\"12\"";

/// Which chart of a scope.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChartKind {
    Time,
    Instances,
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
/// time metric, an instances chart where a shown region knows its instances' times.
pub fn plan(report: &Report, max_regions: usize) -> Vec<Planned> {
    let Some(time) = report.time_metric.as_deref() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (index, anchor, scope) in chart_scopes(report) {
        if scope.regions.is_empty() {
            continue;
        }
        let shown = super::markdown::shown_regions(&scope.regions, Some(time), max_regions);
        let name = if index.is_none() {
            "the aggregate".to_string()
        } else {
            scope.label.clone()
        };
        let with_instances: Vec<usize> = shown
            .iter()
            .copied()
            .filter(|&i| instances(&scope.regions[i]).is_some())
            .collect();
        out.push(Planned {
            scope: index,
            kind: ChartKind::Time,
            file: format!("charts/{anchor}-time.svg"),
            title: format!("Region time breakdown: {name}"),
            rows: shown,
            anchor: anchor.clone(),
        });
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
                    time_chart(scope, &p.rows, time, unit, &id, &p.title)
                }
                ChartKind::Instances => {
                    let id = format!("{}-instances", p.anchor);
                    instances_chart(scope, &p.rows, unit, &id, &p.title)
                }
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
fn instances(region: &Region) -> Option<(&Instances, [f64; 4])> {
    let i = region.instances.as_ref()?;
    match (i.min, i.median, i.p90, i.max) {
        (Some(a), Some(b), Some(c), Some(d)) if [a, b, c, d].iter().all(|v| v.is_finite()) => {
            Some((i, [a, b, c, d]))
        }
        _ => None,
    }
}

fn colour(depth: usize) -> &'static str {
    DEPTH_COLOURS[depth % DEPTH_COLOURS.len()]
}

/// Fixed two decimals: coordinates print the same on every platform.
fn n(v: f64) -> String {
    format!("{v:.2}")
}

fn value(v: f64, unit: &str) -> String {
    format::value(Some(v), unit)
}

/// The opening of a chart: `<svg>` with its size, `<title>`, `<desc>` and heading.
fn open(out: &mut String, id: &str, title: &str, desc: &str, height: f64) {
    let _ = write!(
        out,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\" \
         role=\"img\" aria-labelledby=\"{id}-title {id}-desc\" {FONT}>\n\
         <title id=\"{id}-title\">{t}</title>\n<desc id=\"{id}-desc\">{d}</desc>\n\
         <rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n\
         <text x=\"{LABEL_X}\" y=\"22\" font-size=\"15\" font-weight=\"600\" fill=\"#1a1a1a\">{t}</text>\n",
        w = n(WIDTH),
        h = n(height),
        t = esc(&format::shorten(title, 140)),
        d = esc(desc),
    );
}

/// The time axis over the plot: ticks at round values in a scaled unit, with grid lines down to
/// `bottom`.
fn axis(out: &mut String, extent: f64, unit: &str, bottom: f64) {
    let (factor, label) = axis_unit(extent, unit);
    let step = nice_step(extent / factor / 5.0);
    let decimals = (-step.log10().floor()).max(0.0) as usize;
    let y = TOP - 10.0;
    let _ = writeln!(
        out,
        "<g class=\"axis\" fill=\"#444444\"><text x=\"{}\" y=\"{}\" text-anchor=\"end\">time ({})</text>",
        n(PLOT_X - 24.0),
        n(y),
        esc(&label)
    );
    let mut k = 0.0f64;
    loop {
        let at = k * step * factor;
        if at > extent * 1.000_001 || k > 50.0 {
            break;
        }
        let x = PLOT_X + scale(at, extent);
        let _ = writeln!(
            out,
            "<line x1=\"{x}\" y1=\"{y1}\" x2=\"{x}\" y2=\"{y2}\" stroke=\"#dddddd\"/>\
             <text x=\"{x}\" y=\"{ty}\" text-anchor=\"middle\">{v:.decimals$}</text>",
            x = n(x),
            y1 = n(y + 4.0),
            y2 = n(bottom),
            ty = n(y),
            v = k * step,
        );
        k += 1.0;
    }
    out.push_str("</g>\n");
}

/// A pixel offset in the plot for a value on a `0..extent` axis.
fn scale(v: f64, extent: f64) -> f64 {
    if extent > 0.0 {
        (v / extent * PLOT_W).clamp(0.0, PLOT_W)
    } else {
        0.0
    }
}

/// The unit an axis up to `extent` reads best in, and what one of it is in the base unit.
fn axis_unit(extent: f64, unit: &str) -> (f64, String) {
    if unit == "ns" {
        for (factor, label) in [(1e9, "s"), (1e6, "ms"), (1e3, "µs")] {
            if extent >= factor {
                return (factor, label.to_string());
            }
        }
    }
    (1.0, unit.to_string())
}

/// 1, 2 or 5 times a power of ten, at least `raw`.
fn nice_step(raw: f64) -> f64 {
    if !(raw.is_finite() && raw > 0.0) {
        return 1.0;
    }
    let power = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * power)
        .find(|s| *s >= raw * 0.999_999)
        .unwrap_or(10.0 * power)
}

/// A region's label: indented by depth, shortened, the full path in the row's tooltip.
fn label(out: &mut String, region: &Region, y: f64) {
    let depth = region.depth.min(8);
    let chars = LABEL_CHARS.saturating_sub(2 * depth).max(12);
    let _ = writeln!(
        out,
        "<text x=\"{}\" y=\"{}\" fill=\"#1a1a1a\">{}</text>",
        n(LABEL_X + 12.0 * depth as f64),
        n(y + 12.0),
        esc(&format::shorten(&region.name, chars))
    );
}

fn time_chart(
    scope: &Scope,
    shown: &[usize],
    time: &str,
    unit: &str,
    id: &str,
    title: &str,
) -> String {
    let spans = layout::spans(&scope.regions, time);
    let extent = layout::extent(scope, &spans, time);
    let height = TOP + ROW * shown.len() as f64 + 48.0;
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
    let bottom = TOP + ROW * shown.len() as f64;
    axis(&mut out, extent, unit, bottom);
    for (row, &i) in shown.iter().enumerate() {
        let y = TOP + ROW * row as f64;
        time_row(
            &mut out,
            &scope.regions[i],
            &spans[i],
            (y, extent),
            time,
            unit,
        );
    }
    legend(
        &mut out,
        bottom + 24.0,
        "Light: time in nested regions · solid: self time · dashed outline: flat (start/end) \
         range · colour: depth. Laid end to end, each NVTX domain and the flat ranges from 0: the \
         report holds totals, not timestamps.",
    );
    out.push_str("</svg>");
    out
}

fn time_row(
    out: &mut String,
    region: &Region,
    span: &Span,
    (y, extent): (f64, f64),
    time: &str,
    unit: &str,
) {
    let inclusive = span.length;
    let own = time_of(&region.exclusive, time);
    let tip = format!(
        "{} — {} ({} of the scope), self {}, {} kernel result(s)",
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

fn instances_chart(scope: &Scope, rows: &[usize], unit: &str, id: &str, title: &str) -> String {
    let extent = rows
        .iter()
        .filter_map(|&i| instances(&scope.regions[i]))
        .map(|(_, v)| v[3])
        .fold(0.0, f64::max);
    let height = TOP + ROW * rows.len() as f64 + 48.0;
    let desc = "Per region, the inclusive time of each visit: whisker from the fastest to the \
                slowest visit, box from the median to the 90th percentile, a circle at the slowest \
                visit when it lies beyond the 90th percentile.";
    let mut out = String::new();
    open(&mut out, id, title, desc, height);
    let bottom = TOP + ROW * rows.len() as f64;
    axis(&mut out, extent, unit, bottom);
    for (row, &i) in rows.iter().enumerate() {
        let region = &scope.regions[i];
        let Some((inst, [min, median, p90, max])) = instances(region) else {
            continue;
        };
        let y = TOP + ROW * row as f64;
        let px = |v: f64| n(PLOT_X + scale(v, extent));
        let c = colour(region.depth);
        let tip = format!(
            "{} — {} visit(s): min {}, median {}, p90 {}, max {}",
            region.segments.join(" / "),
            inst.count,
            value(min, unit),
            value(median, unit),
            value(p90, unit),
            value(max, unit)
        );
        let _ = writeln!(out, "<g><title>{}</title>", esc(&tip));
        label(&mut out, region, y);
        let mid = n(y + 8.0);
        let _ = writeln!(
            out,
            "<line x1=\"{}\" y1=\"{mid}\" x2=\"{}\" y2=\"{mid}\" stroke=\"#555555\"/>\n\
             <line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#555555\"/>\n\
             <rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"12\" fill=\"{c}\" fill-opacity=\"0.5\" stroke=\"{c}\"/>\n\
             <line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#1a1a1a\" stroke-width=\"2\"/>",
            px(min),
            px(max),
            px(min),
            n(y + 3.0),
            px(min),
            n(y + 13.0),
            px(median),
            n(y + 2.0),
            n((scale(p90, extent) - scale(median, extent)).max(1.0)),
            px(median),
            n(y + 1.0),
            px(median),
            n(y + 15.0),
        );
        if max > p90 {
            let _ = writeln!(
                out,
                "<circle cx=\"{}\" cy=\"{mid}\" r=\"3.5\" fill=\"#ffffff\" stroke=\"#D55E00\" stroke-width=\"1.5\"/>",
                px(max)
            );
        }
        let _ = writeln!(
            out,
            "<text x=\"{}\" y=\"{}\" fill=\"#333333\">{} visits · median {} · p90 {} · max {}</text>\n</g>",
            n(VALUE_X),
            n(y + 12.0),
            format::count(inst.count as f64),
            esc(&value(median, unit)),
            esc(&value(p90, unit)),
            esc(&value(max, unit)),
        );
    }
    legend(
        &mut out,
        bottom + 24.0,
        "Whisker: fastest to slowest visit · box: median to p90 · bold line: median · circle: \
         slowest visit beyond p90.",
    );
    out.push_str("</svg>");
    out
}

fn legend(out: &mut String, y: f64, text: &str) {
    let _ = writeln!(
        out,
        "<text x=\"{LABEL_X}\" y=\"{}\" fill=\"#555555\" font-size=\"11\">{}</text>",
        n(y),
        esc(text)
    );
}
