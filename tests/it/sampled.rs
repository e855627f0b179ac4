//! Sampled profiling (`--config ncu/sampled`) on a real sampled capture and its full twin
//! (tests/fixtures/ncu/h100-2025.3.1-sampled): the join by launch key, coverage per region, deep
//! values checked against full replay, re-rendering, the refusals and the failed deep pass.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use predicates::prelude::*;
use serde_json::Value;

use crate::common::{
    assert_deep_values_within, fixture, interval_coverage, path_with_python, repo,
};
use crate::report_schema::schema;

const DIR: &str = "ncu/h100-2025.3.1-sampled";
const TIME: &str = "gpu__time_duration.sum";

pub(crate) fn profile_run() -> Command {
    Command::cargo_bin("profile-run").unwrap()
}

/// `profile-run report INPUT --out DIR/NAME`, returning report.json.
pub(crate) fn render(input: &Path, out: &Path, overrides: &[&str]) -> Value {
    profile_run()
        .arg("report")
        .arg(input)
        .arg("--out")
        .arg(out)
        .args(overrides)
        .assert()
        .success();
    read_json(&out.join("report.json"))
}

/// The fixture's full kernel replay of the sampled workload, rendered into `tmp/full`.
pub(crate) fn full_replay(tmp: &Path) -> Value {
    render(
        &fixture(&format!("{DIR}/train_full.ncu-rep.gz")),
        &tmp.join("full"),
        &[],
    )
}

pub(crate) fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn only_scope(report: &Value) -> &Value {
    let scopes = report["scopes"].as_array().unwrap();
    assert_eq!(scopes.len(), 1, "one process, one device");
    &scopes[0]
}

pub(crate) fn regions(report: &Value) -> Vec<&Value> {
    only_scope(report)["regions"]
        .as_array()
        .unwrap()
        .iter()
        .collect()
}

fn value(region: &Value, metric: &str) -> Option<f64> {
    region["inclusive"][metric]["value"].as_f64()
}

/// A copy of the timing pass's report file alone in a directory of its own, so no deep pass lies
/// beside it.
fn timing_alone(tmp: &Path) -> PathBuf {
    let alone = tmp.join("alone");
    std::fs::create_dir_all(&alone).unwrap();
    let path = alone.join("train.ncu-rep.gz");
    std::fs::copy(fixture(&format!("{DIR}/train.ncu-rep.gz")), &path).unwrap();
    path
}

