//! The Neuron profile model: one shape for everything the readers understand (full JSON, Parquet,
//! summary JSON and text), with times in nanoseconds rebased to the profile's first timestamp.
//!
//! Floor: profiler (see `crate::profiler`): imports run, process, analysis, insights, report,
//! config, region and the ground floor, and its own profiler's rooms.

pub mod intervals;
pub mod metrics;
pub mod system;

use serde::Serialize;
use std::collections::BTreeMap;
use std::path::PathBuf;

pub use metrics::SummaryMetrics;

/// A NeuronCore engine, as named by `label`/`subgroup` (JSON) or `engine` (Parquet).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Engine {
    Tensor,
    /// The tensor engine's matrix rows, shown apart from `Tensor` by the tools.
    TensorMatrix,
    Vector,
    Scalar,
    GpSimd,
    Sync,
    /// An engine name this reader does not know, kept verbatim.
    Other(String),
}

impl Engine {
    /// Case-insensitive: JSON writes `Tensor`, Parquet `tensor`.
    pub fn parse(name: &str) -> Engine {
        match name
            .to_ascii_lowercase()
            .replace(['_', '-', ' '], "")
            .as_str()
        {
            "tensor" => Engine::Tensor,
            "tensormatrix" => Engine::TensorMatrix,
            "vector" => Engine::Vector,
            "scalar" => Engine::Scalar,
            "gpsimd" => Engine::GpSimd,
            "sync" => Engine::Sync,
            _ => Engine::Other(name.to_string()),
        }
    }

    /// The prefix of the summary metric `<prefix>_engine_active_time_percent`; `None` for engines the
    /// summary has no metric for. `TensorMatrix` counts as the tensor engine.
    pub fn summary_prefix(&self) -> Option<&'static str> {
        match self {
            Engine::Tensor | Engine::TensorMatrix => Some("tensor"),
            Engine::Vector => Some("vector"),
            Engine::Scalar => Some("scalar"),
            Engine::GpSimd => Some("gpsimd"),
            Engine::Sync => Some("sync"),
            Engine::Other(_) => None,
        }
    }
}

/// One executed instruction. Byte and FLOP counters are `None` where the source does not give them.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Instruction {
    pub start_ns: u64,
    pub end_ns: u64,
    pub engine: Option<Engine>,
    pub opcode: String,
    /// `None` for NKI code (the tools write an empty string).
    pub hlo_name: Option<String>,
    /// Module path such as `NeuronLlamaModel/NeuronLlamaDecoderLayer[1]/NeuronLlamaMLP/aten.add`.
    pub layer: Option<String>,
    pub stack_frame_ids: Vec<u64>,
    /// `file.py:33` for NKI instructions.
    pub nki_source_location: Option<String>,
    pub hbm_read_bytes: Option<f64>,
    pub hbm_write_bytes: Option<f64>,
    pub sbuf_read_bytes: Option<f64>,
    pub sbuf_write_bytes: Option<f64>,
    pub spill_save_bytes: Option<f64>,
    pub spill_reload_bytes: Option<f64>,
    pub dma_wait_ns: Option<f64>,
    /// FLOPs the hardware executed (`raw_flops`).
    pub raw_flops: Option<f64>,
    /// `adjusted_flops` as the tool writes it (kept, not used by the formulas).
    pub adjusted_flops: Option<f64>,
    /// FLOPs spent on transposes (`flops_transpose`).
    pub transpose_flops: Option<f64>,
}

impl Instruction {
    /// Semaphore instructions (`EVENT_SEMAPHORE*`) wait on other engines or DMA queues, and any
    /// opcode naming a `WAIT` waits too: neither is busy time. `EVENT_SEMAPHORE_RANGE_CLEAR` resets
    /// semaphores and is busy: the profile's own `active_time` counts it (seen in every real profile).
    pub fn is_busy(&self) -> bool {
        let opcode = self.opcode.to_ascii_uppercase();
        let semaphore =
            opcode.starts_with("EVENT_SEMAPHORE") && opcode != "EVENT_SEMAPHORE_RANGE_CLEAR";
        !semaphore && !opcode.split('_').any(|w| w == "WAIT")
    }
}

