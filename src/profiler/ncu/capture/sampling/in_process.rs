//! The deep metrics collected inside the traced process (`deep_engine: in_process`): which metrics
//! the injection library is given, how many launches of each launch key it profiles, on which
//! ranks, and the trace pass's environment that says so (docs/ncu-notes.md, "Deep counters in the
//! traced process").

use cupti_trace::deep::config::{
    FIRST_VAR, IN_RANGES_VAR, MAX_SAMPLES, METRICS_VAR, RANKS_VAR, SAMPLES_VAR,
};
use cupti_trace::deep::rule;

use crate::config::{Config, DeepRanks};

/// ncu's launch attributes: read from the launch, not counted by any hardware counter, so the
/// in-process engine cannot collect them (CUPTI's host API refuses them).
const ATTRIBUTES: [&str; 2] = ["launch__", "device__"];

/// The report's deep metrics split by what collects them in process: `collected` by the injection
/// library, `attributes` (ncu's launch attributes) by no counter.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct InProcessMetrics {
    /// The report's counters, then the time metric: each profiled launch's replayed duration, which
    /// places its sample among its stratum's duration groups and times a launch whose stratum ran
    /// it alone (kernel replay leaves the profiled launch's kernel record without a duration). The
    /// report's time stays the trace's in-place time. It costs no pass of its own on GH100 (the
    /// SpeedOfLight counters take 9 passes with it and without it).
    pub collected: Vec<String>,
    pub attributes: Vec<String>,
}

/// The metrics of the report's groups (`report.sections`) and `report.metrics`, in order and once
/// each, with the time metric last as the replayed duration; none when the report asks for no
/// counter.
pub fn metrics(config: &Config) -> InProcessMetrics {
    let report = &config.report;
    let grouped = report
        .sections
        .iter()
        .filter_map(|group| report.metric_groups.get(group))
        .flatten();
    let mut split = InProcessMetrics::default();
    for metric in grouped.chain(&report.metrics) {
        let seen = split.collected.contains(metric) || split.attributes.contains(metric);
        if seen || *metric == report.time_metric {
            continue;
        }
        match ATTRIBUTES.iter().any(|a| metric.starts_with(a)) {
            true => split.attributes.push(metric.clone()),
            false => split.collected.push(metric.clone()),
        }
    }
    if !split.collected.is_empty() {
        split.collected.push(report.time_metric.clone());
    }
    split
}

/// Launches profiled per stratum (a launch key in one set of regions, a repeated block's counted
/// once): `launch_count`, at most the library's [`MAX_SAMPLES`]. Adaptive sizing needs the first pass's
/// durations before the deep pass, which one launch does not have; the intervals take the spread
/// of a key's in-place durations as its samples' (docs/attribution.md, "Intervals").
pub fn samples(config: &Config) -> u32 {
    config
        .pipeline
        .ncu
        .sampling
        .launch_count
        .clamp(1, MAX_SAMPLES)
}

/// Whether each stratum's first launch is profiled (`sampling.skip_cold_start: false`, as ncu's
/// deep pass measures each distinct launch's first), so a stratum that runs once (a prefill, a
/// one-off kernel) has deep values; false leaves it as warm-up.
fn profiles_first(config: &Config) -> bool {
    !config.pipeline.ncu.sampling.skip_cold_start
}

/// The launcher ranks that profile (`deep_ranks` as a list); `None`: every rank. In process each
/// rank profiles its own launches at the same time as the others, with no lock and no turns, so
/// `signature` (one rank per distinct set of launch keys, to save ncu's turns) profiles them all.
pub fn ranks(config: &Config) -> Option<&[u32]> {
    match &config.pipeline.ncu.sampling.deep_ranks {
        DeepRanks::List(ranks) => Some(ranks),
        DeepRanks::Signature | DeepRanks::All => None,
    }
}

/// The trace pass's variables that turn the in-process engine on.
pub fn environment(config: &Config) -> Vec<(String, String)> {
    let ranks = ranks(config).map(|ranks| {
        let ranks: Vec<String> = ranks.iter().map(u32::to_string).collect();
        (RANKS_VAR.to_string(), ranks.join(","))
    });
    let mut env = vec![
        (METRICS_VAR.to_string(), metrics(config).collected.join(",")),
        (SAMPLES_VAR.to_string(), samples(config).to_string()),
        (
            FIRST_VAR.to_string(),
            u8::from(profiles_first(config)).to_string(),
        ),
    ];
    env.extend(ranks);
    // With `regions.include` naming ranges a kernel outside every range is in no region of the
    // report (a warm-up step, model set-up): profiling it would cost a launch's replay passes for
    // values nothing reads. On GPT-2 that was 49 of 127 profiled launches.
    if !config.regions.include.is_empty() {
        env.push((IN_RANGES_VAR.to_string(), "1".to_string()));
    }
    env
}

