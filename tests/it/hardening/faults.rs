//! Profiler faults beyond those in cli_e2e: an ncu that cannot be run, ncu or the workload killed by
//! a signal, ncu writing no report. Each ends with cause and fix, the raw log kept, a partial report
//! when something was captured, and the documented exit code.

use std::os::unix::fs::PermissionsExt;

use predicates::prelude::*;

use super::{code_and_stderr, fake_ncu, Workspace};

#[test]
fn a_non_executable_profiler_exits_3_with_chmod_as_the_fix() {
    let ws = Workspace::new();
    let ncu = ws.dir.path().join("ncu");
    std::fs::copy(fake_ncu(), &ncu).unwrap();
    std::fs::set_permissions(&ncu, std::fs::Permissions::from_mode(0o644)).unwrap();
    ws.cmd_with(&ncu)
        .args(["-q", "--", "true"])
        .assert()
        .code(3)
        .stderr(predicate::str::contains("not executable"))
        .stderr(predicate::str::contains("chmod +x"))
        .stderr(predicate::str::contains("not found").not());
    assert!(
        ws.run_dirs().is_empty(),
        "no run directory for a run that could not start"
    );
}

#[test]
fn a_directory_as_profiler_exits_3() {
    let ws = Workspace::new();
    ws.cmd_with(ws.dir.path())
        .args(["-q", "--", "true"])
        .assert()
        .code(3)
        .stderr(predicate::str::contains("pipeline.ncu.executable"));
}

#[test]
fn a_profiler_that_is_not_a_program_exits_3_naming_the_key_to_fix() {
    let ws = Workspace::new();
    let ncu = ws.dir.path().join("ncu");
    std::fs::write(&ncu, b"\x7fELF not really").unwrap();
    std::fs::set_permissions(&ncu, std::fs::Permissions::from_mode(0o755)).unwrap();
    let (code, stderr) = code_and_stderr(ws.cmd_with(&ncu).args(["-q", "--", "true"]));
    assert_eq!(code, 3, "{stderr}");
    assert!(stderr.contains("could not start"), "{stderr}");
    assert!(stderr.contains("pipeline.ncu.executable"), "{stderr}");
    assert_eq!(
        stderr.matches("Exec format error").count(),
        1,
        "the cause is printed once: {stderr}"
    );
}

#[test]
fn a_profiler_killed_by_a_signal_exits_4_naming_the_signal_and_keeps_the_log() {
    let ws = Workspace::new();
    let (code, stderr) = code_and_stderr(
        ws.cmd()
            .env("FAKE_NCU_MODE", "crash")
            .args(["-q", "--", "true"]),
    );
    assert_eq!(code, 4, "{stderr}");
    assert!(stderr.contains("killed by signal 11"), "{stderr}");
    assert!(stderr.contains("SIGSEGV"), "{stderr}");
    assert!(stderr.contains("fix:"), "{stderr}");
    let run = &ws.run_dirs()[0];
    let log = std::fs::read_to_string(run.join("ncu.log")).unwrap();
    assert!(log.contains("Profiling"), "the raw log is kept: {log}");
    assert!(stderr.contains("last lines of the log"), "{stderr}");
    let record = super::read_json(&run.join("run.json"));
    assert_eq!(record["profiler_signal"], 11);
}

#[test]
fn a_workload_killed_by_a_signal_exits_4_with_the_signal_and_a_partial_report() {
    let ws = Workspace::new();
    let (code, stderr) = code_and_stderr(ws.cmd().args(["-q", "--", "sh", "-c", "kill -SEGV $$"]));
    assert_eq!(code, 4, "{stderr}");
    assert!(stderr.contains("workload exit code 139"), "{stderr}");
    assert!(stderr.contains("signal 11 (SIGSEGV)"), "{stderr}");
    assert!(stderr.contains("partial report"), "{stderr}");
    let run = &ws.run_dirs()[0];
    assert!(run.join("report.md").is_file() && run.join("report.json").is_file());
    assert!(run.join("ncu.log").is_file());
}

#[test]
fn a_profiler_that_writes_no_report_exits_4_and_keeps_the_log() {
    let ws = Workspace::new();
    let (code, stderr) = code_and_stderr(
        ws.cmd()
            .env("FAKE_NCU_MODE", "no-report")
            .args(["-q", "--", "true"]),
    );
    assert_eq!(code, 4, "{stderr}");
    assert!(stderr.contains("ncu wrote no report"), "{stderr}");
    assert!(stderr.contains("fix:"), "{stderr}");
    let run = &ws.run_dirs()[0];
    assert!(run.join("ncu.log").is_file());
    assert!(!run.join("report.md").exists(), "nothing to render");
}
