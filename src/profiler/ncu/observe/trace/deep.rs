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
use crate::profiler::ncu::observe::adaptive;
use crate::profiler::ncu::observe::report_source::twins::{
    LaunchOrdinals, Shape, TwinIndex, Twins,
};
use crate::profiler::ncu::observe::report_source::{ReportInput, ReportSource};
use crate::profiler::ncu::readers::siblings::{topup_sibling, worker_siblings};
use crate::region::{Coverage, KernelFilter, KeySamples};
use crate::report::model::{DeepWorker, Sampling};

use crate::profiler::ncu::readers::trace::LaunchShape;

/// How the deep pass's own duration reads, kept beside the trace's in-place time.
pub const SERIALIZED_LABEL: &str = "Duration, serialized (deep pass)";

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
        let mut found = self.source.metrics().clone();
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
            found.labels.push(Some(SERIALIZED_LABEL.to_string()));
            specs = TimeSpecs {
                in_place: Some(at),
                serialized: Some(found.specs.len() - 1),
            };
        }
        found.has_time = true;
        (found, specs)
    }

    /// The deep results indexed by launch key (the top-up pass's among them), and how many the
    /// top-up pass gave.
    pub(crate) fn index(&self, filter: &Mutex<KernelFilter>) -> Result<(TwinIndex, u64)> {
        // The deep passes of one traced reading: their keys numbered from 0.
        let deeps: Vec<(&Path, Option<u32>)> =
            self.paths.iter().map(|(p, r)| (p.as_path(), *r)).collect();
        self.source.twins_of(&deeps, filter, 0)
    }
}

/// Every key's deep samples per spec, for the intervals. Every spec of a trace-timed sampled kernel
/// is its twins' but the time metric, the trace's own in-place time (measured on every launch); the
/// serialized duration spreads as the deep pass's time metric does. In-place and serialized
/// durations do not compare, so how much two runs differ is not known (no comparable time).
pub(crate) fn key_samples(index: &TwinIndex, specs: usize, time: TimeSpecs) -> KeySamples {
    let deep = (0..specs).map(|at| Some(at) != time.in_place).collect();
    let mut samples = index.samples(deep, None);
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

/// A kernel's twins with their key id, and how its deep values were obtained. The first launches of
/// a key in a process (as many as the deep pass profiled) count as measured, as with ncu's timing
/// pass.
pub(crate) fn join<'i>(
    index: &'i TwinIndex,
    ordinals: &mut LaunchOrdinals,
    process: (u32, Option<u64>),
    mangled: &str,
    launch: &LaunchShape,
) -> (Coverage, Option<(u64, &'i Twins)>) {
    match index.find(mangled, &shape(launch)) {
        Some((id, twins)) => {
            let coverage = if ordinals.measured(process, id, twins) {
                Coverage::Measured
            } else {
                Coverage::Estimated
            };
            (coverage, Some((index.key(id), twins)))
        }
        None if ordinals.left_out(mangled) => (Coverage::NotMeasured, None),
        None => (Coverage::Unmatched, None),
    }
}

/// The deep pass's part of the report's account of the join: its size, keys and top-up results.
#[derive(Debug, Default)]
pub struct DeepCounts {
    pub results: u64,
    pub keys: u64,
    pub topup_results: u64,
    /// Why report files of the deep pass were left out (each could not be read).
    pub unread: Vec<String>,
    /// The deep pass's workers, where it ran as several.
    pub workers: Vec<DeepWorker>,
}

/// The report's account of the join: results per coverage, the deep pass's size, the key, and
/// (`recorded`) how an adaptive run sized its samples.
pub fn sampling(
    (found, time): (&MetricsFound, TimeSpecs),
    deep_paths: &[PathBuf],
    deep: &DeepCounts,
    coverage: [u64; 4],
    (launch_count, recorded): (Option<u32>, Option<&AdaptiveRecord>),
) -> Sampling {
    let deep_results = deep.results;
    Sampling {
        adaptive: adaptive::sampling(recorded, deep.keys, deep.topup_results),
        deep_sources: deep_paths
            .iter()
            .flat_map(|p| {
                std::iter::once(p.clone())
                    .chain(worker_siblings(p))
                    .chain(topup_sibling(p))
            })
            .map(|p| p.display().to_string())
            .collect(),
        topup_sources: deep_paths
            .iter()
            .filter_map(|p| topup_sibling(p))
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
        ranks: Vec::new(),
        deep_workers: deep.workers.clone(),
    }
}
