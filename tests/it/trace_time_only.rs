//! A time-only trace read by `profile-run report` (tests/fixtures/ncu/h100-2025.3.1-cupti): the report
//! says its times are CUPTI's in-place end − start, labels them so, points to the deep pass for the
//! metrics a trace cannot hold, and the trace's times set against ncu's time-only capture of the same
//! workload differ both ways (the figures of docs/attribution.md, "In-place times"). A sampled run
//! timed by the trace keeps those same times.

use std::collections::BTreeMap;
use std::path::Path;

use assert_cmd::Command;
use serde_json::Value;

use crate::common::fixture;

const DIR: &str = "ncu/h100-2025.3.1-cupti";

/// `profile-run report INPUT` into `out` with `overrides`: its report.json and stderr.
fn report(input: &str, out: &Path, overrides: &[&str]) -> (Value, String) {
    let output = Command::cargo_bin("profile-run")
        .unwrap()
        .arg("report")
        .arg(fixture(&format!("{DIR}/{input}")))
        .arg("--out")
        .arg(out)
        .args(overrides)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.success(), "{input}: {stderr}");
    let json = std::fs::read_to_string(out.join("report.json")).unwrap();
    (serde_json::from_str(&json).unwrap(), stderr)
}

/// The time metric's label in report.json.
fn time_label(report: &Value) -> Value {
    report["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == "gpu__time_duration.sum")
        .map(|m| m["label"].clone())
        .unwrap()
}

fn notes(report: &Value) -> Vec<String> {
    report["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_time_only_trace_report_says_what_its_times_are() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("trace");
    let outputs = "report.outputs=[md, json, html]";
    let (json, stderr) = report("gpt2.cupti.545.trace.gz", &out, &[outputs]);
    assert_eq!(time_label(&json), "Duration, in place (CUPTI trace)");
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(
        md.contains("Time and time shares come from each kernel's end − start as CUPTI traced it in place (the workload ran unprofiled), kept as `gpu__time_duration.sum`."),
        "{md}"
    );
    assert!(md.contains("| Duration, in place (CUPTI trace) | `gpu__time_duration.sum` |"));
    // A trace records the libcupti it loaded, not a version: the run line says so.
    assert!(
        md.contains("- **Profiler:** cupti (no version recorded; library /")
            && md.contains("libcupti.so.13)"),
        "{md}"
    );
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(
        // report.html escapes the path's slashes.
        html.contains("cupti (no version recorded; library &#x2f;opt"),
        "{html}"
    );
    assert!(
        html.contains(
            "<dt>Time</dt><dd>from each kernel&#x27;s end − start as CUPTI traced it in place"
        ),
        "{html}"
    );

    // The default sections ask for deep metrics a trace cannot hold: the advice is the deep pass,
    // said in the report and not repeated on stderr at every render.
    let said = notes(&json);
    let deep_pass = "`--config ncu/sampled pipeline.ncu.timing=trace`";
    let missing = said
        .iter()
        .find(|n| n.starts_with("Not in the inputs, so not shown: `sm__throughput"))
        .unwrap();
    assert!(
        missing.contains(&format!("run the deep pass for them ({deep_pass})")),
        "{missing}"
    );
    assert!(
        !missing.contains("Collect them with the profiler"),
        "{missing}"
    );
    assert!(said.iter().any(
        |n| n.starts_with("No deep metric was collected (a time-only run)")
            && n.contains(deep_pass)
    ));
    assert!(!stderr.contains("note:"), "{stderr}");

    // The time note says how in-place times relate to ncu's, not that they are always shorter.
    let time = said
        .iter()
        .find(|n| n.starts_with("Times are in place"))
        .unwrap();
    assert!(
        time.contains("end − start") && time.contains("but not all"),
        "{time}"
    );
    assert!(!time.contains("run shorter than"), "{time}");

    // With the time group alone (the ncu/trace preset's sections) nothing is missing.
    let (json, _) = report(
        "gpt2.cupti.545.trace.gz",
        &tmp.path().join("time"),
        &["report.sections=[time]"],
    );
    assert!(!notes(&json)
        .iter()
        .any(|n| n.starts_with("Not in the inputs")));
}

#[test]
fn ncu_inputs_keep_their_time_sentence_and_advice() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("ncu");
    let (json, stderr) = report("gpt2.ncu-rep.gz", &out, &[]);
    assert_eq!(time_label(&json), "Duration");
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(
        md.contains("Time and time shares come from `gpu__time_duration.sum`."),
        "{md}"
    );
    assert!(!md.contains("in place"), "{md}");
    assert!(
        stderr.contains("note: Not in the inputs, so not shown: `sm__throughput")
            && stderr.contains("Collect them with the profiler (sections, metrics), or drop them from report.sections / report.metrics."),
        "{stderr}"
    );
}

/// Region path → (kernels, inclusive time in ns) of a report's one scope.
fn region_times(report: &Value) -> BTreeMap<String, (u64, f64)> {
    report["scopes"][0]["regions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let time = r["inclusive"]["gpu__time_duration.sum"]["value"]
                .as_f64()
                .unwrap();
            (
                r["path"].as_str().unwrap().to_string(),
                (r["kernel_count"].as_u64().unwrap(), time),
            )
        })
        .collect()
}

