//! The regression gate against the ways a regression slipped through it: traces of 10 `step` ranges
//! (written with the injection library's own trace writer) where B's steps got slower, and real
//! report.json files (the two ranks of tests/fixtures/ncu/h200x2-2025.3.1) edited to hold a null
//! time, another unit, a region twice, a negative time or a renamed region. Each is refused or fails
//! the gate, naming the region; and a diff without a gate never says PASS.

use std::io::Write;
use std::path::{Path, PathBuf};

use assert_cmd::Command;
use cupti_trace::trace::{ApiCall, ApiKind, Kernel, Range, Trace, Who};
use serde_json::Value;

use crate::common::{analyze, fixture};

/// A trace of one process: a `step` range per entry of `steps_ns`, each around one kernel of that
/// many nanoseconds.
fn steps_trace(dir: &Path, name: &str, steps_ns: &[u64]) -> PathBuf {
    let mut t = Trace::default();
    let gemm = t.name("_Z4gemmILi128EEvPKfS1_Pf");
    let mut at = 1_000;
    for (i, &ns) in steps_ns.iter().enumerate() {
        let id = i as u32 + 1;
        t.range_start(Range {
            id,
            thread: 7,
            start: at,
            end: None,
            domain: None,
            name: Some("step".into()),
        });
        t.api(ApiCall {
            correlation: id,
            thread: 7,
            start: at + 10,
            end: at + 20,
            kind: ApiKind::Runtime,
            cbid: 211,
        });
        t.kernel(Kernel {
            correlation: id,
            start: at + 100,
            end: at + 100 + ns,
            device: 0,
            context: 1,
            stream: 7,
            grid: [108, 1, 1],
            block: [256, 1, 1],
            registers: 64,
            static_shared: 0,
            dynamic_shared: 0,
            name: gemm,
        });
        t.range_end(id, at + 200 + ns);
        at += 1_000 + ns;
    }
    let who = Who {
        pid: 4242,
        host: "node0".into(),
        process: "python3".into(),
        rank: None,
        world_size: None,
    };
    let dir = dir.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("train.cupti.4242.trace");
    std::fs::write(&path, t.render(&who, "/usr/local/cuda/lib64/libcupti.so")).unwrap();
    path
}

const MS: u64 = 1_000_000;

