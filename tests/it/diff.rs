//! `profile-run diff`: real reports of the two ranks of tests/fixtures/ncu/h200x2-2025.3.1 compared as
//! two runs, and copies of them with values changed by the tests (each test says which) to trigger the
//! time gate, the metric gate, the noise band and the comparability refusal; and the wording of
//! differences between rendered reports of real captures (a CUPTI trace, a report file, a raw CSV).

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use serde_json::Value;

use crate::common::{analyze, analyze_sets, fixture, ExportSet};

fn report_json(rank: u32) -> Value {
    let config = serde_yaml::from_str(profile_run::config::DEFAULT_PRESET).unwrap();
    let raw = fixture(&format!("ncu/h200x2-2025.3.1/ddp_rank{rank}_raw.csv"));
    let report = analyze(&config, &[raw], &Default::default()).unwrap();
    serde_json::to_value(&report).unwrap()
}

fn write(dir: &Path, name: &str, report: &Value) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, serde_json::to_string(report).unwrap()).unwrap();
    path
}

/// Runs `diff A B args… --format json`; returns the exit code, the JSON (when printed) and stderr.
fn diff(a: &Path, b: &Path, args: &[&str]) -> (i32, Option<Value>, String) {
    let out = Command::cargo_bin("profile-run")
        .unwrap()
        .arg("diff")
        .arg(a)
        .arg(b)
        .args(args)
        .args(["--format", "json"])
        .output()
        .unwrap();
    let json = serde_json::from_slice(&out.stdout).ok();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    (out.status.code().unwrap(), json, stderr)
}

/// The region `path` of the first scope.
fn region<'a>(report: &'a mut Value, path: &str) -> &'a mut Value {
    report["scopes"][0]["regions"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|r| r["path"] == path)
        .unwrap_or_else(|| panic!("no region {path}"))
}

fn scale(report: &mut Value, path: &str, metric: &str, factor: f64) {
    let v = &mut region(report, path)["inclusive"][metric]["value"];
    *v = (v.as_f64().unwrap() * factor).into();
}

const TIME: &str = "gpu__time_duration.sum";

#[test]
fn two_ranks_of_one_step_pass_a_five_percent_gate() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (report_json(0), report_json(1));
    let (pa, pb) = (
        write(dir.path(), "a.json", &a),
        write(dir.path(), "b.json", &b),
    );
    let (code, json, _) = diff(&pa, &pb, &["--fail-above", "5"]);
    let json = json.unwrap();
    assert_eq!(code, 0);
    assert_eq!(json["verdict"], "pass");
    let scope = &json["scopes"][0];
    let backward = scope["regions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["path"] == "train_step/backward")
        .unwrap();
    // 153.95 µs on rank 0, 152.93 µs on rank 1 (the fixtures' own numbers).
    let pct = backward["time"]["delta_pct"].as_f64().unwrap();
    assert!((-1.0..0.0).contains(&pct), "{pct}");
    assert_eq!(json["gates"][0]["status"], "pass");
    assert_eq!(
        json["gates"][0]["checked"], 5,
        "the five regions of the one scope"
    );
    assert_eq!(scope["added"], Value::Array(vec![]));
    // One scope each: the aggregate is that scope again and is not compared twice.
    assert_eq!(json["scopes"].as_array().unwrap().len(), 1);
    // Each run has one scope on another device: paired, and said so.
    let notes = json["notes"].to_string();
    assert!(
        notes.contains("device 0 in A and device 1 in B (both NVIDIA H200)"),
        "{notes}"
    );
}

