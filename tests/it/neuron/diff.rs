//! `diff` on real Neuron profiles speaks Neuron (docs/neuron.md): instructions, regions and profiles,
//! never kernels, GPUs or ncu's columns; and two folders of profiles pair scope by scope, file by file.

use std::path::Path;
use std::process::Output;

use assert_cmd::Command;
use serde_json::Value;

use super::real_layout::sweep_file;
use crate::common::fixture;

fn diff(a: &Path, b: &Path, extra: &[&str]) -> Output {
    Command::cargo_bin("profile-run")
        .unwrap()
        .arg("diff")
        .arg(a)
        .arg(b)
        .args(extra)
        .output()
        .unwrap()
}

/// Everything a diff printed, both streams.
fn printed(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// No GPU word anywhere in what a Neuron diff printed.
fn assert_no_gpu_words(text: &str) {
    for gpu in ["kernel", "GPU", "ncu", "NVTX", "device__", "CSV", "? on ?"] {
        assert!(!text.contains(gpu), "`{gpu}` in a Neuron diff:\n{text}");
    }
}

#[test]
fn two_profiles_are_compared_in_neuron_words() {
    let output = diff(&sweep_file(256), &sweep_file(512), &[]);
    assert!(output.status.success(), "{output:?}");
    let text = printed(&output);
    assert_no_gpu_words(&text);
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines.contains(&"gemm_k256.json"),
        "the scope is its profile:\n{text}"
    );
    // Both profiles record their instance type (inf2.xlarge): nothing to warn of.
    assert!(!text.contains("instance type is not recorded"), "{text}");
    assert!(
        text.contains("`gemm_k256.json` and `gemm_k512.json` were compared with each other"),
        "{text}"
    );
    // The region rows are those of the real profiles: sg00/_dot.3 took 1.30 µs at K=256, 2.20 µs at 512.
    let dot = lines
        .iter()
        .find(|l| l.trim_start().starts_with("sg00/_dot.3"))
        .unwrap();
    assert!(
        dot.contains("1.30 µs") && dot.contains("2.20 µs") && dot.contains("+69.23%"),
        "{dot}"
    );
}

#[test]
fn a_gate_and_the_workload_check_name_instructions_and_regions() {
    let output = diff(
        &sweep_file(256),
        &fixture("neuron/llama_tp_decoder.json"),
        &["--allow-incomparable", "--fail-above", "5"],
    );
    assert_eq!(output.status.code(), Some(6), "{output:?}");
    let text = printed(&output);
    assert_no_gpu_words(&text);
    assert!(
        text.contains("share only 1 of 16 distinct instructions (6%)"),
        "{text}"
    );
    assert!(
        text.contains("check that both profiles are cut into regions the same way"),
        "{text}"
    );
}

#[test]
fn two_folders_of_profiles_pair_file_by_file() {
    // B is the same three profiles in another folder, listed in another order on disk: every scope
    // must meet its own file, so nothing changed and no scope is left over.
    let tmp = tempfile::tempdir().unwrap();
    for k in [1024, 512, 256] {
        let name = format!("gemm_k{k}.json");
        std::fs::copy(sweep_file(k), tmp.path().join(&name)).unwrap();
    }
    let output = diff(
        &fixture("neuron/matmul_sweep"),
        tmp.path(),
        &["--format", "json", "--fail-above", "0"],
    );
    assert!(output.status.success(), "{output:?}");
    let json: Value = serde_json::from_slice(&output.stdout).unwrap();
    let keys: Vec<&str> = json["scopes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["key"].as_str().unwrap())
        .collect();
    assert_eq!(
        keys,
        [
            "gemm_k256.json",
            "gemm_k512.json",
            "gemm_k1024.json",
            "aggregate"
        ]
    );
    for scope in json["scopes"].as_array().unwrap() {
        for region in scope["regions"].as_array().unwrap() {
            assert_eq!(region["time"]["delta"], 0.0, "{scope}");
        }
    }
    assert_eq!(json["scopes_added"], Value::Array(vec![]));
    assert_eq!(json["scopes_removed"], Value::Array(vec![]));
    assert_eq!(json["gates"][0]["checked"], 8);
}

#[test]
fn profiles_of_one_file_name_from_two_folders_never_pair_by_mistake() {
    // Two profiles both named gemm.json (K 256 and K 512), reported together twice: keyed by file
    // name alone, both scopes of one side would meet the other side's first and show a change.
    let tmp = tempfile::tempdir().unwrap();
    let mut inputs = Vec::new();
    for (folder, k) in [("a", 256), ("b", 512)] {
        let dir = tmp.path().join(folder);
        std::fs::create_dir(&dir).unwrap();
        std::fs::copy(sweep_file(k), dir.join("gemm.json")).unwrap();
        inputs.push(dir.join("gemm.json"));
    }
    let report = |out: &str| {
        let dir = tmp.path().join(out);
        assert_cmd::Command::cargo_bin("profile-run")
            .unwrap()
            .arg("report")
            .args(&inputs)
            .arg("--out")
            .arg(&dir)
            .assert()
            .success();
        dir
    };
    let (first, second) = (report("first"), report("second"));
    let output = diff(&first, &second, &["--format", "json", "--fail-above", "0"]);
    assert!(output.status.success(), "{output:?}");
    let json: Value = serde_json::from_slice(&output.stdout).unwrap();
    let keys: Vec<&str> = json["scopes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["key"].as_str().unwrap())
        .collect();
    assert_eq!(keys.len(), 3, "{keys:?}");
    assert!(
        keys[0].ends_with("a/gemm.json") && keys[1].ends_with("b/gemm.json"),
        "{keys:?}"
    );
    for scope in json["scopes"].as_array().unwrap() {
        for region in scope["regions"].as_array().unwrap() {
            assert_eq!(region["time"]["delta"], 0.0, "{scope}");
        }
    }
}
