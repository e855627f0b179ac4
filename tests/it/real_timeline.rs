//! trace.json on real times, from the committed 4-GPU traces (tests/fixtures/ncu/h200x4-cupti-straggle):
//! one track group per rank, sorted and named by rank, kernels and ranges where the trace put them,
//! hosts on one clock as the cross-rank diagnosis aligned them, and the bound on slices kept at a
//! step's end with a note.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use assert_cmd::Command;
use serde_json::Value;

use crate::common::{copy_tree, fixture};

const DIR: &str = "ncu/h200x4-cupti-straggle";

/// Copies of fixture folders `rels`, rendered by `profile-run VERB … --out` with trace.json among
/// the outputs: (trace.json, report.json, report.md).
fn render(verb: &str, rels: &[&str], settings: &[&str], tmp: &Path) -> (Value, Value, String) {
    let inputs: Vec<PathBuf> = rels
        .iter()
        .map(|rel| {
            let to = tmp.join(rel.replace('/', "_"));
            copy_tree(&fixture(&format!("{DIR}/{rel}")), &to);
            to
        })
        .collect();
    let out = tmp.join("out");
    Command::cargo_bin("profile-run")
        .unwrap()
        .arg("-q")
        .arg(verb)
        .args(&inputs)
        .arg("--out")
        .arg(&out)
        .arg("report.outputs=[md,json,trace]")
        .args(settings)
        .assert()
        .success();
    let read = |name: &str| std::fs::read_to_string(out.join(name)).unwrap();
    let trace = serde_json::from_str(&read("trace.json")).expect("trace.json is JSON");
    let report = serde_json::from_str(&read("report.json")).unwrap();
    (trace, report, read("report.md"))
}

/// The events, checked for the shape Perfetto's JSON importer reads: every event has a phase, a
/// pid and a tid; slices have a time and a length; async slices an id; metadata a name in args.
fn events(trace: &Value) -> &[Value] {
    let events = trace["traceEvents"].as_array().expect("traceEvents");
    // Perfetto reads pid and tid as 32-bit numbers, and a thread id as the thread's across the file.
    let mut owner: BTreeMap<u64, u64> = BTreeMap::new();
    for e in events {
        let (pid, tid) = (e["pid"].as_u64().unwrap(), e["tid"].as_u64().unwrap());
        assert!(
            pid <= u64::from(u32::MAX) && tid <= u64::from(u32::MAX),
            "{e}"
        );
        if tid != 0 {
            assert_eq!(
                *owner.entry(tid).or_insert(pid),
                pid,
                "tid {tid} in two processes"
            );
        }
        match e["ph"].as_str().unwrap() {
            "X" => assert!(e["ts"].as_f64().unwrap() >= 0.0 && e["dur"].as_f64().unwrap() >= 0.0),
            "b" | "e" => assert!(e["id"].is_string() && e["ts"].is_f64()),
            "M" => assert!(e["args"].is_object() && e["name"].is_string()),
            other => panic!("unexpected phase {other}: {e}"),
        }
    }
    events
}

/// Each pid's process name, in the order of their sort index.
fn groups(events: &[Value]) -> Vec<String> {
    let meta = |name: &str| -> BTreeMap<u64, Value> {
        events
            .iter()
            .filter(|e| e["ph"] == "M" && e["name"] == name)
            .map(|e| (e["pid"].as_u64().unwrap(), e["args"].clone()))
            .collect()
    };
    let (names, order) = (meta("process_name"), meta("process_sort_index"));
    let mut pids: Vec<u64> = names.keys().copied().collect();
    pids.sort_by_key(|pid| order[pid]["sort_index"].as_u64().unwrap());
    pids.iter()
        .map(|pid| names[pid]["name"].as_str().unwrap().to_string())
        .collect()
}

/// Kernel slices of `pid`: (start, end, name, region) in µs, by start.
fn kernels(events: &[Value], pid: u64) -> Vec<(f64, f64, String, String)> {
    let mut out: Vec<_> = events
        .iter()
        .filter(|e| e["ph"] == "X" && e["cat"] == "kernel" && e["pid"] == pid)
        .map(|e| {
            let ts = e["ts"].as_f64().unwrap();
            let name = e["name"].as_str().unwrap().to_string();
            let region = e["args"]["region"].as_str().unwrap().to_string();
            (ts, ts + e["dur"].as_f64().unwrap(), name, region)
        })
        .collect();
    out.sort_by(|a, b| a.0.total_cmp(&b.0));
    out
}