#[test]
fn every_result_takes_its_twins_deep_metrics_and_the_coverage_says_so() {
    let tmp = tempfile::tempdir().unwrap();
    let sampled = render(
        &fixture(&format!("{DIR}/train.ncu-rep.gz")),
        &tmp.path().join("sampled"),
        &[],
    );
    let sampling = &sampled["sampling"];
    // 54 timing results, 13 distinct launch keys, one deep result each (README of the fixture).
    assert_eq!(sampling["deep_results"], 13);
    assert_eq!(sampling["measured_results"], 13);
    assert_eq!(sampling["estimated_results"], 41);
    assert_eq!(sampling["unmatched_results"], 0);
    // A bare pair of report files does not record the setting: unknown, not guessed.
    assert!(sampling["launch_count"].is_null());
    assert_eq!(sampling["join_key"][0], "mangled kernel name");
    let deep_metrics: Vec<&str> = sampling["deep_metrics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap())
        .collect();
    assert!(deep_metrics.contains(&"sm__throughput.avg.pct_of_peak_sustained_elapsed"));
    assert!(
        !deep_metrics.contains(&TIME),
        "time comes from the timing pass"
    );

    for region in regions(&sampled) {
        let c = &region["coverage"];
        let shares: Vec<f64> = [
            "measured_time_share",
            "estimated_time_share",
            "unmatched_time_share",
        ]
        .iter()
        .map(|k| c[k].as_f64().unwrap())
        .collect();
        assert!(
            (shares.iter().sum::<f64>() - 1.0).abs() < 1e-9,
            "{}: shares add up to 1: {shares:?}",
            region["path"]
        );
        assert_eq!(
            shares[2], 0.0,
            "{}: every launch has a twin",
            region["path"]
        );
        // Layer 1 repeats layer 0's launches: none of its launches was the deep pass's.
        if region["path"] == "train_step/forward/layer1" {
            assert_eq!(shares[1], 1.0);
        }
        assert_eq!(c["estimated"], shares[1] > 0.0);
        for metric in &deep_metrics {
            assert!(
                value(region, metric).is_some(),
                "{}: {metric} has a value",
                region["path"]
            );
        }
    }
}

#[test]
fn times_counts_and_instances_come_from_the_timing_pass_alone() {
    let tmp = tempfile::tempdir().unwrap();
    let sampled = render(
        &fixture(&format!("{DIR}/train.ncu-rep.gz")),
        &tmp.path().join("sampled"),
        &[],
    );
    let timing = render(&timing_alone(tmp.path()), &tmp.path().join("timing"), &[]);
    assert!(timing["sampling"].is_null(), "no deep pass beside it");
    let timing_regions = regions(&timing);
    let sampled_regions = regions(&sampled);
    assert_eq!(timing_regions.len(), sampled_regions.len());
    for (s, t) in sampled_regions.iter().zip(&timing_regions) {
        assert_eq!(s["path"], t["path"]);
        assert_eq!(s["kernel_count"], t["kernel_count"]);
        assert_eq!(value(s, TIME), value(t, TIME), "{}", s["path"]);
        assert_eq!(s["instances"], t["instances"], "{}", s["path"]);
        assert!(t["coverage"].is_null());
    }
}

/// The bar the GPU benchmark holds a sampled run to (docs/performance.md), here on the fixture:
/// every deep metric of every region within 5% of full kernel replay of the same workload.
#[test]
fn deep_values_agree_with_full_replay_region_by_region() {
    let tmp = tempfile::tempdir().unwrap();
    let sampled = render(
        &fixture(&format!("{DIR}/train.ncu-rep.gz")),
        &tmp.path().join("sampled"),
        &[],
    );
    let full = full_replay(tmp.path());
    assert!(full["sampling"].is_null());
    let full_regions = regions(&full);
    for region in regions(&sampled) {
        let twin = full_regions
            .iter()
            .find(|r| r["path"] == region["path"])
            .unwrap_or_else(|| panic!("{} in the full run", region["path"]));
        // Two runs of the workload: times differ by run-to-run noise only.
        let (s, f) = (value(region, TIME).unwrap(), value(twin, TIME).unwrap());
        assert!(
            (s / f - 1.0).abs() < 0.05,
            "{}: time {s} vs {f}",
            region["path"]
        );
    }
    let compared = assert_deep_values_within(&sampled, &full, 0.05);
    assert!(compared >= 30, "compared {compared} values");
}

/// Every deep value of a sampled run carries a 95% interval (docs/attribution.md, "Intervals"); on
/// the fixture pair full replay's value lies inside it for all 42 (region, metric) pairs (the GPU
/// measurement's bar is 90%). The time,
/// measured on every launch by the timing pass, has none; a run profiled in full has none.
#[test]
fn intervals_of_estimated_values_cover_full_replay() {
    let tmp = tempfile::tempdir().unwrap();
    let sampled = render(
        &fixture(&format!("{DIR}/train.ncu-rep.gz")),
        &tmp.path().join("sampled"),
        &[],
    );
    let full = full_replay(tmp.path());
    let (inside, compared, misses) = interval_coverage(&sampled, &full);
    assert!(compared >= 30, "compared {compared}");
    // All 42 when written: a change to the formula that loses one shows here.
    assert_eq!(inside, compared, "{misses:#?}");
    let mut widths = 0;
    for region in regions(&sampled) {
        assert!(region["inclusive"][TIME]["interval95"].is_null());
        for metric in sampled["sampling"]["deep_metrics"].as_array().unwrap() {
            let v = &region["inclusive"][metric.as_str().unwrap()];
            let (Some(value), Some(interval)) = (v["value"].as_f64(), v["interval95"].as_array())
            else {
                continue;
            };
            let (lo, hi) = (interval[0].as_f64().unwrap(), interval[1].as_f64().unwrap());
            assert!(
                lo >= 0.0,
                "{} {metric}: a count or rate is never negative",
                region["path"]
            );
            // Never wider than the value itself on this workload: the bars say something.
            assert!(hi - lo < value.abs(), "{} {metric}", region["path"]);
            widths += usize::from(hi > lo);
        }
    }
    assert!(widths > 0, "some estimated value has a width");
    let (schemas, index) = schema();
    if let Err(e) = schemas.validate(&sampled, index) {
        panic!("a sampled report.json does not match docs/report.schema.json:\n{e:#}");
    }
    assert!(full["scopes"][0]["regions"][0]["inclusive"]
        .as_object()
        .unwrap()
        .values()
        .all(|v| v["interval95"].is_null()));
}

#[test]
fn a_launch_without_a_twin_keeps_its_time_and_has_no_deep_values() {
    // The timing pass of this capture beside the deep pass of another workload: no launch key meets
    // its twin, so no deep value may be guessed.
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("mismatched");
    std::fs::create_dir_all(&dir).unwrap();
    let timing = dir.join("train.ncu-rep.gz");
    std::fs::copy(fixture(&format!("{DIR}/train.ncu-rep.gz")), &timing).unwrap();
    std::fs::copy(
        fixture("ncu/h100-2025.3.1-pytorch/rep_kernel.ncu-rep.gz"),
        dir.join("train.deep.ncu-rep.gz"),
    )
    .unwrap();
    let report = render(&timing, &tmp.path().join("out"), &[]);
    assert_eq!(report["sampling"]["measured_results"], 0);
    assert_eq!(report["sampling"]["unmatched_results"], 54);
    let alone = render(&timing_alone(tmp.path()), &tmp.path().join("timing"), &[]);
    for (region, plain) in regions(&report).iter().zip(regions(&alone)) {
        assert_eq!(region["coverage"]["unmatched_time_share"], 1.0);
        assert_eq!(value(region, TIME), value(plain, TIME));
        assert!(value(region, "sm__throughput.avg.pct_of_peak_sustained_elapsed").is_none());
    }
    let md = std::fs::read_to_string(tmp.path().join("out/report.md")).unwrap();
    assert!(md.contains("54 had no twin"), "report.md says so");
}

#[test]
fn diff_refuses_a_sampled_run_against_a_full_one_unless_allowed() {
    let tmp = tempfile::tempdir().unwrap();
    render(
        &fixture(&format!("{DIR}/train.ncu-rep.gz")),
        &tmp.path().join("sampled"),
        &[],
    );
    render(
        &fixture(&format!("{DIR}/train_full.ncu-rep.gz")),
        &tmp.path().join("full"),
        &[],
    );
    let (full, sampled) = (tmp.path().join("full"), tmp.path().join("sampled"));
    profile_run()
        .arg("diff")
        .args([&full, &sampled])
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains("sampling")
                .and(predicate::str::contains("--allow-incomparable")),
        );
    profile_run()
        .arg("diff")
        .args([&full, &sampled])
        .arg("--allow-incomparable")
        .assert()
        .success();
    // Two sampled runs compare like any two runs.
    profile_run()
        .arg("diff")
        .args([&sampled, &sampled])
        .assert()
        .success();
}

