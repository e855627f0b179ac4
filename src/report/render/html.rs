//! report.html: the report for a browser, offline (no scripts, fonts or other external resources):
//! the summary, per scope the charts inline, the regions table and each region's insights and notes.
//! Rendered by minijinja from templates/report.html.j2 with HTML autoescaping; the views below hold
//! numbers already formatted, so the template only lays them out. Every user- or workload-controlled
//! string goes through the escaping formatter, which also makes control and bidi characters visible.
//!
//! Floor: report (see `crate::report`): imports config, region and the ground floor only.

use std::path::PathBuf;

use minijinja::value::Value;
use minijinja::{AutoEscape, Environment, UndefinedBehavior};
use serde::Serialize;

mod deep_pass;
mod detail;
mod idle;
mod selection;
mod tables;
mod totals;

use super::layout::time_of;
use super::shown::shown_regions;
use super::svg::{self, Chart};
use super::RenderOptions;
use crate::region::RegionKind;
use crate::report::format;
use crate::report::model::CrossRank;
use crate::report::model::FlaggedRank;
use crate::report::model::ItemNoun;
use crate::report::model::Platform;
use crate::report::model::{Insight, Kernel, MetricMap, Region, Report, Scope};
use crate::report::RenderError;
use detail::{detail, insight, Detail, InsightView};
use tables::{table, TableView};
use totals::{totals, TotalRow};

const TEMPLATE: &str = include_str!("../../../templates/report.html.j2");
const NAME: &str = "report.html.j2";

/// report.html, with the same truncation limits as report.md.
pub struct Html {
    pub options: RenderOptions,
}

impl super::Output for Html {
    fn file_name(&self) -> &'static str {
        "report.html"
    }

    fn render(
        &self,
        report: &Report,
        out: &mut dyn std::io::Write,
    ) -> Result<Vec<(PathBuf, Vec<u8>)>, RenderError> {
        let text = render(report, &self.options)?;
        out.write_all(text.as_bytes())
            .map_err(|source| RenderError::Write {
                path: "report.html".into(),
                source,
            })?;
        Ok(Vec::new())
    }
}

pub fn render(report: &Report, options: &RenderOptions) -> Result<String, RenderError> {
    let mut env = Environment::new();
    env.set_undefined_behavior(UndefinedBehavior::Strict);
    env.set_trim_blocks(true);
    env.set_lstrip_blocks(true);
    env.set_auto_escape_callback(|_| AutoEscape::Html);
    env.set_formatter(|out, state, value| {
        // Strings get their controls made visible before minijinja escapes them; safe strings (the
        // charts, escaped when drawn) pass as they are.
        match value.as_str() {
            Some(text) if !value.is_safe() => {
                minijinja::escape_formatter(out, state, &Value::from(format::visible(text)))
            }
            _ => minijinja::escape_formatter(out, state, value),
        }
    });
    env.add_filter("prose", |text: String| {
        Value::from_safe_string(format::prose_html(&text))
    });
    env.add_template(NAME, TEMPLATE).map_err(error)?;
    let page = Page::new(report, options);
    let mut text = env
        .get_template(NAME)
        .and_then(|t| t.render(minijinja::context! { page => page }))
        .map_err(error)?;
    if !text.ends_with('\n') {
        text.push('\n');
    }
    Ok(text)
}

fn error(err: minijinja::Error) -> RenderError {
    RenderError::Template {
        name: NAME.to_string(),
        message: format!("line {}: {err}", err.line().unwrap_or(0)),
    }
}

#[derive(Serialize)]
struct Page<'a> {
    generator: &'a str,
    schema_version: u32,
    command: Option<String>,
    profiler: String,
    profiler_command: Option<String>,
    platform: &'a Platform,
    settings: Vec<(&'a String, &'a String)>,
    fingerprint: &'a str,
    sources: &'a [String],
    /// Why the report covers only part of the run (`run.partial`).
    partial: Option<&'a str>,
    cross_rank: Option<&'a CrossRank>,
    scope_trees: bool,
    /// Scopes shown side by side (`report::model::SIDE_BY_SIDE`).
    side_by_side: usize,
    flagged_ranks: &'a [FlaggedRank],
    /// Tables of scopes held as rows: their spread, slowest and findings (never the rows).
    scope_tables: Vec<TableView>,
    time_metric: Option<&'a str>,
    time_measured: Option<&'a str>,
    selection: String,
    /// What one result is called (`kernel`, `instruction`).
    item: ItemNoun,
    notes: &'a [String],
    metric_heads: Vec<MetricHead<'a>>,
    scopes: Vec<ScopeView<'a>>,
    single_scope: bool,
    /// A sampled run: region rows show their coverage, estimated deep values are marked ≈.
    sampled: bool,
    /// A sampled run's deep pass: each rank's coverage and each worker, where there are any.
    deep_pass: Option<deep_pass::DeepPassView>,
    /// The chart files are written too (`report.outputs` has `svg`): captions link them.
    link_charts: bool,
}