fn pid_of(events: &[Value], label: &str) -> u64 {
    events
        .iter()
        .find(|e| e["name"] == "process_name" && e["args"]["name"] == label)
        .unwrap_or_else(|| panic!("no process named {label}"))["pid"]
        .as_u64()
        .unwrap()
}

/// The straggler's injected work, in µs.
fn injected_us(rel: &str) -> f64 {
    crate::cross_rank::injected_ms(rel) * 1e3
}

#[test]
fn per_rank_merge_shows_the_straggler_on_real_times() {
    let tmp = tempfile::tempdir().unwrap();
    let ranks: Vec<String> = (0..4).map(|r| format!("ddp-per-rank/rank{r}")).collect();
    let rels: Vec<&str> = ranks.iter().map(String::as_str).collect();
    let (trace, _, _) = render("merge", &rels, &[], tmp.path());
    let events = events(&trace);
    assert_eq!(trace["otherData"]["layout"], "real");
    let labels: Vec<String> = (0..4).map(|r| format!("rank {r} (vm, GPU {r})")).collect();
    assert_eq!(groups(events), labels);
    // Each rank has a thread with its steps nested as pushed: forward inside train_step.
    let forward_ranges = events
        .iter()
        .filter(|e| e["cat"] == "range" && e["args"]["path"] == "train_step/forward")
        .count();
    assert_eq!(forward_ranges, 40, "10 steps on each of 4 ranks");

    // Rank 2's forward kernels run as long as the others' plus the work injected into it.
    let forward = |label: &str| -> f64 {
        kernels(events, pid_of(events, label))
            .iter()
            .filter(|k| k.3 == "train_step/forward")
            .map(|k| k.1 - k.0)
            .sum()
    };
    let mut others: Vec<f64> = [0, 1, 3].iter().map(|&r| forward(&labels[r])).collect();
    others.sort_by(f64::total_cmp);
    let extra = forward(&labels[2]) - others[1];
    let injected = injected_us("ddp-per-rank");
    assert!(
        (extra - injected).abs() <= 0.1 * injected,
        "rank 2's forward is {extra} µs longer than the median rank's; {injected} µs were injected"
    );

    // In backward, every other rank's all-reduce starts before rank 2's and ends with it.
    let all_reduces = |label: &str| -> Vec<(f64, f64)> {
        kernels(events, pid_of(events, label))
            .into_iter()
            .filter(|k| k.2.starts_with("ncclDevKernel_AllReduce") && k.3 == "train_step/backward")
            .map(|k| (k.0, k.1))
            .collect()
    };
    let late = all_reduces(&labels[2]);
    assert!(late.len() >= 30, "{} all-reduces in backward", late.len());
    for r in [0, 1, 3] {
        let early = all_reduces(&labels[r]);
        assert_eq!(early.len(), late.len());
        for (i, (mine, last)) in early.iter().zip(&late).enumerate() {
            assert!(
                mine.0 < last.0,
                "rank {r}'s all-reduce {i} starts {} µs, rank 2's {}",
                mine.0,
                last.0
            );
            assert!(
                (mine.1 - last.1).abs() < 50.0,
                "rank {r}'s all-reduce {i} ends {} µs, rank 2's {}",
                mine.1,
                last.1
            );
        }
    }
}

#[test]
fn one_launcher_run_without_ranks_names_each_process_by_pid_and_device() {
    let tmp = tempfile::tempdir().unwrap();
    let (trace, _, _) = render("report", &["ddp-straggle"], &[], tmp.path());
    let events = events(&trace);
    // The launcher's own trace holds no kernel and no range: no group of its own.
    assert_eq!(
        groups(events),
        [
            "pid 1819 (vm, GPU 0)",
            "pid 1820 (vm, GPU 1)",
            "pid 1821 (vm, GPU 2)",
            "pid 1822 (vm, GPU 3)"
        ]
    );
    assert_eq!(trace["otherData"]["left_out"], Value::Null);
}