/// profile-run with the fake ncu: the timing pass writes the fixture's timing capture, the deep
/// pass (its argv holds `per-launch-config`) the deep one.
pub(crate) fn fake_sampled(tmp: &Path) -> Command {
    let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("profile-run"));
    with_fake_sampled(&mut cmd, tmp);
    Command::from_std(cmd)
}

/// [`fake_sampled`]'s directory, environment and arguments, on `cmd`: profile-run itself, or a
/// tool that runs it (strace).
pub(crate) fn with_fake_sampled<'c>(
    cmd: &'c mut std::process::Command,
    tmp: &Path,
) -> &'c mut std::process::Command {
    cmd.current_dir(tmp)
        .env_remove("FAKE_NCU_MODE")
        .env("FAKE_NCU_ARGV_LOG", tmp.join("argv.log"))
        .env(
            "FAKE_NCU_REPORT",
            fixture(&format!("{DIR}/train.ncu-rep.gz")),
        )
        .env(
            "FAKE_NCU_DEEP_REPORT",
            fixture(&format!("{DIR}/train.deep.ncu-rep.gz")),
        )
        .args(["-q", "--config", "ncu/sampled"])
        // ncu's timing pass, as the fixtures were captured: `auto` would take the trace wherever
        // the injection library was built beside the test binary.
        .arg("pipeline.ncu.timing=ncu")
        .arg(format!(
            "pipeline.ncu.executable={}",
            repo().join("tests/support/fake-ncu").display()
        ))
        .arg(format!("output.root={}", tmp.join("out").display()))
        .arg("output.run_name=run")
        .arg("regions.include=[train_step]")
}

