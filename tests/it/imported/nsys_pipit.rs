//! An Nsight Systems export read by another tool: pipit's CloverLeaf export with pipit's own trace
//! of its GPU activity beside it (tests/fixtures/nsys/pipit-cloverleaf). Each kernel function's
//! launches and GPU time in profile-run's report equal the CSV's `Leave` − `Enter` sums within 0.1 %.
//!
//! Why kernels and not ranges: the application was not annotated (the export has no `NVTX_EVENTS`
//! table), so there is no range to compare, and the CSV is pipit's trace rather than an `nsys stats`
//! report (`nvtx_gpu_proj_sum` needs NVTX ranges). Its memory-copy rows are left out: profile-run's
//! time is kernel time. Its `Name` is the kernel's short name, which is what the report's
//! `function` gives (the template arguments and lambda of each variant stripped).

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::run_report;
use crate::common::fixture;

const DIR: &str = "nsys/pipit-cloverleaf";

fn export() -> PathBuf {
    fixture(&format!("{DIR}/perlmutter-cloverleaf-cuda.sqlite"))
}

/// (launches, ns) per kernel name, from pipit's CSV: each kernel's `Enter` row holds its start and,
/// in `_matching_timestamp`, its end.
fn csv_kernels() -> BTreeMap<String, (u64, f64)> {
    let path = fixture(&format!("{DIR}/cloverleaf_gpu_trace.csv"));
    let mut out: BTreeMap<String, (u64, f64)> = BTreeMap::new();
    for row in csv::Reader::from_path(path).unwrap().deserialize() {
        let row: BTreeMap<String, String> = row.unwrap();
        if row["type"] != "kernel" || row["Event Type"] != "Enter" {
            continue;
        }
        let time = |c: &str| row[c].parse::<f64>().unwrap();
        let entry = out.entry(row["Name"].clone()).or_default();
        entry.0 += 1;
        entry.1 += time("_matching_timestamp") - time("Timestamp (ns)");
    }
    out
}

#[test]
fn each_kernel_functions_time_equals_pipits_trace_of_the_export() {
    let tmp = tempfile::tempdir().unwrap();
    let (report, _) = run_report(&["report"], &[&export()], &tmp.path().join("r"));
    let scopes = report["scopes"].as_array().unwrap();
    assert_eq!(scopes.len(), 1, "one process on one GPU");
    let scope = &scopes[0];
    assert!(scope["regions"].as_array().unwrap().is_empty());
    let got: BTreeMap<String, (u64, f64)> = scope["summary"]["top_kernels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| {
            let name = k["function"].as_str().unwrap().to_string();
            (
                name,
                (k["count"].as_u64().unwrap(), k["time"].as_f64().unwrap()),
            )
        })
        .collect();
    let want = csv_kernels();
    assert_eq!(
        got.keys().collect::<Vec<_>>(),
        want.keys().collect::<Vec<_>>()
    );
    for (name, (count, time)) in &want {
        let (got_count, got_time) = got[name];
        assert_eq!(got_count, *count, "{name}");
        assert!(
            (got_time - time).abs() <= time * 1e-3,
            "{name}: {got_time} ns, CSV {time} ns"
        );
    }
    let total: f64 = want.values().map(|(_, t)| t).sum();
    let reported = scope["total"]["metrics"]["gpu__time_duration.sum"]["value"]
        .as_f64()
        .unwrap();
    assert!(
        (reported - total).abs() <= total * 1e-3,
        "{reported} ns, CSV {total} ns"
    );
    // An older export schema than the other fixture's, read the same way.
    let notes = report["notes"].to_string();
    assert!(notes.contains("schema 3.13.2"), "{notes}");
}
