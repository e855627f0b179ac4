//! The deep pass, run: what the first pass found read once ([`first_findings`]), the plan made of
//! it (`deep_plan`) handed stage by stage to the executor, and, after its workers ended, the names
//! a worker was given and never profiled, planned again on new workers. A worker that fails twice
//! leaves its keys without deep results: unmatched in the report, never estimated. How each
//! worker went is in run.json (`deep_workers`), written by the journal alone.

use crate::config::Config;
use crate::console::err_line;
use crate::error::Result;
use crate::process::Finished;
use crate::profiler::ncu::capture::trace;
use crate::profiler::ncu::observe::launch_durations::LaunchDurations;
use crate::profiler::ncu::observe::report_source::launch_durations;
use crate::profiler::ncu::observe::trace::source::{scope_of, TraceSource};
use crate::profiler::ncu::plan::{FirstPass, NcuPlan};
use crate::profiler::ncu::readers::trace::TraceInput;
use crate::run::{Executor, Finding, Rank, RunDir};

use super::coverage;
use super::deep_plan::{unseen_group, DeepInputs, DeepPlan, FirstFindings, Stage, Unseen};
use super::ranks;
use super::workers::Worker;

/// What the first pass found, read once: the ranks' choice of the deep step (around a launcher
/// from the traces, one profile-run per rank with its peers through files) and, where the plan
/// needs them, the first pass's launches.
pub(crate) fn first_findings(
    config: &Config,
    plan: &NcuPlan,
    run: &RunDir,
    rank: Option<&Rank>,
) -> Result<FirstFindings> {
    let mut found = ranks::deep_step(config, plan, run, rank)?;
    let sampling = &config.pipeline.ncu.sampling;
    let countable = coverage::uncountable(config, plan.passes).is_none();
    let needed = sampling.adaptive || countable || sampling.min_time_share > 0.0;
    let unprofiled = matches!(
        found.step,
        ranks::DeepStep::Unprofiled | ranks::DeepStep::InRounds { mine: None, .. }
    );
    if needed && !unprofiled && found.durations.is_none() {
        found.durations = Some(first_pass_durations(config, plan, run, rank));
    }
    if !needed {
        found.durations = None;
    }
    Ok(found)
}

/// Runs the planned deep pass stage by stage; returns how the pass a signal stopped ended
/// (`None`: none was). An error planning or running this rank's own round is returned once every
/// round has run, so that its peers' collectives complete.
pub(crate) fn run(
    exec: &Executor<'_>,
    inputs: &DeepInputs<'_>,
    deep: DeepPlan,
) -> Result<Option<Finished>> {
    for note in &deep.notes {
        err_line(note);
    }
    if let Some(adaptive) = deep.adaptive {
        exec.journal.found(Finding::Adaptive(adaptive))?;
    }
    let mut failed = None;
    for stage in deep.stages {
        let stopped = match stage {
            Stage::Run(group) => exec.run(&group)?.stopped,
            Stage::OwnRound { deep_rank, passes } => {
                let ran = passes.and_then(|groups| {
                    for group in &groups {
                        if let Some(stopped) = exec.run(group)?.stopped {
                            return Ok(Some(stopped));
                        }
                    }
                    Ok(None)
                });
                exec.journal.found(Finding::OwnRound(deep_rank))?;
                match ran {
                    Ok(stopped) => stopped,
                    Err(e) => {
                        err_line(&format!(
                            "warning: rank {deep_rank}'s deep pass failed ({e}); running the rounds left unprofiled, so that the other ranks' collectives complete"
                        ));
                        failed = Some(e);
                        None
                    }
                }
            }
        };
        if stopped.is_some() {
            return Ok(stopped);
        }
    }
    if let Some(e) = failed {
        return Err(e);
    }
    match &deep.unseen {
        Some(unseen) => run_unseen(exec, inputs, unseen),
        None => Ok(None),
    }
}

/// The names each worker that ended well was given and never profiled (no key of them in its
/// report file), run once more as new workers after the others; a worker whose file cannot be
/// read is not checked. Names of which it profiled some keys stay as they are: run again, its
/// other keys would count twice.
fn run_unseen(
    exec: &Executor<'_>,
    inputs: &DeepInputs<'_>,
    unseen: &Unseen,
) -> Result<Option<Finished>> {
    let record = exec.journal.record();
    if record.deep_workers.is_empty() {
        return Ok(None);
    }
    let mut again: Vec<(usize, Worker)> = Vec::new();
    for (at, worker) in unseen.workers.iter().enumerate() {
        let Some(ran) = record.deep_workers.get(at) else {
            continue;
        };
        let (Some(names), true) = (&worker.names, ran.pass.ended_well()) else {
            continue;
        };
        let report = exec.journal.run().path(&ran.report);
        let plan = inputs.plan;
        let Ok(seen) = launch_durations(&plan.analysis, &report, plan.max_block_bytes, Some(0.0))
        else {
            continue;
        };
        let durations = &unseen.durations;
        let never: Vec<String> = names
            .iter()
            .filter(|name| {
                !durations
                    .keys()
                    .any(|(n, shape, _)| n == name.as_str() && seen.contains(n, shape))
            })
            .cloned()
            .collect();
        if never.is_empty() {
            continue;
        }
        let keys = durations
            .keys()
            .filter(|(n, _, _)| never.iter().any(|u| u == n))
            .count() as u64;
        err_line(&format!(
            "warning: worker {at} of ncu's deep pass profiled none of the launch keys of {} of its kernel names; running them once more on another worker",
            never.len()
        ));
        again.push((
            at,
            Worker {
                names: Some(never),
                count: worker.count,
                keys,
                cost: keys,
            },
        ));
    }
    if again.is_empty() {
        return Ok(None);
    }
    let group = unseen_group(inputs, unseen, again, record.deep_workers.len());
    Ok(exec.run(&group)?.stopped)
}

/// The run's traces (`inputs`) opened as the report reads them: the regions the plan selects,
/// their scopes as the configuration names them.
pub(crate) fn open_traces<'p>(
    config: &Config,
    plan: &'p NcuPlan,
    inputs: &[TraceInput],
) -> Result<TraceSource<'p>> {
    TraceSource::open(
        &plan.analysis,
        inputs,
        scope_of(config),
        plan.regions.excluded(),
        None,
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
        FirstPass::Ncu => launch_durations(
            &plan.analysis,
            &run.report_file(),
            plan.max_block_bytes,
            None,
        )?,
    })
}
