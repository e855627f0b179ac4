//! The real `neuron-profile view --output-format json` files of a public sweep (112 NKI matmul
//! micro-benchmarks on an inf2.xlarge, profiler 2.27.33; docs/neuron.md, "Real profiles"), read from
//! a local copy: every file gives exit 0 and its total time, tensor-engine active share and MFU
//! within 1 % of its own `summary`, a busy share within 0.1 percentage points of its own
//! `total_active_time / total_time`, a largest gap naming the waits and DMA queues its records put
//! there, a Summary opening with the busy share, and the folder reads as one report. The files carry no licence,
//! so they are never part of the repository: ignored by default, and it passes without checking
//! anything when `REAL_NEURON_PROFILES_DIR` is unset. Run it with
//! `REAL_NEURON_PROFILES_DIR=DIR cargo test --test it neuron::real_profiles -- --ignored`;
//! `benches/neuron_real.py` does the same with the release build and times it.

use std::path::PathBuf;

use assert_cmd::Command;
use serde_json::Value;

use super::cli::Env;
use super::idle::{assert_idle_matches_profile, assert_summary_opens_with_busy_share};
use super::real_layout::assert_totals_match_summary;

fn real_files() -> Option<Vec<PathBuf>> {
    let dir = PathBuf::from(std::env::var_os("REAL_NEURON_PROFILES_DIR")?);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no .json profile in {}", dir.display());
    Some(files)
}

fn json(path: &std::path::Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
#[ignore = "needs a local copy of the real profiles: REAL_NEURON_PROFILES_DIR=DIR"]
fn every_real_profile_matches_its_summary_and_says_where_its_device_idles() {
    let Some(files) = real_files() else {
        eprintln!("REAL_NEURON_PROFILES_DIR is not set: nothing to check");
        return;
    };
    let env = Env::new();
    for (n, file) in files.iter().enumerate() {
        let out = env.path(&format!("r{n}"));
        let output = Command::cargo_bin("profile-run")
            .unwrap()
            .arg("report")
            .arg(file)
            .arg("--out")
            .arg(&out)
            .output()
            .unwrap();
        assert!(output.status.success(), "{}: {output:?}", file.display());
        let report = json(&out.join("report.json"));
        let profile = json(file);
        assert_totals_match_summary(&profile, &report["scopes"][0], 0.01);
        assert_idle_matches_profile(&profile, &report);
        let md = std::fs::read_to_string(out.join("report.md")).unwrap();
        assert_summary_opens_with_busy_share(&md);
    }
    let dir = files[0].parent().unwrap();
    let out = env.path("all");
    Command::cargo_bin("profile-run")
        .unwrap()
        .arg("report")
        .arg(dir)
        .arg("--out")
        .arg(&out)
        .assert()
        .success();
    let report = json(&out.join("report.json"));
    assert_eq!(report["scopes"].as_array().unwrap().len(), files.len());
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert_summary_opens_with_busy_share(&md);
}
