//! An adaptive sampled run whose top-up pass goes wrong keeps the deep pass's results whole: a
//! top-up pass that fails, one that cannot even start, and a top-up report file that cannot be read
//! each leave the report a sampled run without adaptive samples would have, with a note.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use predicates::prelude::*;
use serde_json::Value;

use crate::common::{fixture, repo};
use crate::sampled::{fake_sampled, read_json, render};

const SAMPLED: &str = "ncu/h100-2025.3.1-sampled";

/// The same run without adaptive samples: what a top-up pass that went wrong must leave.
fn without_adaptive(tmp: &Path) -> Value {
    let dir = tmp.join("plain");
    std::fs::create_dir_all(&dir).unwrap();
    fake_sampled(&dir)
        .args(["pipeline.ncu.sampling.adaptive=false", "--", "true"])
        .assert()
        .success();
    read_json(&dir.join("out/run/report.json"))
}

#[test]
fn a_failing_topup_pass_leaves_the_report_of_a_run_without_one() {
    let tmp = tempfile::tempdir().unwrap();
    fake_sampled(tmp.path())
        .env("FAKE_NCU_TOPUP_MODE", "range-exit-9")
        .env("FAKE_NCU_PARTIAL", "1")
        .args(["--", "true"])
        .assert()
        .success();
    let report = read_json(&tmp.path().join("out/run/report.json"));
    assert_eq!(report["scopes"], without_adaptive(tmp.path())["scopes"]);
}

#[test]
fn a_topup_pass_that_cannot_start_keeps_the_deep_results() {
    let tmp = tempfile::tempdir().unwrap();
    // An ncu that can no longer be run once the deep pass is done, as when the top-up pass's name
    // filter is over the system's limit on one argument.
    let ncu = tmp.path().join("ncu");
    std::fs::write(
        &ncu,
        format!(
            "#!/bin/sh\n\"{}\" \"$@\"\nrc=$?\ncase \"$*\" in *profile.deep*) chmod -x \"$0\";; esac\nexit $rc\n",
            repo().join("tests/support/fake-ncu").display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&ncu, std::fs::Permissions::from_mode(0o755)).unwrap();
    fake_sampled(tmp.path())
        .arg(format!("pipeline.ncu.executable={}", ncu.display()))
        .args(["--", "true"])
        .assert()
        .success()
        .stderr(predicate::str::contains("top-up pass could not be run"));
    let run = tmp.path().join("out/run");
    let record = read_json(&run.join("run.json"));
    assert_eq!(record["adaptive"]["topup_failed"], true);
    let report = read_json(&run.join("report.json"));
    assert!(report["notes"]
        .to_string()
        .contains("The top-up pass failed"));
    std::fs::set_permissions(&ncu, std::fs::Permissions::from_mode(0o755)).unwrap();
    assert_eq!(report["scopes"], without_adaptive(tmp.path())["scopes"]);
}

#[test]
fn an_unreadable_topup_file_is_left_out_with_a_note() {
    let tmp = tempfile::tempdir().unwrap();
    for name in ["train.ncu-rep.gz", "train.deep.ncu-rep.gz"] {
        std::fs::copy(fixture(&format!("{SAMPLED}/{name}")), tmp.path().join(name)).unwrap();
    }
    let alone = render(
        &tmp.path().join("train.ncu-rep.gz"),
        &tmp.path().join("alone"),
        &[],
    );
    // A top-up capture cut short: the deep capture's first 4 KiB.
    let deep = std::fs::read(tmp.path().join("train.deep.ncu-rep.gz")).unwrap();
    std::fs::write(tmp.path().join("train.topup.ncu-rep.gz"), &deep[..4096]).unwrap();
    let with_bad = render(
        &tmp.path().join("train.ncu-rep.gz"),
        &tmp.path().join("bad"),
        &[],
    );
    assert_eq!(with_bad["scopes"], alone["scopes"]);
    assert_eq!(with_bad["sampling"]["topup_results"], 0);
    let notes = with_bad["notes"].to_string();
    assert!(
        notes.contains("train.topup.ncu-rep.gz could not be read"),
        "{notes}"
    );
}
