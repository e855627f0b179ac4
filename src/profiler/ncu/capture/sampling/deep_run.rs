//! The deep pass, run: what the first pass found read once ([`first_findings`]), the plan made of
//! it (`deep_plan`) handed stage by stage to the executor, and, after its workers ended, the names
//! a worker was given and never profiled, planned again on new workers. A worker that fails twice
//! leaves its keys without deep results: unmatched in the report, never estimated. How each
//! worker went is in run.json (`deep_workers`), written by the journal alone.

use crate::config::Config;
use crate::console::err_line;
use crate::error::Result;
use crate::process::Finished;
use crate::profiler::ncu::observe::report_source::launch_durations;
use crate::profiler::ncu::plan::NcuPlan;
use crate::run::{Executor, Finding, Rank, RunDir};

use super::coverage;
use super::deep_plan::{unseen_group, DeepInputs, DeepPlan, Unseen};
use super::first_pass::first_pass_durations;
use super::ranks::{self, FirstFindings};
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

/// Runs the planned deep pass; returns how the pass a signal stopped ended (`None`: none was).
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
    if let Some(stopped) = exec.run_stages(deep.stages)? {
        return Ok(Some(stopped));
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
