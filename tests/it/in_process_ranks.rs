//! Two ranks of a job whose traces carry in-process counters, made from the real H200 traces of
//! `same_key_two_sizes.py 4 4` (tests/fixtures/ncu/h200-2025.3.1-inprocess) by giving their process
//! lines a rank: rank 0 is the run with counters; rank 1, not among `deep_ranks`, is the same
//! workload traced only, with the metric names a rank that profiles nothing writes. Read together,
//! each rank is a scope, rank 1's launches take rank 0's samples of the same launch key and
//! regions, and a note says so.

use serde_json::Value;

use crate::common::{fixture, report_json};
use crate::trace_format::gunzip;

const DIR: &str = "ncu/h200-2025.3.1-inprocess";

/// `text`'s lines as rank `rank` of 2, with `extra` after its process line and the closing `end`
/// record counting the lines.
fn as_rank(text: &str, rank: u32, extra: &[&str]) -> String {
    let mut out: Vec<String> = Vec::new();
    for line in text.lines() {
        match line.split('\t').next() {
            Some("process") => {
                let fields: Vec<&str> = line.split('\t').collect();
                out.push(format!("{}\t{rank}\t2", fields[..5].join("\t")));
                out.extend(extra.iter().map(|l| l.to_string()));
            }
            Some("end") => out.push(format!("end\t{}", out.len())),
            _ => out.push(line.to_string()),
        }
    }
    out.join("\n") + "\n"
}

#[test]
fn a_rank_that_profiled_nothing_takes_its_peers_samples_with_a_note() {
    let tmp = tempfile::tempdir().unwrap();
    let profiled = gunzip(&fixture(&format!(
        "{DIR}/two_sizes.inprocess.cupti.625.trace.gz"
    )));
    let traced = gunzip(&fixture(&format!(
        "{DIR}/two_sizes.traced.cupti.594.trace.gz"
    )));
    let metrics: Vec<&str> = profiled
        .lines()
        .filter(|l| l.starts_with("metric\t"))
        .collect();
    assert_eq!(metrics.len(), 10);
    let (rank0, rank1) = (
        tmp.path().join("cupti.625.trace"),
        tmp.path().join("cupti.594.trace"),
    );
    std::fs::write(&rank0, as_rank(&profiled, 0, &[])).unwrap();
    std::fs::write(&rank1, as_rank(&traced, 1, &metrics)).unwrap();
    let report = report_json(&[&rank0, &rank1], &tmp.path().join("out"));
    let s = &report["sampling"];
    assert_eq!(s["deep_results"], 66, "rank 0's samples alone");
    assert_eq!(s["measured_results"], 66);
    let count = |k: &str| s[k].as_u64().unwrap_or(0);
    // Read alone, rank 0 leaves 2 kernels unmatched: keys launched once, whose first launch the
    // library never profiles. Rank 1 has the same 2, and takes values for all the others.
    assert_eq!(count("unmatched_results"), 2 * 2, "{s}");
    assert_eq!(
        count("estimated_results"),
        2 * 145 - 66 - 2 * 2,
        "every other kernel of both ranks: {s}"
    );
    let notes = report["notes"].to_string();
    assert!(
        notes.contains("Rank(s) 1 profiled no launch of their own"),
        "{notes}"
    );

    let scopes = report["scopes"].as_array().unwrap();
    assert_eq!(scopes.len(), 2, "one scope per rank");
    let sm = |scope: &Value, path: &str| {
        let regions = scope["regions"].as_array().unwrap();
        let region = regions.iter().find(|r| r["path"] == path).unwrap();
        region["inclusive"]["sm__throughput.avg.pct_of_peak_sustained_elapsed"]["value"]
            .as_f64()
            .unwrap()
    };
    for layer in 0..4 {
        for part in ["attn", "mlp"] {
            let path = format!("train_step/forward/layer{layer}/{part}");
            let (own, borrowed) = (sm(&scopes[0], &path), sm(&scopes[1], &path));
            // Rank 1's launches take rank 0's samples, weighted by rank 1's own durations.
            assert!(
                (own / borrowed - 1.0).abs() < 0.03,
                "{path}: {own} against {borrowed}"
            );
        }
    }
    // The one GEMM key keeps its two strata on the borrowing rank: mlp's K = 4096 is busier.
    let (attn, mlp) = (
        sm(&scopes[1], "train_step/forward/layer1/attn"),
        sm(&scopes[1], "train_step/forward/layer1/mlp"),
    );
    assert!(mlp > attn * 1.2, "mlp {mlp} against attn {attn}");
}
