//! Provenance: the GPU model, driver and ncu version read from real `.ncu-rep` captures into
//! report.json, report.md and report.html; `diff` warning on another GPU or another workload; `merge`
//! refusing unrelated captures; `--gate-metric` by the label the report shows.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use serde_json::Value;

use crate::common::{fixture, render_fixture_copy};

const GPT2: &str = "ncu/h100-2025.3.1-gpt2/gpt2_pystack.ncu-rep.gz";
const TRAIN: &str = "ncu/h100-2025.3.1-sampled/train_full.ncu-rep.gz";
const TRAIN_PYSTACK: &str = "ncu/h100-2025.3.1-pytorch/rep_pystack.ncu-rep.gz";
const H100: &str = "NVIDIA H100 80GB HBM3";

fn profile_run() -> Command {
    Command::cargo_bin("profile-run").unwrap()
}

/// Runs `diff A B args… --format json`: exit code, JSON, stderr.
fn diff(a: &Path, b: &Path, args: &[&str]) -> (i32, Value, String) {
    let out = profile_run()
        .arg("diff")
        .arg(a)
        .arg(b)
        .args(args)
        .args(["--format", "json"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let json = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (out.status.code().unwrap(), json, stderr)
}

fn report_file(dir: &Path) -> PathBuf {
    dir.join("report.json")
}

#[test]
fn every_report_file_gives_gpu_driver_and_ncu_version_in_json_md_and_html() {
    for rel in [
        "ncu/h100-2025.3.1-pytorch/rep_kernel.ncu-rep.gz",
        "ncu/h100-2025.3.1-pytorch/rep_multiproc.ncu-rep.gz",
        GPT2,
        "ncu/h100-2025.3.1-sampled/train.ncu-rep.gz",
    ] {
        let (_guard, out, report) = render_fixture_copy(rel, &["report.outputs=[md,json,html]"]);
        let run = &report["run"];
        assert_eq!(run["profiler"]["version"], "2025.3.1.0", "{rel}");
        assert_eq!(
            run["platform"]["devices"],
            serde_json::json!([{ "id": "0", "model": H100 }]),
            "{rel}"
        );
        assert_eq!(run["platform"]["driver"], "CUDA 13.0", "{rel}");
        let md = std::fs::read_to_string(out.join("report.md")).unwrap();
        assert!(md.contains("- **Profiler:** ncu 2025.3.1.0"), "{rel}");
        assert!(
            md.contains(&format!(
                "- **Devices:** {H100} (device 0); **driver:** CUDA 13.0"
            )),
            "{rel}"
        );
        let html = std::fs::read_to_string(out.join("report.html")).unwrap();
        assert!(
            html.contains(&format!(
                "<dt>Devices</dt><dd>{H100} (device 0); driver: CUDA 13.0</dd>"
            )),
            "{rel}"
        );
    }
}

#[test]
fn a_csv_export_gives_the_gpu_model_and_no_driver() {
    let (_guard, out, report) = render_fixture_copy("ncu/h200-2025.3.1/manual_raw.csv", &[]);
    assert_eq!(
        report["run"]["platform"]["devices"],
        serde_json::json!([{ "id": "0", "model": "NVIDIA H200" }])
    );
    assert_eq!(report["run"]["platform"]["driver"], Value::Null);
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.contains("- **Devices:** NVIDIA H200 (device 0); **driver:** not recorded"));
    // A page exported without the device columns records nothing, and says so.
    let text = std::fs::read_to_string(fixture("ncu/h200-2025.3.1/manual_raw.csv")).unwrap();
    let mut rows = csv::Reader::from_reader(text.as_bytes());
    let header = rows.headers().unwrap().clone();
    let keep: Vec<usize> = (0..header.len())
        .filter(|&i| &header[i] != "device__attribute_display_name")
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let stripped = dir.path().join("stripped_raw.csv");
    let mut out_csv = csv::WriterBuilder::new()
        .quote_style(csv::QuoteStyle::Always)
        .from_path(&stripped)
        .unwrap();
    out_csv
        .write_record(keep.iter().map(|&i| &header[i]))
        .unwrap();
    for row in rows.records() {
        let row = row.unwrap();
        out_csv.write_record(keep.iter().map(|&i| &row[i])).unwrap();
    }
    out_csv.flush().unwrap();
    let out = dir.path().join("out");
    Command::cargo_bin("profile-run")
        .unwrap()
        .arg("report")
        .arg(&stripped)
        .arg("--out")
        .arg(&out)
        .assert()
        .success();
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.contains("- **Devices:** not recorded in the inputs; **driver:** not recorded"));
}

