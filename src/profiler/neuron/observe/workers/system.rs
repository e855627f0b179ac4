//! A system profile (one instance's, or several instances' merged) as one report: one scope per
//! worker (the Neuron counterpart of a GPU rank), its phases as regions, its summary metrics (span,
//! and the time covered by device, collective, runtime and framework events), and the cross-rank
//! diagnosis the GPU side gets over the workers' collectives (`cc_running` events), where the
//! late worker's phases before each collective say what made it late.

use std::collections::BTreeMap;
use std::sync::{Arc, LazyLock};

use globset::{Glob, GlobSet, GlobSetBuilder};

use super::phases::{deepest, sweep, Phase, Sweep};
use crate::analysis::cross_rank::{annotate, diagnose, Timelines};
use crate::analysis::RunContext;
use crate::config::Config;
use crate::error::{Error, Result};
use crate::profiler::neuron::observe::PROFILER_NAME;
use crate::profiler::neuron::readers::model::intervals::{length, union};
use crate::profiler::neuron::readers::model::system::{SystemEvent, SystemProfile, WorkerKey};
use crate::region::{
    display_of, Coverage, Observation, RegionFilter, RegionKind, Rollup, ScopeKey,
};
use crate::report::finish::Finishing;
use crate::report::format;
use crate::report::model::{
    ItemNoun, Kernel, KernelSelectionInfo, MetricInfo, MetricMap, MetricValue, ProfilerInfo,
    Region, Report, RunInfo, Scope, Totals,
};

/// The hardware event of a collective on a worker, from its start on that worker (its arrival) to
/// its end, which every worker of the collective shares (the runtime's `hardware` event group).
pub const COLLECTIVE_EVENT: &str = "cc_running";

/// The time metric: a worker's span, a phase's time.
const TIME: &str = "total_time";
/// A worker's summary metrics, beside [`TIME`]: the time covered by events of each kind.
const COVERED: [(&str, &str); 4] = [
    ("device_time", "neuron_hw"),
    ("collective_time", ""),
    ("runtime_time", "neuron_rt"),
    ("framework_time", "framework"),
];

/// What a system report calls its results and regions.
pub const ITEM_NOUN: ItemNoun = ItemNoun {
    one: "event",
    many: "events",
    listed: true,
    ranges: "phases",
    count_heading: "Count",
    across: "all workers",
    own_totals: true,
    scope_per_file: false,
    hardware_unknown: "A system profile does not record the instance type, so whether both runs ran on the same Inferentia or Trainium instances is unknown.",
    no_shared_regions: "check that both runs' workers ran the same phases (the same framework ranges and runtime calls)",
    launch_overhead: false,
};

/// The report of a system profile read from `sources`; events nested deeper than
/// `regions.max_depth` stop it, as a GPU range stack that deep does.
pub fn report(
    config: &Config,
    filter: &RegionFilter,
    profile: &SystemProfile,
    sources: &[String],
    context: &RunContext,
) -> Result<Report> {
    let collectives = collective_set();
    let is_collective = |name: &str| collectives.is_match(name);
    let mut timelines = Timelines::default();
    let mut scopes = Vec::new();
    let mut any_collective = false;
    for (key, events) in profile.by_worker() {
        let depth = deepest(&events);
        if depth > config.regions.max_depth {
            return Err(Error::RegionsTooDeep {
                depth,
                limit: config.regions.max_depth,
                sources: sources.join(", "),
            });
        }
        let swept = sweep(&events, &is_collective);
        any_collective |= swept.pieces.iter().any(|p| p.collective);
        let scope_key = key.scope_key();
        feed(&mut timelines, &scope_key, &swept, &collectives);
        let mut scope = scope(&key, &events, &swept, &is_collective);
        // Phases are regions: `regions.include`/`exclude` pick among them as among any regions.
        let paths: Vec<((), &[String])> = scope
            .regions
            .iter()
            .map(|r| ((), r.segments.as_slice()))
            .collect();
        let kept = filter.keep(&paths);
        let mut kept = kept.into_iter();
        scope.regions.retain(|_| kept.next().unwrap_or(true));
        scopes.push(scope);
    }
    let selected = profile.events.len() as u64;
    let mut report = Report::new(
        run_info(context, sources),
        metric_infos(),
        Some(TIME.to_string()),
        KernelSelectionInfo::of(&config.report.kernels, selected),
        scopes,
        None,
    );
    report.item_noun = ITEM_NOUN;
    report.cross_rank = diagnose(timelines);
    annotate(&mut report);
    report.notes = notes(profile, any_collective, report.cross_rank.is_some());
    report.finish(&Finishing {
        compare: &config.report.compare,
        outlier_factor: config.neuron.distribution.outlier_factor,
        threads: config.report.threads,
    });
    Ok(report)
}

