//! `pipeline.ncu.sampling.min_time_share` end to end with the fake ncu and the committed fixtures
//! (`train_step.py 2 3`: its H100 trace, its ncu timing pass and deep pass): a kernel name whose
//! every launch key is below the share of each of its regions is not in the deep pass's filter, its
//! kernels keep their times and show "not measured" in the coverage and the tables; at 0 nothing
//! changes.

use std::path::Path;

use serde_json::Value;

use crate::common::{fixture, repo};
use crate::sampled::{fake_sampled, profile_invocations, read_json, regions, render};
use crate::trace::trace_run;

/// A trace-timed sampled run of the fixture workload with `more` overrides; its report.json.
fn traced(tmp: &Path, more: &[&str]) -> Value {
    let ncu = format!(
        "pipeline.ncu.executable={}",
        repo().join("tests/support/fake-ncu").display()
    );
    let mut overrides = vec![
        "pipeline.ncu.sampling.enabled=true",
        "report.sections=[time, speed_of_light, launch]",
        "regions.include=[train_step]",
        &ncu,
    ];
    overrides.extend(more);
    trace_run(tmp, "train", &overrides)
        .env(
            "FAKE_NCU_DEEP_REPORT",
            fixture("ncu/h100-2025.3.1-sampled/train.deep.ncu-rep.gz"),
        )
        .env("FAKE_NCU_ARGV_LOG", tmp.join("argv.log"))
        .assert()
        .success();
    read_json(&tmp.join("runs/run/report.json"))
}

/// The deep pass's `--kernel-name` value, if it has one.
fn kernel_name(pass: &[String]) -> Option<&str> {
    pass.windows(2)
        .find(|w| w[0] == "--kernel-name")
        .map(|w| w[1].as_str())
}

const SOL: &str = "sm__throughput.avg.pct_of_peak_sustained_elapsed";
const TIME: &str = "gpu__time_duration.sum";

/// Each region's kernels with a time and no deep value: (region, kernel function, count).
fn not_measured_kernels(report: &Value) -> Vec<(String, String, u64)> {
    let mut out = Vec::new();
    for region in regions(report) {
        for k in region["kernels"].as_array().unwrap() {
            let time = k["metrics"][TIME]["value"].as_f64().unwrap_or(0.0);
            if time > 0.0 && k["metrics"][SOL]["value"].is_null() {
                out.push((
                    region["path"].as_str().unwrap().to_string(),
                    k["function"].as_str().unwrap().to_string(),
                    k["count"].as_u64().unwrap(),
                ));
            }
        }
    }
    out
}

