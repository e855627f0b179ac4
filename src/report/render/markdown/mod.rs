//! report.md rendering: the views of [`views`] (only the regions and kernels that fit the truncation
//! limits, with anchors and shares) rendered with minijinja under strict undefined, the built-in
//! template's scope sections on several threads.
//!
//! Templates come only from the built-in set compiled in from templates/ or from the one path in
//! `report.template`; a user template may include or import the built-in partials by name. Number
//! formatting and escaping are filters (see [`crate::report::format`]) so a template never formats by hand.
//!
//! Floor: report (see `crate::report`): imports config, region and the ground floor only.

use std::path::PathBuf;

use minijinja::value::Value;
use minijinja::{Environment, UndefinedBehavior};

use super::RenderOptions;
use crate::report::format;
use crate::report::model::Report;
use crate::report::RenderError;

mod kernels;
mod matrix;
mod views;

use crate::parallel;
use crate::region;
pub(in crate::report::render) use kernels::KernelList;
use views::TemplateContext;

/// The built-in templates, by the name templates include them with.
const BUILTIN: &[(&str, &str)] = &[
    (
        "report.md.j2",
        include_str!("../../../../templates/report.md.j2"),
    ),
    (
        "scope.md.j2",
        include_str!("../../../../templates/scope.md.j2"),
    ),
    (
        "region.md.j2",
        include_str!("../../../../templates/region.md.j2"),
    ),
    (
        "macros.md.j2",
        include_str!("../../../../templates/macros.md.j2"),
    ),
];
const MAIN: &str = "report.md.j2";
/// One scope's section on its own, as report.md.j2 includes it.
const SECTION: &str = "scope-section.md.j2";
const SECTION_SOURCE: &str = r#"{% import "macros.md.j2" as m %}{% include "scope.md.j2" %}"#;
/// A scope's own page (`scopes/<label>.md`), around its section.
const SCOPE_PAGE: &str = "scope-page.md.j2";
const SCOPE_PAGE_SOURCE: &str = "# profile-run report: {{ scope.label | shorten(200) | md }}\n\n\
    Part of [report.md](../report.md) (the summary, the region × scope table, the aggregate); \
    report.json has every number.\n\n{{ text }}";

/// Loads and compiles a user template, so a missing file or a syntax error is found before profiling.
pub fn check_template(path: &std::path::Path) -> Result<(), RenderError> {
    let source = std::fs::read_to_string(path).map_err(|source| RenderError::TemplateRead {
        path: path.to_path_buf(),
        source,
    })?;
    let mut env = environment();
    env.add_template_owned(path.display().to_string(), source)
        .map_err(template_error)
}

/// report.md, and past [`crate::report::model::SIDE_BY_SIDE`] scopes one page per scope.
#[derive(Debug, Clone, PartialEq)]
pub struct Pages {
    /// report.md.
    pub main: String,
    /// `(path relative to report.md, text)`: `scopes/<label>.md`, one per scope, when split.
    pub scopes: Vec<(String, String)>,
}

/// report.md, and its scope pages when the report has more than [`crate::report::model::SIDE_BY_SIDE`] scopes.
pub struct Markdown {
    pub options: RenderOptions,
}

impl super::Output for Markdown {
    fn file_name(&self) -> &'static str {
        "report.md"
    }

    fn render(
        &self,
        report: &Report,
        out: &mut dyn std::io::Write,
    ) -> Result<Vec<(PathBuf, Vec<u8>)>, RenderError> {
        let pages = render_pages(report, &self.options)?;
        out.write_all(pages.main.as_bytes())
            .map_err(|source| RenderError::Write {
                path: "report.md".into(),
                source,
            })?;
        Ok(pages
            .scopes
            .into_iter()
            .map(|(rel, text)| (PathBuf::from(rel), text.into_bytes()))
            .collect())
    }
}

/// report.md only; see [`render_pages`] for the scope pages of a report with many scopes.
pub fn render(report: &Report, options: &RenderOptions) -> Result<String, RenderError> {
    render_pages(report, options).map(|pages| pages.main)
}

