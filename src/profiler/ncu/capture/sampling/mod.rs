//! Sampled profiling (`pipeline.ncu.sampling`): the two ncu passes a sampled run makes, the settings
//! that would make joining them impossible (refused before anything runs), and where each pass keeps
//! its files in the run directory. The join itself is in `report_source::twins`.
//!
//! The timing pass collects the time metric and the launch attributes that key a launch, one cheap
//! pass per kernel, so every kernel in every requested region has its exact time, count, range
//! instance and thread. The deep pass collects the configured sections, metrics or set once per
//! distinct launch (`--filter-mode per-launch-config --launch-count K --kernel-name-base mangled`:
//! with ncu's default `function` name base, launches of one template with other arguments would
//! share one deep result). The whole deep pass is planned in `deep_plan` (its workers per sample count
//! from `workers`, ending a pass once it has profiled what the report will use from `coverage`) and
//! run by the run's executor; `in_process` has the deep metrics the trace pass collects itself, `chips` the passes
//! they take on this machine's GPUs.
//!
//! Floor: profiler (see `crate::profiler`): imports run, process, analysis, insights, report,
//! config, region and the ground floor, and its own profiler's rooms.

pub mod chips;
pub mod coverage;
pub mod deep_plan;
pub mod findings;
pub mod first_pass;
pub mod in_process;
pub mod pattern_limit;
pub mod ranks;
pub mod share;
pub mod strata;
pub mod workers;

use crate::config::{
    Config, DeepEngine, FilterMode, GraphProfiling, KernelNameForm, NcuCliConfig, ReplayMode,
    ReportReader, SamplingConfig, TimingSource,
};

/// The metrics that, with the mangled name, grid and block, key a launch: both passes collect them.
/// They come from the launch itself, so collecting them adds no replay pass.
pub const KEY_METRICS: [&str; 5] = [
    "launch__grid_size",
    "launch__block_size",
    "launch__registers_per_thread",
    "launch__shared_mem_per_block_static",
    "launch__shared_mem_per_block_dynamic",
];

pub use crate::run::{NCU_DEEP_LOG as DEEP_LOG, NCU_DEEP_REPORT_BASE as DEEP_REPORT_BASE};

pub use crate::profiler::ncu::readers::siblings::{
    deep_sibling, kept_names, worker_siblings, Sibling,
};

/// The results a deep pass's (or a worker's) report file holds, only those of the names `only`
/// matches where given (a worker's `--kernel-name`), or why it cannot be read to its end.
pub fn report_results(
    report: &std::path::Path,
    only: Option<&regex::Regex>,
) -> std::result::Result<u64, crate::profiler::ncu::readers::report_file::ReportFileError> {
    use crate::profiler::ncu::readers::report_file::{ReportFile, ReportFileError};
    let mut n = 0u64;
    ReportFile::open(report)?.for_each_result(|r| {
        let kept = r.kernel.as_ref().map(|k| k.mangled);
        n += u64::from(only.is_none_or(|only| kept.is_some_and(|name| only.is_match(name))));
        Ok::<(), ReportFileError>(())
    })?;
    Ok(n)
}

/// How a worker's pass ended: the exit code or the signal.
fn how_it_failed(pass: &crate::run::PassRecord) -> String {
    match (pass.exit_code, pass.signal) {
        (_, Some(signal)) => format!("killed by signal {signal}"),
        (Some(code), None) => format!("exit code {code}"),
        (None, None) => "no exit code".to_string(),
    }
}

/// The warning on worker `at` of the deep pass, which failed (`again`: in its second try, alone;
/// else one rank's worker, not tried again): how it ended, and what becomes of its launch keys.
pub(crate) fn failed_worker(
    run: &crate::run::RunDir,
    at: usize,
    worker: &crate::run::DeepWorkerRecord,
    again: bool,
) -> String {
    let (again, after, unmatched) = match again {
        true => (" again", "", "its launch keys have no deep results (unmatched)"),
        false => (
            "",
            "; not run again: this rank's workload alone would wait for its peers' collectives",
            "its launch keys have no deep results of this rank (unmatched, or taken from another rank by `merge`)",
        ),
    };
    format!(
        "warning: worker {at} of ncu's deep pass failed{again} ({}; see {}){after}; {}",
        how_it_failed(&worker.pass),
        run.path(&worker.log).display(),
        keys_of_failed(run, worker, unmatched)
    )
}

