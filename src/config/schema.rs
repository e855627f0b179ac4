//! The preset schema: every key a preset, an environment variable or an override may set.
//!
//! Unknown keys are rejected (`deny_unknown_fields`) so a typo never silently falls back to a default.
//! The embedded `conf/ncu/default.yaml` sets every key, so a resolved [`Config`] always has a value for
//! each one; `Option` marks keys whose absence is itself meaningful (an ncu flag that is not passed).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::closed_sets::{
    CacheControl, CallStackType, ClockControl, Communicator, DeepEngine, ErrorScope, ExportPage,
    FilterMode, GraphKernels, GraphProfiling, KernelNameForm, PrintUnits, RollupChoice,
    TargetProcesses,
};
use super::deep_ranks::DeepRanks;
use crate::region::AutoRegions;
use crate::region::RenameRule;

/// The whole resolved configuration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Parent presets this file extends (`ncu/default`), resolved against `conf/` before the file itself.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub defaults: Vec<String>,
    pub pipeline: Pipeline,
    pub regions: Regions,
    pub report: ReportConfig,
    pub output: OutputSettings,
    /// How Neuron profiles are cut into regions and judged (`neuron:`); read when
    /// `pipeline.profiler` is `neuron` or a Neuron profile is reported.
    pub neuron: super::neuron_settings::NeuronSettings,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Pipeline {
    /// The profiler a run drives: `ncu` or `neuron`.
    pub profiler: ProfilerKind,
    pub ncu: NcuPipeline,
    /// How a Neuron profile is captured and viewed (`pipeline.profiler: neuron`).
    pub neuron: super::neuron_pipeline::NeuronPipeline,
    /// Seconds the profiler may take to stop after profile-run received a signal, before it and every
    /// process it started are killed (SIGKILL).
    pub signal_grace_seconds: u64,
}

/// `pipeline.profiler`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProfilerKind {
    /// Nsight Compute on NVTX regions.
    Ncu,
    /// AWS Neuron (`neuron-explorer`, formerly `neuron-profile`).
    Neuron,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NcuPipeline {
    /// The ncu executable: a name looked up on `PATH`, or a path.
    pub executable: String,
    /// Flags passed to ncu, one key per native flag.
    pub ncu_cli: NcuCliConfig,
    /// How the report is read: `native` reads the `.ncu-rep` itself (no ncu needed), `csv` through
    /// the pages ncu exports (`export.pages` must then include `raw`).
    pub reader: ReportReader,
    /// How the captured report is exported to CSV after the run.
    pub export: ExportConfig,
    /// Sampled profiling: a timing pass over every kernel joined with a deep pass over each distinct
    /// launch (conf/ncu/sampled.yaml).
    pub sampling: SamplingConfig,
    /// The largest block of a `.ncu-rep` read, in MiB (after decompression); a longer block length
    /// is refused before anything is reserved.
    pub max_block_mib: u64,
    /// The most a gzip'd CSV export (`.csv.gz`) is inflated to, in MiB; a larger one is refused once
    /// past it, so a small file of zeros never fills the disk.
    pub max_export_mib: u64,
    /// Where kernel times come from: `ncu` (its serialized replay's time metric) or `trace` (CUPTI's
    /// in-place times, the workload run unprofiled with profile-run's injection library).
    pub timing: TimingSource,
    /// The CUPTI trace of `timing: trace`.
    pub trace: TraceConfig,
}

/// `pipeline.ncu.reader`: a closed set, so an unknown value is refused by serde with the allowed ones
/// and a "did you mean".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReportReader {
    /// The `.ncu-rep` read by profile-run itself.
    Native,
    /// The CSV pages `ncu --import` exports.
    Csv,
}

/// `pipeline.ncu.timing`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TimingSource {
    /// ncu's time metric, measured on its serialized replay (cold caches, one kernel at a time).
    Ncu,
    /// CUPTI's kernel activity, measured in place while the workload runs unprofiled.
    Trace,
    /// The trace when the injection library is there to load (beside profile-run, or
    /// `pipeline.ncu.trace.library`), else ncu's pass, with a note; settled before anything starts.
    Auto,
}

