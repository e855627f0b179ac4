//! What report.md's templates see: views of the report model holding only what report.md shows (the
//! shown regions, the top kernels, counts of the rest), so a huge report is never converted whole.

use std::collections::{HashMap, HashSet};

use minijinja::value::Value;
use serde::Serialize;

use super::kernels::KernelList;
use super::matrix::{self, Matrix, RowKey};
use crate::region::RegionKind;
use crate::report::format;
use crate::report::model::CollectiveTime;
use crate::report::model::CrossRank;
use crate::report::model::{past_side_by_side, SIDE_BY_SIDE};
use crate::report::model::{
    Comparison, CoverageShares, Distribution, Idle, Insight, ItemNoun, KernelSelectionInfo,
    MetricInfo, MetricMap, MetricValue, PerResultMap, Percentiles, Region, Report, RunInfo,
    Sampling, Scope, ScopeSummary, TableSummary, Totals,
};
use crate::report::render::shown::shown_regions;
use crate::report::render::svg;
use crate::report::render::svg::ChartKind;
use crate::report::render::RenderOptions;

/// What templates see: only what report.md can show. The model is never converted whole: a report
/// with 100,000 regions would become gigabytes of template values, while report.md shows at most
/// `max_regions` regions per scope and `max_kernels` kernels per list. The truncation is decided here,
/// and the views carry the shown rows plus counts of what was left out.
#[derive(Serialize)]
pub(super) struct TemplateContext<'a> {
    report: ReportView<'a>,
    /// Up to four metrics after the time metric, in report order: the summary table's columns.
    summary_metrics: Vec<&'a MetricInfo>,
    /// The scope views, shared with `report.scopes` (converted once).
    pub(super) scopes: Value,
    /// `none` when `report.aggregate` is null.
    pub(super) aggregate: Value,
    max_regions: usize,
    max_kernels: usize,
    /// Each scope's section already rendered (built-in template on several threads), else empty.
    pub(super) scope_texts: Vec<String>,
    /// The aggregate's section already rendered, if it was.
    pub(super) aggregate_text: Option<String>,
    /// Region × scope times, with two or more scopes and a time metric.
    matrix: Option<Matrix>,
    /// True with more than [`SIDE_BY_SIDE`] scopes: each scope's section goes to its own file
    /// (`scope.file`, `scopes/<label>.md` beside report.md: a 64-rank report.md of tens of megabytes
    /// helps no one), and report.md links it.
    pub(super) split: bool,
}

/// The model as report.json has it, except that `scopes` and `aggregate` are the scope views.
#[derive(Serialize)]
struct ReportView<'a> {
    schema_version: u32,
    generator: &'a str,
    run: &'a RunInfo,
    metrics: &'a [MetricInfo],
    time_metric: Option<&'a str>,
    /// How the time metric was measured, where its name alone would mislead.
    time_measured: Option<&'a str>,
    kernel_selection: &'a KernelSelectionInfo,
    scopes: Value,
    aggregate: Value,
    notes: &'a [String],
    compare: &'a [Comparison],
    sampling: Option<&'a Sampling>,
    cross_rank: Option<&'a CrossRank>,
    scope_trees: bool,
    /// Scopes shown side by side ([`SIDE_BY_SIDE`]).
    side_by_side: usize,
    /// What report.md shows of each table of scopes held as rows (never the rows themselves).
    scope_tables: Vec<&'a TableSummary>,
    /// What one result is called (`kernel`, `instruction`): `report.item.one`, `report.item.many`.
    item: ItemNoun,
}

#[derive(Serialize)]
pub(super) struct ScopeView<'a> {
    label: &'a str,
    /// `rank 3`, `pid 1606`: the scope's column heading in the region × scope table.
    short_label: String,
    /// `scopes/rank-3.md`, relative to report.md, when the section has its own file.
    pub(super) file: Option<String>,
    rank: Option<u32>,
    process_id: Option<u64>,
    process_name: Option<&'a str>,
    host: Option<&'a str>,
    device: Option<&'a str>,
    summary: &'a ScopeSummary,
    /// The section anchor of each region the summary names.
    summary_anchors: HashMap<&'a str, String>,
    total: TotalsView<'a>,
    outside_regions: TotalsView<'a>,
    notes: &'a [String],
    insights: &'a [Insight],
    /// `report.compare`, its values as cells `scaled_row` takes.
    distributions: &'a [Distribution],
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
    /// The scope's SVG charts (`{title, file}`, file relative to the page), when they are written.
    charts: Vec<ChartLink>,
    idle: Option<&'a Idle>,
    /// The summary's opening line on how busy the device was, where the profile has a timeline.
    busy: Option<String>,
}

/// A link to one of a scope's SVG charts.
#[derive(Serialize)]
struct ChartLink {
    title: &'static str,
    file: String,
}

/// A scope's totals without their kernel list (see the scope view's kernel lists).
#[derive(Serialize)]
struct TotalsView<'a> {
    kernel_count: u64,
    coverage: Option<&'a CoverageShares>,
    metrics: &'a MetricMap,
}

