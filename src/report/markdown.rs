//! report.md rendering: views of the report model holding only what report.md shows (the regions
//! and kernels that fit the truncation limits, with anchors and shares), rendered with minijinja
//! under strict undefined.
//!
//! Templates come only from the built-in set compiled in from templates/ or from the one path in
//! `report.template`; a user template may include or import the built-in partials by name. Number
//! formatting and escaping are filters (see [`super::format`]) so a template never formats by hand.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;

use minijinja::value::Value;
use minijinja::{Environment, UndefinedBehavior};
use serde::Serialize;

use super::format;
use super::model::{
    Advice, Kernel, KernelSelectionInfo, MetricInfo, MetricMap, MetricValue, Region, Report,
    RunInfo, Scope, Totals,
};
use super::RenderError;
use crate::region::RegionKind;

/// The built-in templates, by the name templates include them with.
const BUILTIN: &[(&str, &str)] = &[
    ("report.md.j2", include_str!("../../templates/report.md.j2")),
    ("scope.md.j2", include_str!("../../templates/scope.md.j2")),
    ("region.md.j2", include_str!("../../templates/region.md.j2")),
    ("macros.md.j2", include_str!("../../templates/macros.md.j2")),
];
const MAIN: &str = "report.md.j2";
/// One scope's section on its own, as report.md.j2 includes it.
const SECTION: &str = "scope-section.md.j2";
const SECTION_SOURCE: &str = r#"{% import "macros.md.j2" as m %}{% include "scope.md.j2" %}"#;

/// Metrics besides time shown as columns of a scope's region summary table.
const SUMMARY_METRICS: usize = 4;

#[derive(Debug, Clone)]
pub struct MarkdownOptions {
    /// A user template (`report.template`); `None` uses the built-in one.
    pub template: Option<PathBuf>,
    /// Regions in each scope's summary table (the rest are only in report.json).
    pub max_regions: usize,
    /// Kernels listed per region or scope.
    pub max_kernels: usize,
    /// Threads rendering the built-in template's scope sections (0: one per core, 1: none apart).
    pub threads: usize,
}

impl Default for MarkdownOptions {
    fn default() -> Self {
        MarkdownOptions {
            template: None,
            max_regions: 200,
            max_kernels: 10,
            threads: 1,
        }
    }
}

pub fn render(report: &Report, options: &MarkdownOptions) -> Result<String, RenderError> {
    let mut env = environment();
    let main = match &options.template {
        None => MAIN.to_string(),
        Some(path) => {
            let source =
                std::fs::read_to_string(path).map_err(|source| RenderError::TemplateRead {
                    path: path.clone(),
                    source,
                })?;
            let name = path.display().to_string();
            env.add_template_owned(name.clone(), source)
                .map_err(template_error)?;
            name
        }
    };
    let mut context = Context::new(report, options);
    if options.template.is_none() {
        render_scopes_apart(&env, &mut context, options.threads)?;
    }
    let template = env.get_template(&main).map_err(template_error)?;
    let mut text = template.render(&context).map_err(template_error)?;
    if options.template.is_none() {
        text = collapse_blank_lines(&text);
    }
    if !text.ends_with('\n') {
        text.push('\n');
    }
    Ok(text)
}

/// The built-in template's scope sections, rendered on up to `threads` threads into
/// `context.scope_texts` and `context.aggregate_text`, which report.md.j2 then puts where it would have
/// included them: the same text as one pass, in a fraction of the time for many scopes. Nothing is
/// done on one thread or for a single scope.
fn render_scopes_apart(
    env: &Environment<'static>,
    context: &mut Context<'_>,
    threads: usize,
) -> Result<(), RenderError> {
    let scopes = context.scopes.len().unwrap_or(0);
    if crate::parallel::thread_count(threads) <= 1 || scopes < 2 {
        return Ok(());
    }
    let section = env.get_template(SECTION).map_err(template_error)?;
    let base = Value::from_serialize(&*context);
    let mut work: Vec<Value> = (0..scopes)
        .map(|i| context.scopes.get_item(&Value::from(i)).unwrap_or_default())
        .collect();
    if !context.aggregate.is_none() {
        work.push(context.aggregate.clone());
    }
    let rendered = crate::parallel::map(work, threads, |scope| {
        section.render(minijinja::context! { scope => scope, ..base.clone() })
    });
    let mut texts = Vec::with_capacity(rendered.len());
    for text in rendered {
        texts.push(text.map_err(template_error)?);
    }
    if texts.len() > scopes {
        context.aggregate_text = texts.pop();
    }
    context.scope_texts = texts;
    Ok(())
}

