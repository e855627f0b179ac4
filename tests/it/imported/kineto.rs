//! PyTorch profiler (Kineto) traces: the two HTA ranks reported, merged and compared; every range's
//! GPU time equal to a plain sum over the JSON events; a GPU-side annotation trace attributed by
//! stream; unknown schema versions, missing keys and wrong types refused naming the key.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use assert_cmd::Command;
use serde_json::{json, Value};

use super::{assert_same_times, inclusive_by_path, region_times, run_report};
use crate::common::fixture;

fn rank(n: u32) -> PathBuf {
    fixture(&format!("kineto/hta-trace-filter/sampled_rank-{n}.json.gz"))
}

fn events(path: &Path) -> Vec<Value> {
    let mut text = String::new();
    let file = std::fs::File::open(path).unwrap();
    flate2::read::GzDecoder::new(file)
        .read_to_string(&mut text)
        .unwrap();
    let doc: Value = serde_json::from_str(&text).unwrap();
    doc["traceEvents"].as_array().unwrap().clone()
}

fn num(v: &Value) -> f64 {
    v.as_f64().unwrap()
}

/// Each kernel's open `user_annotation`s on its launching thread (by `args.correlation`), outermost
/// first, and its time in ns: computed from the events alone, as a person would with the file.
fn kernels_by_launch(events: &[Value]) -> Vec<(Vec<String>, f64)> {
    let track = |e: &Value| (e["pid"].to_string(), e["tid"].to_string());
    let cat = |e: &Value, c: &str| e["cat"] == c && e["ph"] == "X";
    let launches: BTreeMap<u64, (_, f64)> = events
        .iter()
        .filter(|e| cat(e, "cuda_runtime") || cat(e, "cuda_driver"))
        .filter_map(|e| {
            Some((
                e["args"]["correlation"].as_u64()?,
                (track(e), num(&e["ts"])),
            ))
        })
        .collect();
    let annotations: Vec<&Value> = events
        .iter()
        .filter(|e| cat(e, "user_annotation"))
        .collect();
    events
        .iter()
        .filter(|e| cat(e, "kernel"))
        .map(|k| {
            let (thread, at) = &launches[&k["args"]["correlation"].as_u64().unwrap()];
            let mut open: Vec<&&Value> = annotations
                .iter()
                .filter(|a| track(a) == *thread)
                .filter(|a| num(&a["ts"]) < *at && *at < num(&a["ts"]) + num(&a["dur"]))
                .collect();
            open.sort_by(|a, b| {
                let key = |e: &Value| (num(&e["ts"]), -num(&e["dur"]));
                key(a).partial_cmp(&key(b)).unwrap()
            });
            let path = open
                .iter()
                .map(|a| a["name"].as_str().unwrap().to_string())
                .collect();
            (path, num(&k["dur"]) * 1000.0)
        })
        .collect()
}

const THREAD_SCOPE: &str = "pipeline.ncu.ncu_cli.nvtx.push_pop_scope=thread";

#[test]
fn each_ranks_regions_equal_a_plain_sum_over_its_events() {
    let tmp = tempfile::tempdir().unwrap();
    for n in [0, 1] {
        let out = tmp.path().join(format!("rank{n}"));
        let (report, _) = run_report(&["report", THREAD_SCOPE], &[&rank(n)], &out);
        let want = inclusive_by_path(
            &kernels_by_launch(&events(&rank(n)))
                .into_iter()
                .filter(|(path, _)| !path.is_empty())
                .collect::<Vec<_>>(),
        );
        assert!(want.len() > 20, "the fixture has nested annotations");
        assert_same_times(&region_times(&report, &format!("rank {n}")), &want);
        let scope = &report["scopes"][0];
        assert_eq!(scope["rank"], n);
        // The trace is the PyTorch profiler's, and the report says so, not profile-run's CUPTI.
        assert_eq!(report["run"]["profiler"]["name"], "kineto");
        let notes = report["notes"].to_string();
        assert!(
            notes.contains("as the PyTorch profiler (Kineto) trace"),
            "{notes}"
        );
        assert!(!notes.contains("as CUPTI traced it"), "{notes}");
        let kernels = events(&rank(n))
            .iter()
            .filter(|e| e["cat"] == "kernel")
            .count();
        assert_eq!(
            scope["total"]["kernel_count"].as_u64(),
            Some(kernels as u64),
            "{scope:#}"
        );
        assert!(std::fs::read_to_string(out.join("report.md"))
            .unwrap()
            .contains("ProfilerStep#552"));
    }
}

