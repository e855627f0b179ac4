//! The first pass read for planning the deep pass: its traces opened for their launches (read once),
//! and each launch key's launches and durations (ncu's timing pass, or the CUPTI trace).

use crate::config::Config;
use crate::error::Result;
use crate::profiler::ncu::capture::trace;
use crate::profiler::ncu::observe::launch_durations::LaunchDurations;
use crate::profiler::ncu::observe::report_source::launch_durations;
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