/// Keeps at most one blank line in a row: Markdown ignores the rest, and the built-in templates are
/// easier to read when their blocks do not have to manage every newline.
fn collapse_blank_lines(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut blank = 0;
    for line in text.lines() {
        blank = if line.trim().is_empty() { blank + 1 } else { 0 };
        if blank <= 1 {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

fn environment() -> Environment<'static> {
    let mut env = Environment::new();
    env.set_undefined_behavior(UndefinedBehavior::Strict);
    env.set_trim_blocks(true);
    env.set_lstrip_blocks(true);
    env.set_keep_trailing_newline(true);
    for (name, source) in BUILTIN.iter().chain([&(SECTION, SECTION_SOURCE)]) {
        env.add_template(name, source)
            .expect("built-in templates compile (checked by tests)");
    }
    env.add_filter("fmt_value", fmt_value);
    env.add_filter("fmt_count", |v: f64| format::count(v));
    env.add_filter("pct", |v: Option<f64>| format::escape_md(&format::share(v)));
    env.add_filter("md", |text: String| format::escape_md(&text));
    env.add_filter("code", |text: String| format::code_span(&text));
    env.add_filter("shorten", |text: String, max: usize| {
        format::shorten(&text, max)
    });
    env.add_filter("shell_join", |argv: Vec<String>| shell_words::join(argv));
    env.add_filter("tree_prefix", tree_prefix);
    env
}

/// `fmt_value(metric_value)`: a `{value, unit, values}` map as Markdown-safe text; attributes list
/// their distinct values.
fn fmt_value(metric: Value) -> Result<String, minijinja::Error> {
    plain_value(metric).map(|text| format::escape_md(&text))
}

fn plain_value(metric: Value) -> Result<String, minijinja::Error> {
    if metric.is_none() {
        return Ok(format::MISSING.to_string());
    }
    let values = metric.get_attr("values")?;
    if !values.is_undefined() && !values.is_none() {
        let list: Vec<String> = values.try_iter()?.map(|v| v.to_string()).collect();
        return Ok(if list.is_empty() {
            format::MISSING.to_string()
        } else {
            list.join(", ")
        });
    }
    let value = metric.get_attr("value")?;
    let number = if value.is_none() || value.is_undefined() {
        None
    } else {
        Some(f64::try_from(value)?)
    };
    let unit = metric.get_attr("unit")?;
    Ok(format::value(number, unit.as_str().unwrap_or("")))
}

/// Indentation for a region at `depth` in a summary table: non-breaking spaces and a tree corner.
fn tree_prefix(depth: usize) -> String {
    if depth == 0 {
        return String::new();
    }
    format!("{}└─&nbsp;", "&nbsp;&nbsp;&nbsp;".repeat(depth - 1))
}

/// A minijinja error as [`RenderError::Template`], naming the template and line where it happened
/// (the innermost one when the error came through an include or a macro).
fn template_error(err: minijinja::Error) -> RenderError {
    let mut innermost = &err;
    let mut source: Option<&(dyn std::error::Error + 'static)> = std::error::Error::source(&err);
    while let Some(s) = source {
        if let Some(inner) = s.downcast_ref::<minijinja::Error>() {
            if inner.name().is_some() {
                innermost = inner;
            }
        }
        source = s.source();
    }
    let name = innermost.name().unwrap_or(MAIN).to_string();
    let what = match innermost.detail() {
        Some(detail) => format!("{}: {detail}", innermost.kind()),
        None => innermost.kind().to_string(),
    };
    let mut message = match innermost.line() {
        Some(line) => format!("line {line}: {what}"),
        None => what,
    };
    if !std::ptr::eq(innermost, &err) {
        if let (Some(outer), Some(line)) = (err.name(), err.line()) {
            message.push_str(&format!(" (reached from {outer} line {line})"));
        }
    }
    RenderError::Template { name, message }
}

/// What templates see: only what report.md can show. The model is never converted whole: a report
/// with 100,000 regions would become gigabytes of template values, while report.md shows at most
/// `max_regions` regions per scope and `max_kernels` kernels per list. The truncation is decided here,
/// and the views carry the shown rows plus counts of what was left out.
#[derive(Serialize)]
struct Context<'a> {
    report: ReportView<'a>,
    /// Up to four metrics after the time metric, in report order: the summary table's columns.
    summary_metrics: Vec<&'a MetricInfo>,
    /// The scope views, shared with `report.scopes` (converted once).
    scopes: Value,
    /// `none` when `report.aggregate` is null.
    aggregate: Value,
    max_regions: usize,
    max_kernels: usize,
    /// Each scope's section already rendered (built-in template on several threads), else empty.
    scope_texts: Vec<String>,
    /// The aggregate's section already rendered, if it was.
    aggregate_text: Option<String>,
}

/// The model as report.json has it, except that `scopes` and `aggregate` are the scope views.
#[derive(Serialize)]
struct ReportView<'a> {
    schema_version: u32,
    generator: &'a str,
    run: &'a RunInfo,
    metrics: &'a [MetricInfo],
    time_metric: Option<&'a str>,
    kernel_selection: &'a KernelSelectionInfo,
    scopes: Value,
    aggregate: Value,
    notes: &'a [String],
}

#[derive(Serialize)]
struct ScopeView<'a> {
    label: &'a str,
    rank: Option<u32>,
    process_id: Option<u64>,
    process_name: Option<&'a str>,
    host: Option<&'a str>,
    device: Option<&'a str>,
    total: TotalsView<'a>,
    outside_regions: TotalsView<'a>,
    notes: &'a [String],
    /// Regions in the scope, shown or not.
    region_count: usize,
    /// Unique HTML id of the scope's section.
    anchor: String,
    is_aggregate: bool,
    /// The scope's time metric value, `none` without a time metric.
    total_time: Option<&'a MetricValue>,
    /// Time of the results outside every region.
    outside_time: Option<&'a MetricValue>,
    /// The regions that fit `max_regions`, in tree order, with their ancestors.
    shown_regions: Vec<RegionView<'a>>,
    hidden_regions: usize,
    /// Time outside every region over the scope's time, 0..1.
    outside_share: Option<f64>,
    /// The scope's kernels, shares relative to the scope's time.
    top_kernels: KernelList<'a>,
    outside_kernels: KernelList<'a>,
}

