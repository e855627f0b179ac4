//! How a sampled run joined its passes, and how much of a region's deep metrics were measured.

use serde::Serialize;

/// A sampled run: a timing pass measured every result's time; a deep pass measured the other
/// metrics on a few launches of each distinct launch key, and every result took its twins' values.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Sampling {
    /// The deep pass's files, each followed by its other workers' where it ran as several.
    pub deep_sources: Vec<String>,
    /// What makes two launches twins.
    pub join_key: Vec<String>,
    /// Deep results per distinct launch (`null` when not recorded); twins are averaged.
    pub launch_count: Option<u32>,
    /// The metrics that come from the deep pass (all others come from the timing pass).
    pub deep_metrics: Vec<String>,
    /// Results of the deep pass.
    pub deep_results: u64,
    /// Timing results whose deep metrics were measured on that very launch (the same launch of its
    /// key in its process).
    pub measured_results: u64,
    /// Timing results that took the deep metrics of a twin launch.
    pub estimated_results: u64,
    /// Timing results with no twin: they have their time and no deep metrics.
    pub unmatched_results: u64,
    /// Timing results whose key was left out of the deep samples on purpose (a share of every
    /// region's time below the run's threshold): time kept, deep metrics not measured. Absent when 0.
    #[serde(skip_serializing_if = "is_zero")]
    pub not_measured_results: u64,
    /// Launch keys that ran different work (their in-place durations fall into separate groups)
    /// and were split into strata, each taking deep values from its own samples, counted per
    /// process. Absent when 0.
    #[serde(skip_serializing_if = "is_zero")]
    pub stratified_keys: u64,
    /// Estimated results whose stratum had no deep sample of its own and took the nearest
    /// stratum's, with a widened interval. Absent when 0.
    #[serde(skip_serializing_if = "is_zero")]
    pub other_stratum_results: u64,
    /// Adaptive samples per launch key, and what they took.
    #[serde(flatten)]
    pub adaptive: AdaptiveSampling,
    /// Each rank's coverage, in rank order, where a multi-process run chose which ranks take the
    /// deep pass (the sampling settings' `deep_ranks`). Absent for a run of one process.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub ranks: Vec<RankCoverage>,
    /// The deep pass's workers where it ran as several profiler processes at once (one per sample
    /// count and GPU): what each was planned to take and what it took. Absent for one.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub deep_workers: Vec<DeepWorker>,
    /// What measured the deep metrics, as the profiler names it: its deep pass (a second launch of
    /// the workload), or an engine inside the traced process itself.
    pub engine: String,
    /// Measured results whose own time the engine could not keep (a launch profiled in process
    /// has no in-place duration): their time is their unprofiled twins' mean. Absent when 0.
    #[serde(skip_serializing_if = "is_zero")]
    pub estimated_time_results: u64,
    /// Host time the in-process engine added to the launches it profiled (replay passes, decoding,
    /// evaluation), summed over every process, in seconds. Absent for a deep pass of its own.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub in_process_cost_s: Option<f64>,
}

/// How much of one rank's time has deep metrics, and where they were measured.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RankCoverage {
    pub rank: u32,
    /// Whether the rank ran the deep pass itself.
    pub deep_rank: bool,
    /// The rank's time in the selected regions, in ns.
    pub time: f64,
    /// Time whose deep metrics were measured on this rank, 0..1.
    pub on_itself_share: f64,
    /// Time whose deep metrics come from another rank's deep pass by launch key, 0..1.
    pub on_another_rank_share: f64,
    /// Time with no deep metrics (no rank's deep pass saw its launch key), 0..1.
    pub none_share: f64,
}

/// One worker of a deep pass run as several profiler processes at once.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct DeepWorker {
    /// Its report file's name in the run directory.
    pub source: String,
    /// The GPU it ran on (`CUDA_VISIBLE_DEVICES`); `null`: the workload's own.
    pub gpu: Option<String>,
    /// The devices it profiled (a chosen rank's turn, the profiler told to profile those alone);
    /// absent: every device.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub devices: Option<String>,
    /// Planned: deep samples per launch key and process.
    pub count: u32,
    /// Planned: the first pass's launch keys it was given.
    pub keys: u64,
    /// Planned: the results the first pass's launches said it would take.
    pub expected_results: u64,
    /// Taken: deep results of its own kernel names read from its file (0 when it wrote none).
    pub results: u64,
    /// Whether it ended well (after its rerun, where it had one).
    pub ended_well: bool,
    /// Whether its first try failed and it ran once more, alone, after the others.
    pub rerun: bool,
    /// The worker (its index here) whose kernel names it profiled again: that one ended well but
    /// profiled none of their launch keys.
    pub rerun_of: Option<usize>,
}

/// Adaptive samples per launch key (n = ⌈(1.96·CV/error)²⌉, at most `max_samples`) in a sampled run.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct AdaptiveSampling {
    /// Whether the run sized each key's deep samples by its first-pass durations.
    pub adaptive: bool,
    /// ε: the relative half-width at 95% the samples aimed at (`null` when not adaptive or unknown).
    pub error: Option<f64>,
    /// The budget: the most deep samples any key got (`null` when not adaptive or unknown).
    pub max_samples: Option<u32>,
    /// Distinct launch keys with deep results.
    pub keys: u64,
    /// Keys whose n exceeded the deep pass's `launch_count`: a deep worker of a larger count
    /// sampled them (`null` when not recorded).
    pub keys_topped_up: Option<u64>,
    /// Keys held below their n by `max_samples` (`null` when not recorded).
    pub keys_capped: Option<u64>,
}

/// How a region's (or scope's) deep metrics were obtained in a sampled run, as shares of its time.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct CoverageShares {
    /// Time whose deep metrics were measured on that very launch, 0..1.
    pub measured_time_share: f64,
    /// Time whose deep metrics come from a twin launch, 0..1.
    pub estimated_time_share: f64,
    /// Time with no twin, so no deep metrics, 0..1.
    pub unmatched_time_share: f64,
    /// Time whose key was left out of the deep samples on purpose, so not measured, 0..1. Absent
    /// when 0.
    #[serde(skip_serializing_if = "is_zero_share")]
    pub not_measured_time_share: f64,
    /// Whether the deep metrics are estimated, in part or in whole (not all time measured).
    pub estimated: bool,
}

/// Whether a count is 0 (left out of report.json, as in reports written before it existed).
fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// Whether a share is 0 (left out of report.json, as in reports written before it existed).
fn is_zero_share(share: &f64) -> bool {
    *share == 0.0
}
