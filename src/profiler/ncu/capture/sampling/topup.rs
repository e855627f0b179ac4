//! The top-up pass of an adaptive sampled run (`pipeline.ncu.sampling.adaptive`; docs/attribution.md,
//! "Adaptive samples per launch key"): how many deep samples each launch key needs from its
//! first-pass durations, and the one more ncu pass that takes those the deep pass left short.
//!
//! ncu takes one `--launch-count` per pass, so the top-up pass takes, for every key it selects (by
//! mangled name), the most any selected key still needs: keys that need fewer get more, never fewer.

use crate::analysis::AdaptiveRecord;
use crate::config::{Config, KernelNameForm, NcuCliConfig, SamplingConfig};
use crate::console::err_line;
use crate::error::{Error, Result};
use crate::process::progress::Display;
use crate::process::Finished;
use crate::profiler::ncu::observe::launch_durations::LaunchDurations;
use crate::profiler::ncu::observe::report_source::launch_durations;
use crate::profiler::ncu::observe::report_source::twins::Shape;
use crate::profiler::ncu::observe::trace::source::{scope_of, TraceSource};
use crate::run::{PassRecord, RunDir, RunRecord, COMMAND_FILE, REPORT_BASE};

use crate::profiler::ncu::capture::run::cli::NcuCli;
use crate::profiler::ncu::capture::run::{run_pass, Pass};
use crate::profiler::ncu::capture::trace;
use crate::profiler::ncu::plan::{FirstPass, NcuPlan};
use crate::run::{fresh_path, ncu_report_file, NCU_TOPUP_FAILED_REPORT_BASE};

use super::coverage;
use super::{deep_flags, samples_needed, DEEP_REPORT_BASE, TOPUP_LOG, TOPUP_REPORT_BASE};

/// What the first pass's durations ask of the deep samples.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Need {
    /// Launch keys of the first pass that the deep pass measured.
    pub keys: u64,
    /// Keys whose n exceeds the deep pass's `launch_count`.
    pub topped_up: u64,
    /// Keys held below their n by `max_samples`.
    pub capped: u64,
    /// The top-up pass those keys need; `None` when every key has its n from the deep pass.
    pub topup: Option<TopUp>,
}

/// The top-up pass's launch filter.
#[derive(Debug, Clone, PartialEq)]
pub struct TopUp {
    /// The mangled names of the keys that need more samples, each once, in first-seen order.
    pub names: Vec<String>,
    /// `--launch-skip`: each key's launches the deep pass skipped and measured.
    pub skip: u32,
    /// `--launch-count`: the most samples any selected key still needs.
    pub count: u32,
}

/// Each key's n = min(samples_needed(cv), its samples available), over the keys the deep pass
/// measured (`measured`). A key's samples pool over the processes that launched it (the twins and the
/// intervals average them all): per process it can give min(max_samples, launches − skipped), of which
/// the deep pass took min(launch_count, launches − skipped). The keys whose n exceeds what the deep
/// pass took make the top-up pass, which takes the rest spread over their processes.
pub(crate) fn decide(
    durations: &LaunchDurations,
    measured: impl Fn(&str, &Shape) -> bool,
    sampling: &SamplingConfig,
    skipped: u32,
) -> Need {
    let mut need = Need::default();
    let mut names: Vec<String> = Vec::new();
    let mut count = 0;
    let (budget, taken) = (sampling.budget(), sampling.launch_count);
    for (name, shape, key) in durations.keys() {
        if !measured(name, shape) {
            continue;
        }
        need.keys += 1;
        let available: Vec<u32> = key
            .per_process()
            .map(|(_, launches)| launches.saturating_sub(skipped))
            .collect();
        let sum = |per: &dyn Fn(u32) -> u32| -> u32 { available.iter().map(|a| per(*a)).sum() };
        let wanted = samples_needed(key.cv(), sampling.error).min(sum(&|a| a));
        let allowed = sum(&|a| a.min(budget));
        if wanted > allowed {
            need.capped += 1;
        }
        let n = wanted.min(allowed);
        let have = sum(&|a| a.min(taken));
        // The fewest more per process that gives the rest: ncu takes one count for every process,
        // and a process with few launches left gives fewer than its share. Some count up to the
        // budget always does, since n is at most what the budget allows.
        let more =
            (1..=budget - taken).find(|c| have + sum(&|a| a.saturating_sub(taken).min(*c)) >= n);
        if let (true, Some(more)) = (n > have, more) {
            need.topped_up += 1;
            count = count.max(more);
            if !names.iter().any(|known| known == name) {
                names.push(name.to_string());
            }
        }
    }
    need.topup = (count > 0).then(|| TopUp {
        names,
        skip: skipped + taken,
        count,
    });
    need
}