/// A scope's totals without their kernel list (see the scope view's kernel lists).
#[derive(Serialize)]
struct TotalsView<'a> {
    kernel_count: u64,
    metrics: &'a MetricMap,
}

/// A region's fields except its full kernel list, which `top_kernels` replaces.
#[derive(Serialize)]
struct RegionView<'a> {
    path: &'a str,
    segments: &'a [String],
    name: &'a str,
    kind: RegionKind,
    parent: Option<&'a str>,
    depth: usize,
    kernel_count: u64,
    self_kernel_count: u64,
    time_share: Option<f64>,
    inclusive: &'a MetricMap,
    exclusive: &'a MetricMap,
    advice: &'a [Advice],
    notes: &'a [String],
    anchor: String,
    /// The region's inclusive time metric value.
    time: Option<&'a MetricValue>,
    top_kernels: KernelList<'a>,
}

#[derive(Serialize)]
struct KernelList<'a> {
    shown: Vec<KernelRow<'a>>,
    hidden: usize,
    /// True when a shown kernel's full name differs from its function name.
    has_long_names: bool,
}

#[derive(Serialize)]
struct KernelRow<'a> {
    #[serde(flatten)]
    kernel: &'a Kernel,
    /// The kernel's time metric value, `none` without a time metric.
    time: Option<&'a MetricValue>,
    /// Its time over the enclosing region's (or scope's) time, 0..1.
    share: Option<f64>,
}

impl<'a> Context<'a> {
    fn new(report: &'a Report, options: &MarkdownOptions) -> Context<'a> {
        let time = report.time_metric.as_deref();
        let summary_metrics = report
            .metrics
            .iter()
            .filter(|m| Some(m.name.as_str()) != time)
            .take(SUMMARY_METRICS)
            .collect();
        let scopes: Vec<ScopeView> = report
            .scopes
            .iter()
            .enumerate()
            .map(|(i, s)| ScopeView::new(s, format!("scope-{}", i + 1), false, time, options))
            .collect();
        let aggregate = report
            .aggregate
            .as_ref()
            .map(|s| ScopeView::new(s, "aggregate".to_string(), true, time, options));
        // Converted here so that `scopes` and `report.scopes` share one value instead of two copies.
        let scopes = Value::from_serialize(&scopes);
        let aggregate = Value::from_serialize(&aggregate);
        Context {
            report: ReportView {
                schema_version: report.schema_version,
                generator: &report.generator,
                run: &report.run,
                metrics: &report.metrics,
                time_metric: time,
                kernel_selection: &report.kernel_selection,
                scopes: scopes.clone(),
                aggregate: aggregate.clone(),
                notes: &report.notes,
            },
            summary_metrics,
            scopes,
            aggregate,
            max_regions: options.max_regions,
            max_kernels: options.max_kernels,
            scope_texts: Vec::new(),
            aggregate_text: None,
        }
    }
}

impl<'a> ScopeView<'a> {
    fn new(
        scope: &'a Scope,
        anchor: String,
        is_aggregate: bool,
        time: Option<&str>,
        options: &MarkdownOptions,
    ) -> ScopeView<'a> {
        let shown = shown_regions(&scope.regions, time, options.max_regions);
        let mut used = HashSet::new();
        let shown_regions: Vec<RegionView> = shown
            .into_iter()
            .map(|i| RegionView::new(&scope.regions[i], i, &anchor, &mut used, time, options))
            .collect();
        let scope_time = number(&scope.total.metrics, time);
        let outside_time = number(&scope.outside_regions.metrics, time);
        let totals = |t: &'a Totals| TotalsView {
            kernel_count: t.kernel_count,
            metrics: &t.metrics,
        };
        ScopeView {
            label: &scope.label,
            rank: scope.rank,
            process_id: scope.process_id,
            process_name: scope.process_name.as_deref(),
            host: scope.host.as_deref(),
            device: scope.device.as_deref(),
            total: totals(&scope.total),
            outside_regions: totals(&scope.outside_regions),
            notes: &scope.notes,
            region_count: scope.regions.len(),
            total_time: lookup(&scope.total.metrics, time),
            outside_time: lookup(&scope.outside_regions.metrics, time),
            hidden_regions: scope.regions.len() - shown_regions.len(),
            shown_regions,
            is_aggregate,
            outside_share: ratio(outside_time, scope_time),
            top_kernels: KernelList::new(
                &scope.total.kernels,
                time,
                scope_time,
                options.max_kernels,
            ),
            outside_kernels: KernelList::new(
                &scope.outside_regions.kernels,
                time,
                outside_time,
                options.max_kernels,
            ),
            anchor,
        }
    }
}

