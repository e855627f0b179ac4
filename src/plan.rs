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
use crate::insights::{load_region_rules, RuleSet};
use crate::profiler::{Profiler, ProfilerPlan};
use crate::region::{collective_kernels, KernelFilter, RegionFilter, Regioner, Renames};
use crate::report::compare::MAX_COMPARED;
use crate::report::model::KernelSelectionInfo;
use crate::report::render::Format;
use crate::report::render::{markdown, RenderOptions};

/// What a run will do, fully checked.
#[derive(Debug)]
pub struct Plan {
    /// What the profiler is handed: its own plan, holding the analysis plan and the region filter.
    pub profiler: ProfilerPlan,
    pub render: RenderOptions,
    /// The files written for a report (`report.outputs`).
    pub outputs: Vec<Format>,
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
        // `regions.include` / `regions.exclude` read once, for the analysis and the profiler alike.
        let regions = RegionFilter::new(
            &config.regions.include,
            &config.regions.exclude,
            config.regions.domain.as_deref(),
        )
        .map_err(|e| Error::Usage(e.to_string()))?;
        let analysis = analysis_plan(config, &regions)?;
        let profiler = Profiler::of(config).plan(config, analysis, regions)?;
        Ok(Plan {
            profiler,
            render,
            outputs: config.report.outputs.clone(),
        })
    }
}

fn analysis_plan(config: &Config, regions: &RegionFilter) -> Result<AnalysisPlan> {
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
        selection: KernelSelectionInfo::of(selection, 0),
        requested: regions.requested(),
        requested_paths: regions.requested_paths(),
        regioner: regioner(config)?,
        unrequested: config.regions.unrequested,
        aggregate: config.report.aggregate,
        scope_trees: config.report.scope_trees,
        threads: config.report.threads,
        max_depth: config.regions.max_depth,
        rules: region_rules(config)?,
        compare: compare(config)?,
        collectives: collective_kernels(&config.regions.auto.collectives)
            .map_err(|e| Error::Usage(format!("{e}; fix it in the preset or with an override")))?,
    })
}

fn compare(config: &Config) -> Result<Vec<String>> {
    let compare = &config.report.compare;
    let max = MAX_COMPARED;
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
fn region_rules(config: &Config) -> Result<RuleSet> {
    let report = &config.report;
    let metrics: Vec<&str> = report
        .metric_groups
        .values()
        .flatten()
        .chain(&report.metrics)
        .chain(std::iter::once(&report.time_metric))
        .map(String::as_str)
        .collect();
    load_region_rules(report.rules.as_deref(), &metrics).map_err(|e| {
        Error::Usage(format!(
            "report.rules: {e}; fix the rules file (docs/insights.md), or set report.rules=null for the shipped GPU rules"
        ))
    })
}

/// `regions.auto` checked: a method with usable settings, and, for a profiler with ranges of its own,
/// not beside `regions.include` (the user's own ranges and a method's regions would be two answers to
/// one question).
fn regioner(config: &Config) -> Result<Regioner> {
    let regioner = Regioner::new(&config.regions.auto)
        .map_err(|e| Error::Usage(format!("{e}; fix it in the preset or with an override")))?;
    if Profiler::of(config) == Profiler::Neuron {
        // A Neuron profile has no ranges of its own: its regions are always a method's, and
        // `regions.include` picks among them.
        return Ok(regioner);
    }
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
