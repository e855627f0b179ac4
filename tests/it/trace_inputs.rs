//! CUPTI traces given to `report` on their own, outside the run that made them.

use assert_cmd::Command;
use predicates::prelude::*;
use serde_json::Value;

use crate::trace::{counts, trace_run, traces};

fn profile_run() -> Command {
    Command::cargo_bin("profile-run").unwrap()
}

fn read_json(path: &std::path::Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// A trace file given to `report` on its own (copied out of its run, renamed, compressed) reads as
/// its traced run does; a file that only looks like one is refused naming its first line.
#[test]
fn report_reads_a_bare_trace_file_as_its_run() {
    let tmp = tempfile::tempdir().unwrap();
    trace_run(tmp.path(), "gpt2", &["regions.include=[train_step]"])
        .assert()
        .success();
    let run = read_json(&tmp.path().join("runs/run/report.json"));
    let out = tmp.path().join("bare");
    profile_run()
        .args(["report", "-c", "ncu/trace"])
        .arg(&traces("gpt2")[0])
        .arg("regions.include=[train_step]")
        .arg("--out")
        .arg(&out)
        .assert()
        .success();
    let bare = read_json(&out.join("report.json"));
    assert_eq!(counts(&bare), counts(&run));
    assert_eq!(bare["run"]["profiler"]["name"], "cupti");
    let fake = tmp.path().join("notes.trace");
    std::fs::write(&fake, "a text file\n").unwrap();
    profile_run()
        .arg("report")
        .arg(&fake)
        .arg("--out")
        .arg(tmp.path().join("fake"))
        .assert()
        .code(5)
        .stderr(
            predicate::str::contains("notes.trace:1").and(predicate::str::contains(
                "not a trace the cupti-trace library wrote",
            )),
        );
}

/// A workload that changes directory still finds the injection library and writes its trace into
/// the run directory: the library path and `PROFILE_RUN_TRACE_DIR` handed to it are absolute, also
/// when typed relative (`pipeline.ncu.trace.library=lib/…`, the default `output.root`).
#[test]
fn a_workload_that_changes_directory_keeps_its_trace_in_the_run() {
    let tmp = tempfile::tempdir().unwrap();
    let lib = tmp.path().join("lib");
    let elsewhere = tmp.path().join("elsewhere");
    std::fs::create_dir(&lib).unwrap();
    std::fs::create_dir(&elsewhere).unwrap();
    std::fs::rename(
        crate::trace::library(tmp.path()),
        lib.join("libcupti_trace.so"),
    )
    .unwrap();
    let joined: Vec<String> = traces("gpt2")
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    profile_run()
        .current_dir(tmp.path())
        .env("FAKE_TRACES", joined.join(" "))
        .env("FAKE_TRACE_CD", &elsewhere)
        .args(["-q", "--config", "ncu/trace"])
        .args([
            "pipeline.ncu.trace.library=lib/libcupti_trace.so",
            "output.run_name=run",
            "regions.include=[train_step]",
            "--",
        ])
        .arg(crate::common::repo().join("tests/support/fake-traced-workload"))
        .assert()
        .success();
    let run = tmp.path().join("profile-output/run");
    assert!(run.join("report.json").is_file());
    let command = std::fs::read_to_string(run.join("command.txt")).unwrap();
    assert!(
        command.contains(&format!(
            "PROFILE_RUN_TRACE_DIR={}",
            run.join("trace").display()
        )) && command.contains(&format!(
            "CUDA_INJECTION64_PATH={}",
            lib.join("libcupti_trace.so").display()
        )),
        "{command}"
    );
    assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);
}

/// A traced sampled run whose deep pass was swapped for another workload's capture: none of its
/// launches has a twin, which the report says in its notes and on stderr (exit 0: every time is
/// right, only deep metrics are missing).
#[test]
fn a_deep_pass_of_another_workload_beside_a_trace_is_said_on_stderr() {
    let tmp = tempfile::tempdir().unwrap();
    crate::trace::sampled_with_trace(tmp.path());
    let run = tmp.path().join("runs/run");
    let deep = std::fs::read_dir(&run)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.file_name().unwrap().to_string_lossy() == "profile.deep.ncu-rep")
        .expect("the run's deep pass");
    let other = crate::common::fixture("ncu/h100-2025.3.1-pytorch/rep_kernel.ncu-rep.gz");
    let mut plain = Vec::new();
    std::io::Read::read_to_end(
        &mut flate2::read::GzDecoder::new(std::fs::File::open(other).unwrap()),
        &mut plain,
    )
    .unwrap();
    std::fs::write(&deep, plain).unwrap();
    let output = profile_run()
        .arg("report")
        .arg(&run)
        .arg("--out")
        .arg(tmp.path().join("o"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("note: The deep pass") && stderr.contains("another workload"),
        "{stderr}"
    );
    let report = read_json(&tmp.path().join("o/report.json"));
    let notes = report["notes"].to_string();
    assert!(notes.contains("matches none of the"), "{notes}");
}
