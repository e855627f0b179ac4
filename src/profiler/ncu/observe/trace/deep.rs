//! A sampled run timed by the trace: the trace's kernels take their deep metrics from the deep pass
//! (ncu, one result per distinct launch), joined by the same launch key as ncu's timing pass is
//! (mangled name, grid, block, registers, static and dynamic shared memory; `report_source::twins`).
//! Times stay the trace's; the deep pass's own duration is kept as a deep metric of its own
//! (`serialized__` + the time metric), labelled serialized.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::analysis::AdaptiveRecord;
use crate::analysis::{AnalysisPlan, MetricsFound, RunContext};
use crate::error::Result;
use crate::fast_map::FastMap;
use crate::profiler::ncu::observe::adaptive;
use crate::profiler::ncu::observe::report_source::split_keys::SplitKeys;
use crate::profiler::ncu::observe::report_source::twins::{
    LaunchOrdinals, Shape, TwinIndex, Twins,
};
use crate::profiler::ncu::observe::report_source::{ReportInput, ReportSource};
use crate::profiler::ncu::observe::strata::STRATUM_IDS;
use crate::profiler::ncu::readers::siblings::worker_siblings;
use crate::profiler::ncu::readers::{rollup, units};
use crate::region::{Cell, Coverage, KernelFilter, KeySamples, MetricSpec, Spread};
use crate::report::model::{DeepWorker, Sampling};

use crate::profiler::ncu::readers::trace::LaunchShape;

/// How the deep pass's own duration reads, kept beside the trace's in-place time.
pub const SERIALIZED_LABEL: &str = "Duration, serialized (deep pass)";

/// A requested metric's spec where a trace measures it itself: its unit from its name (as ncu
/// names units), its rollup as configured or inferred from the name and unit.
pub(crate) fn requested_spec(plan: &AnalysisPlan, name: &str) -> MetricSpec {
    let unit = units::normalize(&units::base_unit_of(name)).unit;
    let rollup = plan
        .rollups
        .get(name)
        .copied()
        .unwrap_or_else(|| rollup::infer(name, &unit));
    MetricSpec {
        name: name.to_string(),
        unit,
        rollup,
    }
}

/// The same for kernels replayed in the traced process (the in-process engine).
pub const REPLAYED_LABEL: &str = "Duration, replayed in process (deep samples)";

/// The name of the deep pass's own duration of a kernel's twins: the time metric's name with this
/// prefix (`serialized__gpu__time_duration.sum`), a counter that sums like the time itself.
pub const SERIALIZED_PREFIX: &str = "serialized__";

/// Where the trace-timed sampled reading keeps its two durations among the specs.
#[derive(Debug, Clone, Copy, Default)]
pub struct TimeSpecs {
    /// The time metric: each kernel's in-place duration from the trace, measured on every launch.
    pub in_place: Option<usize>,
    /// The twins' serialized duration (the deep pass's time metric), estimated like every deep
    /// metric; it also weighs the deep rates, which were measured over it.
    pub serialized: Option<usize>,
}

/// The deep pass of a sampled run, ready to index: one report file, or one per rank that ran its
/// own (`merge` of per-rank runs), pooled by launch key.
pub struct DeepJoin<'p> {
    source: ReportSource<'p>,
    /// Each deep pass's report file that was written, with the rank whose run made it.
    paths: Vec<(PathBuf, Option<u32>)>,
}

impl<'p> DeepJoin<'p> {
    /// Opens the deep passes' report files; `None` when no pass wrote one (each failed, was
    /// stopped, or its rank ran unprofiled).
    pub fn open(
        plan: &'p AnalysisPlan,
        paths: &[(PathBuf, Option<u32>)],
        context: &RunContext,
        max_block: u64,
    ) -> Result<Option<DeepJoin<'p>>> {
        let paths: Vec<(PathBuf, Option<u32>)> =
            paths.iter().filter(|(p, _)| p.is_file()).cloned().collect();
        let Some((path, rank)) = paths.first() else {
            return Ok(None);
        };
        // The passes ran under one configuration: the first one's metrics stand for all.
        let input = ReportInput {
            path: path.clone(),
            rank: *rank,
            deep: None,
        };
        let source = ReportSource::open(plan, &[input], context, &[], max_block)?;
        Ok(Some(DeepJoin { source, paths }))
    }

    /// The deep pass's metrics, in its own order, then the deep pass's duration as a metric of its
    /// own: the time metric itself holds the trace's in-place times (labelled `in_place_label`).
    /// The deep specs keep their indices, so a twin's cell `at` is spec `at`'s.
    pub fn metrics(&self, time_metric: &str, in_place_label: &str) -> (MetricsFound, TimeSpecs) {
        use crate::analysis::Observations;
        let labels = (in_place_label, SERIALIZED_LABEL);
        with_serialized(self.source.metrics().clone(), time_metric, labels)
    }

    /// The deep results indexed by launch key.
    pub(crate) fn index(&self, filter: &Mutex<KernelFilter>) -> Result<TwinIndex> {
        // The deep passes of one traced reading: their keys numbered from 0.
        let deeps: Vec<(&Path, Option<u32>)> =
            self.paths.iter().map(|(p, r)| (p.as_path(), *r)).collect();
        self.source.twins_of(&deeps, filter, 0)
    }
}