/// What becomes of a failed worker's launch keys: `none` (no deep results), unless it wrote its
/// report file whole all the same, which is then read like any worker's: its results are used.
fn keys_of_failed(
    run: &crate::run::RunDir,
    worker: &crate::run::DeepWorkerRecord,
    none: &str,
) -> String {
    let report = run.path(&worker.report);
    match report_results(&report, kept_names(&worker.pass.command).as_ref()) {
        Ok(results) if results > 0 => format!(
            "its report file {} was written whole all the same and is read: its {results} result(s) are used",
            report.display()
        ),
        _ => none.to_string(),
    }
}

/// Why sampling cannot run with these settings, naming the key and what to do; `None` when it can
/// (or sampling is off).
pub fn refusal(config: &Config) -> Option<String> {
    let ncu = &config.pipeline.ncu;
    if !ncu.sampling.enabled {
        return None;
    }
    if ncu.sampling.deep_engine == DeepEngine::InProcess && ncu.timing == TimingSource::Ncu {
        return Some(
            "pipeline.ncu.sampling.deep_engine is `in_process`, which collects the deep metrics inside the traced run, but pipeline.ncu.timing is `ncu` (no trace pass); set pipeline.ncu.timing=trace (or auto, with the injection library beside profile-run), or deep_engine=ncu"
                .into(),
        );
    }
    let cli = &ncu.ncu_cli;
    if matches!(cli.replay_mode, ReplayMode::Range | ReplayMode::AppRange) {
        return Some(format!(
            "pipeline.ncu.sampling needs one result per kernel launch, but pipeline.ncu.ncu_cli.replay_mode is `{}` (one result per range instance, nothing to join by launch); set replay_mode=kernel, or sampling.enabled=false",
            cli.replay_mode.as_ncu()
        ));
    }
    if ncu.sampling.launch_count == 0 {
        return Some(
            "pipeline.ncu.sampling.launch_count is 0: the deep pass would profile nothing; set it to 1 or more"
                .into(),
        );
    }
    if let Some(why) = adaptive_refusal(&ncu.sampling) {
        return Some(why);
    }
    if let Some(why) = share::refusal(&ncu.sampling, cli) {
        return Some(why);
    }
    if ncu.reader != ReportReader::Native {
        return Some(
            "pipeline.ncu.sampling joins the passes by mangled kernel name, which only the report file holds, but pipeline.ncu.reader is `csv`; set pipeline.ncu.reader=native"
                .into(),
        );
    }
    if cli.graph_profiling == Some(GraphProfiling::Graph) {
        return Some(
            "pipeline.ncu.sampling joins kernel launches, but pipeline.ncu.ncu_cli.graph_profiling is `graph` (one result per CUDA graph, with no launch configuration); set it to node (or null)"
                .into(),
        );
    }
    let owned = [
        ("filter_mode", cli.filter_mode.is_some()),
        ("launch_count", cli.launch_count.is_some()),
        ("launch_skip", cli.launch_skip.is_some()),
        (
            "launch_skip_before_match",
            cli.launch_skip_before_match.is_some(),
        ),
        ("kernel_id", cli.kernel_id.is_some()),
    ];
    if let Some((key, _)) = owned.iter().find(|(_, set)| *set) {
        return Some(format!(
            "pipeline.ncu.ncu_cli.{key} is set, but with pipeline.ncu.sampling the deep pass sets the launch filter itself (--filter-mode per-launch-config --launch-count K) and the timing pass must see every launch its twin stands for; set {key}=null (choose kernels with report.kernels, deep results per launch with sampling.launch_count)"
        ));
    }
    match (cli.kernel_name.is_some(), cli.kernel_name_base) {
        (_, Some(base)) if base != KernelNameForm::Mangled => Some(format!(
            "pipeline.ncu.ncu_cli.kernel_name_base is `{base}`, but the deep pass of pipeline.ncu.sampling needs `mangled` (with `function`, launches of one template with other arguments share one deep result); set kernel_name_base=null, and write any kernel_name pattern against mangled names"
        )),
        (true, None) => Some(
            "pipeline.ncu.ncu_cli.kernel_name is set without kernel_name_base: the deep pass of pipeline.ncu.sampling matches kernel names in mangled form, so the pattern would mean something else in each pass; set kernel_name_base=mangled and write the pattern against mangled names, or choose kernels with report.kernels"
                .into(),
        ),
        _ => None,
    }
}

