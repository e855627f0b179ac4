//! A real Hugging Face GPT-2 training step with Python call stacks
//! (tests/fixtures/ncu/h100-2025.3.1-gpt2): Python-stack regions nested in the NVTX ranges keep the
//! backward pass in its range, every output renders, and the report speaks ncu's words.

use std::collections::HashSet;
use std::path::Path;

use assert_cmd::Command;
use serde_json::Value;

use crate::common::fixture;

const CAPTURE: &str = "ncu/h100-2025.3.1-gpt2/gpt2_pystack.ncu-rep.gz";
const TIME: &str = "gpu__time_duration.sum";

fn render(out: &Path, overrides: &[&str]) -> Value {
    Command::cargo_bin("profile-run")
        .unwrap()
        .arg("report")
        .arg(fixture(CAPTURE))
        .arg("--out")
        .arg(out)
        .args(overrides)
        .assert()
        .success();
    serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap()
}

fn region<'a>(report: &'a Value, path: &str) -> &'a Value {
    report["scopes"][0]["regions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["path"] == path)
        .unwrap_or_else(|| panic!("region {path}"))
}

fn time(region: &Value) -> f64 {
    region["inclusive"][TIME]["value"].as_f64().unwrap()
}

#[test]
fn python_stack_regions_nest_in_the_ranges_and_the_backward_pass_stays_in_its_range() {
    let tmp = tempfile::tempdir().unwrap();
    let plain = render(&tmp.path().join("plain"), &["regions.include=[train_step]"]);
    let frames = render(
        &tmp.path().join("frames"),
        &[
            "regions.include=[train_step]",
            "regions.auto.method=stack_frames",
            "report.outputs=[md, json, html, svg]",
        ],
    );
    let scope = &frames["scopes"][0];
    assert_eq!(
        scope["outside_regions"]["kernel_count"], 0,
        "nothing falls out"
    );
    // The NVTX ranges hold what they hold without frames: the backward pass's 93 kernels (no Python
    // stack: PyTorch's autograd thread) stay in train_step/backward.
    for path in [
        "train_step",
        "train_step/forward",
        "train_step/backward",
        "train_step/optimizer",
    ] {
        let (f, p) = (region(&frames, path), region(&plain, path));
        assert_eq!(f["kernel_count"], p["kernel_count"], "{path}");
        assert_eq!(time(f), time(p), "{path}");
    }
    assert_eq!(region(&frames, "train_step/backward")["kernel_count"], 93);
    // One backward kernel (the loss gradient's fill) is launched from Python; the other 92 are not.
    let notes = serde_json::to_string(&frames["notes"]).unwrap();
    assert!(
        notes.contains("92 of 164 results carry no Python call stack"),
        "{notes}"
    );

    // Every path names one region (collapsed frame chains never land on the same path), children
    // sit below their parents, and frame regions are marked as such.
    let regions = scope["regions"].as_array().unwrap();
    let mut paths = HashSet::new();
    for r in regions {
        assert!(
            paths.insert(r["path"].as_str().unwrap()),
            "one region per path: {}",
            r["path"]
        );
        if let Some(parent) = r["parent"].as_str() {
            assert!(paths.contains(parent), "{} after its parent", r["path"]);
        }
    }
    let frame_regions: Vec<&Value> = regions
        .iter()
        .filter(|r| r["origin"] == "stack_frames")
        .collect();
    assert!(!frame_regions.is_empty());
    // Each range's time is its own results plus its frame children's (an independent sum).
    for path in ["train_step/forward/block0", "train_step/optimizer"] {
        let r = region(&frames, path);
        let children: f64 = regions
            .iter()
            .filter(|c| c["parent"] == path)
            .map(time)
            .sum();
        let own = r["exclusive"][TIME]["value"].as_f64().unwrap();
        assert!((own + children - time(r)).abs() < 1e-6 * time(r), "{path}");
    }
    let out = tmp.path().join("frames");
    assert!(std::fs::read_to_string(out.join("report.html"))
        .unwrap()
        .contains("train_step"));
    let charts: Vec<_> = std::fs::read_dir(out.join("charts"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert!(
        charts.iter().any(|c| c.ends_with("-flame.svg")),
        "{charts:?}"
    );
}

#[test]
fn the_report_opens_with_where_the_time_goes_in_ncus_words() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("r");
    let report = render(&out, &["regions.include=[train_step]"]);
    let labels: Vec<&str> = report["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["label"].as_str())
        .collect();
    for label in ["Duration", "Compute (SM) Throughput", "Memory Throughput"] {
        assert!(labels.contains(&label), "{label} in {labels:?}");
    }
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    let summary = md.find("## Summary").expect("a summary");
    assert!(summary < md.find("## Run").unwrap(), "summary first");
    // The backward pass has the most self time of this step.
    let top = md[summary..]
        .lines()
        .find(|l| l.starts_with("| ["))
        .unwrap();
    assert!(top.contains("train\\_step/backward"), "{top}");
    assert!(md.contains("Compute (SM) Throughput"));
}