fn collective_set() -> GlobSet {
    let mut set = GlobSetBuilder::new();
    if let Ok(glob) = Glob::new(COLLECTIVE_EVENT) {
        set.add(glob);
    }
    set.build().unwrap_or_else(|_| GlobSet::empty())
}

/// A worker's pieces, in time order, into the cross-rank timelines: each phase's own time as a
/// result in that phase, each collective as a result in the phase that holds it.
fn feed(timelines: &mut Timelines, key: &ScopeKey, swept: &Sweep, collectives: &GlobSet) {
    for piece in &swept.pieces {
        let path = &swept.phases[piece.phase].path;
        let Some((name, enclosing)) = path.split_last() else {
            continue;
        };
        let stack = if piece.collective {
            enclosing.to_vec()
        } else {
            path.clone()
        };
        let stacks = [stack];
        let obs = Observation {
            scope: key,
            stacks: &stacks,
            instances: None,
            marks: &[],
            call_stack: None,
            kernel: name,
            time: Some(piece.len_ns as f64),
            start: Some(piece.start_ns),
            weight: None,
            values: &[],
            coverage: Coverage::Measured,
            key: None,
        };
        timelines.visit(&obs, collectives);
    }
}

/// The unit and every metric name, each one allocation that all values share: a report of a
/// million phases holds ten million of them.
static NAMES: LazyLock<Vec<Arc<str>>> = LazyLock::new(|| {
    std::iter::once("ns")
        .chain(std::iter::once(TIME))
        .chain(COVERED.iter().map(|(name, _)| *name))
        .map(Arc::from)
        .collect()
});

/// `name` (the unit or a metric of this report) as the shared [`NAMES`] entry.
fn shared(name: &str) -> Arc<str> {
    NAMES
        .iter()
        .find(|n| &***n == name)
        .cloned()
        .unwrap_or_else(|| Arc::from(name))
}

fn value(ns: f64) -> MetricValue {
    MetricValue {
        value: Some(ns),
        unit: shared("ns"),
        values: None,
        interval95: None,
    }
}

fn time_map(ns: u64) -> MetricMap {
    MetricMap(vec![(shared(TIME), value(ns as f64))])
}

/// One worker as a scope: its span and covered times as totals, its phases as regions, its events
/// by name as the list of results.
fn scope(
    key: &WorkerKey,
    events: &[&SystemEvent],
    swept: &Sweep,
    is_collective: &dyn Fn(&str) -> bool,
) -> Scope {
    let first = events.iter().map(|e| e.start_ns).min().unwrap_or(0);
    let last = events.iter().map(|e| e.end_ns).max().unwrap_or(0);
    let span = last.saturating_sub(first);
    let mut metrics = time_map(span);
    let spans: Vec<(u64, u64)> = events.iter().map(|e| (e.start_ns, e.end_ns)).collect();
    for (name, covered) in covered_times(events, &spans, is_collective) {
        metrics.0.push((shared(name), value(covered as f64)));
    }
    let mut notes = Vec::new();
    if let Some(nc) = events.iter().find_map(|e| e.nc_idx) {
        notes.push(format!("NeuronCore {nc} of its process (`nc_idx`)."));
    }
    if swept.cut_ns > 0 {
        notes.push(format!(
            "{} of events that outlast the event they start in (work running on after the \
             range that started it ended) is cut at that event's end in the phases; the totals \
             above count it whole.",
            format::value(Some(swept.cut_ns as f64), "ns")
        ));
    }
    Scope {
        label: key.label(),
        rank: key.worker_gid.and_then(|w| u32::try_from(w).ok()),
        process_id: Some(key.process_id),
        process_name: Some(key.name()),
        host: Some(key.instance_id.clone()),
        device: key.nc_idx.map(|nc| nc.to_string()),
        summary: Default::default(),
        total: Totals {
            kernel_count: events.len() as u64,
            coverage: None,
            metrics,
            kernels: by_name(events),
        },
        outside_regions: Totals {
            kernel_count: 0,
            coverage: None,
            metrics: MetricMap::default(),
            kernels: Vec::new(),
        },
        regions: regions(swept, span, events, is_collective),
        insights: Vec::new(),
        distributions: Vec::new(),
        notes,
        idle: None,
    }
}