/// A region's fields except its full kernel list, which `top_kernels` replaces.
#[derive(Serialize)]
struct RegionView<'a> {
    path: &'a str,
    segments: &'a [String],
    name: std::borrow::Cow<'a, str>,
    kind: RegionKind,
    origin: &'a str,
    parent: Option<&'a str>,
    depth: usize,
    kernel_count: u64,
    self_kernel_count: u64,
    time_share: Option<f64>,
    coverage: Option<&'a CoverageShares>,
    inclusive: &'a MetricMap,
    exclusive: &'a MetricMap,
    per_result: &'a PerResultMap,
    instances: Option<&'a Percentiles>,
    insights: &'a [Insight],
    notes: &'a [String],
    anchor: String,
    /// The region's inclusive time metric value.
    time: Option<&'a MetricValue>,
    /// Its exclusive time: the results directly in it, none of its children's.
    self_time: Option<&'a MetricValue>,
    /// Its time over its parent region's, 0..1 (over the scope's for a top-level region).
    parent_share: Option<f64>,
    top_kernels: KernelList<'a>,
    idle: Option<&'a Idle>,
    collectives: Option<&'a CollectiveTime>,
}

impl<'a> TemplateContext<'a> {
    pub(super) fn new(report: &'a Report, options: &RenderOptions) -> TemplateContext<'a> {
        let time = report.time_metric.as_deref();
        let summary_metrics = report.key_metrics().collect();
        let labels = matrix::short_labels(report);
        let split = past_side_by_side(report.scopes.len());
        let files = matrix::file_names(&labels);
        let mut scopes: Vec<ScopeView> = report
            .scopes
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let mut view = ScopeView::new(s, format!("scope-{}", i + 1), false, time, options);
                view.short_label = labels[i].clone();
                view.file = split.then(|| files[i].clone());
                view
            })
            .collect();
        let mut aggregate = report
            .aggregate
            .as_ref()
            .map(|s| ScopeView::new(s, "aggregate".to_string(), true, time, options));
        if options.charts {
            link_charts(report, options, split, &mut scopes, aggregate.as_mut());
        }
        let matrix = (report.scopes.len() > 1)
            .then(|| {
                let (rows, hidden) = matrix_rows(report, aggregate.as_ref(), options.max_regions);
                matrix::build(report, &labels, rows, hidden)
            })
            .flatten();
        // Converted here so that `scopes` and `report.scopes` share one value instead of two copies.
        let scopes = Value::from_serialize(&scopes);
        let aggregate = Value::from_serialize(&aggregate);
        TemplateContext {
            report: ReportView {
                schema_version: report.schema_version,
                generator: &report.generator,
                run: &report.run,
                metrics: &report.metrics,
                time_metric: time,
                time_measured: report.time_measured.as_deref(),
                kernel_selection: &report.kernel_selection,
                scopes: scopes.clone(),
                aggregate: aggregate.clone(),
                notes: &report.notes,
                compare: &report.compare,
                sampling: report.sampling.as_ref(),
                cross_rank: report.cross_rank.as_ref(),
                scope_trees: report.scope_trees,
                side_by_side: SIDE_BY_SIDE,
                scope_tables: report.scope_tables.iter().map(|t| &t.summary).collect(),
                item: report.item_noun,
            },
            summary_metrics,
            scopes,
            aggregate,
            max_regions: options.max_regions,
            max_kernels: options.max_kernels,
            scope_texts: Vec::new(),
            aggregate_text: None,
            matrix,
            split,
        }
    }
}

impl<'a> ScopeView<'a> {
    fn new(
        scope: &'a Scope,
        anchor: String,
        is_aggregate: bool,
        time: Option<&str>,
        options: &RenderOptions,
    ) -> ScopeView<'a> {
        let scope_time = number(&scope.total.metrics, time);
        let shown_regions = region_views(scope, &anchor, scope_time, time, options);
        let summary_anchors = summary_anchors(&scope.summary, &shown_regions);
        let outside_time = number(&scope.outside_regions.metrics, time);
        let totals = |t: &'a Totals| TotalsView {
            kernel_count: t.kernel_count,
            coverage: t.coverage.as_ref(),
            metrics: &t.metrics,
        };
        ScopeView {
            label: &scope.label,
            short_label: String::new(),
            file: None,
            rank: scope.rank,
            process_id: scope.process_id,
            process_name: scope.process_name.as_deref(),
            host: scope.host.as_deref(),
            device: scope.device.as_deref(),
            summary: &scope.summary,
            summary_anchors,
            total: totals(&scope.total),
            outside_regions: totals(&scope.outside_regions),
            notes: &scope.notes,
            insights: &scope.insights,
            distributions: &scope.distributions,
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
            charts: Vec::new(),
            idle: scope.idle.as_ref(),
            busy: scope.idle.as_ref().and_then(Idle::headline),
        }
    }
}

