//! Metrics of one region: what it owns (clipped busy intervals per engine, counters of the instructions starting in
//! it, DMA and collectives in its windows) turned into the named metrics of [`super::REGION_METRICS`].

use std::collections::BTreeMap;

use super::{derived_bytes, div, sum2, Peaks, RuleMetrics};
use crate::profiler::neuron::observe::regions::{RegionSpan, Selection};
use crate::profiler::neuron::readers::model::intervals::{clip, contains, length, union};
use crate::profiler::neuron::readers::model::{Instruction, NeuronProfile};

const NS: f64 = 1e-9;
const ENGINES: [&str; 5] = ["tensor", "vector", "scalar", "gpsimd", "sync"];

/// Sum of values where at least one is known.
#[derive(Default, Clone, Copy)]
struct Acc(Option<f64>);

impl Acc {
    fn add(&mut self, v: Option<f64>) {
        if let Some(v) = v {
            self.0 = Some(self.0.unwrap_or(0.0) + v);
        }
    }
}

/// Instruction counters summed over a region.
#[derive(Default)]
struct Counters {
    hbm_read: Acc,
    hbm_write: Acc,
    sbuf_read: Acc,
    sbuf_write: Acc,
    spill_save: Acc,
    spill_reload: Acc,
    dma_wait_ns: Acc,
    hardware_flops: Acc,
    transpose_flops: Acc,
}

impl Counters {
    fn add(&mut self, i: &Instruction) {
        self.hbm_read.add(i.hbm_read_bytes);
        self.hbm_write.add(i.hbm_write_bytes);
        self.sbuf_read.add(i.sbuf_read_bytes);
        self.sbuf_write.add(i.sbuf_write_bytes);
        self.spill_save.add(i.spill_save_bytes);
        self.spill_reload.add(i.spill_reload_bytes);
        self.dma_wait_ns.add(i.dma_wait_ns);
        self.hardware_flops.add(i.raw_flops);
        self.transpose_flops.add(i.transpose_flops);
    }
}

/// What a region owns.
struct Owned {
    windows: Vec<(u64, u64)>,
    busy: BTreeMap<&'static str, Vec<(u64, u64)>>,
    counters: Counters,
}

/// Time windows and member instructions; `true` when instructions are clipped to the windows.
fn members(profile: &NeuronProfile, span: &RegionSpan) -> (Vec<(u64, u64)>, Vec<usize>, bool) {
    match &span.selection {
        Selection::Time(w) => {
            let idx = profile
                .instructions
                .iter()
                .enumerate()
                .filter(|(_, i)| {
                    clip(i.start_ns, i.end_ns, w).next().is_some() || contains(w, i.start_ns)
                })
                .map(|(n, _)| n)
                .collect();
            (w.clone(), idx, true)
        }
        Selection::Instructions(idx) => (vec![(span.start_ns, span.end_ns)], idx.clone(), false),
    }
}

fn gather(profile: &NeuronProfile, span: &RegionSpan) -> Owned {
    let (windows, idx, clipped) = members(profile, span);
    let mut owned = Owned {
        windows,
        busy: BTreeMap::new(),
        counters: Counters::default(),
    };
    for &n in &idx {
        let ins = &profile.instructions[n];
        if ins.is_busy() {
            let pieces: Vec<(u64, u64)> = if clipped {
                clip(ins.start_ns, ins.end_ns, &owned.windows).collect()
            } else {
                vec![(ins.start_ns, ins.end_ns)]
            };
            if let Some(p) = ins.engine.as_ref().and_then(|e| e.summary_prefix()) {
                owned.busy.entry(p).or_default().extend(pieces);
            }
        }
        // Counters belong to the region where the instruction starts, never split.
        if !clipped || contains(&owned.windows, ins.start_ns) {
            owned.counters.add(ins);
        }
    }
    owned
}

/// The instructions a region counts as its own (indices into `profile.instructions`): its members, or
/// for time windows the instructions starting in them, as its counters are.
pub fn owned_instructions(profile: &NeuronProfile, span: &RegionSpan) -> Vec<usize> {
    let (windows, idx, clipped) = members(profile, span);
    idx.into_iter()
        .filter(|&n| !clipped || contains(&windows, profile.instructions[n].start_ns))
        .collect()
}