/// One collective operation (`cc_ops` / `CcOp`).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Collective {
    pub start_ns: u64,
    pub end_ns: u64,
    pub operation: String,
    pub algorithm: Option<String>,
    /// When the collective was triggered, if the source says (`cc_trigger`, `trigger_start_ts`, or start
    /// minus `cc_trigger_start_delay`). Rebased like every other time.
    pub trigger_ns: Option<u64>,
    pub input_size: Option<f64>,
    pub output_size: Option<f64>,
    pub replica_group: Option<String>,
}

impl Collective {
    /// Where a region before this collective ends: its trigger when known, else its start.
    pub fn cut_ns(&self) -> u64 {
        self.trigger_ns
            .map_or(self.start_ns, |t| t.min(self.start_ns))
    }
}

/// One DMA transfer (`dma` / `DmaPacket`).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct DmaTransfer {
    pub start_ns: u64,
    pub end_ns: u64,
    /// Queue name such as `qScalarSpillReload0-Q1-E64`.
    pub queue: String,
    pub bytes: f64,
}

/// A period an engine was active, from the JSON `active_time` list.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ActivePeriod {
    pub start_ns: u64,
    pub end_ns: u64,
    pub engine: Option<Engine>,
}

/// One profile id's summary metrics (`summary-json`, the JSON `summary`, the Parquet `Summary` table or
/// summary text). Numbers in base units: seconds, bytes, FLOPs, fractions 0–1.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Summary {
    pub profile_id: String,
    /// `None` where the tool wrote `null`; absent where it wrote nothing. Names are shared: a
    /// profile of 200,000 subgraphs repeats the same few dozen.
    pub metrics: SummaryMetrics,
    /// Text values such as versions (`2.29.18.0%kaena-tools/2.29@d5fe7ba`).
    pub text: BTreeMap<String, String>,
}

impl Summary {
    pub fn get(&self, name: &str) -> Option<f64> {
        self.metrics.get(name).copied().flatten()
    }
}

/// A node of the framework layer hierarchy (`FrameworkNode`, `layer_summary`).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct LayerNode {
    pub name: String,
    pub parent: Option<String>,
    pub children: Vec<String>,
    pub hfu: Option<f64>,
    pub mfu: Option<f64>,
    /// Where the layer ran (`layer_summary`'s `start`/`end`, ns, rebased like every other time);
    /// `None` where the source gives no times.
    pub start_ns: Option<u64>,
    pub end_ns: Option<u64>,
    /// Every number of its `layer_summary` record in the record's own units (times in ns,
    /// `*_active_percent` as 0–1 fractions), by the record's field name.
    pub figures: BTreeMap<String, f64>,
}

/// How the tool itself groups, orders and describes its summary metrics (the full JSON's
/// `summary_groups`, `summary_group_order` and `terminology`); empty where the source has none.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct SummaryLayout {
    /// Metric name → group (`overall_stats`, `tensor_engine`, …).
    pub groups: BTreeMap<String, String>,
    /// Group → its position in the tool's order.
    pub group_order: BTreeMap<String, i64>,
    /// Metric name → AWS's description of it.
    pub terminology: BTreeMap<String, String>,
}

impl SummaryLayout {
    /// The sort key of a metric in the tool's order: its group's position (unknown groups last).
    pub fn position(&self, metric: &str) -> (i64, &str) {
        let group = self.groups.get(metric).map_or("", String::as_str);
        (*self.group_order.get(group).unwrap_or(&i64::MAX), group)
    }
}

/// When a framework operation ran (`FrameworkInstruction`): its path and the intervals it covered.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct LayerSpan {
    pub path: String,
    pub start_ns: u64,
    pub end_ns: u64,
    pub intervals: Vec<(u64, u64)>,
}

