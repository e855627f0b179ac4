//! Every pair of shipped GPU presets a user may put on one command line either composes (`--dry-run`
//! exits 0) or is refused before anything starts with a message that says what to set.

use assert_cmd::Command;

use crate::common::repo;

/// The shipped presets under conf/ncu, by the name `--config` takes.
fn ncu_presets() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(repo().join("conf/ncu"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .map(|p| format!("ncu/{}", p.file_stem().unwrap().to_string_lossy()))
        .collect();
    names.sort();
    names
}

#[test]
fn every_pair_of_gpu_presets_composes_or_says_what_to_set() {
    let tmp = tempfile::tempdir().unwrap();
    let library = crate::trace::library(tmp.path());
    let script = repo().join("tests/manual/ncu/straggle_step.py");
    let presets = ncu_presets();
    assert!(presets.len() >= 8, "{presets:?}");
    let mut refused = Vec::new();
    for a in &presets {
        for b in &presets {
            let out = Command::cargo_bin("profile-run")
                .unwrap()
                .args(["--dry-run", "--config", a, "--config", b])
                .arg(format!(
                    "pipeline.ncu.executable={}",
                    repo().join("tests/support/fake-ncu").display()
                ))
                .arg(format!("pipeline.ncu.trace.library={}", library.display()))
                .arg(format!("output.root={}", tmp.path().join("runs").display()))
                .arg("--")
                .arg("python3")
                .arg(&script)
                .output()
                .unwrap();
            let stderr = String::from_utf8_lossy(&out.stderr);
            match out.status.code() {
                Some(0) => {}
                Some(2) => {
                    assert!(
                        stderr.contains("set "),
                        "{a} + {b} is refused without a fix: {stderr}"
                    );
                    refused.push(format!("{a} + {b}"));
                }
                code => panic!("{a} + {b}: exit {code:?}: {stderr}"),
            }
        }
    }
    // The pairs people combine most compose.
    for pair in [
        "ncu/distributed + ncu/sampled",
        "ncu/sampled + ncu/distributed",
        "ncu/distributed + ncu/trace",
        "ncu/pytorch + ncu/sampled",
    ] {
        assert!(!refused.iter().any(|r| r == pair), "{pair} is refused");
    }
}
