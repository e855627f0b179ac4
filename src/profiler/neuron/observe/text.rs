//! A plain-text rendering of an [`Analysis`] (one block per region, the summaries, the notes), for
//! terminals, logs and the documentation's example. The report layer renders its own formats.

use std::fmt::Write;

use crate::profiler::neuron::observe::metrics::MetricMap;
use crate::profiler::neuron::observe::{Analysis, Bound, Region};
use crate::report::format::significant as format_number;

fn g(m: &MetricMap, k: &str) -> Option<f64> {
    m.get(k).copied().flatten()
}

fn pct(v: Option<f64>) -> String {
    v.map_or("—".into(), |x| format!("{:.1} %", x * 100.0))
}

fn us(v: Option<f64>) -> String {
    v.map_or("—".into(), |x| format!("{:.2} µs", x * 1e6))
}

fn mib(v: Option<f64>) -> String {
    v.map_or("—".into(), |x| format!("{:.2} MiB", x / 1_048_576.0))
}

fn num(v: Option<f64>) -> String {
    v.map_or("—".into(), format_number)
}

fn bound(b: Option<Bound>, m: &MetricMap) -> String {
    let (ai, r) = (
        num(g(m, "mm_arithmetic_intensity")),
        num(g(m, "peak_flops_bandwidth_ratio")),
    );
    match b {
        Some(Bound::Memory) => format!("memory-bound ({ai} < {r} FLOP/byte)"),
        Some(Bound::Compute) => format!("compute-bound ({ai} ≥ {r} FLOP/byte)"),
        None => "boundedness unknown".into(),
    }
}

fn region(out: &mut String, r: &Region) {
    let m = &r.metrics;
    let _ = writeln!(
        out,
        "{}  [{} – {}]  total {}  active {}  {}",
        r.name,
        us(Some(r.start_ns as f64 * 1e-9)),
        us(Some(r.end_ns as f64 * 1e-9)),
        us(g(m, "total_time")),
        pct(g(m, "active_time_percent")),
        bound(r.bound, m)
    );
    let engines: Vec<String> = ["tensor", "vector", "scalar", "gpsimd", "sync"]
        .iter()
        .map(|e| {
            format!(
                "{e} {}",
                pct(g(m, &format!("{e}_engine_active_time_percent")))
            )
        })
        .collect();
    let _ = writeln!(out, "  engines  {}", engines.join("  "));
    let _ = writeln!(
        out,
        "  flops    model {}  hardware {}  MFU {}  HFU {}  MBU {}",
        num(g(m, "model_flops")),
        num(g(m, "hardware_flops")),
        pct(g(m, "mfu_estimated_percent")),
        pct(g(m, "hfu_estimated_percent")),
        pct(g(m, "mbu_estimated_percent"))
    );
    let _ = writeln!(
        out,
        "  memory   HBM read {}  write {}  spill save {}  reload {}",
        mib(g(m, "hbm_read_bytes")),
        mib(g(m, "hbm_write_bytes")),
        mib(g(m, "spill_save_bytes")),
        mib(g(m, "spill_reload_bytes"))
    );
    let _ = writeln!(
        out,
        "  dma      {} transfers  {}  average {}  wait {}",
        num(g(m, "dma_transfer_count")),
        mib(g(m, "dma_transfer_total_bytes")),
        mib(g(m, "dma_transfer_average_bytes")),
        pct(g(m, "dma_wait_percent"))
    );
    let _ = writeln!(
        out,
        "  cc       {} ops  {}",
        num(g(m, "cc_op_count")),
        us(g(m, "cc_op_active_time"))
    );
    for i in &r.insights {
        let evidence: Vec<String> = i
            .evidence
            .iter()
            .map(|e| format!("{} = {}", e.metric, num(Some(e.value))))
            .collect();
        let _ = writeln!(out, "  [{:?}] {}: {}", i.severity, i.rule, i.message);
        let _ = writeln!(out, "      evidence: {}", evidence.join(", "));
        let _ = writeln!(out, "      action: {}", i.action);
    }
}

/// The whole analysis as text.
pub fn render(a: &Analysis) -> String {
    let mut out = String::new();
    for s in &a.summaries {
        let _ = writeln!(
            out,
            "profile {}  total {}  active {}  MFU {}",
            s.profile_id,
            us(g(&s.metrics, "total_time")),
            pct(g(&s.metrics, "active_time_percent")),
            pct(g(&s.metrics, "mfu_estimated_percent"))
        );
        for i in &s.insights {
            let _ = writeln!(out, "  [{:?}] {}: {}", i.severity, i.rule, i.message);
        }
    }
    let _ = writeln!(
        out,
        "\nregions ({}): {}",
        a.method.as_str(),
        a.regions.len()
    );
    for r in &a.regions {
        out.push('\n');
        region(&mut out, r);
    }
    for n in &a.notes {
        let _ = writeln!(out, "note: {n}");
    }
    out
}