/// `pipeline.ncu.trace`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TraceConfig {
    /// The injection library (`libcupti_trace.so`); `null`: the one beside the profile-run binary,
    /// where `cargo build --release` puts it.
    pub library: Option<String>,
    /// The libcupti to load when the workload loaded none itself; `null`: the usual names and the
    /// toolkit's path. A workload that loads its own (torch) always keeps it.
    pub libcupti: Option<String>,
    /// The most a trace file is read to, in MiB (of its text, after decompression for `.gz`); a
    /// longer one is refused once past it, so a small gzip file of zeros is never inflated whole.
    pub max_mib: u64,
}

/// `pipeline.ncu.sampling`: two ncu runs of the workload instead of one. The timing pass collects only
/// the time metric and the launch attributes that key a launch, for every kernel; the deep pass
/// collects the configured sections, metrics or set once per distinct launch
/// (`--filter-mode per-launch-config --launch-count K --kernel-name-base mangled`). Every timing
/// result then takes the deep metrics of its twin: the deep result of the same launch key.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SamplingConfig {
    pub enabled: bool,
    /// K: deep results per distinct launch (`--launch-count`); twins are averaged.
    pub launch_count: u32,
    /// Skip each distinct launch's first launch in the deep pass (`--launch-skip 1`, per
    /// configuration; in process, each stratum's first launch): its cold start biases stall
    /// reasons; a configuration launched once then has no deep result.
    pub skip_cold_start: bool,
    /// Adaptive samples per launch key: before the deep pass, a key whose first-pass durations vary
    /// is given n = ⌈(1.96·CV/error)²⌉ deep samples (capped by `max_samples`); the deep pass runs as
    /// one ncu worker per distinct count, all at once.
    pub adaptive: bool,
    /// ε: the relative half-width at 95% the samples aim at, in (0, 1): of each launch key's mean,
    /// or of each region's time-weighted mean (`error_scope`).
    pub error: f64,
    /// What `error` bounds: `key` (each key's mean: n = ⌈(1.96·CV/error)²⌉) or `region` (each
    /// region's time-weighted mean: the key's n scaled by the largest share of a region's time it
    /// holds, so keys that weigh little in every region take fewer samples).
    pub error_scope: ErrorScope,
    /// The budget: no key gets more deep samples than this; below `launch_count` the deep pass's
    /// own `launch_count` is the budget ([`SamplingConfig::budget`]).
    pub max_samples: u32,
    /// End the deep pass (each of its workers) once ncu has profiled every result the first pass's
    /// launches say it will take, instead of running the rest of the workload under ncu.
    pub stop_when_covered: bool,
    /// Leave out of the deep pass the launch keys whose first-pass time is below this share of
    /// every region they appear in, in [0, 1): their kernels keep their times, their deep metrics
    /// are not measured. 0 leaves nothing out.
    pub min_time_share: f64,
    /// Which ranks of a multi-process run take the deep pass (`signature`, `all` or rank numbers).
    pub deep_ranks: DeepRanks,
    /// Seconds a rank of one profile-run per rank waits for every rank's signature file before it
    /// settles for the signatures it has (`deep_ranks: signature`).
    pub deep_ranks_wait_seconds: u64,
    /// What collects the deep metrics: the injection library inside the traced process, or ncu's
    /// deep pass ([`DeepEngine`]).
    pub deep_engine: DeepEngine,
    /// In process, what measures the launch keys that run only inside CUDA graphs
    /// ([`GraphKernels`]): the in-process engine cannot profile graph node kernels.
    pub graph_kernels: GraphKernels,
    /// Refused whatever its value ([`DEEP_GPUS_REFUSED`]); never written back.
    #[serde(default, skip_serializing)]
    pub deep_gpus: Option<DeepGpusRefused>,
}

/// Why `pipeline.ncu.sampling.deep_gpus` is refused, and what to do instead.
pub const DEEP_GPUS_REFUSED: &str = "pipeline.ncu.sampling.deep_gpus is not a setting: ncu profiles one process's kernel at a time across the whole host, so a deep pass spread over several GPUs takes as long as on one (1.06× the one-GPU time, docs/performance.md); remove the key, and shorten the deep pass with sampling.min_time_share or sampling.stop_when_covered, or take it on one rank per group with sampling.deep_ranks";

/// `pipeline.ncu.sampling.deep_gpus`: no value of it deserialises. A run directory's recorded
/// config.yaml has the key taken out before it is read (`layers::add_recorded`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeepGpusRefused {}

impl<'de> Deserialize<'de> for DeepGpusRefused {
    fn deserialize<D: serde::Deserializer<'de>>(_: D) -> Result<DeepGpusRefused, D::Error> {
        Err(serde::de::Error::custom(DEEP_GPUS_REFUSED))
    }
}