#[test]
fn the_two_ranks_merge_into_the_cross_rank_diagnosis() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("merged");
    let (report, _) = run_report(&["merge"], &[&rank(0), &rank(1)], &out);
    let cross = &report["cross_rank"];
    assert_eq!(cross["ranks"].as_array().unwrap().len(), 2, "{cross:#}");
    assert!(cross["collectives"].as_u64().unwrap() > 0);
    assert!(
        cross["finding"].as_str().unwrap().contains("rank "),
        "{cross:#}"
    );
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.contains("rank 1"), "{md}");
}

/// A copy of rank 0 whose kernels in `## backward ##` last `factor` times as long.
fn slower_backward(dir: &Path, factor: f64) -> PathBuf {
    let mut text = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(rank(0)).unwrap())
        .read_to_string(&mut text)
        .unwrap();
    let mut doc: Value = serde_json::from_str(&text).unwrap();
    let backward: Vec<(f64, f64)> = doc["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["name"] == "## backward ##")
        .map(|e| (num(&e["ts"]), num(&e["ts"]) + num(&e["dur"])))
        .collect();
    let launched_in: BTreeMap<u64, f64> = doc["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["cat"] == "cuda_runtime")
        .filter_map(|e| Some((e["args"]["correlation"].as_u64()?, num(&e["ts"]))))
        .collect();
    for e in doc["traceEvents"].as_array_mut().unwrap() {
        let Some(at) = e["args"]["correlation"]
            .as_u64()
            .and_then(|c| launched_in.get(&c))
        else {
            continue;
        };
        if e["cat"] == "kernel" && backward.iter().any(|(s, end)| s < at && at < end) {
            e["dur"] = json!(num(&e["dur"]) * factor);
        }
    }
    let path = dir.join("slower.json");
    std::fs::write(&path, serde_json::to_vec(&doc).unwrap()).unwrap();
    path
}

#[test]
fn diff_of_two_traces_gates_on_the_slower_region() {
    let tmp = tempfile::tempdir().unwrap();
    let slower = slower_backward(tmp.path(), 1.5);
    let diff = |b: &Path| {
        Command::cargo_bin("profile-run")
            .unwrap()
            .args(["diff", "--fail-above", "10"])
            .arg(rank(0))
            .arg(b)
            .output()
            .unwrap()
    };
    let same = diff(&rank(0));
    assert!(
        same.status.success(),
        "{}",
        String::from_utf8_lossy(&same.stderr)
    );
    let out = diff(&slower);
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(6), "{text}");
    assert!(text.contains("## backward ##"), "{text}");
}

fn write_trace(dir: &Path, name: &str, doc: &Value) -> PathBuf {
    let path = dir.join(name);
    std::fs::File::create(&path)
        .unwrap()
        .write_all(doc.to_string().as_bytes())
        .unwrap();
    path
}

/// A small trace: two kernels launched inside `step` on thread 1, the second also inside a
/// GPU-side `gpu_step` on its stream when `gpu_side`, and inside `gpu_first`, which starts with it.
fn small_trace(gpu_side: bool) -> Value {
    let mut events = vec![
        json!({"ph": "X", "cat": "user_annotation", "name": "step", "pid": 9, "tid": 1, "ts": 100, "dur": 100}),
        json!({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 9, "tid": 1, "ts": 110, "dur": 5, "args": {"correlation": 1}}),
        json!({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 9, "tid": 1, "ts": 120, "dur": 5, "args": {"correlation": 2}}),
        json!({"ph": "X", "cat": "kernel", "name": "k1", "pid": 0, "tid": 7, "ts": 300, "dur": 10, "args": {"correlation": 1, "device": 0, "stream": 7}}),
        json!({"ph": "X", "cat": "kernel", "name": "k2", "pid": 0, "tid": 7, "ts": 400.5, "dur": 20.25, "args": {"correlation": 2, "device": 0, "stream": 7}}),
    ];
    if gpu_side {
        events.push(json!({"ph": "X", "cat": "gpu_user_annotation", "name": "gpu_step", "pid": 0, "tid": 7, "ts": 390, "dur": 50}));
        // Kineto starts a GPU annotation with its first kernel: this one is inside it.
        events.push(json!({"ph": "X", "cat": "gpu_user_annotation", "name": "gpu_first", "pid": 0, "tid": 7, "ts": 400.5, "dur": 20.25}));
    }
    json!({"schemaVersion": 1, "traceEvents": events})
}