#[test]
fn diff_warns_when_the_workloads_differ_and_not_when_they_match() {
    let (_a, gpt2, _) = render_fixture_copy(GPT2, &[]);
    let (_b, train, _) = render_fixture_copy(TRAIN, &[]);
    let (_c, train_again, _) = render_fixture_copy(TRAIN_PYSTACK, &[]);
    let (code, json, stderr) = diff(&gpt2, &train, &["--allow-incomparable"]);
    assert_eq!(code, 0, "{stderr}");
    let warnings = json["warnings"].as_array().unwrap();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    let w = warnings[0].as_str().unwrap();
    assert!(
        w.contains("share only 3 of 59 distinct kernels (5%)") && w.contains("below the 50%"),
        "{w}"
    );
    assert!(stderr.contains("warning: The runs share only"), "{stderr}");
    // The same training step, captured twice (with and without Python call stacks) but for 3 steps
    // and for 2: one workload, a third less work, which every region's change would show silently.
    let (code, json, stderr) = diff(&train, &train_again, &[]);
    assert_eq!(code, 0, "{stderr}");
    let warnings = json["warnings"].as_array().unwrap();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0]
            .as_str()
            .unwrap()
            .starts_with("The runs hold different amounts of work: 54 kernels in A, 36 in B (-33%"),
        "{warnings:?}"
    );
    assert!(!stderr.contains("warning: The runs share only"), "{stderr}");
    // The same capture against itself: no warning, and a verdict without a gate says what it compared.
    let (code, json, stderr) = diff(&train, &train, &[]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(json["warnings"], serde_json::json!([]), "{stderr}");
    assert!(!stderr.contains("warning:"), "{stderr}");
    let summary = json["summary"].as_str().unwrap();
    assert!(
        summary.starts_with("no gate set, so nothing was judged: ")
            && summary.contains("regions in 1 matched scopes compared from A to B"),
        "{summary}"
    );
    assert!(
        !json["notes"].to_string().contains("GPU model"),
        "both report files name their GPU: {}",
        json["notes"]
    );
}

#[test]
fn diff_warns_when_the_gpu_model_differs() {
    let (dir, train, report) = render_fixture_copy(TRAIN, &[]);
    // The same report as if captured on another GPU: only the recorded model differs.
    let mut other = report.clone();
    other["run"]["platform"]["devices"][0]["model"] = "NVIDIA H200".into();
    let other_path = dir.path().join("h200.report.json");
    std::fs::write(&other_path, other.to_string()).unwrap();
    let (code, json, stderr) = diff(&report_file(&train), &other_path, &[]);
    assert_eq!(code, 0, "a warning, not a refusal: {stderr}");
    let warnings = json["warnings"].to_string();
    assert!(
        warnings.contains(&format!("different GPUs (A: {H100} | B: NVIDIA H200)")),
        "{warnings}"
    );
    let table = profile_run()
        .arg("diff")
        .arg(report_file(&train))
        .arg(&other_path)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&table.stdout);
    assert!(
        stdout.contains("warning: The runs ran on different GPUs"),
        "{stdout}"
    );
}

#[test]
fn merge_refuses_unrelated_captures_unless_allowed() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("merged");
    let refused = profile_run()
        .arg("merge")
        .arg(fixture(GPT2))
        .arg(fixture(TRAIN))
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains("look like unrelated runs")
            && stderr.contains("shares only 3 of 59 distinct kernels (5%)")
            && stderr.contains("--allow-incomparable"),
        "{stderr}"
    );
    assert!(!out.exists(), "a refused merge writes nothing");
    profile_run()
        .arg("merge")
        .arg(fixture(GPT2))
        .arg(fixture(TRAIN))
        .arg("--allow-incomparable")
        .arg("--out")
        .arg(&out)
        .assert()
        .success();
    assert!(out.join("report.json").is_file());
}

#[test]
fn merge_takes_the_ranks_of_one_job() {
    let dir = tempfile::tempdir().unwrap();
    profile_run()
        .arg("merge")
        .arg(fixture("ncu/h200x2-2025.3.1/ddp_rank0_raw.csv"))
        .arg(fixture("ncu/h200x2-2025.3.1/ddp_rank1_raw.csv"))
        .arg("--out")
        .arg(dir.path().join("ddp"))
        .assert()
        .success();
}

#[test]
fn gate_metric_accepts_the_label_the_report_shows() {
    let (_a, train, _) = render_fixture_copy(TRAIN, &[]);
    let (_b, again, _) = render_fixture_copy(TRAIN_PYSTACK, &[]);
    let (code, json, stderr) = diff(&train, &again, &["--gate-metric", "dram throughput:1000"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        json["gates"][0]["metric"],
        "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed"
    );
    assert!(json["gates"][0]["checked"].as_u64().unwrap() > 0);
    let (code, _, stderr) = diff(&train, &again, &["--gate-metric", "DRAM Thru:5"]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("has no metric `DRAM Thru`")
            && stderr.contains(
                "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed = DRAM Throughput"
            ),
        "{stderr}"
    );
}
