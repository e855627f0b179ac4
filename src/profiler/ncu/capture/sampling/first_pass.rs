//! The first pass read for planning the deep pass: its traces opened for their launches (read once),
//! and each launch key's launches and durations (ncu's timing pass, or the CUPTI trace).

use crate::config::Config;
use crate::error::Result;
use crate::profiler::ncu::capture::trace;
use crate::profiler::ncu::observe::launch_durations::LaunchDurations;
use crate::profiler::ncu::observe::report_source::launch_durations;
use crate::profiler::ncu::observe::trace::inprocess::KeptIndex;
use crate::profiler::ncu::observe::trace::source::{scope_of, TraceSource};
use crate::profiler::ncu::plan::{FirstPass, NcuPlan};
use crate::profiler::ncu::readers::trace::TraceInput;
use crate::run::{Rank, RunDir};

/// The run's traces (`inputs`) opened for their launches: the regions the plan selects, their
/// scopes as the configuration names them, and no in-process deep counters looked for.
pub(crate) fn open_traces<'p>(
    config: &Config,
    plan: &'p NcuPlan,
    inputs: &[TraceInput],
) -> Result<TraceSource<'p>> {
    TraceSource::open_for_launches(
        &plan.analysis,
        inputs,
        scope_of(config),
        plan.regions.excluded(),
    )
}

/// What an in-process run's traces hold that only ncu's deep pass measures: the launch keys that
/// ran only inside CUDA graphs, and how many processes were traced.
pub(crate) struct GraphOnly {
    pub names: Vec<String>,
    pub processes: usize,
}

impl GraphOnly {
    /// The mangled names of those keys; `None` when there are none.
    pub fn names(self) -> Option<Vec<String>> {
        (!self.names.is_empty()).then_some(self.names)
    }
}

/// The launch keys of an in-process run's traces that ran only inside CUDA graphs, never profiled
/// in process (`sampling.graph_kernels`): the traces read for their counters' index, as the report
/// reads them, and the index kept in the plan for the report of the same run.
pub(crate) fn graph_only(config: &Config, plan: &NcuPlan, run: &RunDir) -> Result<GraphOnly> {
    let inputs = trace::traces(run, None, config.pipeline.ncu.trace.max_mib)?;
    let filter = (scope_of(config), plan.regions.excluded());
    // Nothing is kept before this reading: it is the one that keeps the index.
    let fresh = KeptIndex::default();
    let source = TraceSource::open(&plan.analysis, &inputs, filter, None, &fresh)?;
    let mut names = Vec::new();
    if let Some(index) = source.into_index() {
        names.clone_from(&index.graph_only);
        plan.first_index.keep(&inputs, index);
    }
    Ok(GraphOnly {
        names,
        processes: inputs.len(),
    })
}

/// Each launch key's launches and durations in the first pass (ncu's timing pass, or the CUPTI
/// trace under `timing: trace`), over the launches the later passes' filters select.
pub(crate) fn first_pass_durations(
    config: &Config,
    plan: &NcuPlan,
    run: &RunDir,
    rank: Option<&Rank>,
) -> Result<LaunchDurations> {
    Ok(match plan.passes.first {
        FirstPass::Trace => {
            let rank = rank.map(|r| r.rank);
            let inputs = trace::traces(run, rank, config.pipeline.ncu.trace.max_mib)?;
            open_traces(config, plan, &inputs)?.launch_durations()?
        }
        FirstPass::Ncu => {
            let path = run.report_file();
            let durations = launch_durations(&plan.analysis, &path, plan.max_block_bytes, None)?;
            // The report's strata are cut from the same launches: kept, the file is not read again.
            plan.first_read.keep(&path, &durations);
            durations
        }
    })
}
