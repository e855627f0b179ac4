//! A sampled run timed by the trace: the trace's kernels take their deep metrics from the deep pass
//! (ncu, one result per distinct launch), joined by the same launch key as ncu's timing pass is
//! (mangled name, grid, block, registers, static and dynamic shared memory; `report_source::twins`).
//! Times stay the trace's; the deep pass's own duration is kept as a deep metric, labelled serialized.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::analysis::AdaptiveRecord;
use crate::analysis::{AnalysisPlan, MetricsFound, RunContext};
use crate::error::Result;
use crate::profiler::ncu::observe::report_source::twins::{
    LaunchOrdinals, Shape, TwinIndex, Twins,
};
use crate::profiler::ncu::observe::report_source::{ReportInput, ReportSource};
use crate::region::{Coverage, KernelFilter};
use crate::report::model::Sampling;

use crate::profiler::ncu::readers::trace::Kernel;

/// How the time metric reads when its values come from the deep pass.
pub const SERIALIZED_LABEL: &str = "Duration, serialized (deep pass)";

/// The deep pass of a sampled run, ready to index.
pub struct DeepJoin<'p> {
    source: ReportSource<'p>,
    path: PathBuf,
    rank: Option<u32>,
}

impl<'p> DeepJoin<'p> {
    /// Opens the deep pass's report file; `None` when the pass wrote none (it failed or was stopped).
    pub fn open(
        plan: &'p AnalysisPlan,
        path: &Path,
        rank: Option<u32>,
        context: &RunContext,
        max_block: u64,
    ) -> Result<Option<DeepJoin<'p>>> {
        if !path.is_file() {
            return Ok(None);
        }
        let input = ReportInput {
            path: path.to_path_buf(),
            rank,
            deep: None,
        };
        let source = ReportSource::open(plan, &[input], context, &[], max_block)?;
        Ok(Some(DeepJoin {
            source,
            path: path.to_path_buf(),
            rank,
        }))
    }

    /// The deep pass's metrics, the time metric among them labelled serialized.
    pub fn metrics(&self, time_metric: &str) -> MetricsFound {
        use crate::analysis::Observations;
        let mut found = self.source.metrics().clone();
        for (spec, label) in found.specs.iter().zip(found.labels.iter_mut()) {
            if spec.name == time_metric {
                *label = Some(SERIALIZED_LABEL.to_string());
            }
        }
        found.has_time = true;
        found
    }

    /// The deep results indexed by launch key (the top-up pass's among them), and how many the
    /// top-up pass gave.
    pub(crate) fn index(&self, filter: &Mutex<KernelFilter>) -> Result<(TwinIndex, u64)> {
        // The one deep pass of a traced run: its keys numbered from 0.
        self.source.twins(&self.path, self.rank, filter, 0)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// The launch key of a traced kernel.
pub(crate) fn shape(kernel: &Kernel) -> Shape {
    Shape {
        grid: kernel.grid.map(u64::from),
        block: kernel.block.map(u64::from),
        registers: u64::from(kernel.registers),
        shared_static: kernel.static_shared,
        shared_dynamic: kernel.dynamic_shared,
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
    kernel: &Kernel,
) -> (Coverage, Option<(u64, &'i Twins)>) {
    match index.find(mangled, &shape(kernel)) {
        Some((id, twins)) => {
            let coverage = if ordinals.measured(process, id, twins) {
                Coverage::Measured
            } else {
                Coverage::Estimated
            };
            (coverage, Some((index.key(id), twins)))
        }
        None => (Coverage::Unmatched, None),
    }
}

/// The deep pass's part of the report's account of the join: its size, keys and top-up results.
#[derive(Debug, Default)]
pub struct DeepCounts {
    pub results: u64,
    pub keys: u64,
    pub topup_results: u64,
    /// Why the top-up pass's report file was left out, if it was.
    pub topup_unread: Option<String>,
}

/// The report's account of the join: results per coverage, the deep pass's size, the key, and
/// (`recorded`) how an adaptive run sized its samples.
pub fn sampling(
    found: &MetricsFound,
    deep_path: &Path,
    deep: &DeepCounts,
    coverage: [u64; 3],
    (launch_count, recorded): (Option<u32>, Option<&AdaptiveRecord>),
) -> Sampling {
    let deep_results = deep.results;
    Sampling {
        adaptive: crate::profiler::ncu::observe::adaptive::sampling(
            recorded,
            deep.keys,
            deep.topup_results,
        ),
        deep_sources: std::iter::once(deep_path.to_path_buf())
            .chain(crate::profiler::ncu::readers::siblings::topup_sibling(
                deep_path,
            ))
            .map(|p| p.display().to_string())
            .collect(),
        topup_sources: crate::profiler::ncu::readers::siblings::topup_sibling(deep_path)
            .map(|p| p.display().to_string())
            .into_iter()
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
        deep_metrics: found.specs.iter().map(|s| s.name.clone()).collect(),
        deep_results,
        measured_results: coverage[0],
        estimated_results: coverage[1],
        unmatched_results: coverage[2],
    }
}
