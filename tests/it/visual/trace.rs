//! trace.json: Chrome trace events ("X" slices, "M" metadata, ts/dur in µs) that nest as the regions
//! do, durations equal to the report's times, one process per scope, names kept exactly.

use serde_json::Value;

use profile_run::report::model::Report;
use profile_run::report::render::trace::to_trace;

use super::{hostile, manual, pytorch, ranks, time, HOSTILE};

fn events(report: &Report) -> (Vec<Value>, Value) {
    let text = to_trace(report);
    let doc: Value = serde_json::from_str(&text).expect("valid JSON");
    let events = doc["traceEvents"].as_array().unwrap().clone();
    for e in &events {
        let ph = e["ph"].as_str().unwrap();
        assert!(ph == "X" || ph == "M", "{e}");
        assert!(e["pid"].as_u64().is_some() && e["tid"].as_u64().is_some());
        assert!(e["name"].is_string());
        if ph == "X" {
            assert!(e["ts"].as_f64().unwrap() >= 0.0);
            assert!(e["dur"].as_f64().unwrap() >= 0.0);
            assert!(e["args"].is_object());
        }
    }
    (events, doc)
}

/// Every slice lies inside the slices it overlaps on the same thread: slices nest or are disjoint,
/// and each region slice lies inside its parent region's.
fn assert_nesting(events: &[Value]) {
    const EPS: f64 = 1e-6;
    let mut slices: Vec<&Value> = events.iter().filter(|e| e["ph"] == "X").collect();
    slices.sort_by(|a, b| {
        (a["pid"].as_u64(), a["tid"].as_u64())
            .cmp(&(b["pid"].as_u64(), b["tid"].as_u64()))
            .then(
                a["ts"]
                    .as_f64()
                    .unwrap()
                    .total_cmp(&b["ts"].as_f64().unwrap()),
            )
            .then(
                b["dur"]
                    .as_f64()
                    .unwrap()
                    .total_cmp(&a["dur"].as_f64().unwrap()),
            )
    });
    let mut stack: Vec<(u64, u64, f64)> = Vec::new();
    for s in slices {
        let (pid, tid) = (s["pid"].as_u64().unwrap(), s["tid"].as_u64().unwrap());
        let (ts, end) = (
            s["ts"].as_f64().unwrap(),
            s["ts"].as_f64().unwrap() + s["dur"].as_f64().unwrap(),
        );
        while let Some(&(p, t, top_end)) = stack.last() {
            if p != pid || t != tid || ts >= top_end - EPS {
                stack.pop();
            } else {
                assert!(
                    end <= top_end + EPS,
                    "{s} crosses the end of its enclosing slice"
                );
                break;
            }
        }
        stack.push((pid, tid, end));
    }
    // Region slices inside their parent region's.
    let regions: Vec<&Value> = events.iter().filter(|e| e["cat"] == "region").collect();
    for r in &regions {
        let path = r["args"]["path"].as_str().unwrap();
        let Some((parent, _)) = path.rsplit_once('/') else {
            continue;
        };
        let Some(p) = regions
            .iter()
            .find(|p| p["pid"] == r["pid"] && p["args"]["path"] == parent)
        else {
            continue;
        };
        let ts = |e: &Value| e["ts"].as_f64().unwrap();
        let end = |e: &Value| ts(e) + e["dur"].as_f64().unwrap();
        assert!(
            ts(r) >= ts(p) - EPS && end(r) <= end(p) + EPS,
            "{path} in {parent}"
        );
    }
}