/// The metrics of one region.
pub fn region_metrics(profile: &NeuronProfile, span: &RegionSpan, peaks: &Peaks) -> RuleMetrics {
    let mut owned = gather(profile, span);
    let mut out = RuleMetrics::new();
    let mut put = |k: &str, v: Option<f64>| {
        out.insert(k.to_string(), v.filter(|x| x.is_finite()));
    };
    let total = length(&owned.windows) as f64 * NS;
    // `total_active_time` and `active_time_percent` come from the device timeline (`super::super::idle`).
    put("total_time", Some(total));
    for e in ENGINES {
        let t = owned.busy.remove(e).map_or(0, |v| length(&union(v))) as f64 * NS;
        put(
            &format!("{e}_engine_active_time_percent"),
            div(Some(t), Some(total)),
        );
    }
    counter_metrics(&owned.counters, peaks, total, &mut put);
    dma_and_collectives(profile, &owned.windows, total, &mut put);
    out
}

fn counter_metrics(
    c: &Counters,
    peaks: &Peaks,
    total: f64,
    put: &mut impl FnMut(&str, Option<f64>),
) {
    let hw = c.hardware_flops.0;
    let model = hw.zip(c.transpose_flops.0).map(|(h, t)| h - t);
    let bytes = sum2(c.hbm_read.0, c.hbm_write.0);
    put("hardware_flops", hw);
    put("transpose_flops", c.transpose_flops.0);
    put("model_flops", model);
    put(
        "mfu_estimated_percent",
        div(model, peaks.peak_flops.map(|p| p * total)),
    );
    put(
        "hfu_estimated_percent",
        div(hw, peaks.peak_flops.map(|p| p * total)),
    );
    put(
        "mbu_estimated_percent",
        div(bytes, peaks.peak_bandwidth.map(|p| p * total)),
    );
    put("mm_arithmetic_intensity", div(hw, bytes));
    put("peak_flops_bandwidth_ratio", peaks.ratio());
    put("hbm_read_bytes", c.hbm_read.0);
    put("hbm_write_bytes", c.hbm_write.0);
    put("sbuf_read_bytes", c.sbuf_read.0);
    put("sbuf_write_bytes", c.sbuf_write.0);
    put("spill_save_bytes", c.spill_save.0);
    put("spill_reload_bytes", c.spill_reload.0);
    derived_bytes(
        put,
        c.hbm_read.0,
        c.spill_reload.0,
        c.sbuf_write.0,
        c.spill_save.0,
        c.sbuf_read.0,
    );
    let wait = c.dma_wait_ns.0.map(|w| w * NS);
    put("dma_wait_time", wait);
    put("dma_wait_percent", div(wait, Some(total)));
}

fn dma_and_collectives(
    profile: &NeuronProfile,
    windows: &[(u64, u64)],
    total: f64,
    put: &mut impl FnMut(&str, Option<f64>),
) {
    if profile.dma.is_empty() {
        for k in [
            "dma_transfer_count",
            "dma_transfer_total_bytes",
            "dma_transfer_average_bytes",
        ] {
            put(k, None);
        }
    } else {
        let inside: Vec<f64> = profile
            .dma
            .iter()
            .filter(|d| contains(windows, d.start_ns))
            .map(|d| d.bytes)
            .collect();
        let sum: f64 = inside.iter().sum();
        put("dma_transfer_count", Some(inside.len() as f64));
        put("dma_transfer_total_bytes", Some(sum));
        put(
            "dma_transfer_average_bytes",
            div(Some(sum), Some(inside.len() as f64)),
        );
    }
    let count = profile
        .collectives
        .iter()
        .filter(|c| contains(windows, c.start_ns))
        .count();
    let spans: Vec<(u64, u64)> = profile
        .collectives
        .iter()
        .flat_map(|c| clip(c.start_ns, c.end_ns, windows))
        .collect();
    let cc = length(&union(spans)) as f64 * NS;
    put("cc_op_count", Some(count as f64));
    put("cc_op_active_time", Some(cc));
    put("cc_op_time_percent", div(Some(cc), Some(total)));
}