#[test]
fn keys_under_the_share_are_not_in_the_deep_filter_and_show_not_measured() {
    let tmp = tempfile::tempdir().unwrap();
    let report = traced(
        tmp.path(),
        &[
            "pipeline.ncu.sampling.min_time_share=0.05",
            "report.outputs=[md, json, html]",
        ],
    );
    let passes = profile_invocations(tmp.path());
    assert_eq!(passes.len(), 1, "the deep pass alone runs under ncu");
    let filter = kernel_name(&passes[0]).expect("the deep pass is told which names to keep");
    assert!(
        filter.starts_with("regex:^(?:") && filter.ends_with(")$"),
        "{filter}"
    );
    assert!(passes[0]
        .windows(2)
        .any(|w| w == ["--kernel-name-base", "mangled"]));
    // The clamp of layer1 (10% of it) is kept; `fill` (under 5% of backward, the only region it
    // runs in, and of train_step) is left out.
    assert!(filter.contains("launch_clamp_scalar"), "{filter}");
    assert!(!filter.contains("FillFunctor"), "{filter}");

    let sampling = &report["sampling"];
    let not_measured = sampling["not_measured_results"].as_u64().unwrap();
    assert!(not_measured > 0, "{sampling}");
    assert_eq!(
        sampling["unmatched_results"], 0,
        "left out is not unmatched"
    );
    let counted = ["measured_results", "estimated_results", "unmatched_results"]
        .iter()
        .map(|k| sampling[*k].as_u64().unwrap())
        .sum::<u64>();
    assert_eq!(counted + not_measured, 54, "every kernel counted once");

    // Kernels keep their trace times; their deep metrics are null, never estimated.
    let left = not_measured_kernels(&report);
    let in_train_step: u64 = left
        .iter()
        .filter(|(region, _, _)| region == "train_step")
        .map(|(_, _, count)| count)
        .sum();
    assert_eq!(in_train_step, not_measured, "{left:?}");
    assert!(
        left.contains(&("train_step/backward".into(), "elementwise_kernel".into(), 3)),
        "{left:?}"
    );
    let train_step = regions(&report)[0];
    assert_eq!(train_step["path"], "train_step");
    assert_eq!(train_step["kernel_count"], 54, "no kernel lost its time");
    let coverage = &train_step["coverage"];
    let share = coverage["not_measured_time_share"].as_f64().unwrap();
    assert!(share > 0.0 && share < 0.1, "{coverage}");
    let total: f64 = [
        "measured_time_share",
        "estimated_time_share",
        "unmatched_time_share",
        "not_measured_time_share",
    ]
    .iter()
    .map(|k| coverage[*k].as_f64().unwrap())
    .sum();
    assert!((total - 1.0).abs() < 1e-9, "{coverage}");
    assert_eq!(coverage["estimated"], true);

    let run = tmp.path().join("runs/run");
    let md = std::fs::read_to_string(run.join("report.md")).unwrap();
    assert!(md.contains("% not measured |"), "the Coverage column");
    assert!(
        md.contains("not measured (left out of the deep samples"),
        "{md}"
    );
    assert!(md.contains("left out of the deep pass by"), "the note");
    let html = std::fs::read_to_string(run.join("report.html")).unwrap();
    assert!(
        html.contains("% not measured</td>"),
        "report.html's Coverage column"
    );

    // The narrowed command is the one recorded, and the run re-renders the same way without ncu.
    let record = read_json(&run.join("run.json"));
    let recorded = record["deep_pass"]["command"].to_string();
    assert!(recorded.contains("--kernel-name"), "{recorded}");
    let commands = std::fs::read_to_string(run.join("command.txt")).unwrap();
    assert!(commands.contains("--kernel-name"), "{commands}");
    let again = render(&run, &tmp.path().join("again"), &[]);
    assert_eq!(again["sampling"]["not_measured_results"], not_measured);
    assert_eq!(regions(&again)[0]["coverage"], *coverage);
}

#[test]
fn at_zero_nothing_is_left_out_and_nothing_changes() {
    let tmp = tempfile::tempdir().unwrap();
    let report = traced(tmp.path(), &["pipeline.ncu.sampling.min_time_share=0"]);
    let passes = profile_invocations(tmp.path());
    assert_eq!(kernel_name(&passes[0]), None);
    assert!(report["sampling"].get("not_measured_results").is_none());
    for region in regions(&report) {
        assert!(region["coverage"].get("not_measured_time_share").is_none());
    }
    assert!(not_measured_kernels(&report).is_empty());
    // A share that leaves nothing out of this workload changes nothing either.
    let small = tempfile::tempdir().unwrap();
    let same = traced(small.path(), &["pipeline.ncu.sampling.min_time_share=0.01"]);
    assert_eq!(kernel_name(&profile_invocations(small.path())[0]), None);
    let without_paths = |r: &Value| {
        let mut sampling = r["sampling"].clone();
        sampling["deep_sources"] = Value::Null;
        sampling
    };
    assert_eq!(without_paths(&same), without_paths(&report));
}

#[test]
fn the_timing_pass_decides_the_filter_when_ncu_times_the_kernels() {
    let tmp = tempfile::tempdir().unwrap();
    fake_sampled(tmp.path())
        .args([
            "pipeline.ncu.sampling.adaptive=false",
            "pipeline.ncu.sampling.min_time_share=0.05",
            "--",
            "true",
        ])
        .assert()
        .success();
    let passes = profile_invocations(tmp.path());
    assert_eq!(passes.len(), 2, "a timing pass and a deep pass");
    assert_eq!(
        kernel_name(&passes[0]),
        None,
        "the timing pass sees every kernel"
    );
    let filter = kernel_name(&passes[1]).expect("the deep pass keeps the names that matter");
    assert!(!filter.contains("FillFunctor"), "{filter}");
    let report = read_json(&tmp.path().join("out/run/report.json"));
    assert!(report["sampling"]["not_measured_results"].as_u64().unwrap() > 0);
    assert_eq!(report["sampling"]["unmatched_results"], 0);
    assert!(!not_measured_kernels(&report).is_empty());
}