/// Why the adaptive settings cannot be used, naming the key; `None` when they can (or are off).
fn adaptive_refusal(sampling: &SamplingConfig) -> Option<String> {
    if !sampling.adaptive {
        return None;
    }
    let error = sampling.error;
    if !(error > 0.0 && error < 1.0) {
        return Some(format!(
            "pipeline.ncu.sampling.error is {error}, but it is the relative half-width a key's mean aims at and must lie in (0, 1); set it to 0.05 for ±5%"
        ));
    }
    if sampling.max_samples == 0 {
        return Some(
            "pipeline.ncu.sampling.max_samples is 0, but it is the most deep samples a key gets; set it to 1 or more (4 by default)"
                .into(),
        );
    }
    None
}

/// The deep samples a launch key needs for its mean to lie within ±`error` (relative) at 95%:
/// n = ⌈(1.96·cv/error)²⌉, at least 1; `cv` is the coefficient of variation of the key's durations
/// (sample standard deviation over mean; 0 for a key launched once). STEM's rule (MICRO 2025).
pub fn samples_needed(cv: f64, error: f64) -> u32 {
    // A key's own mean is the region rule for a key that holds the whole of a region.
    samples_needed_in_regions(cv, error, 1.0)
}

/// The deep samples a launch key needs so that every region's time-weighted mean lies within
/// ±`error` at 95%: [`samples_needed`] scaled by `share`, the largest share of a region's time the
/// key holds. With n_k = (1.96·c_k/ε)²·s_k samples per key, a region whose keys hold shares w_k ≤ s_k
/// (Σ w_k = 1) has a relative standard error √(Σ w_k²·c_k²/n_k) ≤ (ε/1.96)·√(Σ w_k²/s_k) ≤ ε/1.96:
/// a key that weighs little everywhere needs few samples, however much it varies.
pub fn samples_needed_in_regions(cv: f64, error: f64, share: f64) -> u32 {
    let n = ((1.96 * cv / error).powi(2) * share.clamp(0.0, 1.0)).ceil();
    if n.is_nan() || n < 1.0 {
        1
    } else if n >= f64::from(u32::MAX) {
        u32::MAX
    } else {
        n as u32
    }
}

/// Whether the user's `extra_args` give ncu `flag` themselves (`--flag value` or `--flag=value`):
/// a flag profile-run would add is then left to them, not passed twice.
pub(crate) fn in_extra_args(cli: &NcuCliConfig, flag: &str) -> bool {
    cli.extra_args
        .iter()
        .any(|a| a.split('=').next() == Some(flag))
}

/// The timing pass's flags: the configured ones without sections, set or metrics, collecting only
/// the time metric and the launch key. Its results need neither ncu's rules (the twins' rule results
/// stand for them) nor the kernels' SASS (it holds no source-level metric), so both are left out:
/// each costs time per kernel, and the timing pass profiles every kernel.
pub fn timing_flags(cli: &NcuCliConfig, time_metric: &str) -> NcuCliConfig {
    let mut timing = cli.clone();
    timing.set = None;
    timing.sections = Vec::new();
    timing.metrics = std::iter::once(time_metric)
        .chain(KEY_METRICS)
        .map(String::from)
        .collect();
    timing.apply_rules = Some(false);
    timing.import_source = None;
    if !in_extra_args(&timing, "--import-sass") {
        timing
            .extra_args
            .extend(["--import-sass".into(), "no".into()]);
    }
    timing
}