pub(crate) fn profile_invocations(tmp: &Path) -> Vec<Vec<String>> {
    let text = std::fs::read_to_string(tmp.join("argv.log")).unwrap_or_default();
    text.split("--END--\n")
        .map(|b| b.lines().map(String::from).collect::<Vec<_>>())
        .filter(|args| args.iter().any(|a| a == "-o"))
        .collect()
}

#[test]
fn a_sampled_run_profiles_twice_and_report_run_dir_rerenders_it_without_ncu() {
    let tmp = tempfile::tempdir().unwrap();
    fake_sampled(tmp.path())
        // Adaptive samples and their top-up pass are tests/it/adaptive.rs's.
        .args(["pipeline.ncu.sampling.adaptive=false", "--", "true"])
        .assert()
        .success();
    let passes = profile_invocations(tmp.path());
    assert_eq!(passes.len(), 2, "a timing pass and a deep pass");
    assert!(passes[0]
        .iter()
        .any(|a| a.starts_with("gpu__time_duration.sum,launch__")));
    assert!(!passes[0].iter().any(|a| a == "--section"));
    assert!(passes[1]
        .windows(2)
        .any(|w| w == ["--filter-mode", "per-launch-config"]));
    assert!(passes[1]
        .windows(2)
        .any(|w| w == ["--kernel-name-base", "mangled"]));
    for pass in &passes {
        assert!(
            pass.windows(2)
                .any(|w| w == ["--nvtx-include", "train_step/"]),
            "same NVTX filter"
        );
    }
    let run = tmp.path().join("out/run");
    let profiled = read_json(&run.join("report.json"));
    assert_eq!(profiled["sampling"]["estimated_results"], 41);
    assert_eq!(profiled["sampling"]["launch_count"], 1, "the run records K");
    assert!(run.join("profile.deep.ncu-rep").is_file());

    // Re-rendered from the run directory with no ncu on hand: the same regions and numbers.
    let again = render(&run, &tmp.path().join("again"), &[]);
    assert_eq!(again["sampling"]["estimated_results"], 41);
    for (a, b) in regions(&again).iter().zip(regions(&profiled)) {
        assert_eq!(a["path"], b["path"]);
        assert_eq!(a["inclusive"], b["inclusive"]);
        assert_eq!(a["coverage"], b["coverage"]);
    }
}

#[test]
fn settings_that_defeat_the_join_exit_2_before_anything_runs() {
    for (setting, named) in [
        ("pipeline.ncu.ncu_cli.replay_mode=range", "replay_mode"),
        ("pipeline.ncu.ncu_cli.replay_mode=app-range", "replay_mode"),
        ("pipeline.ncu.reader=csv", "reader"),
        (
            "pipeline.ncu.ncu_cli.kernel_name_base=function",
            "kernel_name_base",
        ),
        ("pipeline.ncu.sampling.launch_count=0", "launch_count"),
    ] {
        let tmp = tempfile::tempdir().unwrap();
        fake_sampled(tmp.path())
            .args([setting, "--", "true"])
            .assert()
            .code(2)
            .stderr(predicate::str::contains(named));
        assert!(
            profile_invocations(tmp.path()).is_empty(),
            "{setting}: ncu never ran"
        );
    }
}

#[test]
fn dry_run_prints_both_command_lines() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("train.py"), "").unwrap();
    fake_sampled(tmp.path())
        .env("PATH", path_with_python(tmp.path()))
        .args(["--dry-run", "--", "python3", "train.py"])
        .assert()
        .success()
        .stdout(
            predicate::str::contains("timing pass")
                .and(predicate::str::contains("deep pass"))
                .and(predicate::str::contains("per-launch-config")),
        );
    assert!(profile_invocations(tmp.path()).is_empty());
}

#[test]
fn a_deep_pass_that_profiles_nothing_exits_4_and_keeps_the_timing_report() {
    let tmp = tempfile::tempdir().unwrap();
    fake_sampled(tmp.path())
        .env("FAKE_NCU_DEEP_MODE", "no-kernels")
        .args(["--", "true"])
        .assert()
        .code(4)
        .stderr(predicate::str::contains("deep pass"));
    let run = tmp.path().join("out/run");
    let report = read_json(&run.join("report.json"));
    assert!(
        run.join("profile.ncu-rep").is_file(),
        "the timing capture is kept"
    );
    let train_step = regions(&report)
        .into_iter()
        .find(|r| r["path"] == "train_step")
        .expect("the timing pass's regions");
    assert_eq!(train_step["kernel_count"], 54);
    assert!(value(train_step, TIME).unwrap() > 0.0);
    let notes = serde_json::to_string(&report["notes"]).unwrap();
    assert!(notes.contains("deep pass"), "a note says why: {notes}");
}

