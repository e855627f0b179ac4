//! The Neuron analysis: regions from the shared region methods, what only Neuron can compute over them
//! (engine busy fractions, counters, group ratios), their insights, and the whole-profile summaries with
//! their insights. Distributions and `report.compare` are the report's, over the mapped regions.
//!
//! Floor: profiler (see `crate::profiler`): imports run, process, analysis, insights, report,
//! config, region and the ground floor, and its own profiler's rooms.

pub mod aggregate;
pub mod group_ratios;
pub mod idle;
pub mod idle_finding;
pub mod metrics;
pub mod nesting;
pub mod opcodes;
pub mod provenance;
pub mod regions;
pub mod report;
pub mod report_region;
pub mod subgraphs;
pub mod units;
pub mod workers;

use std::path::PathBuf;

use serde::Serialize;

use crate::insights::{FiredRule, RuleSet, RulesError};
use crate::profiler::neuron::observe::group_ratios::set_group_ratios;
use crate::profiler::neuron::observe::metrics::{
    apply_layer_figures, owned_instructions, region_metrics, summary_metrics, vocabulary, Peaks,
    RuleMetrics,
};
use crate::profiler::neuron::readers::model::intervals::{length, union};
use crate::profiler::neuron::readers::model::NeuronProfile;
use crate::profiler::neuron::settings::InsightSettings;
use crate::profiler::neuron::settings::{NeuronSettings, RegionMethod};
use crate::region::RegionFilter;
use crate::report::idle::Idle;
use idle::Timeline;
use opcodes::{opcode_times, OpcodeTime};
use regions::RegionSpan;

/// The name the report gives the profiler (`run.profiler.name`).
pub const PROFILER_NAME: &str = "neuron-explorer";

/// The shipped rules, built in so that a default install needs no file.
pub const DEFAULT_RULES: &str = include_str!("../../../../conf/neuron/rules.yaml");

/// `neuron.insights.rules` when set, else the built-in `conf/neuron/rules.yaml`; checked against the
/// metric vocabulary either way.
pub fn load_rules(settings: &InsightSettings) -> std::result::Result<RuleSet, RulesError> {
    let vocabulary = vocabulary();
    match &settings.rules {
        Some(path) => RuleSet::load(path, &vocabulary),
        None => RuleSet::parse(
            std::path::Path::new("conf/neuron/rules.yaml"),
            DEFAULT_RULES,
            &vocabulary,
        ),
    }
}

/// Whether a region's arithmetic intensity is below (memory) or at/above (compute) the machine balance.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Bound {
    Memory,
    Compute,
}

impl Bound {
    pub fn of(metrics: &RuleMetrics) -> Option<Bound> {
        let g = |k: &str| metrics.get(k).copied().flatten();
        let (ai, ratio) = (
            g("mm_arithmetic_intensity")?,
            g("peak_flops_bandwidth_ratio")?,
        );
        Some(if ai < ratio {
            Bound::Memory
        } else {
            Bound::Compute
        })
    }
}

/// One region with its metrics and insights.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NeuronRegion {
    pub name: String,
    pub base: String,
    pub index: usize,
    pub method: RegionMethod,
    /// Rebased to the profile's first timestamp.
    pub start_ns: u64,
    pub end_ns: u64,
    /// The instructions it owns (indices into the profile's instructions).
    pub instructions: Vec<usize>,
    pub metrics: RuleMetrics,
    pub bound: Option<Bound>,
    pub insights: Vec<FiredRule>,
    /// What the reader of this region should know (figures that disagree with each other).
    pub notes: Vec<String>,
    /// Its instructions by engine and opcode, longest first.
    pub opcodes: Vec<OpcodeTime>,
    /// Its active and idle time and largest gaps; `None` without a timeline.
    pub idle: Option<Idle>,
}

/// One profile id's summary (whole profile), with the derived metrics and insights.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProfileSummary {
    pub profile_id: String,
    pub metrics: RuleMetrics,
    pub bound: Option<Bound>,
    pub insights: Vec<FiredRule>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Analysis {
    pub source: PathBuf,
    pub method: RegionMethod,
    pub peak_flops: Option<f64>,
    pub peak_bandwidth: Option<f64>,
    pub summaries: Vec<ProfileSummary>,
    pub regions: Vec<NeuronRegion>,
    /// Instructions in the profile, and those in no region.
    pub instruction_count: usize,
    pub outside_count: usize,
    /// The instructions in no region by engine and opcode, longest first.
    pub outside_opcodes: Vec<OpcodeTime>,
    /// Every instruction by engine and opcode, longest first.
    pub opcodes: Vec<OpcodeTime>,
    /// Time (ns) covered by at least one region's windows.
    pub covered_ns: u64,
    /// The whole profile's active and idle time and largest gaps; `None` without a timeline.
    pub idle: Option<Idle>,
    pub notes: Vec<String>,
}

