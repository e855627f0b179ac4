//! The CUPTI timing source (`--config ncu/trace`) end to end on real H100 traces
//! (tests/fixtures/ncu/h100-2025.3.1-cupti: five workload kinds, each traced by the injection library
//! and captured by ncu's time-only pass in the same session): per-region kernel counts equal ncu's,
//! the time source is named, and every failure of the trace pass says what to do.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use predicates::prelude::*;
use serde_json::Value;

use crate::common::{fixture, repo};

const DIR: &str = "ncu/h100-2025.3.1-cupti";

fn profile_run() -> Command {
    Command::cargo_bin("profile-run").unwrap()
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The traces of one workload in the fixture folder.
fn traces(workload: &str) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(fixture(DIR))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            name.starts_with(&format!("{workload}.cupti.")) && name.ends_with(".trace.gz")
        })
        .collect();
    found.sort();
    assert!(!found.is_empty(), "no trace of {workload}");
    found
}

/// An empty file standing for the injection library: the fake workload never loads it.
fn library(tmp: &Path) -> PathBuf {
    let path = tmp.join("libcupti_trace.so");
    std::fs::write(&path, b"").unwrap();
    path
}

/// A trace run of the fake workload writing `workload`'s traces; the command, to run.
fn trace_run(tmp: &Path, workload: &str, overrides: &[&str]) -> Command {
    let joined: Vec<String> = traces(workload)
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    let mut cmd = profile_run();
    cmd.env("FAKE_TRACES", joined.join(" "))
        .args(["-q", "--config", "ncu/trace"])
        .arg(format!(
            "pipeline.ncu.trace.library={}",
            library(tmp).display()
        ))
        .arg(format!("output.root={}", tmp.join("runs").display()))
        .arg("output.run_name=run")
        .args(overrides)
        .arg("--")
        .arg(repo().join("tests/support/fake-traced-workload"));
    cmd
}

/// (process id, region kind, path) → kernel count, plus each scope's total.
fn counts(report: &Value) -> Vec<(String, String, String, u64)> {
    let mut out = Vec::new();
    for scope in report["scopes"].as_array().unwrap() {
        let pid = scope["process_id"].to_string();
        for region in scope["regions"].as_array().unwrap() {
            out.push((
                pid.clone(),
                region["kind"].as_str().unwrap().to_string(),
                region["path"].as_str().unwrap().to_string(),
                region["kernel_count"].as_u64().unwrap(),
            ));
        }
    }
    out
}

/// Kernel counts per region, the process ids left out (the trace and ncu's pass ran the workload
/// apart), in order.
fn counts_without_pid(report: &Value) -> Vec<(String, String, u64)> {
    let mut out: Vec<_> = counts(report)
        .into_iter()
        .map(|(_, kind, path, n)| (kind, path, n))
        .collect();
    out.sort();
    out
}

#[test]
fn every_region_counts_the_kernels_ncu_counted() {
    // (workload, overrides): the GPT-2 capture's ncu pass ran with --nvtx-include 'train_step/'.
    let cases: [(&str, &[&str], usize); 5] = [
        ("gpt2", &["regions.include=[train_step]"], 8),
        ("emit", &[], 69),
        ("graph", &[], 3),
        ("domain", &[], 6),
        ("twoproc", &[], 6),
    ];
    for (workload, overrides, regions) in cases {
        let tmp = tempfile::tempdir().unwrap();
        trace_run(tmp.path(), workload, overrides)
            .assert()
            .success();
        let traced = read_json(&tmp.path().join("runs/run/report.json"));
        let out = tmp.path().join("ncu");
        profile_run()
            .arg("report")
            .arg(fixture(&format!("{DIR}/{workload}.ncu-rep.gz")))
            .arg("--out")
            .arg(&out)
            .args(overrides)
            .assert()
            .success();
        let ncu = read_json(&out.join("report.json"));
        let (t, n) = (counts_without_pid(&traced), counts_without_pid(&ncu));
        assert_eq!(t.len(), regions, "{workload}: {t:?}");
        assert_eq!(t, n, "{workload}: per-region kernel counts");
        let total = |r: &Value| -> u64 {
            r["scopes"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| s["total"]["kernel_count"].as_u64().unwrap())
                .sum()
        };
        assert_eq!(total(&traced), total(&ncu), "{workload}: kernels in all");
    }
}

