//! Neuron analyses mapped onto the shared report model: one scope per profile (and per further
//! summary of it, or past the eighth a row of its table), one region per Neuron region, the metrics in report units (s → ns, fractions → %),
//! the rules' findings and the duration distributions (report.compare works on the mapped regions).

use std::collections::{BTreeMap, BTreeSet};

use crate::analysis::RunContext;
use crate::config::Config;
use crate::error::{Error, Result};
use crate::insights::RuleSet;
use crate::parallel;
use crate::profiler::neuron::observe::metrics::RuleMetrics;
use crate::profiler::neuron::observe::provenance::Provenance;
use crate::profiler::neuron::observe::report_region::{findings, TIME_METRIC};
use crate::profiler::neuron::observe::subgraphs::{metric_names, split_off, table, Judge};
use crate::profiler::neuron::observe::units::{metric_map, metric_table, UnitRow};
use crate::profiler::neuron::observe::PROFILER_NAME;
use crate::profiler::neuron::observe::{analyse, load_rules, Analysis, ProfileSummary};
use crate::profiler::neuron::readers::model::{Summary, SummaryLayout};
use crate::profiler::neuron::readers::viewed::Viewed;
use crate::profiler::neuron::settings::{NeuronSettings, RegionMethod};
use crate::profiler::neuron::{load, NeuronProfile};
use crate::region::RegionFilter;
use crate::report::finish::Finishing;
use crate::report::model::{
    Idle, ItemNoun, KernelSelectionInfo, MetricMap, MetricValue, Platform, ProfilerInfo, Report,
    RunInfo, Scope, ScopeTable, Totals,
};

/// What a Neuron report calls its results, regions and scopes (docs/neuron.md): instructions by
/// engine and opcode, regions, one scope per profile.
pub const ITEM_NOUN: ItemNoun = ItemNoun {
    one: "instruction",
    many: "instructions",
    listed: true,
    ranges: "regions",
    count_heading: "Count",
    across: "all profiles",
    own_totals: true,
    scope_per_file: true,
    hardware_unknown: "The instance type is not recorded in {which} (a summary or Parquet profile without `instance_type`, or a report written before it was read), so whether both profiles ran on the same Inferentia or Trainium instance is unknown.",
    no_shared_regions: "check that both profiles are cut into regions the same way (the same region method and settings)",
    launch_overhead: false,
};

/// The rules judging Neuron regions: `neuron.insights.rules`, else the shipped ones, checked against
/// the metric vocabulary. Loaded only for Neuron runs and reports.
pub fn rules(config: &Config) -> Result<RuleSet> {
    load_rules(&config.neuron.insights)
        .map_err(|e| Error::Usage(format!("neuron.insights.rules: {e}")))
}

/// Loads and analyses every viewed profile and maps them onto one report, keeping the regions
/// `filter` selects.
pub fn report(
    config: &Config,
    filter: &RegionFilter,
    viewed: &[Viewed],
    context: &RunContext,
) -> Result<Report> {
    Ok(report_with_details(config, filter, viewed, context)?.0)
}

/// [`report`], and what only `-v` shows: each profile's top-level keys that were not used.
pub fn report_with_details(
    config: &Config,
    filter: &RegionFilter,
    viewed: &[Viewed],
    context: &RunContext,
) -> Result<(Report, Vec<String>)> {
    if let Some(why) = super::regions::filter_refusal(filter) {
        return Err(Error::Usage(why));
    }
    // `regions.auto.*` when it names a method, else the alias `neuron.regions.*`.
    let rules = rules(config)?;
    let mut neuron = config.neuron.clone();
    neuron.regions = config.neuron.regions.resolve(&config.regions.auto);
    let Analysed {
        analyses,
        version,
        layout,
        ignored,
        platform,
        collectives,
        rows,
    } = analyse_all(viewed, &neuron, &rules, filter, config.report.threads)?;
    // Workers of one run (a collectives rank, or a process of an inspect capture), not the profiles
    // of a sweep, which ran one after another.
    let (labels, collectives): (Vec<String>, Vec<_>) = viewed
        .iter()
        .zip(collectives)
        .filter(|(v, _)| v.rank.is_some() || v.process_id.is_some())
        .map(|(v, c)| (v.label.clone(), c))
        .unzip();
    let cross_rank = super::workers::cross_rank(&labels, &collectives);
    let instructions = analyses.iter().map(|a| a.instruction_count as u64).sum();
    let mut names = field_names(&analyses);
    names.extend(rows.iter().flat_map(|r| metric_names(r)));
    let (metrics, units) = metric_table(&names, &layout);
    let judge = (&rules, neuron.insights.max);
    let (scopes, tables) = scopes_and_tables(viewed, analyses, rows, &units, filter, judge);
    let mut settings = BTreeMap::new();
    settings.insert(
        "method".to_string(),
        neuron.regions.method.as_str().to_string(),
    );
    // Only what this report's inputs went through: a profile given as is was viewed by someone else.
    if viewed.iter().any(|v| !v.command.is_empty()) {
        settings.insert(
            "view_format".to_string(),
            config.pipeline.neuron.view.format.as_arg().to_string(),
        );
    }
    // Each profile's own timeline: regions sharing a path (the same layer of a sweep) are one.
    let aggregate = (config.report.aggregate && scopes.len() > 1)
        .then(|| super::aggregate::aggregate(&metrics, &scopes));
    let run = RunInfo {
        command: context.command.clone(),
        profiler_command: context.profiler_command.clone(),
        profiler: ProfilerInfo {
            name: PROFILER_NAME.to_string(),
            version: context.profiler_version.clone().or(version),
            settings,
        },
        platform,
        config_fingerprint: context.config_fingerprint.clone(),
        partial: context.partial.clone(),
        flagged_ranks: Vec::new(),
        sources: viewed
            .iter()
            .map(|v| v.output.display().to_string())
            .collect(),
    };
    // report.kernels picks GPU kernels; every instruction of a Neuron profile is read.
    let selection = KernelSelectionInfo::of(&config.report.kernels, instructions);
    let mut report = Report::new(
        run,
        metrics,
        Some(TIME_METRIC.to_string()),
        selection,
        scopes,
        aggregate,
    );
    report.item_noun = ITEM_NOUN;
    report.scope_tables = tables;
    report.cross_rank = cross_rank;
    // report.compare works on the mapped regions as on any profiler's.
    report.finish(&Finishing {
        compare: &config.report.compare,
        outlier_factor: config.neuron.distribution.outlier_factor,
        threads: config.report.threads,
    });
    Ok((report, ignored))
}

