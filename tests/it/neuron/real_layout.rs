//! Full JSON in the layout profiler 2.27 writes (21 top-level keys, every one a list of records, in no
//! fixed order), on the schema-true sweep fixtures of tests/fixtures/neuron/make_matmul_sweep.py:
//! read with exit 0, totals equal to each file's own `summary`, `layer_summary` records as regions
//! with their figures, unused keys skipped, missing ones named, one story across md/html/json, a
//! folder of profiles with its aggregate and sweep chart, and `diff` between two profiles.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use serde_json::Value;

use super::cli::{close, report_json, Env};
use crate::common::fixture;

const SIZES: [u32; 3] = [256, 512, 1024];

pub(super) fn sweep_file(k: u32) -> PathBuf {
    fixture(&format!("neuron/matmul_sweep/gemm_k{k}.json"))
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// `profile-run report ARGS… --out OUT`; the command's output (checked by the caller).
fn run_report(env: &Env, inputs: &[&Path], out: &str, extra: &[&str]) -> std::process::Output {
    Command::cargo_bin("profile-run")
        .unwrap()
        .current_dir(env.dir.path())
        .arg("report")
        .args(inputs)
        .arg("--out")
        .arg(env.path(out))
        .args(extra)
        .output()
        .unwrap()
}

/// The report's total time, tensor-engine active share and MFU against the profile's own `summary`
/// (seconds and 0–1 fractions there, ns and % in the report), within `tolerance` (relative).
pub(super) fn assert_totals_match_summary(profile: &Value, scope: &Value, tolerance: f64) {
    let summary = &profile["summary"][0];
    for (name, factor, unit) in [
        ("total_time", 1e9, "ns"),
        ("tensor_engine_active_time_percent", 100.0, "%"),
        ("mfu_estimated_percent", 100.0, "%"),
    ] {
        let want = summary[name].as_f64().unwrap() * factor;
        let got = &scope["total"]["metrics"][name];
        assert_eq!(got["unit"], unit, "{name}");
        let got = got["value"].as_f64().unwrap();
        assert!(
            (got - want).abs() <= tolerance * want.abs(),
            "{name}: report {got}, summary {want}"
        );
    }
}

#[test]
fn every_sweep_profile_reads_and_its_totals_are_its_own_summary() {
    let env = Env::new();
    for k in SIZES {
        let file = sweep_file(k);
        let output = run_report(&env, &[&file], &format!("r{k}"), &[]);
        assert!(output.status.success(), "{k}: {output:?}");
        let report = report_json(&env.path(&format!("r{k}")));
        let profile = read_json(&file);
        let scope = &report["scopes"][0];
        assert_totals_match_summary(&profile, scope, 1e-12);
        // every summary field under its own name, converted once: seconds → ns, fractions → %
        let summary = profile["summary"][0].as_object().unwrap();
        let totals = &scope["total"]["metrics"];
        let dma = summary["dma_packet_time"].as_f64().unwrap();
        assert!(close(
            totals["dma_packet_time"]["value"].as_f64().unwrap(),
            dma * 1e9
        ));
        assert_eq!(totals["dma_packet_time"]["unit"], "ns");
        let static_dma = summary["static_dma_size_percent"].as_f64().unwrap();
        assert!(close(
            totals["static_dma_size_percent"]["value"].as_f64().unwrap(),
            static_dma * 100.0
        ));
        assert_eq!(totals["throttle_active_nc0_time_ns"]["unit"], "ns");
        assert_eq!(
            totals["throttle_active_nc0_time_ns"]["value"],
            summary["throttle_active_nc0_time_ns"].as_f64().unwrap()
        );
        // the tool's version is the profiler's, not the data format's
        assert!(report["run"]["profiler"]["version"]
            .as_str()
            .unwrap()
            .starts_with("2.27.33"));
    }
}

#[test]
fn metrics_follow_the_tools_groups_in_its_order_with_its_descriptions() {
    let env = Env::new();
    let file = sweep_file(512);
    assert!(run_report(&env, &[&file], "r", &[]).status.success());
    let report = report_json(&env.path("r"));
    let profile = read_json(&file);
    let order = profile["summary_group_order"][0].as_object().unwrap();
    let positions: Vec<i64> = report["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| order.get(m["group"].as_str()?)?.as_i64())
        .collect();
    assert!(positions.len() > 50, "{positions:?}");
    assert!(positions.windows(2).all(|w| w[0] <= w[1]), "{positions:?}");
    let total = report["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == "total_time")
        .unwrap();
    assert_eq!(total["group"], "overall_stats");
    assert_eq!(
        total["description"],
        profile["terminology"][0]["total_time"]
    );
    let md = std::fs::read_to_string(env.path("r/report.md")).unwrap();
    assert!(md.contains("| Time | `total_time` | ns | sum | overall\\_stats | How long the profiled execution ran on the device, in seconds. |"), "{md}");
}

#[test]
fn layer_summary_records_are_nested_regions_with_the_records_figures() {
    let env = Env::new();
    let file = sweep_file(1024);
    assert!(run_report(&env, &[&file], "r", &[]).status.success());
    let report = report_json(&env.path("r"));
    let profile = read_json(&file);
    let scope = &report["scopes"][0];
    let regions = scope["regions"].as_array().unwrap();
    let paths: Vec<&str> = regions
        .iter()
        .map(|r| r["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths, ["sg00", "sg00/_dot.3"]);
    assert_eq!(regions[1]["parent"], "sg00");
    assert_eq!(regions[1]["depth"], 1);
    for (region, record) in regions
        .iter()
        .zip(profile["layer_summary"].as_array().unwrap())
    {
        let m = |k: &str| region["inclusive"][k]["value"].as_f64().unwrap();
        let r = |k: &str| record[k].as_f64().unwrap();
        assert!(close(m("total_time"), r("duration")));
        assert!(close(
            m("tensor_engine_active_time_percent"),
            r("tensor_engine_active_percent") * 100.0
        ));
        assert!(close(
            m("tensor_engine_active_time"),
            r("tensor_engine_active_time")
        ));
        assert!(close(
            m("mfu_estimated_percent"),
            r("tensor_engine_mfu") * 100.0
        ));
        assert!(close(
            m("hfu_estimated_percent"),
            r("tensor_engine_hfu") * 100.0
        ));
        assert!(close(
            m("tensor_engine_instruction_count"),
            r("tensor_engine_instruction_count")
        ));
    }
    // the parent's self time is its own less its child's
    let time = |r: &Value, side: &str| r[side]["total_time"]["value"].as_f64().unwrap();
    assert!(close(
        time(&regions[0], "exclusive"),
        time(&regions[0], "inclusive") - time(&regions[1], "inclusive")
    ));
    // busy time from active_time agrees with /sg00's record, not with the matmul's (gpsimd)
    let apart = |r: &Value| -> Vec<String> {
        r["notes"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|n| n.as_str())
            .filter(|n| n.contains("more than 1 %"))
            .map(String::from)
            .collect()
    };
    assert!(apart(&regions[0]).is_empty(), "{:?}", regions[0]["notes"]);
    let notes = apart(&regions[1]);
    assert_eq!(notes.len(), 1, "{:?}", regions[1]["notes"]);
    assert!(
        notes[0].contains("gpsimd 160 ns against 100 ns"),
        "{}",
        notes[0]
    );
    assert!(!notes[0].contains("tensor"), "{}", notes[0]);
    // no collectives: one note says so
    let cc_notes = scope["notes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|n| n.as_str().unwrap().contains("no collectives"))
        .count();
    assert_eq!(cc_notes, 1, "{}", scope["notes"]);
    // each region lists its instructions by engine and opcode, longest first, waits left out
    let kernels = regions[1]["kernels"].as_array().unwrap();
    assert_eq!(kernels[0]["name"], "Tensor MATMULT");
    assert_eq!(kernels[0]["count"], 8);
    assert!(close(
        kernels[0]["metrics"]["total_time"]["value"]
            .as_f64()
            .unwrap(),
        2000.0
    ));
    assert!(!kernels
        .iter()
        .any(|k| k["name"].as_str().unwrap().contains("EVENT_SEMAPHORE")));
}

#[test]
fn the_hierarchy_method_cuts_along_layer_summary_records_at_a_depth() {
    let env = Env::new();
    let file = sweep_file(1024);
    // `regions.auto.depth` keeps the shallower of the records
    let out = run_report(
        &env,
        &[&file],
        "depth1",
        &["regions.auto.method=hierarchy", "regions.auto.depth=1"],
    );
    assert!(out.status.success(), "{out:?}");
    let report = report_json(&env.path("depth1"));
    let scope = &report["scopes"][0];
    let paths: Vec<&str> = scope["regions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths, ["sg00"]);
    assert!(!scope["notes"].to_string().contains("no collectives"));
}

/// A change made to a profile's top-level object.
type Edit = fn(&mut serde_json::Map<String, Value>);

/// A copy of a sweep fixture with its object edited by `edit`.
fn edited(
    env: &Env,
    name: &str,
    edit: impl FnOnce(&mut serde_json::Map<String, Value>),
) -> PathBuf {
    let mut doc = read_json(&sweep_file(256));
    edit(doc.as_object_mut().unwrap());
    let path = env.path(name);
    std::fs::write(&path, serde_json::to_string(&doc).unwrap()).unwrap();
    path
}

#[test]
fn unused_keys_are_skipped_whatever_their_type_and_listed_only_with_v() {
    let env = Env::new();
    let file = edited(&env, "extra.json", |doc| {
        let mut front = serde_json::Map::new();
        front.insert(
            "new_in_2_30".into(),
            serde_json::json!([{"x": {"y": [1, null]}}]),
        );
        front.insert("a_number".into(), serde_json::json!(7));
        front.append(doc);
        *doc = front;
    });
    let quiet = run_report(&env, &[&file], "q", &[]);
    assert!(quiet.status.success(), "{quiet:?}");
    assert!(!String::from_utf8_lossy(&quiet.stderr).contains("not used"));
    let verbose = run_report(&env, &[&file], "v", &["-v"]);
    assert!(verbose.status.success(), "{verbose:?}");
    let stderr = String::from_utf8_lossy(&verbose.stderr);
    assert!(
        stderr.contains("keys not used: new_in_2_30, a_number, "),
        "{stderr}"
    );
    assert!(stderr.contains("pending_dma"), "{stderr}");
}

#[test]
fn a_needed_key_missing_or_of_the_wrong_shape_is_named() {
    let env = Env::new();
    let cases: [(&str, Edit, &[&str]); 3] = [
        (
            "no-layers.json",
            |d| drop(d.remove("layer_summary")),
            &["`layer_summary`", "missing"],
        ),
        (
            "summary-object.json",
            |d| {
                let one = d["summary"][0].clone();
                d.insert("summary".into(), one);
            },
            &["key `summary`", "expected a sequence"],
        ),
        (
            "instruction-text.json",
            |d| {
                d.insert("instruction".into(), Value::from("none"));
            },
            &["key `instruction`", "expected a sequence"],
        ),
    ];
    for (name, edit, wants) in cases {
        let file = edited(&env, name, edit);
        let output = run_report(&env, &[&file], &format!("out-{name}"), &[]);
        assert_eq!(output.status.code(), Some(5), "{name}: {output:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        for want in wants {
            assert!(stderr.contains(want), "{name}: {stderr}");
        }
        assert!(stderr.contains(name), "{name}: {stderr}");
    }
}

#[test]
fn a_folder_of_view_outputs_is_read_in_natural_order_and_a_run_directory_is_not_one() {
    use profile_run::profiler::neuron::{recognise, InputKind};
    let InputKind::ProfileFolder(files) = recognise(&fixture("neuron/matmul_sweep")).unwrap()
    else {
        panic!("the sweep folder is a folder of profiles");
    };
    let names: Vec<String> = files
        .iter()
        .map(|f| f.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        names,
        ["gemm_k256.json", "gemm_k512.json", "gemm_k1024.json"]
    );
    // profile-run's own report.json and run.json are JSON, not Neuron profiles
    let env = Env::new();
    let dir = env.path("run");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("report.json"),
        "{\"schema_version\": 4, \"scopes\": []}",
    )
    .unwrap();
    std::fs::write(
        dir.join("run.json"),
        "{\"workload\": [\"python3\"], \"rank\": 0}",
    )
    .unwrap();
    assert!(recognise(&dir).is_err());
    assert!(recognise(&dir.join("run.json")).is_err());
}
