//! What a sampled run's passes found, read for planning the next: the first pass's findings, read
//! once ([`first_findings`]: the ranks' choice and the launches), and, once the deep pass's
//! workers ended, the names a worker was given and never profiled ([`never_profiled`]), which
//! the deep plan gives to new workers.

use crate::config::Config;
use crate::console::err_line;
use crate::error::Result;
use crate::profiler::ncu::observe::report_source::launch_durations;
use crate::profiler::ncu::plan::NcuPlan;
use crate::run::{Rank, RunDir, RunRecord};

use super::coverage;
use super::deep_plan::Unseen;
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

/// What the deep pass's workers left unprofiled: for each worker that ended well, the names it
/// was given and never profiled (no key of them in its report file), as a new worker to plan
/// (with the index of the worker it takes them from). A worker whose file cannot be read is not
/// checked. Names of which it profiled some keys stay as they are: run again, its other keys
/// would count twice.
pub(crate) fn never_profiled(
    plan: &NcuPlan,
    run: &RunDir,
    record: &RunRecord,
    unseen: &Unseen,
) -> Vec<(usize, Worker)> {
    let mut again: Vec<(usize, Worker)> = Vec::new();
    for (at, worker) in unseen.workers.iter().enumerate() {
        let Some(ran) = record.deep_workers.get(at) else {
            continue;
        };
        let (Some(names), true) = (&worker.names, ran.pass.ended_well()) else {
            continue;
        };
        let report = run.path(&ran.report);
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
    again
}
