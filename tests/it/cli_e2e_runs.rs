//! End-to-end runs of the binary against the fake ncu, continued: one writer per output directory,
//! a signal during the version probe, the configuration a run directory recorded, and which notes
//! are repeated on stderr.

use std::path::Path;

use assert_cmd::Command;
use predicates::prelude::*;
use serde_json::Value;

use crate::cli_e2e::{fake_ncu, read_json, Env};
use crate::common::{fixture, refused_as_claimed};

/// `report … --out DIR` started several times at once: `count` processes, their exit codes.
fn racing_reports(out: &Path, force: bool, count: usize) -> Vec<(i32, String)> {
    let capture = fixture("ncu/h100-2025.3.1-pytorch/emit_nvtx.ncu-rep.gz");
    let children: Vec<_> = (0..count)
        .map(|_| {
            let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("profile-run"));
            cmd.arg("report").arg(&capture).arg("--out").arg(out);
            if force {
                cmd.arg("--force");
            }
            cmd.stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    children
        .into_iter()
        .map(|child| {
            let out = child.wait_with_output().unwrap();
            (
                out.status.code().unwrap(),
                String::from_utf8_lossy(&out.stderr).into_owned(),
            )
        })
        .collect()
}

#[test]
fn writers_racing_for_one_out_directory_leave_one_winner() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("same");
    let results = racing_reports(&out, false, 4);
    let winners = results.iter().filter(|(code, _)| *code == 0).count();
    assert_eq!(winners, 1, "{results:?}");
    for (code, stderr) in &results {
        assert!(
            *code == 0
                || (*code == 2
                    && (refused_as_claimed(stderr)
                        || stderr.contains("already exists and is not replaced"))),
            "{code}: {stderr}"
        );
    }
    // With --force every writer may replace the report, but never two at once: the ones that found
    // the directory claimed say so, and what is left is one whole report and no claim.
    for _ in 0..3 {
        let results = racing_reports(&out, true, 4);
        for (code, stderr) in &results {
            assert!(
                *code == 0 || (*code == 2 && refused_as_claimed(stderr)),
                "{code}: {stderr}"
            );
        }
        assert!(results.iter().any(|(code, _)| *code == 0));
        read_json(&out.join("report.json"));
        assert!(!out.join(".profile-run.lock").exists());
    }
}

#[test]
fn a_claim_left_by_a_dead_process_is_taken_over_and_a_live_one_is_not() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    std::fs::create_dir_all(&out).unwrap();
    let export = fixture("ncu/h200-2025.3.1/manual_raw.csv");
    // A live claimant: this test process, holding the claim's lock.
    std::fs::write(
        out.join(".profile-run.lock"),
        format!("pid {} on here\n", std::process::id()),
    )
    .unwrap();
    let live = std::fs::File::open(out.join(".profile-run.lock")).unwrap();
    live.try_lock().unwrap();
    Command::cargo_bin("profile-run")
        .unwrap()
        .arg("report")
        .arg(&export)
        .arg("--out")
        .arg(&out)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(".profile-run.lock"));
    assert!(
        !out.join("report.md").exists(),
        "nothing written beside a live claim"
    );
    drop(live);
    // A claimant killed before it could remove its claim: a process that has exited.
    let gone = std::process::Command::new("true").spawn().unwrap();
    let pid = gone.id();
    let mut gone = gone;
    gone.wait().unwrap();
    std::fs::write(out.join(".profile-run.lock"), format!("{pid}\n")).unwrap();
    Command::cargo_bin("profile-run")
        .unwrap()
        .arg("report")
        .arg(&export)
        .arg("--out")
        .arg(&out)
        .assert()
        .success();
    assert!(out.join("report.md").is_file());
    assert!(!out.join(".profile-run.lock").exists());
}