/// The top-up pass's flags: the deep pass's, limited to the keys' mangled names, past the launches
/// the deep pass skipped and measured.
pub fn topup_flags(deep: &NcuCliConfig, topup: &TopUp) -> NcuCliConfig {
    let mut flags = deep.clone();
    let names: Vec<String> = topup.names.iter().map(|n| regex::escape(n)).collect();
    flags.kernel_name = Some(format!("regex:^(?:{})$", names.join("|")));
    flags.kernel_name_base = Some(KernelNameForm::Mangled);
    flags.launch_skip = Some(u64::from(topup.skip));
    flags.launch_count = Some(u64::from(topup.count));
    flags
}

/// What the top-up pass runs with.
pub(crate) struct TopUpRun<'a> {
    pub config: &'a Config,
    pub plan: &'a NcuPlan,
    pub run: &'a RunDir,
    pub workload: &'a [String],
    pub grace: std::time::Duration,
    pub display: &'a Display,
}

/// After a deep pass that succeeded: sizes each key's samples from the first pass's launches
/// (`first`: as [`first_pass_durations`] read them), records it, and runs the top-up pass when some
/// key needs more. Returns how the top-up pass ended (`None`: none ran). A top-up pass that fails
/// leaves the deep pass's results as they are: its partial report file is moved aside
/// (`profile.topup.failed.ncu-rep`) and the record says it failed.
pub(crate) fn top_up(
    ctx: TopUpRun<'_>,
    record: &mut RunRecord,
    first: std::result::Result<&LaunchDurations, &Error>,
) -> Result<Option<Finished>> {
    let TopUpRun {
        config, plan, run, ..
    } = ctx;
    let Some((need, durations)) = size(&ctx, record, first)? else {
        return Ok(None);
    };
    let Some(topup) = need.topup else {
        run.write_record(record)?;
        return Ok(None);
    };
    let mut pass = topup_pass(&ctx, &topup);
    // The top-up pass profiles the ranks the deep pass profiled (`deep_ranks`' devices).
    if let Some(devices) = record
        .deep_ranks
        .as_ref()
        .and_then(|d| d.devices.as_deref())
    {
        pass.cli = pass.cli.on_devices(devices);
    }
    let command: Vec<String> = std::iter::once(pass.cli.program().to_string())
        .chain(pass.cli.argv())
        .collect();
    record.topup_pass = Some(PassRecord {
        command,
        ..PassRecord::default()
    });
    let commands = std::fs::read_to_string(run.path(COMMAND_FILE)).unwrap_or_default();
    run.write_text(
        COMMAND_FILE,
        &format!("{commands}{}\n", pass.cli.shell_line()),
    )?;
    run.write_record(record)?;
    let expected = coverage::uncountable(config, plan.passes)
        .is_none()
        .then(|| {
            let filter = coverage::LaunchFilter {
                skip: topup.skip,
                count: topup.count,
            };
            coverage::expected_results(durations, filter, |name| {
                topup.names.iter().any(|n| n == name)
            })
        })
        .flatten();
    // A pass that cannot even start (a name filter over the system's limit on one argument, say)
    // fails like one that ran and failed: the deep pass's results stand.
    let (finished, covered) = match run_pass(&pass, run, ctx.grace, ctx.display, expected) {
        Ok(ran) => ran,
        Err(e) => {
            if let Some(adaptive) = record.adaptive.as_mut() {
                adaptive.topup_failed = true;
            }
            err_line(&format!(
                "warning: ncu's top-up pass could not be run ({e}); the deep pass's results stand"
            ));
            run.write_record(record)?;
            return Ok(None);
        }
    };
    if let Some(pass) = record.topup_pass.as_mut() {
        pass.finish(&finished, covered);
    }
    let report = run.path(&ncu_report_file(TOPUP_REPORT_BASE));
    let ended_well = record
        .topup_pass
        .as_ref()
        .is_some_and(PassRecord::ended_well);
    let whole = ended_well && finished.interrupted_by.is_none() && report.is_file();
    if !whole {
        keep_aside(run, &report)?;
        if let Some(adaptive) = record.adaptive.as_mut() {
            adaptive.topup_failed = true;
        }
        err_line(&format!(
            "warning: ncu's top-up pass failed (see {}); the deep pass's results stand",
            run.path(TOPUP_LOG).display()
        ));
    }
    record.interrupted_by = finished.interrupted_by;
    run.write_record(record)?;
    Ok(Some(finished))
}