impl SamplingConfig {
    /// The most deep samples a key gets: `max_samples`, but never fewer than the deep pass's own
    /// `launch_count` (a preset's default budget must not refuse a larger `launch_count`).
    pub fn budget(&self) -> u32 {
        self.max_samples.max(self.launch_count)
    }
}

/// Native ncu flags, 1:1. `None` / empty means the flag is not passed and ncu's own default applies.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NcuCliConfig {
    /// `--replay-mode kernel|application|range|app-range`.
    pub replay_mode: ReplayMode,
    pub nvtx: NvtxConfig,
    /// `--range-filter yes|no:<start/stop instances>:<nvtx instances>`.
    pub range_filter: Option<String>,
    /// `--range-replay-options` (comma separated in ncu; a list here).
    pub range_replay_options: Vec<String>,
    /// `--set NAME` (`basic`, `detailed`, `full`, …).
    pub set: Option<String>,
    /// `--section NAME`, repeated.
    pub sections: Vec<String>,
    /// `--metrics a,b,c`.
    pub metrics: Vec<String>,
    /// `--target-processes all|application-only`.
    pub target_processes: Option<TargetProcesses>,
    /// `--target-processes-filter EXPR`.
    pub target_processes_filter: Option<String>,
    /// `--kernel-name EXPR` (`-k`).
    pub kernel_name: Option<String>,
    /// `--kernel-name-base function|demangled|mangled`.
    pub kernel_name_base: Option<KernelNameForm>,
    /// `--kernel-id EXPR`.
    pub kernel_id: Option<String>,
    /// `--launch-skip N` (`-s`).
    pub launch_skip: Option<u64>,
    /// `--launch-skip-before-match N`.
    pub launch_skip_before_match: Option<u64>,
    /// `--launch-count N` (`-c`).
    pub launch_count: Option<u64>,
    /// `--filter-mode global|per-gpu|per-launch-config`.
    pub filter_mode: Option<FilterMode>,
    /// `--devices 0,1`.
    pub devices: Option<String>,
    /// `--clock-control base|none|reset`. Keep `none` on shared machines.
    pub clock_control: Option<ClockControl>,
    /// `--cache-control all|none`.
    pub cache_control: Option<CacheControl>,
    /// `--graph-profiling node|graph`.
    pub graph_profiling: Option<GraphProfiling>,
    /// `--communicator none|tcp|shmem` (ncu versions that support multi-process lockstep).
    pub communicator: Option<Communicator>,
    /// `--communicator-num-peers N`.
    pub communicator_num_peers: Option<u32>,
    /// `--communicator-tcp-hostname HOST`.
    pub communicator_tcp_hostname: Option<String>,
    /// `--communicator-tcp-port PORT`.
    pub communicator_tcp_port: Option<u16>,
    /// `--lockstep-kernel-launch`.
    pub lockstep_kernel_launch: bool,
    /// `--call-stack`.
    pub call_stack: bool,
    /// `--call-stack-type native|python`, repeated.
    pub call_stack_type: Vec<CallStackType>,
    /// `--import-source yes|no`.
    pub import_source: Option<bool>,
    /// `--apply-rules yes|no`.
    pub apply_rules: Option<bool>,
    /// `--check-exit-code yes|no`.
    pub check_exit_code: Option<bool>,
    /// Anything else, appended verbatim after the flags above and before the workload.
    pub extra_args: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReplayMode {
    Kernel,
    Application,
    Range,
    AppRange,
}