/// Deep metrics `found` with the time metric relabelled as the trace's in-place time and the deep
/// engine's own duration added after them as a metric of its own (`serialized__` + its name),
/// where the deep metrics hold the time metric.
pub(crate) fn with_serialized(
    mut found: MetricsFound,
    time_metric: &str,
    (in_place_label, serialized_label): (&str, &str),
) -> (MetricsFound, TimeSpecs) {
    found.labels.resize(found.specs.len(), None);
    let mut specs = TimeSpecs::default();
    if let Some(at) = found.specs.iter().position(|s| s.name == time_metric) {
        let mut serialized = found.specs[at].clone();
        serialized.name = format!("{SERIALIZED_PREFIX}{time_metric}");
        found.labels[at] = Some(in_place_label.to_string());
        found.specs.push(serialized);
        found
            .groups
            .push(found.groups.get(at).cloned().unwrap_or_default());
        found.labels.push(Some(serialized_label.to_string()));
        specs = TimeSpecs {
            in_place: Some(at),
            serialized: Some(found.specs.len() - 1),
        };
    }
    found.has_time = true;
    (found, specs)
}

/// Every key's deep samples per spec, for the intervals. Every spec of a trace-timed sampled kernel
/// is its twins' but the time metric, the trace's own in-place time (measured on every launch); the
/// serialized duration spreads as the deep pass's time metric does. In-place and serialized
/// durations do not compare, so how much two runs differ is not known (no comparable time).
pub(crate) fn key_samples(
    index: &TwinIndex,
    specs: usize,
    time: TimeSpecs,
    strata: &StrataCounts,
) -> KeySamples {
    let deep = (0..specs).map(|at| Some(at) != time.in_place).collect();
    let mut samples = index.samples(deep, None);
    samples.keys.extend(strata.spreads.iter().cloned());
    if let (Some(from), Some(to)) = (time.in_place, time.serialized) {
        for spreads in samples.keys.values_mut() {
            spreads.resize(to, None);
            let serialized = spreads.get(from).copied().flatten();
            spreads.push(serialized);
        }
    }
    samples
}

/// The launch key of a traced kernel (its name aside).
pub(crate) fn shape(launch: &LaunchShape) -> Shape {
    Shape {
        grid: launch.grid.map(u64::from),
        block: launch.block.map(u64::from),
        registers: u64::from(launch.registers),
        shared_static: launch.static_shared,
        shared_dynamic: launch.dynamic_shared,
    }
}

/// The keys of one process's trace that ran different work, split into strata, by their place in
/// the index.
pub(crate) type ProcessStrata = SplitKeys<usize>;

/// The strata of the trace numbered `input` among the reading's: `launches` holds each key's
/// durations (by its place in the index) in launch order, as the deep pass saw them. Strata of two
/// traces never share an id.
pub(crate) fn process_strata(
    index: &TwinIndex,
    input: usize,
    launches: &FastMap<usize, Vec<f64>>,
    skipped: u32,
) -> ProcessStrata {
    let mut keys: Vec<(&usize, &Vec<f64>)> = launches.iter().collect();
    keys.sort_by_key(|(at, _)| **at);
    let splits = keys
        .into_iter()
        .filter_map(|(at, durations)| Some((*at, index.stratify(*at, durations, skipped)?)));
    SplitKeys::new(splits, STRATUM_IDS | ((input as u64) << 32))
}

/// What a trace's strata add to the reading: each stratum's samples under its id, and its keys.
pub(crate) fn strata_counts(strata: &ProcessStrata) -> StrataCounts {
    StrataCounts {
        spreads: strata.spreads().collect(),
        keys: strata.len(),
        borrowed: 0,
    }
}

/// The strata of a reading's traces, summed: every stratum's deep samples (for the intervals),
/// the keys split and the results that took values from a stratum not their own.
#[derive(Debug, Default)]
pub(crate) struct StrataCounts {
    pub spreads: Vec<(u64, Vec<Option<Spread>>)>,
    /// Keys split into strata in some trace (counted per trace).
    pub keys: u64,
    /// Results whose stratum had no deep sample and took another's.
    pub borrowed: u64,
}

impl StrataCounts {
    pub fn add(&mut self, other: StrataCounts) {
        self.spreads.extend(other.spreads);
        self.keys += other.keys;
        self.borrowed += other.borrowed;
    }
}