#[test]
fn two_hosts_are_shifted_by_the_diagnosis_offsets() {
    let tmp = tempfile::tempdir().unwrap();
    let rels = ["two-nodes/node0", "two-nodes/node1"];
    let (trace, report, _) = render("merge", &rels, &[], tmp.path());
    let cross = &report["cross_rank"];
    assert_eq!(trace["otherData"]["clock"], cross["clock"]);
    let hosts: BTreeMap<String, String> = report["scopes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["label"].as_str().unwrap().into(),
                s["host"].as_str().unwrap().into(),
            )
        })
        .collect();
    let mut shifted = 0;
    for rank in cross["ranks"].as_array().unwrap() {
        let host = &hosts[rank["scope"].as_str().unwrap()];
        let offset = rank["clock_offset_ns"].as_i64().unwrap();
        shifted += usize::from(offset != 0);
        for p in trace["otherData"]["processes"].as_array().unwrap() {
            if p["host"] == host.as_str() {
                assert_eq!(p["clock_offset_ns"], offset, "{p}");
            }
        }
    }
    assert!(shifted > 0, "node1's ranks are shifted: {cross}");
    let events = events(&trace);
    let labels = groups(events);
    assert_eq!(labels.len(), 4);
    assert!(
        labels.iter().filter(|l| l.contains("node1")).count() == 2,
        "{labels:?}"
    );
    // On the aligned clock each all-reduce of backward ends together on both hosts' ranks.
    let ends: Vec<Vec<f64>> = (1..=4u64)
        .map(|pid| {
            kernels(events, pid)
                .iter()
                .filter(|k| {
                    k.2.starts_with("ncclDevKernel_AllReduce") && k.3 == "train_step/backward"
                })
                .map(|k| k.1)
                .collect()
        })
        .collect();
    assert!(ends[0].len() >= 30 && ends.iter().all(|e| e.len() == ends[0].len()));
    for i in 0..ends[0].len() {
        let at: Vec<f64> = ends.iter().map(|e| e[i]).collect();
        let spread = at.iter().copied().fold(f64::MIN, f64::max)
            - at.iter().copied().fold(f64::MAX, f64::min);
        assert!(
            spread < 100.0,
            "all-reduce {i} ends {spread} µs apart: {at:?}"
        );
    }
}

#[test]
fn the_bound_keeps_whole_steps_and_says_what_it_left_out() {
    let tmp = tempfile::tempdir().unwrap();
    let bound = 20_000;
    let setting = format!("report.trace_events={bound}");
    let (trace, _, md) = render("report", &["gpt2-ddp-even"], &[&setting], tmp.path());
    let events = events(&trace);
    let labels: Vec<String> = (0..4).map(|r| format!("rank {r} (vm, GPU {r})")).collect();
    assert_eq!(groups(events), labels);
    let slices = events.iter().filter(|e| e["ph"] == "X").count()
        + events.iter().filter(|e| e["ph"] == "b").count();
    assert!(slices <= bound, "{slices} slices written, bound {bound}");
    let left = &trace["otherData"]["left_out"];
    assert_eq!(left["bound"], bound as u64);
    assert!(left["slices"].as_u64().unwrap() > 0, "{left}");
    assert_eq!(trace["otherData"]["slices"], slices as u64);
    let note = left["note"].as_str().unwrap();
    assert!(note.contains("report.trace_events"), "{note}");
    assert!(md.contains(note), "report.md says what trace.json left out");
    // Whole steps: on every rank, each kept train_step has its forward, backward and optimizer.
    for pid in 1..=4u64 {
        let count = |path: &str| {
            events
                .iter()
                .filter(|e| e["pid"] == pid && e["cat"] == "range" && e["args"]["path"] == path)
                .count()
        };
        let steps = count("train_step");
        assert!(steps >= 2, "rank {}: {steps} steps kept", pid - 1);
        for part in ["forward", "backward", "optimizer"] {
            assert_eq!(
                count(&format!("train_step/{part}")),
                steps,
                "rank {}: {part}",
                pid - 1
            );
        }
    }
    // No range pushed after the cut.
    let cut_us = left["before_ns"].as_f64().unwrap() / 1000.0;
    assert!(events
        .iter()
        .filter(|e| e["cat"] == "range")
        .all(|e| e["ts"].as_f64().unwrap() < cut_us));
}

#[test]
fn a_bound_below_one_step_gives_each_rank_an_equal_share() {
    let tmp = tempfile::tempdir().unwrap();
    let (trace, _, md) = render(
        "report",
        &["ddp-straggle"],
        &["report.trace_events=100"],
        tmp.path(),
    );
    let events = events(&trace);
    let left = &trace["otherData"]["left_out"];
    assert_eq!(left["before_ns"], Value::Null, "{left}");
    let note = left["note"].as_str().unwrap();
    assert!(note.contains("even the first step"), "{note}");
    assert!(md.contains(note));
    for p in trace["otherData"]["processes"].as_array().unwrap() {
        assert_eq!(p["slices"], 25, "{p}");
    }
    assert!(events.iter().filter(|e| e["ph"] == "X").count() <= 100);
}