#[derive(Serialize)]
struct ScopeView<'a> {
    anchor: String,
    idle: Option<idle::IdleView>,
    title: String,
    summary: String,
    notes: &'a [String],
    charts: Vec<ChartView>,
    rows: Vec<Row<'a>>,
    hidden: usize,
    /// Some results count in more than one top-level region: the flat (start/end) ranges overlap
    /// the others, and the shares do not add up to 100 %.
    overlapping: bool,
    details: Vec<Detail<'a>>,
    kernels: Vec<KernelRow>,
    hidden_kernels: usize,
    /// Findings about the scope as a whole, as report.md lists them.
    insights: Vec<InsightView<'a>>,
    /// The Totals table report.md shows: without regions, or when the totals are the profiler's
    /// own summary.
    totals: Vec<TotalRow<'a>>,
    /// Where the time goes and what would save the most; `None` without a time metric.
    glance: Option<super::glance::Glance>,
}

#[derive(Serialize)]
struct ChartView {
    title: String,
    file: String,
    /// The chart's `<svg>`, escaped when drawn: the template marks it safe.
    svg: String,
}

#[derive(Serialize)]
struct Row<'a> {
    anchor: Option<String>,
    name: String,
    path: &'a str,
    indent: String,
    time: String,
    share: String,
    /// The share as a CSS width, `0.0`..`100.0`.
    bar: String,
    self_time: String,
    kernels: String,
    /// In a sampled run: measured / estimated / unmatched shares of the region's time.
    coverage: Option<String>,
    metrics: Vec<String>,
    flat: bool,
}

/// A metric column's head: the profiler's label, its raw name as the tooltip.
#[derive(Serialize)]
struct MetricHead<'a> {
    label: &'a str,
    name: &'a str,
}

#[derive(Serialize)]
struct KernelRow {
    function: String,
    /// The row's full names (up to five), one per line, for the tooltip.
    name: String,
    count: String,
    time: String,
    share: String,
}