/// The shown regions of `scope`, each with its share of its parent's time (of the scope's,
/// `scope_time`, at the top).
fn region_views<'a>(
    scope: &'a Scope,
    anchor: &str,
    scope_time: Option<f64>,
    time: Option<&str>,
    options: &RenderOptions,
) -> Vec<RegionView<'a>> {
    let mut used = HashSet::new();
    // Every shown region's ancestors are shown too, so a parent's time is found among them.
    let mut times: HashMap<(RegionKind, &str), Option<f64>> = HashMap::new();
    (shown_regions(&scope.regions, time, options.max_regions).into_iter())
        .map(|i| {
            let region = &scope.regions[i];
            let mut view = RegionView::new(region, i, anchor, &mut used, time, options);
            let own = number(&region.inclusive, time);
            let parent = match &region.parent {
                Some(p) => times.get(&(region.kind, p.as_str())).copied().flatten(),
                None => scope_time,
            };
            view.parent_share = ratio(own, parent);
            times.insert((region.kind, region.path.as_str()), own);
            view
        })
        .collect()
}

/// The anchors of the shown regions the summary names (its top regions, the regions of its top
/// findings and where its top findings and kernels mostly ran), so its lists link to them.
fn summary_anchors<'a>(
    summary: &'a ScopeSummary,
    shown: &[RegionView<'a>],
) -> HashMap<&'a str, String> {
    let named: HashSet<&str> = (summary.top_regions.iter().map(|r| r.path.as_str()))
        .chain(summary.top_insights.iter().map(|i| i.region.as_str()))
        .chain(
            summary
                .top_insights
                .iter()
                .filter_map(|i| i.mostly_in.as_deref()),
        )
        .chain(
            summary
                .top_kernels
                .iter()
                .filter_map(|k| k.mostly_in.as_deref()),
        )
        .collect();
    (shown.iter())
        .filter(|r| named.contains(r.path))
        .map(|r| (r.path, r.anchor.clone()))
        .collect()
}

impl<'a> RegionView<'a> {
    fn new(
        region: &'a Region,
        index: usize,
        scope_anchor: &str,
        used: &mut HashSet<String>,
        time: Option<&str>,
        options: &RenderOptions,
    ) -> RegionView<'a> {
        RegionView {
            path: &region.path,
            segments: &region.segments,
            name: format::plain_name(&region.name),
            kind: region.kind,
            origin: &region.origin,
            parent: region.parent.as_deref(),
            depth: region.depth,
            kernel_count: region.kernel_count,
            self_kernel_count: region.self_kernel_count,
            time_share: region.time_share,
            coverage: region.coverage.as_ref(),
            inclusive: &region.inclusive,
            exclusive: &region.exclusive,
            per_result: &region.per_result,
            instances: region.instances.as_ref(),
            insights: &region.insights,
            notes: &region.notes,
            anchor: unique_anchor(scope_anchor, &region.path, index, used),
            time: lookup(&region.inclusive, time),
            self_time: lookup(&region.exclusive, time),
            parent_share: None,
            top_kernels: KernelList::new(
                &region.kernels,
                time,
                number(&region.inclusive, time),
                options.max_kernels,
            ),
            idle: region.idle.as_ref(),
            collectives: region.collectives.as_ref(),
        }
    }
}

/// The region × scope table's rows: the aggregate's shown regions (linked to their sections), else
/// every scope's regions in the order first met, at most `max`; and how many were left out.
fn matrix_rows(report: &Report, aggregate: Option<&ScopeView>, max: usize) -> (Vec<RowKey>, usize) {
    if let Some(view) = aggregate {
        let rows = view
            .shown_regions
            .iter()
            .map(|r| {
                let anchor = Some(r.anchor.clone());
                (
                    r.kind,
                    r.path.to_string(),
                    r.name.to_string(),
                    r.depth,
                    anchor,
                )
            })
            .collect();
        return (rows, view.hidden_regions);
    }
    let mut seen = HashSet::new();
    let mut rows = Vec::new();
    let mut total = 0;
    for region in report.scopes.iter().flat_map(|s| &s.regions) {
        if seen.insert((region.kind, region.path.as_str())) {
            total += 1;
            if rows.len() < max {
                let key = (region.kind, region.path.clone(), region.name.clone());
                rows.push((key.0, key.1, key.2, region.depth, None));
            }
        }
    }
    let hidden = total - rows.len();
    (rows, hidden)
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

/// Each scope's SVG charts, linked from its section: from report.md, or from `scopes/<label>.md`
/// (one folder down) when split.
fn link_charts<'a>(
    report: &Report,
    options: &RenderOptions,
    split: bool,
    scopes: &mut [ScopeView<'a>],
    mut aggregate: Option<&mut ScopeView<'a>>,
) {
    for chart in svg::plan(report, options.max_regions) {
        let title = match chart.kind {
            ChartKind::Time => "region time breakdown",
            ChartKind::Instances => "instance times",
            ChartKind::Flame => "GPU time by Python call stack",
            ChartKind::Sweep => "sweep: total time and MFU per profile",
        };
        let (view, prefix) = match chart.scope {
            Some(i) => (scopes.get_mut(i), if split { "../" } else { "" }),
            None => (aggregate.as_deref_mut(), ""),
        };
        if let Some(view) = view {
            view.charts.push(ChartLink {
                title,
                file: format!("{prefix}{}", chart.file),
            });
        }
    }
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
