//! Per-region and whole-profile metrics, named like the tool's summary metrics so one rule set applies
//! to both. Units: seconds, bytes, FLOPs, fractions 0–1. Unknown is `None`, never 0: a counter no
//! instruction carries stays unknown. The formulas are listed in [`REGION_METRICS`] and docs/neuron.md.
//!
//! Floor: profiler (see `crate::profiler`): imports run, process, analysis, insights, report,
//! config, region and the ground floor, and its own profiler's rooms.

mod labels;
mod layer;
mod region;

use crate::insights::Metrics;
use crate::profiler::neuron::readers::model::Summary;
use crate::profiler::neuron::settings::HardwareSettings;

pub use labels::{label, METRIC_LABELS};
pub use layer::apply_layer_figures;
pub use region::{owned_instructions, region_metrics};

/// Metric name → value; `None` where the data cannot give it (the rules engine's map).
pub type RuleMetrics = Metrics;

/// A metric's name, unit and formula, for the docs and the rules' vocabulary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MetricDef {
    pub name: &'static str,
    pub unit: &'static str,
    pub formula: &'static str,
}

const fn m(name: &'static str, unit: &'static str, formula: &'static str) -> MetricDef {
    MetricDef {
        name,
        unit,
        formula,
    }
}

/// Every metric a region gets, in report order.
pub const REGION_METRICS: &[MetricDef] = &[
    m("total_time", "s", "length of the region's time windows"),
    m("total_active_time", "s", "union of the engines' busy intervals (the profile's `active_time` records, else its busy instructions: semaphore waits excluded) and the DMA transfers, clipped to the windows"),
    m("active_time_percent", "0–1", "total_active_time / total_time"),
    m("tensor_engine_active_time_percent", "0–1", "union of Tensor and TensorMatrix busy intervals / total_time"),
    m("vector_engine_active_time_percent", "0–1", "union of Vector busy intervals / total_time"),
    m("scalar_engine_active_time_percent", "0–1", "union of Scalar busy intervals / total_time"),
    m("gpsimd_engine_active_time_percent", "0–1", "union of GpSimd busy intervals / total_time"),
    m("sync_engine_active_time_percent", "0–1", "union of Sync busy intervals / total_time"),
    m("hardware_flops", "FLOP", "Σ raw_flops of the region's instructions"),
    m("transpose_flops", "FLOP", "Σ flops_transpose"),
    m("model_flops", "FLOP", "hardware_flops − transpose_flops"),
    m("mfu_estimated_percent", "0–1", "model_flops / (peak_flops × total_time)"),
    m("hfu_estimated_percent", "0–1", "hardware_flops / (peak_flops × total_time)"),
    m("mbu_estimated_percent", "0–1", "(hbm_read_bytes + hbm_write_bytes) / (peak_bandwidth × total_time)"),
    m("mm_arithmetic_intensity", "FLOP/byte", "hardware_flops / (hbm_read_bytes + hbm_write_bytes)"),
    m("peak_flops_bandwidth_ratio", "FLOP/byte", "peak_flops / peak_bandwidth (the compute/memory balance point)"),
    m("hbm_read_bytes", "B", "Σ hbm_read_bytes"),
    m("hbm_write_bytes", "B", "Σ hbm_write_bytes"),
    m("sbuf_read_bytes", "B", "Σ sbuf_read_bytes"),
    m("sbuf_write_bytes", "B", "Σ sbuf_write_bytes"),
    m("spill_save_bytes", "B", "Σ spill_save_bytes"),
    m("spill_reload_bytes", "B", "Σ spill_reload_bytes"),
    m("useful_read_percent", "0–1", "(hbm_read_bytes − spill_reload_bytes) / hbm_read_bytes"),
    m("sbuf_reload_ratio", "0–1", "spill_reload_bytes / sbuf_write_bytes (share of SBUF writes that are reloads)"),
    m("sbuf_save_ratio", "0–1", "spill_save_bytes / sbuf_read_bytes (share of SBUF reads that are spills)"),
    m("dma_wait_time", "s", "Σ dma_wait_time_ns"),
    m("dma_wait_percent", "0–1", "dma_wait_time / total_time"),
    m("dma_transfer_count", "", "DMA transfers starting in the windows"),
    m("dma_transfer_total_bytes", "B", "Σ their transfer sizes"),
    m("dma_transfer_average_bytes", "B", "dma_transfer_total_bytes / dma_transfer_count"),
    m("cc_op_count", "", "collectives starting in the windows"),
    m("cc_op_active_time", "s", "union of collective intervals, clipped to the windows"),
    m("cc_op_time_percent", "0–1", "cc_op_active_time / total_time"),
    m("duration_vs_group_median", "×", "total_time / median total_time of the regions with the same base name"),
    m("cc_op_time_vs_group_median", "×", "cc_op_active_time / its median over the same group"),
];