/// Sizes each key's samples from the first pass's launches and records it in `record`: the need
/// with the durations it came from, or `None` (recorded, with a warning) when they could not be read.
fn size<'d>(
    ctx: &TopUpRun<'_>,
    record: &mut RunRecord,
    first: std::result::Result<&'d LaunchDurations, &Error>,
) -> Result<Option<(Need, &'d LaunchDurations)>> {
    let (config, plan, run) = (ctx.config, ctx.plan, ctx.run);
    let sampling = &config.pipeline.ncu.sampling;
    let sized = first.map_err(|e| e.to_string()).and_then(|durations| {
        need(config, plan, run, record, durations)
            .map(|need| (need, durations))
            .map_err(|e| e.to_string())
    });
    let (need, durations) = match sized {
        Ok(need) => need,
        Err(e) => {
            err_line(&format!(
                "warning: the adaptive deep samples could not be sized ({e}); the deep pass's results stand"
            ));
            record.adaptive = Some(AdaptiveRecord {
                error: sampling.error,
                max_samples: sampling.budget(),
                keys: 0,
                keys_topped_up: 0,
                keys_capped: 0,
                topup_failed: false,
                sizing_failed: Some(e),
            });
            run.write_record(record)?;
            return Ok(None);
        }
    };
    record.adaptive = Some(AdaptiveRecord {
        error: sampling.error,
        max_samples: sampling.budget(),
        keys: need.keys,
        keys_topped_up: need.topped_up,
        keys_capped: need.capped,
        topup_failed: false,
        sizing_failed: None,
    });
    Ok(Some((need, durations)))
}

/// The top-up pass: the deep pass's command line with the top-up's launch filter and report file.
fn topup_pass(ctx: &TopUpRun<'_>, topup: &TopUp) -> Pass {
    let (config, dir) = (ctx.config, ctx.run.root());
    let ncu = &config.pipeline.ncu;
    let deep = deep_flags(
        &ncu.ncu_cli,
        ncu.sampling.launch_count,
        ncu.sampling.skip_cold_start,
    );
    let cli = NcuCli::profile(config, &ctx.plan.nvtx, &dir.join(REPORT_BASE), ctx.workload);
    Pass {
        name: "ncu's top-up pass",
        cli: cli.with_flags(topup_flags(&deep, topup), &dir.join(TOPUP_REPORT_BASE)),
        log: TOPUP_LOG,
    }
}

/// Moves a failed top-up pass's report file, if any, to `profile.topup.failed.ncu-rep`: kept, but
/// never read as the top-up of the deep pass.
fn keep_aside(run: &RunDir, report: &std::path::Path) -> Result<()> {
    if !report.is_file() {
        return Ok(());
    }
    let aside = fresh_path(run.root(), NCU_TOPUP_FAILED_REPORT_BASE, "ncu-rep");
    std::fs::rename(report, &aside).map_err(|source| Error::Write {
        path: aside,
        source,
    })
}

