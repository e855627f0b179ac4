//! How often a sampled run opens its captures, counted with `strace` (ignored by default: `.ci/run`
//! installs strace and runs it with `--ignored`). Timed by ncu, planning the deep pass reads the
//! timing report once and the report of the same run takes the strata of its launches from that
//! reading; each reading opens the file twice (its first result's metric names, then every result).
//! In process, planning reads the traces for their counters' index (the CUDA graph kernels'
//! check) and the report takes that index, then reads them once for its regions.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::common::report_json;
use crate::in_process::with_in_process_run;
use crate::sampled::with_fake_sampled;

/// The read-only opens of each of `names` in an strace log of `openat` calls.
fn opens(log: &str, name: &str) -> usize {
    let quoted = format!("/{name}\", O_RDONLY");
    log.lines().filter(|l| l.contains(&quoted)).count()
}

/// `cmd` (profile-run, set up by it) run under strace in `tmp`: the log of its `openat` calls.
fn straced(tmp: &Path, cmd: impl FnOnce(&mut Command) -> &mut Command) -> String {
    let log = tmp.join("strace.log");
    let mut strace = Command::new("strace");
    strace
        .args(["-f", "-e", "trace=openat", "-o"])
        .arg(&log)
        .arg(assert_cmd::cargo::cargo_bin("profile-run"));
    let status = cmd(&mut strace)
        .stdout(std::process::Stdio::null())
        .status()
        .expect("strace runs");
    assert!(status.success(), "{status}");
    std::fs::read_to_string(&log).unwrap()
}

/// The run directory's report.json has the scopes a fresh `report` of the run gives.
fn same_as_a_fresh_report(run: &Path, tmp: &Path) {
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("report.json")).unwrap()).unwrap();
    let again = report_json(&[run], &tmp.join("again"));
    assert_eq!(report["scopes"], again["scopes"]);
}

#[test]
#[ignore = "needs strace: .ci/run installs it and runs this with --ignored"]
fn the_timing_report_is_read_once_to_plan_and_once_to_report() {
    let tmp = tempfile::tempdir().unwrap();
    let log = straced(tmp.path(), |strace| {
        with_fake_sampled(strace, tmp.path()).args(["--", "true"])
    });
    // Planning: one reading (2 opens); the report: one reading (2 opens). Reading the file again
    // for the report's strata made it 6.
    assert_eq!(opens(&log, "profile.ncu-rep"), 4, "timing report");
    assert!(opens(&log, "profile.deep.ncu-rep") <= 4, "deep report");

    // The strata taken from planning's reading are those a fresh reading of the file cuts.
    same_as_a_fresh_report(&tmp.path().join("out/run"), tmp.path());
}

#[test]
#[ignore = "needs strace: .ci/run installs it and runs this with --ignored"]
fn an_in_process_trace_is_read_once_to_plan_and_once_to_report() {
    let tmp = tempfile::tempdir().unwrap();
    let log = straced(tmp.path(), |strace| {
        with_in_process_run(strace, tmp.path(), "in_process")
    });
    // Planning: the counters' index; the report: its regions. Each reading opens the file twice
    // (its format told by its first bytes, then every line). Building the index again for the
    // report made it 6.
    assert_eq!(opens(&log, "cupti.625.trace"), 4, "the trace");

    // The report that took planning's index is the one a fresh reading of the run gives.
    same_as_a_fresh_report(&tmp.path().join("runs/run"), tmp.path());
}