/// docs/attribution.md's GPT-2 figures: the same kernels per region, in place at 96.9–97.9% of
/// ncu's serialized time, except the optimizer at 109.1%.
#[test]
fn in_place_times_differ_from_ncus_both_ways_on_the_gpt2_pair() {
    let tmp = tempfile::tempdir().unwrap();
    let include = "regions.include=[train_step]";
    let (trace, _) = report("gpt2.cupti.545.trace.gz", &tmp.path().join("t"), &[include]);
    let (ncu, _) = report("gpt2.ncu-rep.gz", &tmp.path().join("n"), &[include]);
    let (trace, ncu) = (region_times(&trace), region_times(&ncu));
    assert_eq!(trace.len(), 8);
    assert_eq!(
        trace.keys().collect::<Vec<_>>(),
        ncu.keys().collect::<Vec<_>>()
    );
    for (path, (kernels, in_place)) in &trace {
        let (ncu_kernels, serialized) = ncu[path];
        assert_eq!(*kernels, ncu_kernels, "{path}");
        let percent = 100.0 * in_place / serialized;
        let (low, high) = if path == "train_step/optimizer" {
            (109.0, 109.2)
        } else {
            (96.85, 97.95)
        };
        assert!(
            (low..=high).contains(&percent),
            "{path}: {percent:.2}% of ncu's"
        );
    }
}

/// A trace-timed sampled run's times are the trace's own: every region's time (inclusive and
/// exclusive) equals the time-only report of the same trace, to the nanosecond, with no interval;
/// the deep pass adds metrics, not times.
#[test]
fn a_trace_timed_sampled_run_keeps_the_traces_times() {
    let tmp = tempfile::tempdir().unwrap();
    let sampled = crate::trace::sampled_with_trace(tmp.path());
    let alone = tempfile::tempdir().unwrap();
    crate::trace::trace_run(alone.path(), "train", &["regions.include=[train_step]"])
        .assert()
        .success();
    let alone = crate::sampled::read_json(&alone.path().join("runs/run/report.json"));
    // Times, time shares and the kernels' order (longest total time first) alike.
    let times = |r: &Value| -> Vec<(String, Value, Value, Value, Vec<Value>)> {
        r["scopes"][0]["regions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|g| {
                let time = |part: &str| g[part]["gpu__time_duration.sum"].clone();
                let kernels = g["kernels"].as_array().unwrap();
                let order = kernels.iter().map(|k| k["name"].clone()).collect();
                let (inclusive, exclusive) = (time("inclusive"), time("exclusive"));
                (
                    g["path"].to_string(),
                    inclusive,
                    exclusive,
                    g["time_share"].clone(),
                    order,
                )
            })
            .collect()
    };
    let (sampled_times, alone_times) = (times(&sampled), times(&alone));
    assert!(sampled_times.len() >= 5, "{sampled_times:?}");
    assert_eq!(sampled_times, alone_times);
    assert!(sampled_times
        .iter()
        .all(|(_, inclusive, ..)| inclusive.get("interval95").is_none()));
}