#[test]
fn regions_and_kernels_nest_with_the_reports_durations() {
    let report = manual();
    let (events, doc) = events(&report);
    assert_nesting(&events);
    let scope = &report.scopes[0];
    for region in &scope.regions {
        let slice = events
            .iter()
            .find(|e| e["cat"] == "region" && e["args"]["path"] == region.path.as_str())
            .unwrap();
        let dur = slice["dur"].as_f64().unwrap();
        assert!(
            (dur - time(&region.inclusive) / 1000.0).abs() < 0.001,
            "{}",
            region.path
        );
        assert_eq!(slice["args"]["kernel_count"], region.kernel_count);
        assert!(slice["args"]["time_share"].as_str().unwrap().ends_with('%'));
        assert!(slice["args"]["sm__throughput.avg.pct_of_peak_sustained_elapsed"].is_string());
    }
    // A1 is a leaf: its kernels fill it.
    let a1 = &scope.regions.iter().find(|r| r.path == "A/A1").unwrap();
    let a1_slice = events.iter().find(|e| e["args"]["path"] == "A/A1").unwrap();
    let kernels: f64 = events
        .iter()
        .filter(|e| e["cat"] == "kernel")
        .filter(|e| {
            let ts = e["ts"].as_f64().unwrap();
            ts >= a1_slice["ts"].as_f64().unwrap()
                && ts < a1_slice["ts"].as_f64().unwrap() + a1_slice["dur"].as_f64().unwrap()
                && e["tid"] == a1_slice["tid"]
        })
        .map(|e| e["dur"].as_f64().unwrap())
        .sum();
    assert!(
        (kernels - time(&a1.inclusive) / 1000.0).abs() < 0.01,
        "{kernels}"
    );
    // A's own kernels (its results less A1's) fill its self time, after A1.
    let a = scope.regions.iter().find(|r| r.path == "A").unwrap();
    let a_slice = events.iter().find(|e| e["args"]["path"] == "A").unwrap();
    let a_end = a_slice["ts"].as_f64().unwrap() + a_slice["dur"].as_f64().unwrap();
    let a1_end = a1_slice["ts"].as_f64().unwrap() + a1_slice["dur"].as_f64().unwrap();
    let own: f64 = events
        .iter()
        .filter(|e| e["cat"] == "kernel" && e["tid"] == a_slice["tid"])
        .filter(|e| {
            let ts = e["ts"].as_f64().unwrap();
            ts >= a1_end - 1e-9 && ts < a_end
        })
        .map(|e| e["dur"].as_f64().unwrap())
        .sum();
    assert!((own - time(&a.exclusive) / 1000.0).abs() < 0.01, "{own}");
    // The trace says its timeline is synthetic.
    assert!(doc["otherData"]["timeline"]
        .as_str()
        .unwrap()
        .starts_with("Synthetic timeline"));
    assert_eq!(doc["otherData"]["layout"], "synthetic");
}

#[test]
fn each_scope_is_a_process_and_the_aggregate_one_more() {
    let report = ranks();
    let (events, _) = events(&report);
    assert_nesting(&events);
    let names: Vec<&str> = events
        .iter()
        .filter(|e| e["name"] == "process_name")
        .map(|e| e["args"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names.len(), 3);
    assert_eq!(names[0], report.scopes[0].label);
    assert_eq!(names[1], report.scopes[1].label);
    assert_eq!(names[2], "aggregate");
    // NCCL's range overlapped the program's own ranges: its tree has its own thread, from 0.
    let nccl = events
        .iter()
        .find(|e| e["args"]["path"] == "NCCL@ncclCommInitRankConfig")
        .unwrap();
    let step = events
        .iter()
        .find(|e| e["args"]["path"] == "train_step" && e["pid"] == nccl["pid"])
        .unwrap();
    assert_eq!(nccl["ts"], 0.0);
    assert_ne!(nccl["tid"], step["tid"]);
    assert!(events.iter().any(|e| e["name"] == "thread_name"
        && e["tid"] == nccl["tid"]
        && e["pid"] == nccl["pid"]
        && e["args"]["name"] == "domain NCCL"));
}

#[test]
fn deep_pytorch_stacks_nest() {
    let (events, _) = events(&pytorch());
    assert!(events.iter().filter(|e| e["cat"] == "region").count() > 3);
    assert_nesting(&events);
}

#[test]
fn hostile_names_stay_exact_inside_valid_json() {
    let (events, _) = events(&hostile());
    assert!(events
        .iter()
        .any(|e| e["cat"] == "region" && e["name"] == format!("A{HOSTILE}").as_str()));
    assert_eq!(
        events.iter().find(|e| e["name"] == "process_name").unwrap()["args"]["name"],
        format!("{HOSTILE} scope").as_str()
    );
}

#[test]
fn the_same_report_gives_the_same_bytes() {
    assert_eq!(to_trace(&ranks()), to_trace(&ranks()));
}
