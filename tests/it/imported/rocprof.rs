//! rocprofv3 CSV output: the SDK's sample kernel trace with its HIP API and marker traces beside it
//! (tests/fixtures/rocprof); every ROCTx range's GPU time equal to a plain sum over the CSV rows;
//! a missing column refused naming the file and the column; the kernel trace alone placed by each
//! kernel's own start.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use assert_cmd::Command;

use super::{assert_same_times, inclusive_by_path, region_times, run_report};
use crate::common::fixture;

const DIR: &str = "rocprof/sdk-docs-sample";

fn rows(path: &Path) -> Vec<BTreeMap<String, String>> {
    csv::Reader::from_path(path)
        .unwrap()
        .deserialize()
        .map(Result::unwrap)
        .collect()
}

fn num(row: &BTreeMap<String, String>, column: &str) -> f64 {
    row[column].parse().unwrap()
}

/// Each kernel with the ROCTx ranges open on its HIP launch call's thread when the call started.
fn kernels_by_launch(dir: &Path) -> Vec<(Vec<String>, f64)> {
    let calls: BTreeMap<String, (String, f64)> = rows(&dir.join("hip_api_trace.csv"))
        .into_iter()
        .map(|r| {
            (
                r["Correlation_Id"].clone(),
                (r["Thread_Id"].clone(), num(&r, "Start_Timestamp")),
            )
        })
        .collect();
    let mut markers = rows(&dir.join("marker_api_trace.csv"));
    markers.retain(|m| m["Start_Timestamp"] != m["End_Timestamp"]);
    markers.sort_by(|a, b| {
        let key =
            |m: &BTreeMap<String, String>| (num(m, "Start_Timestamp"), -num(m, "End_Timestamp"));
        key(a).partial_cmp(&key(b)).unwrap()
    });
    rows(&dir.join("kernel_trace.csv"))
        .iter()
        .map(|k| {
            let (thread, at) = &calls[&k["Correlation_Id"]];
            let path = markers
                .iter()
                .filter(|m| &m["Thread_Id"] == thread)
                .filter(|m| num(m, "Start_Timestamp") < *at && *at < num(m, "End_Timestamp"))
                .map(|m| m["Function"].clone())
                .collect();
            (path, num(k, "End_Timestamp") - num(k, "Start_Timestamp"))
        })
        .collect()
}

#[test]
fn each_roctx_ranges_time_equals_a_plain_sum_over_the_csv_rows() {
    let tmp = tempfile::tempdir().unwrap();
    let input = fixture(&format!("{DIR}/kernel_trace.csv"));
    let thread = "pipeline.ncu.ncu_cli.nvtx.push_pop_scope=thread";
    let (report, _) = run_report(&["report", thread], &[&input], &tmp.path().join("r"));
    let kernels = kernels_by_launch(&fixture(DIR));
    let want = inclusive_by_path(
        &kernels
            .into_iter()
            .filter(|(p, _)| !p.is_empty())
            .collect::<Vec<_>>(),
    );
    assert_eq!(want.len(), 3, "{want:?}");
    let scope = &report["scopes"][0];
    assert!(
        scope["label"].as_str().unwrap().contains("(pid 69)"),
        "{scope:#}"
    );
    assert_same_times(&region_times(&report, "device 1"), &want);
    assert_eq!(scope["total"]["kernel_count"], 7);
}

/// The kernel trace copied alone, or with its siblings changed by `edit`, into `dir`.
fn copy(dir: &Path, siblings: bool, edit: impl Fn(&str, String) -> String) -> PathBuf {
    let names: &[&str] = match siblings {
        true => &[
            "kernel_trace.csv",
            "hip_api_trace.csv",
            "marker_api_trace.csv",
        ],
        false => &["kernel_trace.csv"],
    };
    for name in names {
        let text = std::fs::read_to_string(fixture(&format!("{DIR}/{name}"))).unwrap();
        std::fs::write(dir.join(format!("7_{name}")), edit(name, text)).unwrap();
    }
    dir.join("7_kernel_trace.csv")
}

#[test]
fn the_kernel_trace_alone_places_kernels_by_their_start() {
    let tmp = tempfile::tempdir().unwrap();
    let input = copy(tmp.path(), false, |_, t| t);
    let (report, _) = run_report(&["report"], &[&input], &tmp.path().join("r"));
    assert_eq!(report["run"]["profiler"]["name"], "rocprofv3");
    let scope = &report["scopes"][0];
    assert!(
        scope["label"].as_str().unwrap().contains("(pid 7)"),
        "{scope:#}"
    );
    assert_eq!(scope["total"]["kernel_count"], 7);
    assert!(scope["regions"].as_array().unwrap().is_empty());
}

#[test]
fn a_missing_column_is_refused_naming_the_file_and_the_column() {
    let tmp = tempfile::tempdir().unwrap();
    let input = copy(tmp.path(), true, |name, text| match name {
        "marker_api_trace.csv" => text.replacen("\"Thread_Id\"", "\"Thread\"", 1),
        _ => text,
    });
    let out = Command::cargo_bin("profile-run")
        .unwrap()
        .arg("report")
        .arg(&input)
        .arg("--out")
        .arg(tmp.path().join("r"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(5), "{stderr}");
    assert!(
        stderr.contains("7_marker_api_trace.csv: has no column `Thread_Id`"),
        "{stderr}"
    );
    let input = copy(tmp.path(), true, |name, text| match name {
        "hip_api_trace.csv" => text.replacen(",69,69,1451,", ",69,69,x,", 1),
        _ => text,
    });
    let out = Command::cargo_bin("profile-run")
        .unwrap()
        .arg("report")
        .arg(&input)
        .arg("--out")
        .arg(tmp.path().join("r2"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("line 3: column `Correlation_Id` is `x`"),
        "{stderr}"
    );
}