/// Metrics only the tool's summary gives (whole profile), added to the vocabulary of the rules.
pub const SUMMARY_ONLY_METRICS: &[&str] = &[
    "weight_size_bytes",
    "weight_queue_bytes",
    "dma_active_time_percent",
];

/// Every metric name a rule may use.
pub fn vocabulary() -> Vec<&'static str> {
    REGION_METRICS
        .iter()
        .map(|d| d.name)
        .chain(SUMMARY_ONLY_METRICS.iter().copied())
        .collect()
}

/// The peaks MFU/HFU/MBU and boundedness need, and where they came from.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Peaks {
    pub peak_flops: Option<f64>,
    pub peak_bandwidth: Option<f64>,
    pub notes: Vec<String>,
}

impl Peaks {
    /// Configured values win. Otherwise they are derived from the profile's first summary, inverting
    /// the tool's own estimates: `peak_flops = model_flops / (mfu_estimated_percent × total_time)`
    /// (or with hardware_flops and hfu), `peak_bandwidth = peak_flops / peak_flops_bandwidth_ratio`.
    pub fn resolve(hw: &HardwareSettings, summary: Option<&Summary>) -> Peaks {
        let mut out = Peaks::default();
        let g = |k: &str| summary.and_then(|s| s.get(k));
        let derived = |flops: &str, pct: &str| {
            Some(g(flops)? / (g(pct)? * g("total_time")?)).filter(|v| v.is_finite() && *v > 0.0)
        };
        out.peak_flops = hw.peak_flops.or_else(|| {
            let v = derived("model_flops", "mfu_estimated_percent")
                .or_else(|| derived("hardware_flops", "hfu_estimated_percent"))?;
            out.notes.push(format!("peak FLOP/s {v:.4e} derived from the profile summary's MFU/HFU estimate; set `neuron.hardware.peak_flops` to override"));
            Some(v)
        });
        out.peak_bandwidth = hw.peak_bandwidth.or_else(|| {
            let v = out.peak_flops? / g("peak_flops_bandwidth_ratio").filter(|r| *r > 0.0)?;
            out.notes.push(format!("peak bandwidth {v:.4e} B/s derived from peak FLOP/s and the summary's peak_flops_bandwidth_ratio"));
            Some(v)
        });
        if out.peak_flops.is_none() {
            out.notes.push("peak FLOP/s unknown (no `neuron.hardware.peak_flops` and no MFU/HFU in the summary): the regions' MFU and HFU are not estimated".into());
        }
        out
    }

    pub fn ratio(&self) -> Option<f64> {
        Some(self.peak_flops? / self.peak_bandwidth?)
    }
}

pub(crate) fn div(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    let (a, b) = (a?, b?);
    (b != 0.0).then_some(a / b)
}

pub(crate) fn sum2(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (None, None) => None,
        _ => Some(a.unwrap_or(0.0) + b.unwrap_or(0.0)),
    }
}

/// The UI's derived byte ratios, from totals (a region's or the summary's).
pub(crate) fn derived_bytes(
    put: &mut impl FnMut(&str, Option<f64>),
    hbm_read: Option<f64>,
    reload: Option<f64>,
    sbuf_write: Option<f64>,
    save: Option<f64>,
    sbuf_read: Option<f64>,
) {
    put(
        "useful_read_percent",
        div(hbm_read.zip(reload).map(|(r, l)| r - l), hbm_read),
    );
    put("sbuf_reload_ratio", div(reload, sbuf_write));
    put("sbuf_save_ratio", div(save, sbuf_read));
}

/// The whole profile from one summary: its own metrics, plus those the UI derives (same formulas as for
/// regions) where the summary lacks them.
pub fn summary_metrics(summary: &Summary) -> RuleMetrics {
    let mut out: RuleMetrics = summary
        .metrics
        .iter()
        .map(|(k, v)| (k.to_string(), *v))
        .collect();
    let g = |k: &str| summary.get(k);
    let mut derived = RuleMetrics::new();
    {
        let mut put = |k: &str, v: Option<f64>| {
            derived.insert(k.to_string(), v.filter(|x| x.is_finite()));
        };
        derived_bytes(
            &mut put,
            g("hbm_read_bytes"),
            g("spill_reload_bytes"),
            g("sbuf_write_bytes"),
            g("spill_save_bytes"),
            g("sbuf_read_bytes"),
        );
        put(
            "active_time_percent",
            div(g("total_active_time"), g("total_time")),
        );
        put(
            "cc_op_time_percent",
            div(g("cc_op_active_time"), g("total_time")),
        );
        put(
            "dma_transfer_average_bytes",
            div(g("dma_transfer_total_bytes"), g("dma_transfer_count")),
        );
    }
    for (k, v) in derived {
        if out.get(&k).copied().flatten().is_none() {
            out.insert(k, v);
        }
    }
    out
}
