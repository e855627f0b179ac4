//! A `layer_summary` region's figures are the tool's own: its record's span, per-engine active time
//! and share, instruction counts and times, FLOPs, MFU and HFU replace what the instructions would
//! give, under the summary's metric names. The engine busy time the `active_time` intervals give over
//! the same span is held against the record's: beyond 1 % apart, a note says so.

use super::RuleMetrics;
use crate::profiler::neuron::readers::model::intervals::{clip, length, union};
use crate::profiler::neuron::readers::model::{LayerNode, NeuronProfile};

const NS: f64 = 1e-9;
const ENGINES: [&str; 5] = ["tensor", "vector", "scalar", "gpsimd", "sync"];
/// How far apart the record's engine active time and the `active_time` intervals may be.
const TOLERANCE: f64 = 0.01;

/// Record field → summary metric name, and the factor from the record's unit to the analysis' one.
fn renames(engine: &str) -> [(String, String, f64); 4] {
    [
        (
            format!("{engine}_engine_active_percent"),
            format!("{engine}_engine_active_time_percent"),
            1.0,
        ),
        (
            format!("{engine}_engine_active_time"),
            format!("{engine}_engine_active_time"),
            NS,
        ),
        (
            format!("{engine}_engine_instruction_count"),
            format!("{engine}_engine_instruction_count"),
            1.0,
        ),
        (
            format!("{engine}_engine_instruction_time"),
            format!("{engine}_engine_instruction_time"),
            NS,
        ),
    ]
}

/// Put the record's figures in `metrics`; the notes on engines whose intervals disagree.
pub fn apply_layer_figures(
    metrics: &mut RuleMetrics,
    layer: &LayerNode,
    profile: &NeuronProfile,
) -> Vec<String> {
    let fig = |k: &str| layer.figures.get(k).copied();
    let mut put = |k: &str, v: Option<f64>| {
        if let Some(v) = v.filter(|v| v.is_finite()) {
            metrics.insert(k.to_string(), Some(v));
        }
    };
    let duration = fig("duration").or_else(|| {
        let (s, e) = (layer.start_ns?, layer.end_ns?);
        Some(e.saturating_sub(s) as f64)
    });
    put("total_time", duration.map(|d| d * NS));
    for engine in ENGINES {
        for (field, name, factor) in renames(engine) {
            put(&name, fig(&field).map(|v| v * factor));
        }
    }
    let (hardware, model) = (
        fig("tensor_engine_flop_count"),
        fig("tensor_engine_model_flop_count"),
    );
    put("hardware_flops", hardware);
    put("model_flops", model);
    put("transpose_flops", hardware.zip(model).map(|(h, m)| h - m));
    put("mfu_estimated_percent", layer.mfu);
    put("hfu_estimated_percent", layer.hfu);
    engine_checks(layer, profile)
}

/// Each engine's busy time from the `active_time` intervals inside the record's span, against the
/// record's `<engine>_engine_active_time`: one note naming every engine more than 1 % apart.
fn engine_checks(layer: &LayerNode, profile: &NeuronProfile) -> Vec<String> {
    let (Some(start), Some(end)) = (layer.start_ns, layer.end_ns) else {
        return Vec::new();
    };
    if profile.active_periods.is_empty() {
        return Vec::new();
    }
    let window = [(start, end)];
    let apart: Vec<String> = ENGINES
        .iter()
        .filter_map(|engine| {
            let recorded = *layer.figures.get(&format!("{engine}_engine_active_time"))?;
            let pieces = profile
                .active_periods
                .iter()
                .filter(|a| a.engine.as_ref().and_then(|e| e.summary_prefix()) == Some(*engine))
                .flat_map(|a| clip(a.start_ns, a.end_ns, &window))
                .collect();
            let measured = length(&union(pieces)) as f64;
            let gap = (measured - recorded).abs();
            (gap > TOLERANCE * recorded.max(measured))
                .then(|| format!("{engine} {measured:.0} ns against {recorded:.0} ns"))
        })
        .collect();
    if apart.is_empty() {
        return Vec::new();
    }
    vec![format!(
        "engine busy time from the `active_time` intervals in this span is more than 1 % from the \
         `layer_summary` record's ({}); the tables show the record's",
        apart.join(", ")
    )]
}