#[test]
fn a_share_outside_zero_to_one_or_beside_kernel_name_exits_2_before_anything_runs() {
    for (settings, named) in [
        (
            &["pipeline.ncu.sampling.min_time_share=1"][..],
            "min_time_share is 1",
        ),
        (
            &["pipeline.ncu.sampling.min_time_share=-0.5"][..],
            "min_time_share is -0.5",
        ),
        (
            &[
                "pipeline.ncu.sampling.min_time_share=0.01",
                "pipeline.ncu.ncu_cli.kernel_name=regex:^_Z.*gemm",
                "pipeline.ncu.ncu_cli.kernel_name_base=mangled",
            ][..],
            "set kernel_name=null",
        ),
    ] {
        let tmp = tempfile::tempdir().unwrap();
        fake_sampled(tmp.path())
            .args(settings)
            .args(["--", "true"])
            .assert()
            .code(2)
            .stderr(predicates::str::contains(named));
        assert!(profile_invocations(tmp.path()).is_empty(), "ncu never ran");
    }
}

#[test]
fn dry_run_says_the_deep_pass_is_narrowed_after_the_first() {
    let tmp = tempfile::tempdir().unwrap();
    let out = fake_sampled(tmp.path())
        .args([
            "--dry-run",
            "pipeline.ncu.sampling.min_time_share=0.001",
            "--",
            "true",
        ])
        .assert()
        .success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert!(
        text.contains("--kernel-name regex:^(?:NAME|…)$") && text.contains("at or above 0.001"),
        "{text}"
    );
    assert!(profile_invocations(tmp.path()).is_empty(), "nothing ran");
}

/// What each threshold leaves out of GPT-2's deep pass (the committed H100 trace of
/// `gpt2_step.py 4 3`, `train_step`: the first pass of a trace-timed sampled run), the figures
/// docs/performance.md gives: `cargo test --test it sampled_share::gpt2 -- --nocapture`.
#[test]
fn gpt2_what_each_threshold_leaves_out() {
    let ncu = format!(
        "pipeline.ncu.executable={}",
        repo().join("tests/support/fake-ncu").display()
    );
    for (share, note, results, time_share) in [
        (
            "0.001",
            "leaves 5 of 50 kernel names (5 of 72 launch keys)",
            27,
            0.0010,
        ),
        (
            "0.01",
            "leaves 20 of 50 kernel names (25 of 72 launch keys)",
            216,
            0.0440,
        ),
    ] {
        let tmp = tempfile::tempdir().unwrap();
        let setting = format!("pipeline.ncu.sampling.min_time_share={share}");
        let overrides = [
            "pipeline.ncu.sampling.enabled=true",
            "regions.include=[train_step]",
            &ncu,
            &setting,
        ];
        let out = trace_run(tmp.path(), "gpt2", &overrides)
            .env(
                "FAKE_NCU_DEEP_REPORT",
                fixture("ncu/h100-2025.3.1-sampled/train.deep.ncu-rep.gz"),
            )
            .assert()
            .success();
        let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
        let report = read_json(&tmp.path().join("runs/run/report.json"));
        let train_step = regions(&report)[0];
        let left = train_step["coverage"]["not_measured_time_share"]
            .as_f64()
            .unwrap();
        println!(
            "min_time_share={share}: {} of {} results, {:.2}% of train_step's time not measured; {}",
            report["sampling"]["not_measured_results"],
            train_step["kernel_count"],
            100.0 * left,
            stderr.lines().find(|l| l.contains("leaves")).unwrap_or("")
        );
        assert!(stderr.contains(note), "{stderr}");
        assert_eq!(report["sampling"]["not_measured_results"], results);
        assert_eq!(train_step["kernel_count"], 852);
        assert!((left - time_share).abs() < 0.00005, "{left}");
    }
}