pub fn render_pages(report: &Report, options: &RenderOptions) -> Result<Pages, RenderError> {
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
    let mut context = TemplateContext::new(report, options);
    if options.template.is_none() || context.split {
        render_scopes_apart(&env, &mut context, options.threads)?;
    }
    let template = env.get_template(&main).map_err(template_error)?;
    let text = template.render(&context).map_err(template_error)?;
    let scopes = if context.split {
        scope_pages(&env, &mut context)?
    } else {
        Vec::new()
    };
    Ok(Pages {
        main: finish(text, options.template.is_none()),
        scopes,
    })
}

/// One page per scope: a heading, a link back to report.md, and the scope's section as report.md
/// would have held it. Each section's text is let go once its page is made (report.md is rendered
/// already), so a report of 200,000 scopes does not hold every section twice.
fn scope_pages(
    env: &Environment<'static>,
    context: &mut TemplateContext<'_>,
) -> Result<Vec<(String, String)>, RenderError> {
    let page = env.get_template(SCOPE_PAGE).map_err(template_error)?;
    let texts = std::mem::take(&mut context.scope_texts);
    let mut pages = Vec::with_capacity(texts.len());
    for (i, text) in texts.into_iter().enumerate() {
        let scope = context.scopes.get_item(&Value::from(i)).unwrap_or_default();
        let file = scope.get_attr("file").map_err(template_error)?;
        let rendered = page
            .render(minijinja::context! { scope => scope, text => text })
            .map_err(template_error)?;
        pages.push((file.to_string(), finish(rendered, true)));
    }
    Ok(pages)
}

fn finish(mut text: String, builtin: bool) -> String {
    if builtin {
        text = collapse_blank_lines(&text);
    }
    if !text.ends_with('\n') {
        text.push('\n');
    }
    text
}