/// The deep pass's flags: the configured ones, the launch key added to the metrics, and one deep
/// result per `launch_count` launches of each distinct launch, after its first when
/// `skip_cold_start`. Python call stacks are left out: the
/// regions come from the timing pass.
pub fn deep_flags(cli: &NcuCliConfig, launch_count: u32, skip_cold_start: bool) -> NcuCliConfig {
    let mut deep = cli.clone();
    for key in KEY_METRICS {
        if !deep.metrics.iter().any(|m| m == key) {
            deep.metrics.push(key.to_string());
        }
    }
    deep.filter_mode = Some(FilterMode::PerLaunchConfig);
    deep.launch_count = Some(u64::from(launch_count));
    // With per-launch-config, ncu applies --launch-skip to each configuration.
    deep.launch_skip = skip_cold_start.then_some(1);
    deep.kernel_name_base = Some(KernelNameForm::Mangled);
    deep.call_stack = false;
    deep.call_stack_type = Vec::new();
    // The kernels' SASS feeds only source-level metrics (the SourceCounters section, which the
    // stock sets carry); without them the deep pass need not store it (72 GPT-2 results: 73 MB).
    let source_level = deep.set.is_some()
        || deep.import_source.is_some()
        || deep.sections.iter().any(|s| s == "SourceCounters");
    if !source_level && !in_extra_args(&deep, "--import-sass") {
        deep.extra_args
            .extend(["--import-sass".into(), "no".into()]);
    }
    deep
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::DEFAULT_PRESET;

    /// The default preset with sampling on (also `share.rs`'s tests' starting point).
    pub(super) fn config() -> Config {
        let mut config: Config = serde_yaml::from_str(DEFAULT_PRESET).unwrap();
        config.pipeline.ncu.sampling.enabled = true;
        config
    }

    /// A change to the configuration and the refusal it must give.
    type Case = (Box<dyn Fn(&mut Config)>, &'static str);

    #[test]
    fn settings_that_defeat_the_join_are_refused_with_the_key() {
        assert_eq!(refusal(&config()), None);
        let cases: Vec<Case> = vec![
            (
                Box::new(|c| c.pipeline.ncu.ncu_cli.replay_mode = ReplayMode::Range),
                "replay_mode is `range`",
            ),
            (
                Box::new(|c| c.pipeline.ncu.ncu_cli.replay_mode = ReplayMode::AppRange),
                "replay_mode is `app-range`",
            ),
            (
                Box::new(|c| c.pipeline.ncu.reader = ReportReader::Csv),
                "pipeline.ncu.reader=native",
            ),
            (
                Box::new(|c| c.pipeline.ncu.ncu_cli.filter_mode = Some(FilterMode::Global)),
                "ncu_cli.filter_mode is set",
            ),
            (
                Box::new(|c| c.pipeline.ncu.ncu_cli.launch_skip = Some(3)),
                "ncu_cli.launch_skip is set",
            ),
            (
                Box::new(|c| {
                    c.pipeline.ncu.ncu_cli.kernel_name_base = Some(KernelNameForm::Function)
                }),
                "kernel_name_base is `function`",
            ),
            (
                Box::new(|c| c.pipeline.ncu.ncu_cli.kernel_name = Some("regex:gemm".into())),
                "kernel_name is set without kernel_name_base",
            ),
            (
                Box::new(|c| c.pipeline.ncu.ncu_cli.graph_profiling = Some(GraphProfiling::Graph)),
                "graph_profiling is `graph`",
            ),
            (
                Box::new(|c| c.pipeline.ncu.sampling.launch_count = 0),
                "launch_count is 0",
            ),
            (
                Box::new(|c| {
                    c.pipeline.ncu.sampling.adaptive = true;
                    c.pipeline.ncu.sampling.error = 0.0;
                }),
                "pipeline.ncu.sampling.error is 0",
            ),
            (
                Box::new(|c| {
                    c.pipeline.ncu.sampling.adaptive = true;
                    c.pipeline.ncu.sampling.error = 1.5;
                }),
                "pipeline.ncu.sampling.error is 1.5",
            ),
        ];
        for (change, expected) in cases {
            let mut c = config();
            change(&mut c);
            let why = refusal(&c).expect(expected);
            assert!(why.contains(expected), "{why}");
        }
        // ncu/sampled's budget of 4 never refuses a larger launch_count: that count is the budget.
        let mut more = config();
        more.pipeline.ncu.sampling.adaptive = true;
        more.pipeline.ncu.sampling.launch_count = 5;
        assert_eq!(refusal(&more), None);
        assert_eq!(more.pipeline.ncu.sampling.budget(), 5);
        let mut mangled = config();
        mangled.pipeline.ncu.ncu_cli.kernel_name = Some("regex:^_Z.*gemm".into());
        mangled.pipeline.ncu.ncu_cli.kernel_name_base = Some(KernelNameForm::Mangled);
        assert_eq!(refusal(&mangled), None);
        let mut off = config();
        off.pipeline.ncu.sampling.enabled = false;
        off.pipeline.ncu.ncu_cli.replay_mode = ReplayMode::Range;
        assert_eq!(refusal(&off), None);
    }

    #[test]
    fn samples_follow_stems_rule() {
        // (1.96 · 0.1 / 0.05)² = 3.92² = 15.3664 → 16.
        assert_eq!(samples_needed(0.1, 0.05), 16);
        // (1.96 · 0.02 / 0.05)² = 0.784² = 0.614656 → 1.
        assert_eq!(samples_needed(0.02, 0.05), 1);
        // (1.96 · 0.05 / 0.05)² = 3.8416 → 4.
        assert_eq!(samples_needed(0.05, 0.05), 4);
        // (1.96 · 0.3 / 0.1)² = 5.88² = 34.5744 → 35.
        assert_eq!(samples_needed(0.3, 0.1), 35);
        assert_eq!(samples_needed(0.0, 0.05), 1, "a key seen once");
        assert_eq!(samples_needed(f64::NAN, 0.05), 1);
        assert_eq!(samples_needed(1e9, 0.01), u32::MAX);
    }

    #[test]
    fn region_scope_scales_a_keys_samples_by_its_largest_share() {
        // cv 0.1 at ±5%: 16 for the key's own mean (15.3664 → 16).
        assert_eq!(samples_needed_in_regions(0.1, 0.05, 1.0), 16);
        // A key holding at most 25% of any region: 15.3664 · 0.25 = 3.8416 → 4.
        assert_eq!(samples_needed_in_regions(0.1, 0.05, 0.25), 4);
        // 1% of its regions: 0.154 → 1, however it varies.
        assert_eq!(samples_needed_in_regions(0.1, 0.05, 0.01), 1);
        assert_eq!(
            samples_needed_in_regions(0.3, 0.1, 0.5),
            18,
            "34.5744 · 0.5 = 17.29"
        );
        assert_eq!(samples_needed_in_regions(f64::NAN, 0.05, 0.5), 1);
        assert_eq!(
            samples_needed_in_regions(0.1, 0.05, 7.0),
            16,
            "a share is at most 1"
        );
    }

    #[test]
    fn adaptive_settings_off_are_not_checked() {
        let mut c = config();
        c.pipeline.ncu.sampling.adaptive = false;
        c.pipeline.ncu.sampling.error = 7.0;
        c.pipeline.ncu.sampling.launch_count = 9;
        assert_eq!(refusal(&c), None);
    }

    #[test]
    fn the_passes_split_the_metrics_and_own_the_launch_filter() {
        let mut cli = config().pipeline.ncu.ncu_cli;
        cli.set = Some("full".into());
        cli.metrics = vec!["launch__grid_size".into(), "dram__bytes_read.sum".into()];
        cli.call_stack = true;
        let timing = timing_flags(&cli, "gpu__time_duration.sum");
        assert_eq!(timing.set, None);
        assert!(timing.sections.is_empty());
        assert_eq!(timing.metrics[0], "gpu__time_duration.sum");
        assert_eq!(timing.metrics.len(), 1 + KEY_METRICS.len());
        assert!(timing.call_stack, "regions come from the timing pass");
        assert_eq!(timing.apply_rules, Some(false));
        assert_eq!(timing.extra_args, ["--import-sass", "no"]);

        let deep = deep_flags(&cli, 2, false);
        assert_eq!(deep.launch_skip, None);
        assert!(deep.extra_args.is_empty(), "the full set keeps the SASS");
        let mut sections = cli.clone();
        sections.set = None;
        sections.sections = vec!["SpeedOfLight".into(), "LaunchStats".into()];
        let light = deep_flags(&sections, 1, false);
        assert_eq!(
            light.extra_args,
            ["--import-sass", "no"],
            "no source-level metric"
        );
        sections.sections.push("SourceCounters".into());
        assert!(deep_flags(&sections, 1, false).extra_args.is_empty());
        assert_eq!(
            deep_flags(&cli, 2, true).launch_skip,
            Some(1),
            "skips each cold start"
        );
        assert_eq!(deep.set.as_deref(), Some("full"));
        assert_eq!(deep.sections, cli.sections);
        // The user's metrics first, each key metric once.
        assert_eq!(deep.metrics[..2], cli.metrics[..]);
        assert_eq!(deep.metrics.len(), 2 + KEY_METRICS.len() - 1);
        assert_eq!(deep.filter_mode, Some(FilterMode::PerLaunchConfig));
        assert_eq!(deep.launch_count, Some(2));
        assert_eq!(deep.kernel_name_base, Some(KernelNameForm::Mangled));
        assert!(!deep.call_stack);
    }
}