impl<'a> Page<'a> {
    fn new(report: &'a Report, options: &RenderOptions) -> Page<'a> {
        let time = report.time_metric.as_deref();
        let keys: Vec<(&str, &str)> = report
            .key_metrics()
            .map(|m| (m.name.as_str(), m.unit.as_str()))
            .collect();
        let charts = svg::charts(report, options.max_regions);
        let scopes = svg::chart_scopes(report)
            .into_iter()
            .map(|(index, anchor, scope)| {
                let mine: Vec<&Chart> = charts.iter().filter(|c| c.scope == index).collect();
                scope_view(
                    report,
                    scope,
                    anchor,
                    index.is_none(),
                    &mine,
                    &keys,
                    options,
                )
            })
            .collect();
        let run = &report.run;
        let ks = &report.kernel_selection;
        Page {
            generator: &report.generator,
            schema_version: report.schema_version,
            command: (!run.command.is_empty()).then(|| shell_words::join(&run.command)),
            profiler: format::profiler(&run.profiler.name, run.profiler.version.as_deref()),
            profiler_command: (!run.profiler_command.is_empty())
                .then(|| shell_words::join(&run.profiler_command)),
            platform: &run.platform,
            settings: run.profiler.settings.iter().collect(),
            fingerprint: &run.config_fingerprint,
            partial: run.partial.as_deref(),
            cross_rank: report.cross_rank.as_ref(),
            scope_trees: report.scope_trees,
            side_by_side: crate::report::model::SIDE_BY_SIDE,
            flagged_ranks: &run.flagged_ranks,
            scope_tables: report
                .scope_tables
                .iter()
                .map(|t| table(&t.summary))
                .collect(),
            sources: &run.sources,
            time_metric: time,
            time_measured: report.time_measured.as_deref(),
            selection: selection::text(ks, report.item_noun.many),
            item: report.item_noun,
            notes: &report.notes,
            metric_heads: report
                .key_metrics()
                .map(|m| MetricHead {
                    label: m.label.as_deref().unwrap_or(&m.name),
                    name: &m.name,
                })
                .collect(),
            scopes,
            single_scope: report.scopes.len() == 1,
            sampled: report.sampling.is_some(),
            deep_pass: report.sampling.as_ref().and_then(deep_pass::view),
            link_charts: options.charts,
        }
    }
}

fn scope_view<'a>(
    report: &'a Report,
    scope: &'a Scope,
    anchor: String,
    aggregate: bool,
    charts: &[&Chart],
    keys: &[(&str, &str)],
    options: &RenderOptions,
) -> ScopeView<'a> {
    let time = report.time_metric.as_deref();
    let unit = unit_of(report);
    let total = time.map(|t| time_of(&scope.total.metrics, t));
    let outside = time.map(|t| time_of(&scope.outside_regions.metrics, t));
    let summary = format!(
        "{} selected {} result(s), {} in total; {} result(s) outside every region ({}, {}).",
        format::count(scope.total.kernel_count as f64),
        report.item_noun.one,
        format::value(total, unit),
        format::count(scope.outside_regions.kernel_count as f64),
        format::value(outside, unit),
        format::share(ratio(outside, total))
    );
    let shown = shown_regions(&scope.regions, time, options.max_regions);
    let mut rows = Vec::with_capacity(shown.len());
    let mut details = Vec::new();
    for &i in &shown {
        let region = &scope.regions[i];
        let detail = detail(region, format!("{anchor}-r{}", i + 1), time, unit);
        rows.push(row(
            region,
            detail.as_ref().map(|d| d.anchor.clone()),
            time,
            unit,
            keys,
            report.sampling.as_ref().map_or(&[], |s| &s.deep_metrics),
        ));
        details.extend(detail);
    }
    let (kernels, hidden_kernels) =
        kernel_rows(&scope.total.kernels, time, unit, total, options.max_kernels);
    let anchors = rows
        .iter()
        .filter_map(|r| Some((r.path, r.anchor.clone()?)))
        .collect();
    ScopeView {
        glance: super::glance::glance(&scope.summary, scope.idle.as_ref(), &anchors, unit),
        anchor,
        title: if aggregate {
            format!("Aggregate across {}", report.item_noun.across)
        } else {
            scope.label.clone()
        },
        summary,
        notes: &scope.notes,
        idle: scope.idle.as_ref().map(idle::view),
        charts: charts
            .iter()
            .map(|c| ChartView {
                title: c.title.clone(),
                file: c.file.clone(),
                svg: c.svg.clone(),
            })
            .collect(),
        hidden: scope.regions.len() - shown.len(),
        insights: scope
            .insights
            .iter()
            .map(|a| InsightView {
                evidence: metric_evidence(report, a),
                ..insight(a, total)
            })
            .collect(),
        totals: totals(report, scope),
        overlapping: overlapping(scope),
        rows,
        details,
        hidden_kernels,
        kernels,
    }
}