/// The built-in template's scope sections, rendered on up to `threads` threads into
/// `context.scope_texts` and `context.aggregate_text`, which report.md.j2 then puts where it would have
/// included them: the same text as one pass, in a fraction of the time for many scopes. Nothing is
/// done on one thread or for a single scope.
fn render_scopes_apart(
    env: &Environment<'static>,
    context: &mut TemplateContext<'_>,
    threads: usize,
) -> Result<(), RenderError> {
    let scopes = context.scopes.len().unwrap_or(0);
    // Split pages need every section apart, on however many threads.
    if !context.split && (parallel::thread_count(threads) <= 1 || scopes < 2) {
        return Ok(());
    }
    let section = env.get_template(SECTION).map_err(template_error)?;
    let base = Value::from_serialize(&*context);
    // The aggregate, when there is one, goes first: it is the largest section.
    let aggregate = !context.aggregate.is_none();
    let work: Vec<Value> = aggregate
        .then(|| context.aggregate.clone())
        .into_iter()
        .chain((0..scopes).map(|i| context.scopes.get_item(&Value::from(i)).unwrap_or_default()))
        .collect();
    let rendered = parallel::map(work, threads, |scope| {
        section.render(minijinja::context! { scope => scope, ..base.clone() })
    });
    let mut texts = Vec::with_capacity(rendered.len());
    for text in rendered {
        texts.push(text.map_err(template_error)?);
    }
    if aggregate {
        context.aggregate_text = Some(texts.remove(0));
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
    let extra = [(SECTION, SECTION_SOURCE), (SCOPE_PAGE, SCOPE_PAGE_SOURCE)];
    for (name, source) in BUILTIN.iter().chain(&extra) {
        env.add_template(name, source)
            .expect("built-in templates compile (checked by tests)");
    }
    env.add_filter("fmt_value", fmt_value);
    env.add_filter("fmt_count", |v: f64| format::count(v));
    env.add_filter("fmt_number", |v: f64| format::number(v));
    env.add_filter("pct", |v: Option<f64>| format::escape_md(&format::share(v)));
    env.add_filter("md", |text: String| format::escape_md(&text));
    env.add_filter("profiler", |name: String, version: Option<String>| {
        format::escape_md(&format::profiler(&name, version.as_deref()))
    });
    env.add_filter("prose", |text: String| format::escape_md_prose(&text));
    env.add_filter("code", |text: String| format::code_span(&text));
    env.add_filter("shorten", |text: String, max: usize| {
        format::shorten(&text, max)
    });
    env.add_filter("shell_join", |argv: Vec<String>| shell_words::join(argv));
    env.add_filter("tree_prefix", tree_prefix);
    env.add_filter("rollup_text", |rollup: String| match rollup.as_str() {
        "sum" => "sum".to_string(),
        "mean" => "time-weighted mean".to_string(),
        "max" => "max".to_string(),
        "min" => "min".to_string(),
        "distinct" => "distinct values".to_string(),
        "derived" => "derived per region".to_string(),
        other => format::escape_md(other),
    });
    env.add_function("scaled_row", scaled_row);
    env.add_filter("function_name", |name: String| {
        region::function_name(&name).to_string()
    });
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
        let list: Vec<String> = values
            .try_iter()?
            .map(|v| format::attribute(&v.to_string()))
            .collect();
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
    let unit = unit.as_str().unwrap_or("");
    Ok(match (number, half_width(&metric)?) {
        (Some(v), Some(half)) if v.is_finite() => format::value_with_half(v, half, unit),
        _ => format::value(number, unit),
    })
}

/// Half the width of a value's 95% interval (`interval95`), when it has one wider than nothing:
/// from the value to the high end, which a low end held at 0 leaves as it was.
fn half_width(metric: &Value) -> Result<Option<f64>, minijinja::Error> {
    let interval = metric.get_attr("interval95")?;
    let value = metric.get_attr("value")?;
    if interval.is_undefined() || interval.is_none() || value.is_undefined() || value.is_none() {
        return Ok(None);
    }
    let hi = f64::try_from(interval.get_item(&Value::from(1))?)?;
    let half = hi - f64::try_from(value)?;
    Ok((half > 0.0 && half.is_finite()).then_some(half))
}

/// `scaled_row([value, …], unit)`: `{unit, cells}`, the values as numbers in one unit picked for the
/// row (see [`format::scaled_row`]); attributes list their distinct values and have no unit.
fn scaled_row(values: Vec<Value>, unit: String) -> Result<Value, minijinja::Error> {
    let distinct = values.iter().any(|v| {
        v.get_attr("values")
            .is_ok_and(|list| !list.is_undefined() && !list.is_none())
    });
    if distinct {
        let cells = values
            .into_iter()
            .map(plain_value)
            .collect::<Result<Vec<_>, _>>()?;
        return Ok(minijinja::context! { unit => unit, cells => cells });
    }
    let mut numbers = Vec::with_capacity(values.len());
    let mut halves = Vec::with_capacity(values.len());
    for v in &values {
        let value = if v.is_none() || v.is_undefined() {
            Value::from(())
        } else {
            v.get_attr("value")?
        };
        numbers.push(if value.is_none() || value.is_undefined() {
            None
        } else {
            Some(f64::try_from(value)?)
        });
        halves.push(match v.is_none() || v.is_undefined() {
            true => None,
            false => half_width(v)?,
        });
    }
    // The intervals' half widths are scaled as the values are, so that both read in the row's unit.
    let scale = format::row_scale(&numbers, &unit);
    let (unit, cells) = format::scaled_row(&numbers, &unit);
    let cells: Vec<String> = cells
        .into_iter()
        .zip(&halves)
        .map(|(cell, half)| match half {
            Some(half) => format!("{cell} ± {}", format::half_width(half * scale)),
            None => cell,
        })
        .collect();
    Ok(minijinja::context! { unit => unit, cells => cells })
}

/// Indentation for a region at `depth` in a summary table: no-break space characters (U+00A0, which
/// a table cell keeps where it would trim plain spaces) and a tree corner; no HTML entities, so the
/// plain text reads as it renders.
fn tree_prefix(depth: usize) -> String {
    if depth == 0 {
        return String::new();
    }
    format!("{}└─\u{a0}", "\u{a0}\u{a0}\u{a0}".repeat(depth - 1))
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