/// Every profile analysed, with what the report takes from the profiles themselves.
struct Analysed {
    analyses: Vec<Analysis>,
    version: Option<String>,
    layout: SummaryLayout,
    /// `-v`'s lines: each profile's top-level keys that were not used.
    ignored: Vec<String>,
    /// Instance types, drivers and runtimes the profiles record.
    platform: Platform,
    /// Each profile's collectives, for the comparison across workers.
    collectives: Vec<Vec<super::workers::Taken>>,
    /// Each profile's summaries past the eighth, which become rows of a table, not scopes.
    rows: Vec<Vec<Summary>>,
}

/// Loads and analyses the profiles on the one executor (`report.threads`), in their order.
fn analyse_all(
    viewed: &[Viewed],
    neuron: &NeuronSettings,
    rules: &RuleSet,
    filter: &RegionFilter,
    threads: usize,
) -> Result<Analysed> {
    let loaded = parallel::map(viewed.iter().collect(), threads, |v| {
        let mut profile = load(&v.output)?;
        let rows = split_off(&mut profile.summaries);
        let ignored = (!profile.ignored_keys.is_empty()).then(|| {
            format!(
                "{}: keys not used: {}",
                v.output.display(),
                profile.ignored_keys.join(", ")
            )
        });
        let analysis = analyse(&profile, neuron, rules, filter);
        Ok::<_, Error>((
            tool_version(&profile),
            Provenance::of(&profile),
            super::workers::collectives_of(&profile),
            profile.summary_layout,
            ignored,
            analysis,
            rows,
        ))
    });
    let mut out = Analysed {
        analyses: Vec::with_capacity(viewed.len()),
        version: None,
        layout: SummaryLayout::default(),
        ignored: Vec::new(),
        platform: Platform::default(),
        collectives: Vec::new(),
        rows: Vec::new(),
    };
    for result in loaded {
        let (version, provenance, collectives, layout, ignored, analysis, rows) = result?;
        out.rows.push(rows);
        provenance.add_to(&mut out.platform);
        out.version = out.version.or(version);
        out.collectives.push(collectives);
        if out.layout.groups.is_empty() {
            out.layout = layout;
        }
        out.ignored.extend(ignored);
        out.analyses.push(analysis);
    }
    Ok(out)
}

/// Every metric name the analyses hold: the summaries' own fields and the regions' metrics.
fn field_names(analyses: &[Analysis]) -> BTreeSet<String> {
    analyses
        .iter()
        .flat_map(|a| {
            let summaries = a.summaries.iter().flat_map(|s| s.metrics.keys());
            let regions = a.regions.iter().flat_map(|r| r.metrics.keys());
            summaries.chain(regions).cloned()
        })
        .collect()
}

/// The tools' version as the profile records it: `profiler_version` (the full JSON's
/// `profile_info`), `tools_version` in the metadata, `sw_version` in a summary (the schema, NTFF and
/// data versions are not the tools').
fn tool_version(profile: &NeuronProfile) -> Option<String> {
    if let Some(v) = profile.metadata.get("profiler_version") {
        return Some(v.clone());
    }
    let is_tools = |k: &str| {
        k.ends_with("version") && !["schema", "ntff", "data"].iter().any(|w| k.contains(w))
    };
    let from_metadata = profile
        .metadata
        .iter()
        .find(|(k, _)| is_tools(k))
        .map(|(_, v)| v.clone());
    from_metadata.or_else(|| {
        profile.summaries.iter().find_map(|s| {
            s.text
                .iter()
                .find(|(k, _)| is_tools(k))
                .map(|(_, v)| v.clone())
        })
    })
}