/// A scope finding's evidence: the values its rule compared, each with its report unit.
fn metric_evidence(report: &Report, a: &Insight) -> String {
    a.evidence
        .metrics
        .iter()
        .map(|(name, value)| {
            let unit = report
                .metrics
                .iter()
                .find(|m| &m.name == name)
                .map_or("", |m| m.unit.as_str());
            // Rounded and printed as report.md's template prints it (`60.78`, `37748736.0`).
            let rounded = (value * 1e4).round() / 1e4;
            format!("{name} = {rounded:?} {unit}")
                .trim_end()
                .to_string()
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Whether some results count in more than one top-level region (flat ranges across the others).
fn overlapping(scope: &Scope) -> bool {
    let has_flat = scope.regions.iter().any(|r| r.kind == RegionKind::Mark);
    let top: u64 = scope
        .regions
        .iter()
        .filter(|r| r.depth == 0)
        .map(|r| r.kernel_count)
        .sum();
    has_flat && top + scope.outside_regions.kernel_count > scope.total.kernel_count
}

fn unit_of(report: &Report) -> &str {
    let time = report.time_metric.as_deref();
    report
        .metrics
        .iter()
        .find(|m| Some(m.name.as_str()) == time)
        .map_or("ns", |m| m.unit.as_str())
}

fn ratio(part: Option<f64>, whole: Option<f64>) -> Option<f64> {
    match (part, whole) {
        (Some(p), Some(w)) if w > 0.0 => Some(p / w),
        _ => None,
    }
}

fn metric(map: &MetricMap, name: Option<&str>, unit: &str) -> String {
    let v = name.and_then(|n| map.get(n));
    match v.and_then(|v| v.values.as_ref()) {
        Some(values) if !values.is_empty() => values
            .iter()
            .map(|v| format::attribute(v))
            .collect::<Vec<_>>()
            .join(", "),
        _ => {
            let value = v.and_then(|v| v.value);
            // An estimated deep value's 95% interval, as its half width: from the value to the high
            // end, which a low end held at 0 leaves as it was.
            match (value, v.and_then(|v| v.interval95)) {
                (Some(x), Some([_, hi])) if x.is_finite() && hi > x && (hi - x).is_finite() => {
                    format::value_with_half(x, hi - x, unit)
                }
                _ => format::value(value, unit),
            }
        }
    }
}

fn row<'a>(
    region: &'a Region,
    anchor: Option<String>,
    time: Option<&str>,
    unit: &str,
    keys: &[(&str, &str)],
    deep_metrics: &[String],
) -> Row<'a> {
    let share = region.time_share.filter(|s| s.is_finite());
    let estimated = region.coverage.is_some_and(|c| c.estimated);
    // A deep value that stands (in part) for launches the deep pass did not measure says so.
    let marked =
        |name: &str, text: String| match estimated && deep_metrics.iter().any(|d| d == name) {
            true => format!("≈ {text}"),
            false => text,
        };
    Row {
        anchor,
        name: format::shorten(&format::plain_name(&region.name), 80),
        path: &region.path,
        indent: format!("{:.1}", 0.4 + 1.2 * region.depth.min(12) as f64),
        time: metric(&region.inclusive, time, unit),
        share: format::share(share),
        bar: format!("{:.1}", share.unwrap_or(0.0).clamp(0.0, 1.0) * 100.0),
        self_time: metric(&region.exclusive, time, unit),
        kernels: format!(
            "{} ({} self)",
            format::count(region.kernel_count as f64),
            format::count(region.self_kernel_count as f64)
        ),
        coverage: region.coverage.map(|c| {
            let not_measured = (c.not_measured_time_share > 0.0).then(|| {
                format!(
                    " / {} not measured",
                    format::share(Some(c.not_measured_time_share))
                )
            });
            format!(
                "{} / {} / {}{}",
                format::share(Some(c.measured_time_share)),
                format::share(Some(c.estimated_time_share)),
                format::share(Some(c.unmatched_time_share)),
                not_measured.unwrap_or_default()
            )
        }),
        metrics: keys
            .iter()
            .map(|(name, unit)| marked(name, metric(&region.inclusive, Some(name), unit)))
            .collect(),
        flat: region.kind == RegionKind::Mark,
    }
}

/// The scope's kernels grouped by function, as report.md and the summary group them: one row per
/// function with its variant count, the full names in the tooltip; and how many functions are left
/// out.
fn kernel_rows(
    kernels: &[Kernel],
    time: Option<&str>,
    unit: &str,
    total: Option<f64>,
    max: usize,
) -> (Vec<KernelRow>, usize) {
    let list = super::markdown::KernelList::new(kernels, time, total, max);
    let rows = list
        .shown
        .into_iter()
        .map(|row| {
            let function = format::shorten(row.function, 100);
            KernelRow {
                function: if row.variants > 1 {
                    format!(
                        "{function} ({} variants)",
                        format::count(row.variants as f64)
                    )
                } else {
                    function
                },
                name: row.names.join("\n"),
                count: format::count(row.count as f64),
                time: format::value(row.time.and_then(|t| t.value), unit),
                share: format::share(row.share),
            }
        })
        .collect();
    (rows, list.hidden)
}