/// Analyse a profile: regions by `settings.regions` (already resolved against `regions.auto`, see
/// [`crate::profiler::neuron::settings::RegionSettings::resolve`]), their metrics and insights, and the summaries.
/// Only the regions `filter` (`regions.include` / `regions.exclude`) selects are kept.
pub fn analyse(
    profile: &NeuronProfile,
    settings: &NeuronSettings,
    rules: &RuleSet,
    filter: &RegionFilter,
) -> Analysis {
    let max = settings.insights.max;
    let peaks = Peaks::resolve(&settings.hardware, profile.summaries.first());
    let mut generated = regions::generate(profile, &settings.regions);
    regions::select(&mut generated, filter);
    let timeline = Timeline::of(profile);
    let mut regions: Vec<NeuronRegion> = generated
        .spans
        .iter()
        .map(|s| region(profile, s, &peaks, timeline.as_ref()))
        .collect();
    set_group_ratios(
        &mut regions
            .iter_mut()
            .map(|r| (r.base.as_str(), &mut r.metrics))
            .collect::<Vec<_>>(),
    );
    let units = units::message_units();
    for r in &mut regions {
        r.insights = rules.evaluate(&r.metrics, &units, max);
    }
    let summaries = profile
        .summaries
        .iter()
        .map(|s| {
            let metrics = summary_metrics(s);
            ProfileSummary {
                profile_id: s.profile_id.clone(),
                bound: Bound::of(&metrics),
                insights: rules.evaluate(&metrics, &units, max),
                metrics,
            }
        })
        .collect();
    let mut notes = profile.notes.clone();
    notes.append(&mut generated.notes);
    // Said only where a region lacks MFU: a layer record carries its own.
    let mfu_missing = regions.iter().any(|r| {
        r.metrics
            .get("mfu_estimated_percent")
            .copied()
            .flatten()
            .is_none()
    });
    if mfu_missing || peaks.peak_flops.is_some() {
        notes.extend(peaks.notes.iter().cloned());
    }
    let mut inside = vec![false; profile.instructions.len()];
    for r in &regions {
        for &n in &r.instructions {
            inside[n] = true;
        }
    }
    let outside: Vec<usize> = (0..inside.len()).filter(|&n| !inside[n]).collect();
    let covered = union(generated.spans.iter().flat_map(regions::windows).collect());
    Analysis {
        instruction_count: inside.len(),
        outside_count: outside.len(),
        outside_opcodes: opcode_times(profile, &outside),
        opcodes: opcode_times(profile, &(0..inside.len()).collect::<Vec<_>>()),
        covered_ns: length(&covered),
        idle: timeline.as_ref().map(|t| t.idle(&t.window())),
        source: profile.source.clone(),
        method: settings.regions.method,
        peak_flops: peaks.peak_flops,
        peak_bandwidth: peaks.peak_bandwidth,
        summaries,
        regions,
        notes,
    }
}

fn region(
    profile: &NeuronProfile,
    s: &RegionSpan,
    peaks: &Peaks,
    timeline: Option<&Timeline>,
) -> NeuronRegion {
    let mut metrics = region_metrics(profile, s, peaks);
    let idle = timeline.map(|t| t.idle(&regions::windows(s)));
    // Active as the profile counts it: engines busy or a DMA queue moving data. A profile without a
    // timeline has no instruction either, so nothing in the region ran.
    let active = idle.as_ref().map_or(0.0, |i| i.active_ns * 1e-9);
    let total = metrics.get("total_time").copied().flatten();
    metrics.insert("total_active_time".to_string(), Some(active));
    let share = match &idle {
        Some(idle) => idle.busy_share,
        None => total.filter(|t| *t > 0.0).map(|_| 0.0),
    };
    metrics.insert("active_time_percent".to_string(), share);
    let notes = s
        .layer
        .and_then(|n| profile.layers.get(n))
        .map(|layer| apply_layer_figures(&mut metrics, layer, profile))
        .unwrap_or_default();
    NeuronRegion {
        name: s.name.clone(),
        base: s.base.clone(),
        index: s.index,
        method: s.method,
        start_ns: s.start_ns,
        end_ns: s.end_ns,
        instructions: owned_instructions(profile, s),
        bound: Bound::of(&metrics),
        opcodes: opcode_times(profile, &owned_instructions(profile, s)),
        metrics,
        insights: Vec::new(),
        notes,
        idle,
    }
}