#[test]
fn a_region_ten_percent_slower_fails_the_gate_with_exit_6() {
    let dir = tempfile::tempdir().unwrap();
    let a = report_json(0);
    let mut b = a.clone();
    scale(&mut b, "train_step/backward", TIME, 1.10);
    let (pa, pb) = (
        write(dir.path(), "a.json", &a),
        write(dir.path(), "b.json", &b),
    );
    let (code, json, stderr) = diff(&pa, &pb, &["--fail-above", "5"]);
    assert_eq!(code, 6, "{stderr}");
    let json = json.unwrap();
    assert_eq!(json["verdict"], "fail");
    let gate = &json["gates"][0];
    assert_eq!(gate["gate"], "time +5%");
    assert_eq!(gate["status"], "fail");
    let findings = gate["findings"].as_array().unwrap();
    assert_eq!(findings.len(), 1, "{findings:?}");
    assert_eq!(findings[0]["region"], "train_step/backward");
    assert!((findings[0]["delta_pct"].as_f64().unwrap() - 10.0).abs() < 1e-6);
    assert!(stderr.contains("regression gate failed"), "{stderr}");
    // 10 % is under a 12 % limit.
    let (code, _, _) = diff(&pa, &pb, &["--fail-above", "12"]);
    assert_eq!(code, 0);
}

#[test]
fn a_slower_median_within_the_visits_spread_is_noise_not_a_failure() {
    let dir = tempfile::tempdir().unwrap();
    let mut a = report_json(0);
    let mut b = a.clone();
    // Visit statistics added by the test (CSV exports carry none): medians 100 → 110 µs, +10 %.
    let visits = |median: f64, min: f64, p90: f64| serde_json::json!({"count": 5, "min": min, "median": median, "p90": p90, "max": p90 + 1.0});
    region(&mut a, "train_step")["instances"] = visits(100e3, 90e3, 130e3);
    region(&mut b, "train_step")["instances"] = visits(110e3, 95e3, 125e3);
    let (pa, pb) = (
        write(dir.path(), "a.json", &a),
        write(dir.path(), "b.json", &b),
    );
    let (code, json, _) = diff(&pa, &pb, &["--fail-above", "5"]);
    let json = json.unwrap();
    assert_eq!(code, 0);
    let finding = &json["gates"][0]["findings"][0];
    assert_eq!(finding["status"], "within_noise");
    assert_eq!(finding["region"], "train_step");
    assert!(json["summary"].as_str().unwrap().contains("noise"));
    // Beyond the spread (p90 − min = 40 µs): a failure.
    region(&mut b, "train_step")["instances"] = visits(150e3, 140e3, 160e3);
    let pb = write(dir.path(), "b.json", &b);
    let (code, json, _) = diff(&pa, &pb, &["--fail-above", "5"]);
    assert_eq!(code, 6);
    assert_eq!(json.unwrap()["gates"][0]["findings"][0]["status"], "fail");
}