/// The time covered by the events of each kind in [`COVERED`] (each event over `spans`, its span as
/// counted).
fn covered_times(
    events: &[&SystemEvent],
    spans: &[(u64, u64)],
    is_collective: &dyn Fn(&str) -> bool,
) -> Vec<(&'static str, u64)> {
    COVERED
        .iter()
        .map(|&(name, source)| {
            let of_kind = events.iter().zip(spans).filter(|(e, _)| {
                let collective = is_collective(&e.name);
                if source.is_empty() {
                    collective
                } else {
                    !collective && e.source.as_deref() == Some(source)
                }
            });
            (name, length(&union(of_kind.map(|(_, s)| *s).collect())))
        })
        .collect()
}

/// Events by name, the longest total first.
fn by_name(events: &[&SystemEvent]) -> Vec<Kernel> {
    let mut tally: BTreeMap<&str, (u64, u64)> = BTreeMap::new();
    for e in events {
        let t = tally.entry(e.name.as_str()).or_default();
        t.0 += 1;
        t.1 += e.end_ns - e.start_ns;
    }
    let mut sorted: Vec<(&str, (u64, u64))> = tally.into_iter().collect();
    sorted.sort_by_key(|&(_, (_, ns))| std::cmp::Reverse(ns));
    sorted
        .into_iter()
        .map(|(name, (count, ns))| Kernel {
            name: name.to_string(),
            function: name.to_string(),
            count,
            metrics: time_map(ns),
        })
        .collect()
}

/// The phases as regions, depth first, siblings in the order they first ran; each with its time
/// and the time its events (nested ones included) of each kind cover.
fn regions(
    swept: &Sweep,
    span: u64,
    events: &[&SystemEvent],
    is_collective: &dyn Fn(&str) -> bool,
) -> Vec<Region> {
    // Each phase's own index last, its ancestors' before it (a parent is found before its child).
    let mut ancestors: Vec<Vec<usize>> = Vec::with_capacity(swept.phases.len());
    for (i, p) in swept.phases.iter().enumerate() {
        let mut line = p.parent.map_or_else(Vec::new, |up| ancestors[up].clone());
        line.push(i);
        ancestors.push(line);
    }
    // The events of each phase and of the phases it holds.
    let mut members: Vec<Vec<usize>> = vec![Vec::new(); swept.phases.len()];
    for (j, &(phase, _, _)) in swept.spans.iter().enumerate() {
        for &at in &ancestors[phase] {
            members[at].push(j);
        }
    }
    // Sorting by the ancestors in first-run order walks the tree depth first.
    let mut order: Vec<usize> = (0..swept.phases.len()).collect();
    order.sort_by(|&a, &b| ancestors[a].cmp(&ancestors[b]));
    order
        .into_iter()
        .map(|i| {
            let of: Vec<&SystemEvent> = members[i].iter().map(|&j| events[j]).collect();
            let spans: Vec<(u64, u64)> = members[i]
                .iter()
                .map(|&j| (swept.spans[j].1, swept.spans[j].2))
                .collect();
            let covered = covered_times(&of, &spans, is_collective);
            let mut r = region(&swept.phases[i], members[i].len() as u64, span, covered);
            r.kernels = by_name(&of);
            r
        })
        .collect()
}

