//! The injection library that `timing: trace` loads into the workload: found, and a 64-bit ELF
//! shared object (told from its header), before anything runs; `--dry-run` says what it checked, and
//! a missing or wrong file stops the run with exit 3, its path, what it is, and how to get the real one.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use assert_cmd::Command;
use predicates::prelude::*;

use crate::common::repo;
use crate::trace::{elf_header, library};

fn profile_run() -> Command {
    Command::cargo_bin("profile-run").unwrap()
}

/// A time-only traced run of `/bin/false` with `lib` as the injection library, into `tmp/runs`.
fn traced_with(tmp: &Path, lib: &Path) -> Command {
    let mut cmd = profile_run();
    cmd.args(["-q", "--config", "ncu/trace"])
        .arg(format!("pipeline.ncu.trace.library={}", lib.display()))
        .arg(format!("output.root={}", tmp.join("runs").display()))
        .arg("--")
        .arg("/bin/false");
    cmd
}

#[test]
fn a_missing_injection_library_stops_before_the_workload_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let missing = tmp.path().join("nowhere/libcupti_trace.so");
    traced_with(tmp.path(), &missing)
        .assert()
        .code(3)
        .stderr(predicate::str::contains(format!(
            "the CUPTI injection library `{}` was not found (pipeline.ncu.timing=trace loads it into the workload); ",
            missing.display()
        )))
        .stderr(predicate::str::contains("profiler `").not())
        .stderr(predicate::str::contains(
            "build it with `cargo build --release` in profile-run's source tree (it lands in target/release/",
        ))
        .stderr(predicate::str::contains("put it beside this profile-run ("))
        .stderr(predicate::str::contains("set pipeline.ncu.trace.library"))
        .stderr(predicate::str::contains("pipeline.ncu.timing=ncu"));
    assert!(!tmp.path().join("runs").exists(), "nothing ran");
}

#[test]
fn a_file_that_is_no_shared_object_is_refused_with_what_it_is() {
    let tmp = tempfile::tempdir().unwrap();
    let executable = tmp.path().join("exe.so");
    std::fs::write(&executable, elf_header(2)).unwrap();
    let script = tmp.path().join("script.so");
    std::fs::write(&script, "#!/bin/sh\nexit 0\n").unwrap();
    let folder = tmp.path().join("folder.so");
    std::fs::create_dir(&folder).unwrap();
    let cases = [
        (
            &executable,
            "is an ELF executable (e_type 2), not a shared object",
        ),
        (
            &script,
            "is not an ELF file: it starts with `#!/b`, not the ELF magic `\\x7fELF`",
        ),
        (&folder, "is a directory, not a file"),
    ];
    for (path, what) in cases {
        for dry_run in [false, true] {
            let mut cmd = traced_with(tmp.path(), path);
            if dry_run {
                cmd.arg("--dry-run");
            }
            cmd.assert()
                .code(3)
                .stderr(predicate::str::contains(format!(
                    "the CUPTI injection library `{}` {what}; ",
                    path.display()
                )))
                .stderr(predicate::str::contains(
                    "point pipeline.ncu.trace.library at the libcupti_trace.so",
                ));
        }
    }
    assert!(!tmp.path().join("runs").exists(), "nothing ran");
}

#[test]
fn dry_run_prints_the_traced_workload_and_what_it_checked() {
    let tmp = tempfile::tempdir().unwrap();
    // --dry-run checks that the workload's program and script exist: stubs for both.
    std::fs::write(tmp.path().join("train.py"), "").unwrap();
    let lib = library(tmp.path());
    let dry_run = |more: &[&str]| {
        let mut cmd = profile_run();
        cmd.current_dir(tmp.path())
            .env("PATH", crate::common::path_with_python(tmp.path()))
            .arg("--dry-run")
            .args(more)
            .arg(format!("pipeline.ncu.trace.library={}", lib.display()))
            .args(["--", "python3", "train.py"]);
        cmd.assert().success()
    };
    let found = format!(
        "checked: the CUPTI injection library ({}, an ELF shared object) found",
        lib.display()
    );
    dry_run(&["--config", "ncu/trace"])
        .stdout(predicate::str::contains("CUDA_INJECTION64_PATH="))
        .stdout(predicate::str::contains("NVTX_INJECTION64_PATH="))
        .stdout(predicate::str::contains("python3 train.py"))
        .stdout(predicate::str::contains("ncu").not())
        .stderr(predicate::str::contains(format!(
            "{found}; the workload's program was found"
        )))
        .stderr(predicate::str::contains(" runs").not());
    // The deep pass under ncu as well: both are checked, and the line names both.
    let ncu = format!(
        "pipeline.ncu.executable={}",
        repo().join("tests/support/fake-ncu").display()
    );
    let engine = "pipeline.ncu.sampling.deep_engine=ncu";
    dry_run(&[
        "--config",
        "ncu/sampled",
        "pipeline.ncu.timing=trace",
        engine,
        &ncu,
    ])
    .stderr(
        predicate::str::contains(format!("{found}, ncu 2025.3.1.0 (")).and(
            predicate::str::contains("fake-ncu) runs; the workload's program was found"),
        ),
    );
}

#[test]
fn a_traced_workload_that_cannot_start_is_not_blamed_on_ncu() {
    // Under the trace no ncu runs: the workload is started itself, so a program that cannot start
    // is the workload's, not pipeline.ncu.executable's.
    let tmp = tempfile::tempdir().unwrap();
    let workload = tmp.path().join("train");
    std::fs::write(&workload, b"\x7fELF not really").unwrap();
    std::fs::set_permissions(&workload, std::fs::Permissions::from_mode(0o755)).unwrap();
    let output = profile_run()
        .args(["-q", "--config", "ncu/trace"])
        .arg(format!(
            "pipeline.ncu.trace.library={}",
            library(tmp.path()).display()
        ))
        .arg(format!("output.root={}", tmp.path().join("runs").display()))
        .arg("--")
        .arg(&workload)
        .assert()
        .code(3)
        .get_output()
        .clone();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains(&format!("could not start `{}`", workload.display())),
        "{stderr}"
    );
    assert!(
        stderr.contains("is a program built for this machine"),
        "{stderr}"
    );
    assert!(!stderr.contains("pipeline.ncu.executable"), "{stderr}");
}