#[test]
fn a_metric_gate_fails_on_growth_and_refuses_an_uncollected_metric() {
    let dir = tempfile::tempdir().unwrap();
    let a = report_json(0);
    let mut b = a.clone();
    let metric = "sm__cycles_active.avg";
    scale(&mut b, "train_step/forward", metric, 1.03);
    let (pa, pb) = (
        write(dir.path(), "a.json", &a),
        write(dir.path(), "b.json", &b),
    );
    let (code, json, _) = diff(&pa, &pb, &["--gate-metric", &format!("{metric}:2")]);
    assert_eq!(code, 6);
    let gate = &json.unwrap()["gates"][0];
    assert_eq!(gate["metric"], metric);
    assert_eq!(gate["findings"][0]["region"], "train_step/forward");
    let (code, _, stderr) = diff(&pa, &pb, &["--gate-metric", "dram__bytes_read.sum:5"]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("has no metric `dram__bytes_read.sum`"),
        "{stderr}"
    );
    let (code, _, stderr) = diff(&pa, &pb, &["--gate-metric", "sm__cycles_active.avg"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("expected NAME:PCT"), "{stderr}");
}

#[test]
fn runs_recorded_differently_are_refused_unless_allowed() {
    let dir = tempfile::tempdir().unwrap();
    let a = report_json(0);
    let mut b = a.clone();
    b["run"]["profiler"]["settings"]["replay_mode"] = "application".into();
    let (pa, pb) = (
        write(dir.path(), "a.json", &a),
        write(dir.path(), "b.json", &b),
    );
    let (code, json, stderr) = diff(&pa, &pb, &[]);
    assert_eq!(code, 2);
    assert!(json.is_none());
    assert!(
        stderr.contains("setting replay_mode: A kernel | B application"),
        "{stderr}"
    );
    assert!(stderr.contains("--allow-incomparable"), "{stderr}");
    let (code, json, _) = diff(&pa, &pb, &["--allow-incomparable"]);
    assert_eq!(code, 0);
    let json = json.unwrap();
    assert_eq!(json["incomparable"][0]["what"], "setting replay_mode");
    assert!(json["summary"].as_str().unwrap().contains("replay_mode"));
}

#[test]
fn a_metric_rolled_up_differently_is_refused() {
    // A schema 3 report took the largest `gpc__cycles_elapsed.max` of a region's kernels; schema 4
    // sums it: the numbers differ by the kernel count, not by a regression.
    let dir = tempfile::tempdir().unwrap();
    let a = report_json(0);
    let mut b = a.clone();
    let metrics = b["metrics"].as_array_mut().unwrap();
    let at = metrics
        .iter()
        .position(|m| m["rollup"] == "sum" && m["name"] != "gpu__time_duration.sum")
        .unwrap();
    let name = metrics[at]["name"].as_str().unwrap().to_string();
    metrics[at]["rollup"] = "max".into();
    let (pa, pb) = (
        write(dir.path(), "a.json", &a),
        write(dir.path(), "b.json", &b),
    );
    let (code, _, stderr) = diff(&pa, &pb, &[]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains(&format!("rollup of {name}: A sum | B max")),
        "{stderr}"
    );
}

#[test]
fn regions_only_one_run_has_are_listed_and_a_table_is_the_default() {
    let dir = tempfile::tempdir().unwrap();
    let a = report_json(0);
    let mut b = a.clone();
    b["scopes"][0]["regions"]
        .as_array_mut()
        .unwrap()
        .retain(|r| r["path"] != "train_step/optimizer");
    let (pa, pb) = (
        write(dir.path(), "a.json", &a),
        write(dir.path(), "b.json", &b),
    );
    let (_, json, _) = diff(&pa, &pb, &[]);
    let removed = &json.unwrap()["scopes"][0]["removed"];
    assert_eq!(removed, &serde_json::json!(["train_step/optimizer"]));
    let out = Command::cargo_bin("profile-run")
        .unwrap()
        .args(["diff".as_ref(), pa.as_os_str(), pb.as_os_str()])
        .arg("--json")
        .arg(dir.path().join("diff.json"))
        .output()
        .unwrap();
    let table = String::from_utf8(out.stdout).unwrap();
    assert!(table.starts_with("NO GATE"), "{table}");
    assert!(
        table.contains("- train_step/optimizer (gone from A: "),
        "{table}"
    );
    let written: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("diff.json")).unwrap())
            .unwrap();
    assert_eq!(written["verdict"], "not_gated");
}

#[test]
fn a_directory_with_neither_report_nor_capture_is_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let pa = write(dir.path(), "a.json", &report_json(0));
    let empty = dir.path().join("run");
    std::fs::create_dir(&empty).unwrap();
    let (code, _, stderr) = diff(&pa, &empty, &[]);
    assert_eq!(code, 2);
    assert!(stderr.contains("has no report.json"), "{stderr}");
    let (code, _, stderr) = diff(&pa, &dir.path().join("missing.json"), &[]);
    assert_eq!(code, 2);
    assert!(stderr.contains("missing.json"), "{stderr}");
}

#[test]
fn a_run_directory_without_report_json_is_analysed_in_memory_and_left_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let pa = write(dir.path(), "a.json", &report_json(0));
    let run = dir.path().join("run");
    std::fs::create_dir(&run).unwrap();
    std::fs::copy(
        fixture("ncu/h200x2-2025.3.1/ddp_rank1_raw.csv"),
        run.join("export_raw.csv"),
    )
    .unwrap();
    let (code, json, stderr) = diff(&pa, &run, &["--fail-above", "5"]);
    assert_eq!(code, 0, "{stderr}");
    let json = json.unwrap();
    // The same numbers as rank 1's report: train_step 292.99 µs → 290.88 µs.
    let step = &json["scopes"][0]["regions"][0];
    assert_eq!(step["path"], "train_step");
    assert!((step["time"]["delta_pct"].as_f64().unwrap() + 0.72).abs() < 0.01);
    let left: Vec<_> = std::fs::read_dir(&run).unwrap().collect();
    assert_eq!(left.len(), 1, "nothing is written into the run directory");
}