/// Each launch key's launches and durations in the first pass (ncu's timing pass, or the CUPTI
/// trace under `timing: trace`), over the launches the later passes' filters select.
pub(crate) fn first_pass_durations(
    config: &Config,
    plan: &NcuPlan,
    run: &RunDir,
    record: &RunRecord,
) -> Result<LaunchDurations> {
    let rank = record.rank.as_ref().map(|r| r.rank);
    Ok(match plan.passes.first {
        FirstPass::Trace => {
            let inputs = trace::traces(run, rank, config.pipeline.ncu.trace.max_mib)?;
            let source = TraceSource::open(
                &plan.analysis,
                &inputs,
                scope_of(config),
                plan.regions.excluded(),
                None,
            )?;
            source.launch_durations()?
        }
        FirstPass::Ncu => launch_durations(
            &plan.analysis,
            &run.report_file(),
            plan.max_block_bytes,
            None,
        )?,
    })
}

/// What the first pass's durations and the deep pass's keys ask of the top-up pass.
fn need(
    config: &Config,
    plan: &NcuPlan,
    run: &RunDir,
    record: &RunRecord,
    durations: &LaunchDurations,
) -> Result<Need> {
    // The deep pass's keys, read without indexing its values (the report indexes them once).
    let deep = run.path(&ncu_report_file(DEEP_REPORT_BASE));
    let measured = if deep.is_file() {
        launch_durations(&plan.analysis, &deep, plan.max_block_bytes, Some(0.0))?
    } else {
        LaunchDurations::default()
    };
    let skipped = super::skipped(&record.context(String::new()).deep_command);
    Ok(decide(
        durations,
        |name, shape| measured.contains(name, shape),
        &config.pipeline.ncu.sampling,
        skipped,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::FilterMode;
    use crate::config::DEFAULT_PRESET;

    fn sampling(launch_count: u32, max_samples: u32) -> SamplingConfig {
        SamplingConfig {
            enabled: true,
            launch_count,
            skip_cold_start: false,
            adaptive: true,
            error: 0.05,
            max_samples,
            stop_when_covered: true,
            min_time_share: 0.0,
            deep_ranks: crate::config::DeepRanks::Signature,
            deep_ranks_wait_seconds: 120,
        }
    }

    /// Durations with mean 100 and the given spread around it, one process.
    fn key(d: &mut LaunchDurations, name: &str, grid: u64, durations: &[f64]) {
        for ns in durations {
            d.add(name, Shape::of_grid(grid), (7, Some(0)), *ns, &[]);
        }
    }

    #[test]
    fn keys_that_need_more_than_the_deep_pass_took_make_one_topup_pass() {
        let mut d = LaunchDurations::default();
        // cv 0: n = 1.
        key(&mut d, "_Z4copy", 1, &[100.0; 6]);
        // 90, 110 three times: sd = sqrt(600/5) = 10.954, cv 0.10954: n = ⌈(1.96·0.10954/0.05)²⌉
        // = ⌈18.44⌉ = 19 of its 6 launches, held at max_samples 4 (a capped key).
        key(
            &mut d,
            "_Z4gemm",
            1,
            &[90.0, 110.0, 90.0, 110.0, 90.0, 110.0],
        );
        // 98, 102, 98, 102, 98, 102: sd = sqrt(24/5) = 2.191, cv 0.02191: n = ⌈0.737⌉ = 1.
        key(
            &mut d,
            "_Z4gemm",
            2,
            &[98.0, 102.0, 98.0, 102.0, 98.0, 102.0],
        );
        // 95, 105, 95: mean 98.33, sd 5.774, cv 0.05872: n = ⌈5.30⌉ = 6, held at its 3 launches.
        key(&mut d, "_Z4norm", 1, &[95.0, 105.0, 95.0]);
        // Not measured by the deep pass: never topped up, however it varies.
        key(&mut d, "_Z4skip", 1, &[10.0, 200.0]);
        let need = decide(&d, |name, _| name != "_Z4skip", &sampling(1, 4), 0);
        assert_eq!(need.keys, 4);
        assert_eq!(need.topped_up, 2);
        assert_eq!(need.capped, 1, "gemm wanted 6: the budget held it at 4");
        let topup = need.topup.unwrap();
        assert_eq!(topup.names, ["_Z4gemm", "_Z4norm"]);
        assert_eq!((topup.skip, topup.count), (1, 3), "gemm needs 4 - 1 more");

        // Cold starts skipped: one launch fewer to sample, and the top-up starts after both.
        let need = decide(&d, |name, _| name != "_Z4skip", &sampling(2, 4), 1);
        let topup = need.topup.unwrap();
        assert_eq!(
            (topup.skip, topup.count),
            (3, 2),
            "gemm: min(19, 4, 6 - 1) - 2"
        );
        assert_eq!(topup.names, ["_Z4gemm"], "norm: min(6, 3 - 1) = 2 = K");

        let need = decide(&d, |_, _| true, &sampling(4, 4), 0).topup;
        assert_eq!(need, None, "the deep pass took every key's n");
    }

    #[test]
    fn a_keys_samples_pool_over_its_processes() {
        // Four ranks launch gemm 6 times each with cv 0.1095: n = 19, as above. The deep pass took
        // one per rank (4); each rank can give 4 (the budget): n = min(19, 16) = 16 pooled, so
        // 12 more, 3 per rank.
        let mut d = LaunchDurations::default();
        for rank in 1..=4 {
            for ns in [90.0, 110.0, 90.0, 110.0, 90.0, 110.0] {
                d.add("_Z4gemm", Shape::of_grid(1), (rank, Some(0)), ns, &[]);
            }
        }
        // 96.5 and 103.5 over 16 launches: sd 3.615, cv 0.03615, n = ⌈2.004⌉ = 3. Four ranks'
        // one sample each already give 4: no top-up for it (sized per process it would get one).
        for rank in 1..=4 {
            for ns in [96.5, 103.5, 96.5, 103.5] {
                d.add("_Z4norm", Shape::of_grid(1), (rank, Some(0)), ns, &[]);
            }
        }
        let need = decide(&d, |_, _| true, &sampling(1, 4), 0);
        assert_eq!((need.keys, need.topped_up, need.capped), (2, 1, 1));
        let topup = need.topup.unwrap();
        assert_eq!(topup.names, ["_Z4gemm"]);
        assert_eq!((topup.skip, topup.count), (1, 3));
        // With a budget of 8 per rank gemm can give its 6 launches per rank, 24 in all: n = 19,
        // 15 more over 4 ranks, ⌈15/4⌉ = 4 each.
        let need = decide(&d, |_, _| true, &sampling(1, 8), 0);
        assert_eq!(need.topup.unwrap().count, 4);

        // Uneven ranks: A launches a key twice, B twenty times (90/110 alternating: sd 10.235,
        // cv 0.10235, n = ⌈16.10⌉ = 17). The deep pass took 2; A has 1 more to give, so B must give
        // 14: a count of 14 takes 1 + 14 = 15 more, where an even share (⌈15/2⌉ = 8) took 9.
        let mut uneven = LaunchDurations::default();
        for (rank, launches) in [(1, 2), (2, 20)] {
            for i in 0..launches {
                let ns = if i % 2 == 0 { 90.0 } else { 110.0 };
                uneven.add("_Z4gemm", Shape::of_grid(1), (rank, Some(0)), ns, &[]);
            }
        }
        let topup = decide(&uneven, |_, _| true, &sampling(1, 20), 0)
            .topup
            .unwrap();
        assert_eq!((topup.skip, topup.count), (1, 14));
    }

    #[test]
    fn the_topup_flags_select_the_keys_past_the_deep_passs_launches() {
        let config: Config = serde_yaml::from_str(DEFAULT_PRESET).unwrap();
        let deep = deep_flags(&config.pipeline.ncu.ncu_cli, 1, false);
        let flags = topup_flags(
            &deep,
            &TopUp {
                names: vec!["_Z4gemm".into(), "_Z3f$x".into()],
                skip: 2,
                count: 3,
            },
        );
        assert_eq!(
            flags.kernel_name.as_deref(),
            Some("regex:^(?:_Z4gemm|_Z3f\\$x)$")
        );
        assert_eq!(flags.kernel_name_base, Some(KernelNameForm::Mangled));
        assert_eq!((flags.launch_skip, flags.launch_count), (Some(2), Some(3)));
        assert_eq!(flags.filter_mode, Some(FilterMode::PerLaunchConfig));
        assert_eq!(flags.metrics, deep.metrics);
    }
}