/// A kernel's twins with their key id, and how its deep values were obtained. The first launches of
/// a key in a process (as many as the deep pass profiled) count as measured, as with ncu's timing
/// pass. A key split into strata gives the twins of the launch's stratum (by its `duration`).
pub(crate) fn join<'i>(
    (index, strata): (&'i TwinIndex, &'i ProcessStrata),
    ordinals: &mut LaunchOrdinals,
    counts: &mut StrataCounts,
    process: (u32, Option<u64>),
    (mangled, launch, duration): (&str, &LaunchShape, f64),
) -> (Coverage, Option<(u64, &'i Twins)>) {
    match index.find(mangled, &shape(launch)) {
        Some((id, twins)) => {
            let measured = ordinals.measured(process, id, twins);
            let coverage = if measured {
                Coverage::Measured
            } else {
                Coverage::Estimated
            };
            let Some((twins, key, borrowed)) = strata.twins(&id, duration) else {
                return (coverage, Some((index.key(id), twins)));
            };
            counts.borrowed += u64::from(borrowed);
            let coverage = if borrowed {
                Coverage::Estimated
            } else {
                coverage
            };
            (coverage, Some((key, twins)))
        }
        None if ordinals.left_out(mangled) => (Coverage::NotMeasured, None),
        None => (Coverage::Unmatched, None),
    }
}

/// The deep pass's part of the report's account of the join: its size and keys.
#[derive(Debug, Default)]
pub struct DeepCounts {
    pub results: u64,
    pub keys: u64,
    /// Whether a top-up pass's file was left out.
    pub topup_left_out: bool,
    /// Why report files of the deep pass were left out (each could not be read).
    pub unread: Vec<String>,
    /// The deep pass's workers, where it ran as several.
    pub workers: Vec<DeepWorker>,
}

/// The report's account of the join: results per coverage, the deep pass's size, the key, and
/// (`recorded`) how an adaptive run sized its samples.
pub(crate) fn sampling(
    (found, time): (&MetricsFound, TimeSpecs),
    deep_paths: &[PathBuf],
    deep: &DeepCounts,
    (coverage, strata): ([u64; 4], &StrataCounts),
    (launch_count, recorded): (Option<u32>, Option<&AdaptiveRecord>),
) -> Sampling {
    let deep_results = deep.results;
    Sampling {
        adaptive: adaptive::sampling(recorded, deep.keys),
        deep_sources: deep_paths
            .iter()
            .flat_map(|p| std::iter::once(p.clone()).chain(worker_siblings(p)))
            .map(|p| p.display().to_string())
            .collect(),
        join_key: [
            "mangled kernel name",
            "grid",
            "block",
            "registers per thread",
            "static shared memory per block",
            "dynamic shared memory per block",
        ]
        .map(String::from)
        .to_vec(),
        launch_count,
        // Every spec but the time metric, which holds the trace's own in-place times.
        deep_metrics: found
            .specs
            .iter()
            .enumerate()
            .filter(|(at, _)| Some(*at) != time.in_place)
            .map(|(_, s)| s.name.clone())
            .collect(),
        deep_results,
        measured_results: coverage[0],
        estimated_results: coverage[1],
        unmatched_results: coverage[2],
        not_measured_results: coverage[3],
        stratified_keys: strata.keys,
        other_stratum_results: strata.borrowed,
        ranks: Vec::new(),
        deep_workers: deep.workers.clone(),
        engine: crate::profiler::ncu::observe::report_source::NCU_ENGINE.to_string(),
        estimated_time_results: 0,
        in_process_cost_s: None,
    }
}

/// A kernel's cells, coverage, weight and twins' key: its in-place time alone, or (a sampled run) its
/// in-place time and its twins' deep values, the deep pass's serialized duration among them, which
/// weighs the deep rates since they were measured over it (`specs`: how many cells, and where the
/// two durations are).
pub(crate) fn cells<'i>(
    deep: Option<(
        (&'i TwinIndex, &'i ProcessStrata),
        &mut LaunchOrdinals,
        &mut StrataCounts,
    )>,
    process: (u32, Option<u64>),
    (mangled, launch): (&str, &LaunchShape),
    duration: f64,
    (specs, time): (usize, TimeSpecs),
) -> (Coverage, Vec<Cell<'i>>, Option<f64>, Option<u64>) {
    let in_place = Cell::Num(duration);
    let Some((index, ordinals, strata)) = deep else {
        let time = [in_place];
        return (Coverage::Measured, time[..specs].to_vec(), None, None);
    };
    let (coverage, found) = join(
        index,
        ordinals,
        strata,
        process,
        (mangled, launch, duration),
    );
    let (key, twins) = (found.map(|(key, _)| key), found.map(|(_, twins)| twins));
    let twin_cell = |at: usize| twins.map_or(Cell::Missing, |t| t.cell(at));
    let values: Vec<Cell<'i>> = (0..specs)
        .map(
            |at| match (Some(at) == time.in_place, Some(at) == time.serialized) {
                (true, _) => in_place,
                // The deep pass's duration is its time metric's cell, where the trace's time now is.
                (_, true) => time.in_place.map_or(Cell::Missing, twin_cell),
                _ => twin_cell(at),
            },
        )
        .collect();
    let weight = time.serialized.and_then(|at| match values[at] {
        Cell::Num(serialized) => Some(serialized),
        _ => None,
    });
    (coverage, values, weight, key)
}