/// Why the in-process engine cannot run with these settings: no metric it can collect.
pub fn refusal(config: &Config) -> Option<String> {
    let split = metrics(config);
    split.collected.is_empty().then(|| {
        format!(
            "pipeline.ncu.sampling.deep_engine collects the deep metrics in process, but report.sections and report.metrics name none it can collect ({}); add a metric group such as speed_of_light, or set deep_engine=ncu",
            match split.attributes.is_empty() {
                true => "only the time metric".to_string(),
                false => format!("only ncu's launch attributes: {}", split.attributes.join(", ")),
            }
        )
    })
}

/// `--dry-run`'s note on the deep metrics collected in the trace pass itself.
pub fn dry_run_note(config: &Config) -> (&'static str, String) {
    let split = metrics(config);
    let n = samples(config);
    let first = profiles_first(config);
    // The library's own rule, its first five launches (the fifth is at most launch 16).
    let launches: Vec<String> = (0..=16)
        .filter(|&ordinal| rule::chosen(ordinal, n, first))
        .take(5)
        .map(|ordinal| ordinal.to_string())
        .collect();
    let after = match first {
        true => "",
        false => " (after the first: sampling.skip_cold_start)",
    };
    let more = if n > 5 { ", …" } else { "" };
    let ranks = match ranks(config) {
        Some(ranks) => format!(
            " on launcher rank(s) {} only (deep_ranks; the others take their samples by launch key)",
            ranks.iter().map(u32::to_string).collect::<Vec<_>>().join(", ")
        ),
        None => String::new(),
    };
    let attributes = match split.attributes.is_empty() {
        true => String::new(),
        false => format!(
            "; ncu's launch attributes ({}) are not counters: grid and block come from the trace, the others are not measured in process (deep_engine=ncu measures them)",
            split.attributes.join(", ")
        ),
    };
    let within = match config.regions.include.is_empty() {
        true => "",
        false => ", made inside some NVTX range (regions.include names ranges: a kernel outside every range is in no region)",
    };
    (
        "the trace pass collects the deep metrics in process",
        format!(
            "# no ncu pass: the injection library profiles launch(es) {}{more}{after} of each launch key in each range stack{within} (runs of digits folded: a repeated block counts once; NCCL kernels never){ranks} with CUPTI's Range Profiler (kernel replay, caches not flushed), {} metric(s): {}{attributes}",
            launches.join(", "),
            split.collected.len(),
            split.collected.join(", "),
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::DEFAULT_PRESET;

    #[test]
    fn the_reports_counters_are_collected_and_launch_attributes_named() {
        let config: Config = serde_yaml::from_str(DEFAULT_PRESET).unwrap();
        let split = metrics(&config);
        assert!(
            split
                .collected
                .contains(&"sm__throughput.avg.pct_of_peak_sustained_elapsed".to_string()),
            "{split:?}"
        );
        assert_eq!(
            split.collected.last(),
            Some(&config.report.time_metric),
            "the replayed duration, last"
        );
        assert!(split.attributes.iter().all(|m| m.starts_with("launch__")));
        assert!(split.attributes.contains(&"launch__grid_size".to_string()));
        let env = environment(&config);
        assert_eq!(env[0].1, split.collected.join(","));
        assert_eq!(refusal(&config), None);
    }

    #[test]
    fn samples_follow_launch_count_and_a_rank_list_reaches_the_library() {
        let mut config: Config = serde_yaml::from_str(DEFAULT_PRESET).unwrap();
        config.pipeline.ncu.sampling.launch_count = 2;
        let env = environment(&config);
        assert_eq!(env[1], ("PROFILE_RUN_DEEP_SAMPLES".into(), "2".into()));
        assert_eq!(env[2], ("PROFILE_RUN_DEEP_FIRST".into(), "1".into()));
        assert_eq!(env.len(), 3, "signature: every rank profiles its own");
        assert!(dry_run_note(&config).1.contains("launch(es) 0, 1 of each"));
        config.pipeline.ncu.sampling.skip_cold_start = true;
        assert_eq!(environment(&config)[2].1, "0");
        assert!(dry_run_note(&config)
            .1
            .contains("launch(es) 1, 2 (after the first: sampling.skip_cold_start)"));
        config.pipeline.ncu.sampling.deep_ranks = DeepRanks::List(vec![0, 4]);
        let env = environment(&config);
        assert_eq!(env[3], ("PROFILE_RUN_DEEP_RANKS".into(), "0,4".into()));
        assert!(dry_run_note(&config).1.contains("rank(s) 0, 4 only"));
        assert!(!env.iter().any(|(k, _)| k == "PROFILE_RUN_DEEP_IN_RANGES"));
        config.regions.include = vec!["train_step".into()];
        let env = environment(&config);
        assert_eq!(
            env.last(),
            Some(&("PROFILE_RUN_DEEP_IN_RANGES".into(), "1".into())),
            "a kernel outside every range is in no region the report keeps"
        );
        assert!(dry_run_note(&config).1.contains("inside some NVTX range"));
    }

    #[test]
    fn a_report_of_launch_attributes_alone_is_refused() {
        let mut config: Config = serde_yaml::from_str(DEFAULT_PRESET).unwrap();
        config.report.sections = vec!["time".into(), "launch".into()];
        let why = refusal(&config).unwrap();
        assert!(
            why.contains("launch__grid_size") && why.contains("deep_engine=ncu"),
            "{why}"
        );
    }
}