/// Every profile's scopes, and the table of each profile with more summaries than scopes apart.
/// Each analysis is consumed as its scopes are made, and each summary past the first as its row is:
/// a profile of 200,000 subgraphs never holds its summaries twice over.
fn scopes_and_tables(
    viewed: &[Viewed],
    analyses: Vec<Analysis>,
    rows: Vec<Vec<Summary>>,
    units: &[UnitRow],
    filter: &RegionFilter,
    (rules, max): (&RuleSet, usize),
) -> (Vec<Scope>, Vec<ScopeTable>) {
    let message_units = super::units::message_units();
    let judge = Judge {
        rules,
        units: &message_units,
        max,
    };
    let (mut scopes, mut tables) = (Vec::new(), Vec::new());
    for ((v, analysis), rows) in viewed.iter().zip(analyses).zip(rows) {
        scopes_of(v, analysis, units, filter, !rows.is_empty(), &mut scopes);
        if !rows.is_empty() {
            let beside = scopes.last().map(|s| s.label.clone()).unwrap_or_default();
            tables.push(table(beside, rows, units, &judge));
        }
    }
    (scopes, tables)
}

/// The scope of a profile (its regions and distributions, its first summary), then one
/// scope for each further summary (another subgraph of the same profile). Where further summaries
/// follow as rows of a table (`rows_follow`), the scope is named by its summary too.
fn scopes_of(
    v: &Viewed,
    mut a: Analysis,
    units: &[UnitRow],
    filter: &RegionFilter,
    rows_follow: bool,
    scopes: &mut Vec<Scope>,
) {
    let count = a.summaries.len();
    let mut summaries = std::mem::take(&mut a.summaries).into_iter();
    let first = summaries.next();
    let first = first.as_ref();
    let total_ns = first
        .and_then(|s| s.metrics.get(TIME_METRIC).copied().flatten())
        .map(|s| s * 1e9);
    let mut regions = super::report_region::regions(&a.regions, units, total_ns);
    super::nesting::nest(&mut regions, units);
    super::report_region::add_requested_empty(filter, units, &mut regions);
    let mut main = scope(v, first, units, count > 1 || rows_follow, a.idle.as_ref());
    main.idle = a.idle.clone();
    main.regions = regions;
    main.total.kernel_count = a.instruction_count as u64;
    main.outside_regions.kernel_count = a.outside_count as u64;
    main.outside_regions.kernels = super::report_region::opcode_list(&a.outside_opcodes, units);
    main.total.kernels = super::report_region::opcode_list(&a.opcodes, units);
    // The scope's time no region covers: the same figure in every output.
    let outside_ns = total_ns.map(|t| (t - a.covered_ns as f64).max(0.0));
    if let Some(unit) = units.iter().find(|u| &*u.0 == TIME_METRIC) {
        main.outside_regions.metrics.0.push((
            unit.0.clone(),
            MetricValue {
                value: outside_ns,
                unit: unit.1.clone(),
                values: None,
                interval95: None,
            },
        ));
    }
    main.notes = std::mem::take(&mut a.notes);
    if a.regions.is_empty() && a.method != RegionMethod::None && main.notes.is_empty() {
        main.notes.push(format!(
            "No `{}` regions in this profile.",
            a.method.as_str()
        ));
    }
    scopes.reserve(count.max(1));
    scopes.push(main);
    scopes.extend(summaries.map(|s| scope(v, Some(&s), units, true, None)));
}

/// A scope carrying one summary as its total and that summary's findings.
fn scope(
    v: &Viewed,
    summary: Option<&ProfileSummary>,
    units: &[UnitRow],
    name_summary: bool,
    idle: Option<&Idle>,
) -> Scope {
    let label = match summary {
        Some(s) if name_summary => format!("{} · {}", v.label, s.profile_id),
        _ => v.label.clone(),
    };
    let empty = RuleMetrics::default();
    Scope {
        label,
        rank: v.rank,
        process_id: v.process_id,
        process_name: None,
        host: None,
        device: v.device.clone(),
        summary: Default::default(),
        total: Totals {
            kernel_count: 0,
            coverage: None,
            metrics: metric_map(summary.map_or(&empty, |s| &s.metrics), units),
            kernels: Vec::new(),
        },
        outside_regions: Totals {
            kernel_count: 0,
            coverage: None,
            metrics: MetricMap::default(),
            kernels: Vec::new(),
        },
        regions: Vec::new(),
        insights: summary.map_or_else(Vec::new, |s| {
            let time_ns = s
                .metrics
                .get(TIME_METRIC)
                .copied()
                .flatten()
                .map(|t| t * 1e9);
            findings(&s.insights, time_ns, idle, units)
        }),
        distributions: Vec::new(),
        notes: Vec::new(),
        idle: None,
    }
}
