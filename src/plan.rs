//! Config → Plan: every check that can fail runs here, before any process starts, so a mistake in a
//! preset exits 2 without profiling (NVTX patterns, metric groups and rollups, kernel patterns,
//! rename rules, the report template, `report.compare`; a Neuron run's own checks, its rules file
//! included, are the Neuron adapter's, asked for here only when Neuron runs).
//!
//! Floor: plan. May import the profiler seam (`crate::profiler`, never `profiler::ncu` /
//! `profiler::neuron`) and every floor below it. (docs/architecture.md, checked by
//! tests/it/architecture.rs)

use std::path::PathBuf;

use crate::analysis::{self, AnalysisPlan};
use crate::config::{Config, KernelNameBase};
use crate::error::{Error, Result};
use crate::profiler::{Profiler, ProfilerPlan};
use crate::region::{pattern, KernelFilter, Regioner, Renames, RequestedRegions};
use crate::report::model::KernelSelectionInfo;
use crate::report::render::{markdown, RenderOptions};

/// What a run will do, fully checked.
#[derive(Debug)]
pub struct Plan {
    /// What the profiler is handed: the analysis plan and its own part (ncu's NVTX expressions).
    pub profiler: ProfilerPlan,
    pub render: RenderOptions,
    /// The files written for a report (`report.outputs`).
    pub outputs: Vec<crate::report::render::Format>,
}

impl Plan {
    pub fn new(config: &Config) -> Result<Plan> {
        let render = RenderOptions {
            template: config.report.template.as_ref().map(PathBuf::from),
            max_regions: config.report.max_regions,
            max_kernels: config.report.max_kernels,
            threads: config.report.threads,
            charts: false,
        };
        if let Some(path) = &render.template {
            markdown::check_template(path)?;
        }
        let profiler = Profiler::of(config).plan(config, analysis_plan(config)?)?;
        Ok(Plan {
            profiler,
            render,
            outputs: config.report.outputs.clone(),
        })
    }
}

fn analysis_plan(config: &Config) -> Result<AnalysisPlan> {
    let selection = &config.report.kernels;
    let filter = KernelFilter::new(
        &selection.include,
        &selection.exclude,
        selection.name_base == KernelNameBase::Function,
    )
    .map_err(|e| Error::Usage(format!("{e}; fix the pattern (globs: `*gemm*`, `sm90_*`)")))?;
    let renames = Renames::new(&config.regions.rename).map_err(|e| Error::Usage(e.to_string()))?;
    Ok(AnalysisPlan {
        requests: analysis::metric_requests(config)?,
        rollups: analysis::rollup_overrides(config)?,
        time_metric: config.report.time_metric.clone(),
        renames,
        filter,
        selection: KernelSelectionInfo {
            include: selection.include.clone(),
            exclude: selection.exclude.clone(),
            name_base: match selection.name_base {
                KernelNameBase::Demangled => "demangled",
                KernelNameBase::Function => "function",
            }
            .into(),
            results_selected: 0,
            results_excluded: 0,
        },
        requested: requested_regions(config)?,
        requested_paths: requested_paths(config),
        regioner: regioner(config)?,
        unrequested: config.regions.unrequested,
        aggregate: config.report.aggregate,
        scope_trees: config.report.scope_trees,
        threads: config.report.threads,
        max_depth: config.regions.max_depth,
        rules: region_rules(config)?,
        compare: compare(config)?,
        collectives: crate::region::collective_kernels(&config.regions.auto.collectives)
            .map_err(|e| Error::Usage(format!("{e}; fix it in the preset or with an override")))?,
    })
}

fn compare(config: &Config) -> Result<Vec<String>> {
    let compare = &config.report.compare;
    let max = crate::report::compare::MAX_COMPARED;
    if compare.len() > max {
        return Err(Error::Usage(format!(
            "report.compare names {} regions ({}); at most {max} are shown side by side, so keep {max}",
            compare.len(),
            compare.join(", ")
        )));
    }
    if let Some(empty) = compare.iter().position(|c| c.trim().is_empty()) {
        return Err(Error::Usage(format!(
            "report.compare[{empty}] is empty; name a region by its path or name"
        )));
    }
    Ok(compare.clone())
}

/// `report.rules`, checked against every metric name the configuration knows (all metric groups,
/// `report.metrics`, the time metric) so that a misspelt metric stops here, not silently later.
fn region_rules(config: &Config) -> Result<crate::insights::RuleSet> {
    let report = &config.report;
    let metrics: Vec<&str> = report
        .metric_groups
        .values()
        .flatten()
        .chain(&report.metrics)
        .chain(std::iter::once(&report.time_metric))
        .map(String::as_str)
        .collect();
    crate::insights::load_region_rules(report.rules.as_deref(), &metrics).map_err(|e| {
        Error::Usage(format!(
            "report.rules: {e}; fix the rules file (docs/insights.md), or set report.rules=null for the shipped GPU rules"
        ))
    })
}

/// `regions.auto` checked: a method with usable settings, and not beside `regions.include` (the
/// user's own ranges and a method's regions would be two answers to one question).
fn regioner(config: &Config) -> Result<Regioner> {
    let regioner = Regioner::new(&config.regions.auto)
        .map_err(|e| Error::Usage(format!("{e}; fix it in the preset or with an override")))?;
    if matches!(regioner, Regioner::StackFrames { .. }) && !config.regions.include.is_empty() {
        // Python frames explain the GPU time inside the ranges asked for: `step/<frames…>`.
        return Ok(Regioner::nested_stack_frames(config.regions.auto.depth));
    }
    if !matches!(regioner, Regioner::Own) && !config.regions.include.is_empty() {
        return Err(Error::Usage(
            "regions.auto.method and regions.include are both set: automatic regions replace the \
             program's own ranges, so use one (only stack_frames nests inside regions.include); set \
             regions.auto.method=none to keep regions.include"
                .into(),
        ));
    }
    Ok(regioner)
}

/// `regions.include` as region-path matchers (empty when nothing is named).
fn requested_regions(config: &Config) -> Result<RequestedRegions> {
    let domain = config.regions.domain.as_deref();
    let patterns = config
        .regions
        .include
        .iter()
        .enumerate()
        .map(|(i, pattern)| {
            pattern::level_regexes(pattern, domain).map_err(|e| {
                Error::Usage(format!(
                    "regions.include[{i}] {pattern:?} is not a valid pattern: {e}"
                ))
            })
        })
        .collect::<Result<_>>()?;
    Ok(RequestedRegions::new(patterns))
}

/// The patterns of `regions.include` that name exactly one region, with that region's path, so a
/// region asked for that saw no result still shows (with a note).
fn requested_paths(config: &Config) -> Vec<(String, Vec<String>)> {
    config
        .regions
        .include
        .iter()
        .filter_map(|pattern| {
            let levels = pattern::literal_levels(pattern)?;
            let segments = levels
                .into_iter()
                .map(|s| match &config.regions.domain {
                    Some(domain) => format!("{domain}@{s}"),
                    None => s,
                })
                .collect();
            Some((pattern.clone(), segments))
        })
        .collect()
}