/// `diff A B args…`; the exit code, stdout and stderr.
fn run_diff(a: &Path, b: &Path, args: &[&str]) -> (i32, String, String) {
    let out = Command::cargo_bin("profile-run")
        .unwrap()
        .arg("diff")
        .arg(a)
        .arg(b)
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn json_of(stdout: &str) -> Value {
    serde_json::from_str(stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

fn failing_statistics(json: &Value) -> Vec<String> {
    json["gates"][0]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["status"] == "fail")
        .map(|f| format!("{} {}", f["region"].as_str().unwrap(), f["statistic"]))
        .collect()
}

#[test]
fn nine_of_ten_steps_ten_times_slower_fail_the_gate() {
    let dir = tempfile::tempdir().unwrap();
    let a = steps_trace(dir.path(), "a", &[MS; 10]);
    let mut slow = vec![10 * MS; 10];
    slow[0] = MS;
    let b = steps_trace(dir.path(), "b", &slow);
    let (code, out, err) = run_diff(&a, &b, &["--fail-above", "5", "--format", "json"]);
    assert_eq!(code, 6, "{out}{err}");
    let json = json_of(&out);
    assert_eq!(json["verdict"], "fail");
    let failing = failing_statistics(&json);
    assert_eq!(failing, ["step \"total\""], "{json:#}");
    // B's own spread (p90 − min = 9 ms) never excuses it: the band is the baseline's.
    let region = &json["scopes"][0]["regions"][0];
    assert_eq!(region["per_visit"]["noise"].as_f64().unwrap(), 0.0);
}

#[test]
fn half_the_steps_twice_as_slow_fail_although_the_median_barely_moves() {
    let dir = tempfile::tempdir().unwrap();
    let a = steps_trace(dir.path(), "a", &[MS; 10]);
    let b = steps_trace(
        dir.path(),
        "b",
        &[MS, MS, MS, MS, MS, 2 * MS, 2 * MS, 2 * MS, 2 * MS, 2 * MS],
    );
    let (code, out, _) = run_diff(&a, &b, &["--fail-above", "5", "--format", "json"]);
    assert_eq!(code, 6, "{out}");
    let json = json_of(&out);
    let total = &json["scopes"][0]["regions"][0]["time"];
    assert!((total["delta_pct"].as_f64().unwrap() - 50.0).abs() < 0.01);
    assert!(!failing_statistics(&json).is_empty());
}

#[test]
fn a_slower_tail_fails_on_the_p90_while_median_and_total_hold() {
    let dir = tempfile::tempdir().unwrap();
    // A: steady steps, the slowest 1.05 ms. B: two steps of 3 ms and two faster ones: the total
    // within the limit (+34%), the median where it was, the p90 three times A's.
    let mut steady = vec![MS; 10];
    steady[9] = MS + MS / 20;
    let a = steps_trace(dir.path(), "a", &steady);
    let mut tail = vec![MS; 10];
    tail[0] = MS - MS / 4;
    tail[1] = MS - MS / 4;
    tail[8] = 3 * MS;
    tail[9] = 3 * MS;
    let b = steps_trace(dir.path(), "b", &tail);
    let (code, out, _) = run_diff(&a, &b, &["--fail-above", "40", "--format", "json"]);
    let json = json_of(&out);
    assert_eq!(code, 6, "{json:#}");
    assert_eq!(failing_statistics(&json), ["step \"p90\""], "{json:#}");
}

#[test]
fn equal_runs_pass_and_no_gate_never_says_pass() {
    let dir = tempfile::tempdir().unwrap();
    let a = steps_trace(dir.path(), "a", &[MS; 10]);
    let b = steps_trace(dir.path(), "b", &[MS; 10]);
    let (code, out, _) = run_diff(&a, &b, &["--fail-above", "5"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.starts_with("PASS"), "{out}");
    let slow = steps_trace(dir.path(), "slow", &[10 * MS; 10]);
    let (code, out, err) = run_diff(&a, &slow, &[]);
    assert_eq!(
        code, 0,
        "a diff without a gate judges nothing, so it does not fail"
    );
    assert!(out.starts_with("NO GATE — no gate set"), "{out}");
    assert!(!out.contains("PASS"), "{out}");
    assert!(out.contains("the largest time change is step"), "{out}");
    assert!(err.is_empty(), "the table carries its warnings once: {err}");
    let (_, out, _) = run_diff(&a, &slow, &["--format", "json"]);
    assert_eq!(json_of(&out)["verdict"], "not_gated");
}

/// A real report.json (rank 0 of the two-GPU DDP export) and its path under `dir`.
fn report(dir: &Path, name: &str, edit: impl FnOnce(&mut Value)) -> PathBuf {
    let config = serde_yaml::from_str(profile_run::config::DEFAULT_PRESET).unwrap();
    let raw = fixture("ncu/h200x2-2025.3.1/ddp_rank0_raw.csv");
    let mut json =
        serde_json::to_value(analyze(&config, &[raw], &Default::default()).unwrap()).unwrap();
    edit(&mut json);
    let path = dir.join(name);
    std::fs::write(&path, serde_json::to_string(&json).unwrap()).unwrap();
    path
}

const TIME: &str = "gpu__time_duration.sum";

fn regions(json: &mut Value) -> &mut Vec<Value> {
    json["scopes"][0]["regions"].as_array_mut().unwrap()
}

fn region<'a>(json: &'a mut Value, path: &str) -> &'a mut Value {
    regions(json)
        .iter_mut()
        .find(|r| r["path"] == path)
        .unwrap_or_else(|| panic!("no region {path}"))
}

#[test]
fn a_null_or_missing_time_is_an_error_naming_the_region() {
    let dir = tempfile::tempdir().unwrap();
    let a = report(dir.path(), "a.json", |_| {});
    let null = report(dir.path(), "null.json", |j| {
        region(j, "train_step/forward")["inclusive"][TIME]["value"] = Value::Null;
    });
    let missing = report(dir.path(), "missing.json", |j| {
        region(j, "train_step/forward")["inclusive"]
            .as_object_mut()
            .unwrap()
            .remove(TIME);
    });
    for b in [&null, &missing] {
        let (code, out, err) = run_diff(&a, b, &["--fail-above", "5"]);
        assert_eq!(code, 2, "{out}{err}");
        assert!(err.contains("region `train_step/forward`"), "{err}");
        assert!(err.contains("missing or null"), "{err}");
    }
}

#[test]
fn a_unit_changed_from_ns_to_ms_is_an_error_not_a_speedup() {
    let dir = tempfile::tempdir().unwrap();
    let a = report(dir.path(), "a.json", |_| {});
    let b = report(dir.path(), "b.json", |j| {
        let v = &mut region(j, "train_step")["inclusive"][TIME];
        let ns = v["value"].as_f64().unwrap();
        // Ten times slower, written in milliseconds.
        v["value"] = (ns * 10.0 / 1e6).into();
        v["unit"] = "ms".into();
    });
    let (code, _, err) = run_diff(&a, &b, &["--fail-above", "5"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("region `train_step`") && err.contains("in ns in A but in ms in B"),
        "{err}"
    );
}

#[test]
fn a_region_listed_twice_or_a_negative_time_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let a = report(dir.path(), "a.json", |_| {});
    let twice = report(dir.path(), "twice.json", |j| {
        let mut slow = region(j, "train_step/forward").clone();
        slow["inclusive"][TIME]["value"] = 1e12.into();
        // The first copy is the unchanged one: a gate reading only it would pass.
        regions(j).push(slow);
    });
    let (code, _, err) = run_diff(&a, &twice, &["--fail-above", "5"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("lists region `train_step/forward` twice"),
        "{err}"
    );
    let negative = report(dir.path(), "negative.json", |j| {
        region(j, "train_step/optimizer")["inclusive"][TIME]["value"] = (-5.0).into();
    });
    let (code, _, err) = run_diff(&a, &negative, &["--fail-above", "5"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("region `train_step/optimizer`") && err.contains("a time of -5"),
        "{err}"
    );
}

#[test]
fn a_renamed_region_made_slower_fails_as_new_and_gone() {
    let dir = tempfile::tempdir().unwrap();
    let a = report(dir.path(), "a.json", |_| {});
    let b = report(dir.path(), "b.json", |j| {
        let r = region(j, "train_step/forward");
        r["path"] = "train_step/forward2".into();
        let v = r["inclusive"][TIME]["value"].as_f64().unwrap();
        r["inclusive"][TIME]["value"] = (v * 10.0).into();
    });
    let (code, out, err) = run_diff(&a, &b, &["--fail-above", "5", "--format", "json"]);
    assert_eq!(code, 6, "{out}{err}");
    let json = json_of(&out);
    let failing = failing_statistics(&json);
    assert!(
        failing.contains(&"train_step/forward2 \"new\"".to_string())
            && failing.contains(&"train_step/forward \"gone\"".to_string()),
        "{failing:?}"
    );
    let (_, table, _) = run_diff(&a, &b, &["--fail-above", "5"]);
    assert!(
        table.contains("+ train_step/forward2 (new in B: "),
        "{table}"
    );
    assert!(
        table.contains("- train_step/forward (gone from A: "),
        "{table}"
    );
}

#[test]
fn a_small_region_only_one_run_has_is_listed_without_failing() {
    let dir = tempfile::tempdir().unwrap();
    let a = report(dir.path(), "a.json", |_| {});
    let b = report(dir.path(), "b.json", |j| {
        let mut tiny = region(j, "train_step/optimizer").clone();
        tiny["path"] = "train_step/log".into();
        tiny["inclusive"][TIME]["value"] = 10.0.into();
        regions(j).push(tiny);
    });
    let (code, out, _) = run_diff(&a, &b, &["--fail-above", "5", "--format", "json"]);
    assert_eq!(code, 0, "{out}");
    let json = json_of(&out);
    assert_eq!(
        json["scopes"][0]["added"],
        serde_json::json!(["train_step/log"])
    );
}

#[test]
fn diff_reads_the_captures_report_reads() {
    let dir = tempfile::tempdir().unwrap();
    let csv = |rank: u32| fixture(&format!("ncu/h200x2-2025.3.1/ddp_rank{rank}_raw.csv"));
    let (code, out, err) = run_diff(&csv(0), &csv(1), &["--fail-above", "12"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.starts_with("PASS"), "{out}");
    // A report.json against the capture it was made from: nothing changed.
    let a = report(dir.path(), "a.json", |_| {});
    let (code, out, err) = run_diff(&a, &csv(0), &["--fail-above", "0", "--format", "json"]);
    assert_eq!(code, 0, "{out}{err}");
    let json = json_of(&out);
    assert_eq!(json["scopes"][0]["regions"][0]["time"]["delta_pct"], 0.0);
    // A damaged report.json is still read as one, and said to be one.
    let broken = dir.path().join("broken.json");
    std::fs::File::create(&broken)
        .unwrap()
        .write_all(b"{\"schema_version\": 4, \"run\": 7}")
        .unwrap();
    let (code, _, err) = run_diff(&a, &broken, &[]);
    assert_eq!(code, 2);
    assert!(err.contains("not a profile-run report.json"), "{err}");
}
