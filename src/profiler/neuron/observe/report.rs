//! Neuron analyses mapped onto the shared report model: one scope per profile (and per further
//! summary of it), one region per Neuron region, the metrics in report units (s → ns, fractions → %),
//! the rules' findings and the duration distributions (report.compare works on the mapped regions).

use std::collections::BTreeMap;

use crate::analysis::RunContext;
use crate::config::Config;
use crate::error::Result;
use crate::profiler::neuron::capture::views::Viewed;
use crate::profiler::neuron::observe::metrics::MetricMap as NMetrics;
use crate::profiler::neuron::observe::units::{metric_infos, metric_map, unit_table, UnitRow};
use crate::profiler::neuron::observe::{
    analyse, Analysis, Bound, ProfileSummary, Region as NRegion,
};
use crate::profiler::neuron::settings::RegionMethod;
use crate::region::RegionKind;
use crate::report::finish::Finishing;
use crate::report::model::{
    Insight, ItemNoun, KernelSelectionInfo, MetricMap, ProfilerInfo, Region, Report, RunInfo,
    Scope, Totals,
};

/// The name the report gives the profiler.
pub const PROFILER_NAME: &str = "neuron-explorer";
/// Who found the rules' insights.
const INSIGHT_SOURCE: &str = "profile-run";
/// The time metric: each region's length, which gives its time share.
const TIME_METRIC: &str = "total_time";

/// The rules judging Neuron regions: `neuron.insights.rules`, else the shipped ones, checked against
/// the metric vocabulary. Loaded only for Neuron runs and reports.
pub fn rules(config: &Config) -> Result<crate::insights::RuleSet> {
    crate::profiler::neuron::observe::load_rules(&config.neuron.insights)
        .map_err(|e| crate::error::Error::Usage(format!("neuron.insights.rules: {e}")))
}

/// Loads and analyses every viewed profile and maps them onto one report.
pub fn report(config: &Config, viewed: &[Viewed], context: &RunContext) -> Result<Report> {
    // `regions.auto.*` when it names a method, else the alias `neuron.regions.*`.
    let rules = rules(config)?;
    let mut neuron = config.neuron.clone();
    neuron.regions = config.neuron.regions.resolve(&config.regions.auto);
    let units = unit_table();
    let mut scopes = Vec::new();
    let mut version = None;
    let mut instructions = 0;
    for v in viewed {
        let profile = crate::profiler::neuron::load(&v.output)?;
        version = version.or_else(|| tool_version(&profile));
        let analysis = analyse(&profile, &neuron, &rules);
        instructions += analysis.instruction_count as u64;
        scopes.extend(scopes_of(v, &analysis, &units));
    }
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
    let run = RunInfo {
        command: context.command.clone(),
        profiler_command: context.profiler_command.clone(),
        profiler: ProfilerInfo {
            name: PROFILER_NAME.to_string(),
            version: context.profiler_version.clone().or(version),
            settings,
        },
        config_fingerprint: context.config_fingerprint.clone(),
        sources: viewed
            .iter()
            .map(|v| v.output.display().to_string())
            .collect(),
    };
    // report.kernels picks GPU kernels; every instruction of a Neuron profile is read.
    let selection = KernelSelectionInfo {
        include: config.report.kernels.include.clone(),
        exclude: config.report.kernels.exclude.clone(),
        name_base: match config.report.kernels.name_base {
            crate::config::KernelNameBase::Demangled => "demangled",
            crate::config::KernelNameBase::Function => "function",
        }
        .to_string(),
        results_selected: instructions,
        results_excluded: 0,
    };
    let mut report = Report::new(
        run,
        metric_infos(),
        Some(TIME_METRIC.to_string()),
        selection,
        scopes,
        None,
    );
    report.item_noun = ItemNoun {
        one: "instruction",
        many: "instructions",
        listed: false,
    };
    // report.compare works on the mapped regions as on any profiler's.
    report.finish(&Finishing {
        compare: &config.report.compare,
        outlier_factor: config.neuron.distribution.outlier_factor,
        threads: config.report.threads,
    });
    if config.report.aggregate && report.scopes.len() > 1 {
        report.notes.push(
            "No aggregate across Neuron profiles: each profile's regions are cut from its own timeline, so regions of different profiles are not the same work.".to_string(),
        );
    }
    Ok(report)
}