#[test]
fn start_end_ranges_domains_and_processes_land_where_ncu_put_them() {
    let tmp = tempfile::tempdir().unwrap();
    trace_run(tmp.path(), "domain", &[]).assert().success();
    let report = read_json(&tmp.path().join("runs/run/report.json"));
    let got: Vec<(String, String, u64)> = counts_without_pid(&report);
    let want = [
        ("mark", "LLM@batch", 18),
        ("mark", "LLM@phase", 10),
        ("stack", "LLM@request", 18),
        ("stack", "LLM@request/LLM@decode", 10),
        ("stack", "LLM@request/LLM@prefill", 8),
        ("stack", "step", 18),
    ];
    let want: Vec<(String, String, u64)> = want
        .iter()
        .map(|(k, p, n)| (k.to_string(), p.to_string(), *n))
        .collect();
    assert_eq!(
        got, want,
        "start/end ranges are marks, the domain's push/pop ranges a stack"
    );

    // Two processes: one scope each, every region counted in its own process.
    let tmp = tempfile::tempdir().unwrap();
    trace_run(tmp.path(), "twoproc", &[]).assert().success();
    let report = read_json(&tmp.path().join("runs/run/report.json"));
    let pids: Vec<String> = report["scopes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["process_id"].to_string().trim_matches('"').to_string())
        .collect();
    assert_eq!(pids, ["1959", "1986"]);
}

#[test]
fn thread_scope_leaves_the_autograd_threads_kernels_outside_the_main_threads_ranges() {
    let tmp = tempfile::tempdir().unwrap();
    trace_run(
        tmp.path(),
        "emit",
        &["pipeline.ncu.ncu_cli.nvtx.push_pop_scope=thread"],
    )
    .assert()
    .success();
    let thread = read_json(&tmp.path().join("runs/run/report.json"));
    let tmp2 = tempfile::tempdir().unwrap();
    trace_run(tmp2.path(), "emit", &[]).assert().success();
    let process = read_json(&tmp2.path().join("runs/run/report.json"));
    let step = |r: &Value| -> u64 {
        counts(r)
            .iter()
            .find(|(_, kind, path, _)| kind == "stack" && path == "step")
            .map(|c| c.3)
            .unwrap()
    };
    assert_eq!(
        step(&process),
        38,
        "process scope: backward kernels count in `step`"
    );
    assert!(
        step(&thread) < step(&process),
        "thread scope: {} of {}",
        step(&thread),
        step(&process)
    );
    assert_eq!(
        thread["run"]["profiler"]["settings"]["nvtx_push_pop_scope"],
        "thread"
    );
}

#[test]
fn the_report_names_its_time_source_and_diff_refuses_to_mix_them() {
    let tmp = tempfile::tempdir().unwrap();
    trace_run(tmp.path(), "graph", &[]).assert().success();
    let run = tmp.path().join("runs/run");
    let report = read_json(&run.join("report.json"));
    assert_eq!(report["run"]["profiler"]["name"], "cupti");
    assert_eq!(
        report["run"]["profiler"]["settings"]["time_source"],
        "in-place (CUPTI trace)"
    );
    let md = std::fs::read_to_string(run.join("report.md")).unwrap();
    assert!(md.contains("time source `in-place (CUPTI trace)`"), "{md}");
    let html = std::fs::read_to_string(run.join("report.html")).unwrap_or_default();
    if !html.is_empty() {
        assert!(html.contains("in-place (CUPTI trace)"));
    }
    let out = tmp.path().join("ncu");
    profile_run()
        .arg("report")
        .arg(fixture(&format!("{DIR}/graph.ncu-rep.gz")))
        .arg("--out")
        .arg(&out)
        .assert()
        .success();
    profile_run()
        .arg("diff")
        .arg(&run)
        .arg(&out)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("setting time_source"))
        .stderr(predicate::str::contains("--allow-incomparable"));
    profile_run()
        .arg("diff")
        .arg(&run)
        .arg(&out)
        .arg("--allow-incomparable")
        .assert()
        .success();
}

#[test]
fn a_process_without_cupti_names_the_libcupti_looked_for() {
    let tmp = tempfile::tempdir().unwrap();
    trace_run(tmp.path(), "graph", &[])
        .env("FAKE_TRACE_MODE", "no-cupti")
        .assert()
        .code(4)
        .stderr(predicate::str::contains(
            "could not load libcupti; looked for",
        ))
        .stderr(predicate::str::contains("libcupti.so.13"))
        .stderr(predicate::str::contains("pipeline.ncu.trace.libcupti"))
        .stderr(predicate::str::contains("pipeline.ncu.timing=ncu"));
    let tmp = tempfile::tempdir().unwrap();
    trace_run(tmp.path(), "graph", &[])
        .env("FAKE_TRACE_MODE", "none")
        .assert()
        .code(4)
        .stderr(predicate::str::contains("no process wrote a trace"));
}

#[test]
fn a_missing_injection_library_stops_before_the_workload_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let missing = tmp.path().join("nowhere/libcupti_trace.so");
    profile_run()
        .args(["-q", "--config", "ncu/trace"])
        .arg(format!("pipeline.ncu.trace.library={}", missing.display()))
        .arg(format!("output.root={}", tmp.path().join("runs").display()))
        .arg("--")
        .arg("/bin/false")
        .assert()
        .code(3)
        .stderr(predicate::str::contains(missing.display().to_string()))
        .stderr(predicate::str::contains("cargo build --release"));
    assert!(!tmp.path().join("runs").exists(), "nothing ran");
}

#[test]
fn dry_run_prints_the_traced_workload() {
    let tmp = tempfile::tempdir().unwrap();
    profile_run()
        .args(["--dry-run", "--config", "ncu/trace"])
        .arg(format!(
            "pipeline.ncu.trace.library={}",
            library(tmp.path()).display()
        ))
        .args(["--", "python3", "train.py"])
        .assert()
        .success()
        .stdout(predicate::str::contains("CUDA_INJECTION64_PATH="))
        .stdout(predicate::str::contains("NVTX_INJECTION64_PATH="))
        .stdout(predicate::str::contains("python3 train.py"))
        .stdout(predicate::str::contains("ncu").not());
}
