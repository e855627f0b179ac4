//! A traced run's report: its traces and any deep pass read under the run's plan, and whose
//! push/pop ranges count as configured for ncu.

use super::*;

/// Whose push/pop ranges count, as configured for ncu (`pipeline.ncu.ncu_cli.nvtx.push_pop_scope`;
/// unset is ncu's default, thread).
pub fn scope_of(config: &Config) -> PushPopScope {
    match config.pipeline.ncu.ncu_cli.nvtx.push_pop_scope {
        Some(ConfigScope::Process) => PushPopScope::Process,
        _ => PushPopScope::Thread,
    }
}

/// The report of a run's traces, under a checked plan; `deep`: a sampled run's deep pass; `kept`:
/// the counters' index planning built of the same traces, if it did.
pub fn analyze_traces(
    (plan, kept): (&ReadPlan<'_>, &inprocess::KeptIndex),
    config: &Config,
    inputs: &[TraceInput],
    deep: &[(std::path::PathBuf, Option<u32>)],
    context: &RunContext,
) -> Result<Report> {
    // A deep pass's file that cannot be read is left out: the traces' times stand without it.
    let (readable, unread) = report_source::unreadable::split_readable(deep, plan.max_block);
    let sampled = match deep.is_empty() {
        false => Some(Sampled {
            deep: DeepJoin::open(plan.analysis, &readable, context, plan.max_block)?,
            paths: deep.iter().map(|(p, _)| p.clone()).collect(),
            unread,
            deep_ranks: context.deep_ranks.clone(),
            launch_count: Some(config.pipeline.ncu.sampling.launch_count),
            ordinals: LaunchOrdinals::of_run(context),
            adaptive: context.adaptive.clone(),
            stopped_when_covered: context.stopped_when_covered,
            beside_counters: context
                .deep_engine
                .as_deref()
                .is_some_and(|engine| engine == inprocess::ENGINE),
        }),
        true => None,
    };
    let filter = (scope_of(config), plan.regions.excluded());
    let source = TraceSource::open(plan.analysis, inputs, filter, sampled, kept)?;
    let mut report = analyze(plan.analysis, source, context)?;
    let analysis = plan.analysis;
    let replay = (scope_of(config), &analysis.renames, analysis.max_depth);
    attach_timeline(&mut report, config, inputs, replay)?;
    Ok(report)
}