#[test]
fn report_html_shows_coverage_and_marks_estimated_deep_values() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("html");
    let report = render(
        &fixture(&format!("{DIR}/train.ncu-rep.gz")),
        &out,
        &["report.outputs=[md, json, html]"],
    );
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(html.contains("Coverage (measured / estimated / unmatched)"));
    // train_step's row: its coverage as report.json has it, then its deep values marked estimated.
    let c = &regions(&report)[0]["coverage"];
    let pct = |k: &str| format!("{:.1}%", 100.0 * c[k].as_f64().unwrap());
    let cell = format!(
        "{} &#x2f; {} &#x2f; {}",
        pct("measured_time_share"),
        pct("estimated_time_share"),
        pct("unmatched_time_share")
    );
    assert!(html.contains(&cell), "{cell}");
    assert!(html.contains("≈ "), "estimated deep values are marked");
    // A report from the full twin has neither.
    let full_out = tmp.path().join("full");
    render(
        &fixture(&format!("{DIR}/train_full.ncu-rep.gz")),
        &full_out,
        &["report.outputs=[json, html]"],
    );
    let full = std::fs::read_to_string(full_out.join("report.html")).unwrap();
    assert!(!full.contains("Coverage (measured"));
    assert!(!full.contains("≈ "));
}

/// The section of report.md headed `### {heading}`, up to the next heading of that level.
fn md_section<'m>(md: &'m str, heading: &str) -> &'m str {
    let start = md.find(&format!("\n### {heading}\n")).unwrap();
    let rest = &md[start + 1..];
    &rest[..rest[4..].find("\n### ").map_or(rest.len(), |end| end + 4)]
}

#[test]
fn report_names_the_deep_pass_as_a_source_with_its_part() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("md");
    let timing = fixture(&format!("{DIR}/train.ncu-rep.gz"));
    let deep = fixture(&format!("{DIR}/train.deep.ncu-rep.gz"));
    let report = render(&timing, &out, &[]);
    let (timing, deep) = (timing.display().to_string(), deep.display().to_string());
    assert_eq!(report["run"]["sources"], serde_json::json!([timing, deep]));
    assert_eq!(
        report["sampling"]["deep_sources"],
        serde_json::json!([deep])
    );
    assert!(report["sampling"].get("topup_sources").is_none());
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    let line = md
        .lines()
        .find(|l| l.starts_with("- **Sources:**"))
        .unwrap();
    assert!(line.contains(&format!("`{timing}` (timing pass")), "{line}");
    assert!(line.contains(&format!("`{deep}` (deep pass")), "{line}");
}

#[test]
fn exclusive_values_of_a_region_without_results_of_its_own_are_not_marked_estimated() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("md");
    let report = render(&fixture(&format!("{DIR}/train.ncu-rep.gz")), &out, &[]);
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    let deep_metrics = report["sampling"]["deep_metrics"].as_array().unwrap();
    let labels: Vec<&str> = report["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| deep_metrics.contains(&m["name"]))
        .map(|m| m["label"].as_str().unwrap())
        .collect();
    assert_eq!(labels.len(), deep_metrics.len());
    // (region, results directly in it): train_step has none, its children all theirs.
    for (path, heading, own) in [
        ("train_step", "train\\_step", false),
        (
            "train_step/forward/layer0",
            "train\\_step/forward/layer0",
            true,
        ),
    ] {
        let region = regions(&report)
            .into_iter()
            .find(|r| r["path"] == path)
            .unwrap();
        assert_eq!(region["self_kernel_count"].as_u64().unwrap() > 0, own);
        assert_eq!(region["coverage"]["estimated"], true, "{path}");
        let section = md_section(&md, heading);
        for label in &labels {
            let row = section
                .lines()
                .find(|l| l.starts_with(&format!("| {label} |")))
                .unwrap_or_else(|| panic!("{path}: no row for {label}"));
            let cells: Vec<&str> = row.split(" | ").collect();
            assert!(cells[2].starts_with("≈ "), "inclusive is estimated: {row}");
            assert_eq!(cells[3].starts_with("≈ "), own, "{path}: {row}");
            if !own {
                assert!(!cells[3].contains('≈'), "{row}");
            }
        }
    }
}