impl ReplayMode {
    pub fn as_ncu(self) -> &'static str {
        match self {
            ReplayMode::Kernel => "kernel",
            ReplayMode::Application => "application",
            ReplayMode::Range => "range",
            ReplayMode::AppRange => "app-range",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NvtxConfig {
    /// `--nvtx`.
    pub enabled: bool,
    /// Raw `--nvtx-include` expressions, passed untouched (but linted).
    pub include: Vec<String>,
    /// Raw `--nvtx-exclude` expressions, passed untouched (but linted).
    pub exclude: Vec<String>,
    /// `--nvtx-push-pop-scope thread|process`.
    pub push_pop_scope: Option<PushPopScope>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PushPopScope {
    Thread,
    Process,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExportConfig {
    /// Pages exported with `ncu --import … --csv --page P`; `raw` is required when `reader` is `csv`.
    pub pages: Vec<ExportPage>,
    /// `--print-units` used for the export (`base` keeps values unscaled).
    pub print_units: PrintUnits,
}

/// Region patterns in a user's own words; turned into ncu NVTX expressions by `ncu::nvtx`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Regions {
    /// Range names, nested paths (`train_step/forward`) or globs (`decode*`); `regex:` passes a regex.
    pub include: Vec<String>,
    pub exclude: Vec<String>,
    /// NVTX domain for every pattern; `null` means the default domain.
    pub domain: Option<String>,
    /// Regex replacements applied, in order, to every range name before attribution.
    pub rename: Vec<RenameRule>,
    /// What happens to ranges that `include` does not name (another domain's, unrelated start/end
    /// ranges): `note` lists them with their kernel counts in a note, `show` keeps them in the tree.
    pub unrequested: Unrequested,
    /// Automatic regions: a method that gives results their regions instead of the program's own
    /// ranges (`none` keeps them).
    pub auto: AutoRegions,
    /// Deepest range stack read (levels); a deeper one stops the report with an error, because the
    /// region tree keeps every level's whole path.
    pub max_depth: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Unrequested {
    Note,
    Show,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReportConfig {
    pub kernels: KernelSelection,
    /// Names of metric groups (keys of `metric_groups`) shown in the report, in this order.
    pub sections: Vec<String>,
    /// Extra raw metric names shown after the sections' metrics.
    pub metrics: Vec<String>,
    /// Named groups of raw metric names; `sections` picks among them.
    pub metric_groups: BTreeMap<String, Vec<String>>,
    /// Per-metric aggregation override: `sum`, `mean` (duration-weighted), `max`, `min`, `distinct`.
    pub rollups: BTreeMap<String, RollupChoice>,
    /// The metric that weights means and orders regions and kernels ("time").
    pub time_metric: String,
    /// Add a section aggregated across all processes and devices.
    pub aggregate: bool,
    /// The files written for a report, in this order: `md`, `json`, `html`, `svg`, `trace`.
    pub outputs: Vec<Format>,
    /// A minijinja template for report.md; `null` uses the built-in `templates/report.md.j2`.
    pub template: Option<String>,
    /// Markdown truncation: regions in the summary table, by inclusive time.
    pub max_regions: usize,
    /// Markdown truncation: kernels listed per region, by time.
    pub max_kernels: usize,
    /// Threads that read large exports (0: one per available core).
    pub threads: usize,
    /// Rules evaluated on every region (a YAML file, docs/insights.md); `null`: the shipped
    /// `conf/rules/gpu.yaml`.
    pub rules: Option<String>,
    /// Up to 3 region paths (or names) shown side by side in the report.
    pub compare: Vec<String>,
    /// Whether every scope keeps its whole region tree in a report of more than 8 scopes; `false`
    /// keeps each scope's region totals only (the aggregate keeps its tree either way).
    pub scope_trees: bool,
    /// The most slices trace.json holds on a real timeline (a CUPTI trace); past it, whole steps
    /// are kept from the start and the rest left out, with a note.
    pub trace_events: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KernelSelection {
    /// Glob patterns on the kernel name; empty means all kernels.
    pub include: Vec<String>,
    /// Glob patterns on the kernel name; a kernel matching both include and exclude is excluded.
    pub exclude: Vec<String>,
    /// Which name the patterns see: `demangled` (full signature) or `function` (base name only).
    pub name_base: KernelNameBase,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum KernelNameBase {
    Demangled,
    Function,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OutputSettings {
    /// Directory under which each run gets its own directory.
    pub root: String,
    /// Name of the run directory under `root`. `null`: `<timestamp>-<random id>`, or, under a launcher
    /// (torchrun, Slurm), the job id so that every rank writes into `<root>/<name>/rank<N>/`.
    pub run_name: Option<String>,
    /// Write report.md / report.json after a run.
    pub render: bool,
}

/// The formats `report.outputs` may name (each rendered by its `Output` in `report::render`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    /// report.md (and `scopes/*.md` with many scopes).
    Md,
    /// report.json.
    Json,
    /// report.html, charts inline.
    Html,
    /// `charts/<scope>-time.svg`, `charts/<scope>-instances.svg`.
    Svg,
    /// trace.json (Chrome trace events, for ui.perfetto.dev).
    Trace,
}