/// Both ranks of the DDP step in one report, each scope with its rank (as `merge` of the run's rank
/// directories gives).
fn two_ranks_json() -> Value {
    let config = serde_yaml::from_str(profile_run::config::DEFAULT_PRESET).unwrap();
    let sets: Vec<ExportSet> = [0, 1]
        .into_iter()
        .map(|rank| ExportSet {
            raw: fixture(&format!("ncu/h200x2-2025.3.1/ddp_rank{rank}_raw.csv")),
            details: None,
            rank: Some(rank),
        })
        .collect();
    let report = analyze_sets(&config, &sets, &Default::default()).unwrap();
    serde_json::to_value(&report).unwrap()
}

#[test]
fn scopes_are_matched_by_rank_and_the_aggregate_is_compared_too() {
    let dir = tempfile::tempdir().unwrap();
    let a = two_ranks_json();
    let mut b = a.clone();
    // Changed: rank 1's forward 20 % slower; B's scopes in the other order.
    let forward = b["scopes"][1]["regions"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|r| r["path"] == "train_step/forward")
        .unwrap();
    let t = &mut forward["inclusive"][TIME]["value"];
    *t = (t.as_f64().unwrap() * 1.2).into();
    b["scopes"].as_array_mut().unwrap().reverse();
    let (pa, pb) = (
        write(dir.path(), "a.json", &a),
        write(dir.path(), "b.json", &b),
    );
    let (code, json, _) = diff(&pa, &pb, &["--fail-above", "10"]);
    assert_eq!(code, 6);
    let json = json.unwrap();
    let keys: Vec<&str> = json["scopes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["key"].as_str().unwrap())
        .collect();
    assert_eq!(keys, ["rank 0", "rank 1", "aggregate"]);
    let findings = json["gates"][0]["findings"].as_array().unwrap();
    assert_eq!(findings.len(), 1, "{findings:?}");
    assert_eq!(findings[0]["scope"], "rank 1");
    assert_eq!(findings[0]["region"], "train_step/forward");
    // Both raw pages name their GPU (device__attribute_display_name): nothing unknown, no warning.
    assert!(
        !json["notes"]
            .to_string()
            .contains("GPU model is not recorded"),
        "{}",
        json["notes"]
    );
    assert_eq!(json["warnings"], Value::Array(vec![]));
}

#[test]
fn a_gate_that_compared_no_region_fails_and_a_different_kernel_selection_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let a = report_json(0);
    // Every region renamed in B: nothing is in common, so the time gate has checked nothing.
    let mut renamed = report_json(1);
    for r in renamed["scopes"][0]["regions"].as_array_mut().unwrap() {
        let path = format!("other_{}", r["path"].as_str().unwrap());
        r["path"] = path.into();
    }
    renamed["aggregate"] = Value::Null;
    let pa = write(dir.path(), "a.json", &a);
    let pb = write(dir.path(), "renamed.json", &renamed);
    let (code, json, _) = diff(&pa, &pb, &["--fail-above", "5"]);
    assert_eq!(code, 6);
    let json = json.unwrap();
    assert_eq!(json["verdict"], "fail");
    assert!(
        json["gates"][0]["why"]
            .as_str()
            .unwrap()
            .contains("nothing was compared"),
        "{json}"
    );

    // The same run re-rendered with report.kernels.include set: left-out kernels would read as a
    // speedup, so the runs are not comparable.
    let mut filtered = report_json(1);
    filtered["kernel_selection"]["include"] = serde_json::json!(["*gemm*"]);
    let pf = write(dir.path(), "filtered.json", &filtered);
    let (code, _, stderr) = diff(&pa, &pf, &["--fail-above", "5"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("kernel selection"), "{stderr}");
}

/// Two runs profiled with `output.render=false` (the fake ncu writes a real report file; the
/// default native reader reads it): `diff` analyses both run directories the way `report` would,
/// through the same reader, instead of failing for want of CSV exports.
#[test]
fn two_run_directories_made_without_rendering_are_compared() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("out");
    for name in ["a", "b"] {
        Command::cargo_bin("profile-run")
            .unwrap()
            .current_dir(dir.path())
            .env_remove("FAKE_NCU_MODE")
            .arg(format!(
                "pipeline.ncu.executable={}",
                crate::common::repo()
                    .join("tests/support/fake-ncu")
                    .display()
            ))
            .arg(format!("output.root={}", root.display()))
            .arg(format!("output.run_name={name}"))
            .arg("output.render=false")
            .args(["--", "true"])
            .assert()
            .success();
        assert!(!root.join(name).join("report.json").exists());
    }
    let (code, json, stderr) = diff(&root.join("a"), &root.join("b"), &["--fail-above", "5"]);
    assert_eq!(code, 0, "{stderr}");
    let json = json.unwrap();
    let regions = json["scopes"][0]["regions"].as_array().unwrap();
    assert!(!regions.is_empty(), "{json}");
    // The same capture on both sides: every region's time is unchanged.
    for region in regions {
        assert_eq!(region["time"]["delta_pct"].as_f64(), Some(0.0), "{region}");
    }
    for name in ["a", "b"] {
        assert!(
            !root.join(name).join("report.json").exists(),
            "nothing is written into the run directories"
        );
    }
}