#[test]
fn gpu_side_annotations_place_kernels_by_their_stream() {
    let tmp = tempfile::tempdir().unwrap();
    let cpu = write_trace(tmp.path(), "cpu.json", &small_trace(false));
    let (report, _) = run_report(&["report"], &[&cpu], &tmp.path().join("cpu"));
    let times = region_times(&report, "device 0");
    assert_eq!(times[&vec!["step".to_string()]], 30_250.0, "{times:?}");
    let gpu = write_trace(tmp.path(), "gpu.pt.trace.json", &small_trace(true));
    let (report, _) = run_report(&["report"], &[&gpu], &tmp.path().join("gpu"));
    let times = region_times(&report, "device 0");
    // Only the second kernel ran inside the stream's annotations, the inner one starting with it;
    // the CPU one is set aside.
    assert_eq!(times.len(), 2, "{times:?}");
    assert_eq!(times[&vec!["gpu_step".to_string()]], 20_250.0, "{times:?}");
    let inner = vec!["gpu_step".to_string(), "gpu_first".to_string()];
    assert_eq!(times[&inner], 20_250.0, "{times:?}");
}

/// `profile-run report` of a trace holding `doc`: its exit code and stderr.
fn refusal(doc: &str) -> (Option<i32>, String) {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("bad.json");
    std::fs::write(&path, doc).unwrap();
    let out = Command::cargo_bin("profile-run")
        .unwrap()
        .arg("report")
        .arg(&path)
        .arg("--out")
        .arg(tmp.path().join("out"))
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn unknown_shapes_are_refused_naming_the_key() {
    for (doc, names) in [
        (r#"{"schemaVersion": 7, "traceEvents": []}"#, "`schemaVersion` is 7"),
        (r#"{"traceEvents": []}"#, "no `schemaVersion` key"),
        (r#"{"schemaVersion": 1}"#, "no `traceEvents` key"),
        (
            r#"{"schemaVersion": 1, "traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 1, "ts": "soon", "dur": 1}]}"#,
            "`traceEvents[0]`: `ts` is \"soon\"",
        ),
        (
            r#"{"schemaVersion": 1, "traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 1, "ts": 5}]}"#,
            "`traceEvents[0]`: a complete event (`ph: X`) has no `dur`",
        ),
        (
            r#"{"schemaVersion": 1, "traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 1, "ts": 5, "dur": 1, "args": {"correlation": -3}}]}"#,
            "`args.correlation` is -3",
        ),
        (r#"{"schemaVersion": 1, "traceEvents": [1, 2"#, "not the JSON a PyTorch profiler writes"),
        (
            &format!(
                "{{\"schemaVersion\": 1, \"traceEvents\": [{{\"ph\": \"X\", \"cat\": \"kernel\", \"args\": {{\"grid\": {}}}}}]}}",
                "[".repeat(400) + &"]".repeat(400)
            ),
            "recursion limit",
        ),
    ] {
        let (code, stderr) = refusal(doc);
        assert_ne!(code, Some(0), "{doc}");
        assert!(stderr.contains(names), "{doc}: {stderr}");
        assert!(stderr.contains("bad.json"), "{stderr}");
    }
}

#[test]
fn a_trace_past_the_size_limit_is_refused_before_it_is_read() {
    let tmp = tempfile::tempdir().unwrap();
    let out = Command::cargo_bin("profile-run")
        .unwrap()
        .arg("report")
        .arg(rank(0))
        .arg("--out")
        .arg(tmp.path().join("out"))
        .arg("pipeline.ncu.trace.max_mib=1")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(0));
    assert!(stderr.contains("pipeline.ncu.trace.max_mib"), "{stderr}");
}