/// One phase as a region: `nested` events in it, `covered` its covered times.
fn region(p: &Phase, nested: u64, span: u64, covered: Vec<(&'static str, u64)>) -> Region {
    let depth = p.path.len() - 1;
    let mut inclusive = time_map(p.inclusive_ns);
    let mut exclusive = time_map(p.self_ns);
    for (name, ns) in covered {
        inclusive.0.push((shared(name), value(ns as f64)));
        // What the phase's own time covers is not told apart from its children's.
        let mut unknown = value(0.0);
        unknown.value = None;
        exclusive.0.push((shared(name), unknown));
    }
    Region {
        path: display_of(&p.path),
        segments: p.path.clone(),
        name: p.path[depth].clone(),
        kind: RegionKind::Stack,
        origin: "system profile events".to_string(),
        parent: (depth > 0).then(|| display_of(&p.path[..depth])),
        depth,
        kernel_count: nested,
        self_kernel_count: p.count,
        time_share: (span > 0).then(|| p.inclusive_ns as f64 / span as f64),
        coverage: None,
        inclusive,
        exclusive,
        per_result: Default::default(),
        kernels: Vec::new(),
        instances: None,
        insights: Vec::new(),
        notes: Vec::new(),
        idle: None,
        collectives: None,
    }
}

fn metric_infos() -> Vec<MetricInfo> {
    let info = |name: &str, label: &str| MetricInfo {
        name: name.to_string(),
        label: Some(label.to_string()),
        unit: "ns".to_string(),
        rollup: Rollup::Sum,
        group: "system".to_string(),
        description: None,
    };
    vec![
        info(TIME, "Time"),
        info("device_time", "Device busy (neuron_hw)"),
        info("collective_time", "In collectives (cc_running)"),
        info("runtime_time", "In the runtime (neuron_rt)"),
        info("framework_time", "In the framework"),
    ]
}

fn run_info(context: &RunContext, sources: &[String]) -> RunInfo {
    let mut settings = BTreeMap::new();
    settings.insert("input".to_string(), "system profile".to_string());
    RunInfo {
        command: context.command.clone(),
        profiler_command: context.profiler_command.clone(),
        profiler: ProfilerInfo {
            name: PROFILER_NAME.to_string(),
            version: context.profiler_version.clone(),
            settings,
        },
        platform: Default::default(),
        config_fingerprint: context.config_fingerprint.clone(),
        partial: context.partial.clone(),
        flagged_ranks: Vec::new(),
        sources: sources.to_vec(),
    }
}

/// What the report says of the run as a whole: the collectives, and the device profiles it
/// captured beside the system profile.
fn notes(profile: &SystemProfile, any_collective: bool, diagnosed: bool) -> Vec<String> {
    // What the reader left out (tables refused, profiles read twice) first.
    let mut out = profile.notes.clone();
    if profile.events.is_empty() {
        out.push(
            "The system profile holds no event: nothing ran while it was captured, or \
             `NEURON_RT_INSPECT_EVENT_FILTER_TYPE` / `_NC` (`pipeline.neuron.inspect.event_filter_*`) \
             left every event out."
                .to_string(),
        );
    } else if !any_collective {
        out.push(format!(
            "No collective in the system profile (no `{COLLECTIVE_EVENT}` event on any worker): no \
             cross-worker diagnosis."
        ));
    } else if !diagnosed {
        out.push(format!(
            "Collectives (`{COLLECTIVE_EVENT}`) ran on fewer than two workers, or none ran on every \
             worker that ran collectives: no cross-worker diagnosis."
        ));
    }
    if !profile.devices.is_empty() {
        out.push(format!(
            "The run captured {} device profile(s) (`DeviceProfileList`); each worker's instructions \
             are in them: `profile-run report` on their `view` outputs.",
            profile.devices.len()
        ));
    }
    out
}