/// `profile-run diff A B args…` as a person reads it (the table): the exit code and all it printed.
fn diff_text(a: &Path, b: &Path, args: &[&str]) -> (i32, String) {
    let out = Command::cargo_bin("profile-run")
        .unwrap()
        .arg("diff")
        .arg(a)
        .arg(b)
        .args(args)
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    (out.status.code().unwrap(), text)
}

#[test]
fn a_trace_against_ncu_and_a_missing_version_are_said_in_plain_words() {
    let dir = tempfile::tempdir().unwrap();
    let rendered = |rel: &str, name: &str| {
        let out = dir.path().join(name);
        crate::sampled::render(&fixture(rel), &out, &[]);
        out.join("report.json")
    };
    let ncu = rendered("ncu/h100-2025.3.1-cupti/gpt2.ncu-rep.gz", "ncu");
    let trace = rendered("ncu/h100-2025.3.1-cupti/gpt2.cupti.545.trace.gz", "trace");
    let csv = rendered("ncu/h200-2025.3.1/manual_raw.csv", "csv");

    // The trace records the libcupti it loaded, not a version: said as such.
    let library = crate::sampled::read_json(&trace)["run"]["profiler"]["version"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(library.ends_with("/libcupti.so.13"), "{library}");
    let (code, text) = diff_text(&ncu, &trace, &["--allow-incomparable"]);
    assert_eq!(code, 0, "{text}");
    assert!(
        text.contains(&format!(
            "differs: profiler version: A 2025.3.1.0 | B no version recorded, library {library}\n"
        )),
        "{text}"
    );
    assert!(
        text.contains(
            "differs: metrics: A has 4 that B lacks (launch__block_size, launch__grid_size, \
             launch__registers_per_thread, launch__waves_per_multiprocessor) | B has none that A lacks\n"
        ),
        "{text}"
    );

    // A raw CSV export records no version: the note names the report that has one, if any.
    for (a, b, said) in [
        (&csv, &csv, "recorded in neither report"),
        (&ncu, &csv, "recorded only in report A"),
        (&csv, &ncu, "recorded only in report B"),
    ] {
        let (code, text) = diff_text(a, b, &["--allow-incomparable"]);
        assert_eq!(code, 0, "{text}");
        assert!(
            text.contains(&format!(
                "The profiler version is {said}; it could not be compared."
            )),
            "{said}: {text}"
        );
    }
}