/// An NKI kernel stack frame (`KernelStackFrames`, `stack_frame_function_name`).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct StackFrame {
    pub id: u64,
    pub function: String,
    pub parent: Option<u64>,
}

/// Everything read from one profile.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct NeuronProfile {
    pub source: PathBuf,
    /// The original timestamp (ns) that became 0; `None` when the source has no timeline.
    pub origin_ns: Option<u64>,
    pub instructions: Vec<Instruction>,
    pub collectives: Vec<Collective>,
    pub dma: Vec<DmaTransfer>,
    pub active_periods: Vec<ActivePeriod>,
    pub summaries: Vec<Summary>,
    pub layers: Vec<LayerNode>,
    pub layer_spans: Vec<LayerSpan>,
    pub stack_frames: Vec<StackFrame>,
    pub metadata: BTreeMap<String, String>,
    /// Parquet `profile_schema_version`.
    pub schema_version: Option<String>,
    /// The tool's grouping, order and wording of its summary metrics.
    pub summary_layout: SummaryLayout,
    /// Top-level keys the reader does not use (they vary by release), shown only with `-v`.
    pub ignored_keys: Vec<String>,
    /// What the reader skipped or could not use, for the report's notes.
    pub notes: Vec<String>,
}

impl NeuronProfile {
    /// The first and last instant of the timeline (rebased), over instructions, collectives and DMA.
    pub fn bounds(&self) -> Option<(u64, u64)> {
        let spans = self
            .instructions
            .iter()
            .map(|i| (i.start_ns, i.end_ns))
            .chain(self.collectives.iter().map(|c| (c.start_ns, c.end_ns)))
            .chain(self.dma.iter().map(|d| (d.start_ns, d.end_ns)));
        spans.fold(None, |acc, (s, e)| match acc {
            None => Some((s, e)),
            Some((lo, hi)) => Some((lo.min(s), hi.max(e))),
        })
    }

    /// Shift every time so the smallest becomes 0, sort each list by start, and remember the origin.
    /// Trigger times earlier than the origin (a collective triggered before the capture) clamp to 0.
    pub fn rebase(&mut self) {
        let origin = self.min_timestamp();
        let Some(origin) = origin else { return };
        let r = |t: u64| t.saturating_sub(origin);
        for i in &mut self.instructions {
            (i.start_ns, i.end_ns) = (r(i.start_ns), r(i.end_ns));
        }
        for c in &mut self.collectives {
            (c.start_ns, c.end_ns) = (r(c.start_ns), r(c.end_ns));
            c.trigger_ns = c.trigger_ns.map(r);
        }
        for d in &mut self.dma {
            (d.start_ns, d.end_ns) = (r(d.start_ns), r(d.end_ns));
        }
        for a in &mut self.active_periods {
            (a.start_ns, a.end_ns) = (r(a.start_ns), r(a.end_ns));
        }
        for l in &mut self.layers {
            l.start_ns = l.start_ns.map(r);
            l.end_ns = l.end_ns.map(r);
        }
        for l in &mut self.layer_spans {
            (l.start_ns, l.end_ns) = (r(l.start_ns), r(l.end_ns));
            for iv in &mut l.intervals {
                *iv = (r(iv.0), r(iv.1));
            }
        }
        self.origin_ns = Some(origin);
        self.instructions.sort_by_key(|i| (i.start_ns, i.end_ns));
        self.collectives.sort_by_key(|c| (c.start_ns, c.end_ns));
        self.dma.sort_by_key(|d| (d.start_ns, d.end_ns));
    }

    fn min_timestamp(&self) -> Option<u64> {
        let starts = self
            .instructions
            .iter()
            .map(|i| i.start_ns)
            .chain(self.collectives.iter().map(|c| c.start_ns))
            .chain(self.dma.iter().map(|d| d.start_ns))
            .chain(self.active_periods.iter().map(|a| a.start_ns))
            .chain(self.layer_spans.iter().map(|l| l.start_ns))
            .chain(self.layers.iter().filter_map(|l| l.start_ns));
        starts.min()
    }
}