impl<'a> RegionView<'a> {
    fn new(
        region: &'a Region,
        index: usize,
        scope_anchor: &str,
        used: &mut HashSet<String>,
        time: Option<&str>,
        options: &MarkdownOptions,
    ) -> RegionView<'a> {
        RegionView {
            path: &region.path,
            segments: &region.segments,
            name: &region.name,
            kind: region.kind,
            parent: region.parent.as_deref(),
            depth: region.depth,
            kernel_count: region.kernel_count,
            self_kernel_count: region.self_kernel_count,
            time_share: region.time_share,
            inclusive: &region.inclusive,
            exclusive: &region.exclusive,
            advice: &region.advice,
            notes: &region.notes,
            anchor: unique_anchor(scope_anchor, &region.path, index, used),
            time: lookup(&region.inclusive, time),
            top_kernels: KernelList::new(
                &region.kernels,
                time,
                number(&region.inclusive, time),
                options.max_kernels,
            ),
        }
    }
}

impl<'a> KernelList<'a> {
    /// The `max` longest kernels. Only the shown ones become rows: a scope may have thousands.
    fn new(kernels: &'a [Kernel], time: Option<&str>, base_time: Option<f64>, max: usize) -> Self {
        // The model already lists longest first; ties keep model order, whatever the producer did.
        let mut order: Vec<(f64, usize)> = kernels
            .iter()
            .enumerate()
            .map(|(i, k)| (number(&k.metrics, time).unwrap_or(f64::MIN), i))
            .collect();
        let longest_first =
            |a: &(f64, usize), b: &(f64, usize)| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1));
        if order.len() > max {
            order.select_nth_unstable_by(max, longest_first);
            order.truncate(max);
        }
        order.sort_unstable_by(longest_first);
        let shown: Vec<KernelRow> = order
            .into_iter()
            .map(|(_, i)| {
                let kernel = &kernels[i];
                KernelRow {
                    kernel,
                    time: lookup(&kernel.metrics, time),
                    share: ratio(number(&kernel.metrics, time), base_time),
                }
            })
            .collect();
        KernelList {
            has_long_names: shown.iter().any(|r| r.kernel.name != r.kernel.function),
            hidden: kernels.len() - shown.len(),
            shown,
        }
    }
}

fn lookup<'a>(map: &'a MetricMap, name: Option<&str>) -> Option<&'a MetricValue> {
    map.get(name?)
}

fn number(map: &MetricMap, name: Option<&str>) -> Option<f64> {
    lookup(map, name)?.value
}

fn ratio(part: Option<f64>, whole: Option<f64>) -> Option<f64> {
    match (part, whole) {
        (Some(p), Some(w)) if w > 0.0 => Some(p / w),
        _ => None,
    }
}

/// Indices of the regions for the summary table: the longest `max` by inclusive time (kernel count
/// without a time metric), each taken with its ancestors while they fit, returned in tree order.
fn shown_regions(regions: &[Region], time: Option<&str>, max: usize) -> Vec<usize> {
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
        .map(|(i, r)| (number(&r.inclusive, time).unwrap_or(0.0), r.kernel_count, i))
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

/// `scope-1-train-step-forward`; a clash or a name without ASCII letters gets the region's index.
fn unique_anchor(prefix: &str, path: &str, index: usize, used: &mut HashSet<String>) -> String {
    let slug = format::slug(path);
    let mut anchor = if slug.is_empty() {
        format!("{prefix}-region-{}", index + 1)
    } else {
        format!("{prefix}-{slug}")
    };
    while !used.insert(anchor.clone()) {
        anchor = format!("{anchor}-{}", index + 1);
    }
    anchor
}