#[test]
fn a_signal_during_the_version_probe_ends_it_and_exits_128_plus_n() {
    let env = Env::new();
    let pid_file = env.dir.path().join("probe.pid");
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("profile-run"))
        .current_dir(env.dir.path())
        .env("FAKE_NCU_VERSION_SLEEP", "60")
        .env("FAKE_NCU_VERSION_PID", &pid_file)
        .arg(format!("pipeline.ncu.executable={}", fake_ncu().display()))
        .arg(format!("output.root={}", env.root().display()))
        .args(["-q", "--", "true"])
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let probe = loop {
        if let Some(pid) = std::fs::read_to_string(&pid_file)
            .ok()
            .and_then(|t| t.trim().parse::<i32>().ok())
        {
            break pid;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the probe never started"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let started = std::time::Instant::now();
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(128 + 2));
    assert!(
        started.elapsed() < std::time::Duration::from_secs(20),
        "not after the probe's 60 s"
    );
    // The probe ignored the signal, so it was killed; profile-run waited for it: no orphan.
    assert_eq!(
        nix::sys::signal::kill(nix::unistd::Pid::from_raw(probe), None),
        Err(nix::errno::Errno::ESRCH),
        "the probe (pid {probe}) is gone"
    );
    let argv = std::fs::read_to_string(env.argv_log()).unwrap_or_default();
    assert!(argv.is_empty(), "the profiler never started: {argv}");
    // Nothing was captured, and the message does not pretend otherwise.
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    assert!(
        stderr.contains("interrupted by signal 2 before anything was captured (nothing to report)")
            && !stderr.contains("what was captured is kept"),
        "{stderr}"
    );
}

#[test]
fn report_of_a_run_directory_uses_the_configuration_it_recorded() {
    let env = Env::new();
    env.cmd()
        .args(["-q", "regions.include=[A]", "--", "true"])
        .assert()
        .success();
    let run = env.run_dirs()[0].clone();
    let paths = |report: &Value| -> Vec<String> {
        report["scopes"][0]["regions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["path"].as_str().unwrap().to_string())
            .collect()
    };
    let profiled = paths(&read_json(&run.join("report.json")));
    assert!(!profiled.contains(&"B".to_string()), "{profiled:?}");
    // Re-rendered without repeating regions.include: the run's own choice still holds.
    let again = env.dir.path().join("again");
    Command::cargo_bin("profile-run")
        .unwrap()
        .arg("report")
        .arg(&run)
        .arg("--out")
        .arg(&again)
        .assert()
        .success()
        .stderr(predicate::str::contains(
            "using the configuration recorded in",
        ));
    assert_eq!(paths(&read_json(&again.join("report.json"))), profiled);
    // An override on the command line goes on top of it.
    let wider = env.dir.path().join("wider");
    Command::cargo_bin("profile-run")
        .unwrap()
        .arg("report")
        .arg(&run)
        .arg("--out")
        .arg(&wider)
        .arg("regions.include=[]")
        .assert()
        .success();
    assert!(paths(&read_json(&wider.join("report.json"))).contains(&"B".to_string()));
}

#[test]
fn notes_that_change_the_numbers_are_said_on_stderr_and_others_stay_in_the_report() {
    let dir = tempfile::tempdir().unwrap();
    // Metrics the preset asks for but the export lacks: said on stderr as well as in the report.
    Command::cargo_bin("profile-run")
        .unwrap()
        .arg("report")
        .arg(fixture("ncu/h200-2025.3.1/manual_raw.csv"))
        .arg("--out")
        .arg(dir.path().join("memory"))
        .args(["-c", "ncu/memory"])
        .assert()
        .success()
        .stderr(predicate::str::contains(
            "note: Not in the inputs, so not shown:",
        ));
    // The sampled-run note explains the report; it is in report.json, not on stderr.
    let out = dir.path().join("sampled");
    Command::cargo_bin("profile-run")
        .unwrap()
        .arg("report")
        .arg(fixture("ncu/h100-2025.3.1-sampled/train.ncu-rep.gz"))
        .arg("--out")
        .arg(&out)
        .assert()
        .success()
        .stderr(predicate::str::contains("Sampled run").not());
    let notes = read_json(&out.join("report.json"))["notes"].to_string();
    assert!(notes.contains("Sampled run"), "{notes}");
}

#[test]
fn a_blank_control_or_overlong_run_name_is_refused_before_anything_is_made() {
    // Each as YAML reads an override's value: double quotes keep blanks, `\n` is a newline.
    let long = "n".repeat(300);
    for (name, why) in [
        (r#"" ""#, "is blank"),
        (r#""\n""#, "is blank"),
        (r#""run\tone""#, "control character '\\t'"),
        (long.as_str(), "is 300 bytes long"),
    ] {
        let env = Env::new();
        env.cmd()
            .arg(format!("output.run_name={name}"))
            .args(["--", "true"])
            .assert()
            .code(2)
            .stderr(predicate::str::contains("output.run_name").and(predicate::str::contains(why)));
        assert!(
            !env.root().exists(),
            "{name:?}: nothing is made under output.root"
        );
        assert!(!env.argv_log().exists(), "{name:?}: ncu never ran");
    }
}