/// The tools' version as the profile records it: `tools_version` in the metadata, `sw_version` in a
/// summary (the schema version is not the tools').
fn tool_version(profile: &crate::profiler::neuron::NeuronProfile) -> Option<String> {
    let is_tools = |k: &str| k.ends_with("version") && !k.contains("schema");
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

/// The scope of a profile (its regions and distributions, its first summary), then one
/// scope for each further summary (another subgraph of the same profile).
fn scopes_of(v: &Viewed, a: &Analysis, units: &[UnitRow]) -> Vec<Scope> {
    let first = a.summaries.first();
    let total_ns = first
        .and_then(|s| s.metrics.get(TIME_METRIC).copied().flatten())
        .map(|s| s * 1e9);
    let regions = a
        .regions
        .iter()
        .map(|r| region(r, units, total_ns))
        .collect();
    let mut main = scope(v, first, units, a.summaries.len() > 1);
    main.regions = regions;
    main.total.kernel_count = a.instruction_count as u64;
    main.outside_regions.kernel_count = a.outside_count as u64;
    main.notes = a.notes.clone();
    if a.regions.is_empty() && a.method != RegionMethod::None && main.notes.is_empty() {
        main.notes.push(format!(
            "No `{}` regions in this profile.",
            a.method.as_str()
        ));
    }
    let mut scopes = vec![main];
    scopes.extend(
        a.summaries
            .iter()
            .skip(1)
            .map(|s| scope(v, Some(s), units, true)),
    );
    scopes
}

/// A scope carrying one summary as its total and that summary's findings.
fn scope(
    v: &Viewed,
    summary: Option<&ProfileSummary>,
    units: &[UnitRow],
    name_summary: bool,
) -> Scope {
    let label = match summary {
        Some(s) if name_summary => format!("{} · {}", v.label, s.profile_id),
        _ => v.label.clone(),
    };
    let empty = NMetrics::default();
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
            insights(&s.insights, time_ns, units)
        }),
        distributions: Vec::new(),
        notes: Vec::new(),
    }
}

/// The rules' findings in report form, their evidence in the report unit of each metric (a fraction
/// shown as the % the tables show, seconds as ns), so evidence reads like the tables beside it.
fn insights(
    found: &[crate::insights::Insight],
    time_ns: Option<f64>,
    units: &[UnitRow],
) -> Vec<Insight> {
    found
        .iter()
        .cloned()
        .map(|i| {
            let mut insight = i.into_report(INSIGHT_SOURCE);
            insight.evidence.time = time_ns.unwrap_or(0.0);
            for (name, value) in &mut insight.evidence.metrics {
                if let Some((_, _, factor)) = units.iter().find(|u| &*u.0 == name.as_str()) {
                    *value *= factor;
                }
            }
            insight
        })
        .collect()
}

/// The path of a region: hierarchy names are layer paths already; other names are one segment, a
/// `/` or `\` in them escaped.
fn segments(r: &NRegion) -> (String, Vec<String>) {
    if r.method == RegionMethod::Hierarchy {
        let segments = r.name.split('/').map(str::to_string).collect();
        return (r.name.clone(), segments);
    }
    let escaped = r.name.replace('\\', "\\\\").replace('/', "\\/");
    (escaped, vec![r.name.clone()])
}

fn region(r: &NRegion, units: &[UnitRow], total_ns: Option<f64>) -> Region {
    let (path, segments) = segments(r);
    let metrics = metric_map(&r.metrics, units);
    let time_ns = r
        .metrics
        .get(TIME_METRIC)
        .copied()
        .flatten()
        .map(|s| s * 1e9);
    let mut notes = vec![format!(
        "window {} ns – {} ns from the profile start",
        r.start_ns, r.end_ns
    )];
    if let Some(bound) = r.bound {
        let g = |k: &str| r.metrics.get(k).copied().flatten().unwrap_or(f64::NAN);
        let (ai, ratio) = (
            g("mm_arithmetic_intensity"),
            g("peak_flops_bandwidth_ratio"),
        );
        notes.push(match bound {
            Bound::Memory => format!(
                "memory-bound: arithmetic intensity {ai:.1} FLOP/byte, below the machine balance of {ratio:.1}"
            ),
            Bound::Compute => format!(
                "compute-bound: arithmetic intensity {ai:.1} FLOP/byte, at or above the machine balance of {ratio:.1}"
            ),
        });
    }
    Region {
        coverage: None,
        // The last segment, as a GPU region's name: `report.compare` finds a layer by it alone.
        name: segments.last().cloned().unwrap_or_default(),
        path,
        depth: 0,
        parent: None,
        kind: if r.method == RegionMethod::Hierarchy {
            RegionKind::Stack
        } else {
            RegionKind::Mark
        },
        origin: r.method.as_str().to_string(),
        segments,
        kernel_count: r.instructions.len() as u64,
        self_kernel_count: r.instructions.len() as u64,
        time_share: time_ns
            .zip(total_ns)
            .filter(|(_, t)| *t > 0.0)
            .map(|(r, t)| r / t),
        exclusive: metrics.clone(),
        inclusive: metrics,
        per_result: Default::default(),
        kernels: Vec::new(),
        instances: None,
        insights: insights(&r.insights, time_ns, units),
        notes,
    }
}
