//! Runs that did not end well, and a profile-run killed outright: a workload that exits non-zero or
//! is killed, or a run interrupted by a signal, gives reports that say "partial" and why, and a
//! run.json that records the workload's exit code or signal; SIGKILL of profile-run takes ncu and
//! the workload down with it.

use std::process::Stdio;
use std::time::{Duration, Instant};

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;

use super::{read_json, Workspace};

/// The run's report.json, report.md and report.html (all three written).
fn reports(run: &std::path::Path) -> (serde_json::Value, String, String) {
    (
        read_json(&run.join("report.json")),
        std::fs::read_to_string(run.join("report.md")).unwrap(),
        std::fs::read_to_string(run.join("report.html")).unwrap(),
    )
}

fn assert_partial(run: &std::path::Path, reason: &str) {
    let (json, md, html) = reports(run);
    assert_eq!(json["run"]["partial"], reason);
    assert!(
        md.contains(&format!("> **Partial report:** {reason}.")),
        "{md}"
    );
    assert!(
        html.contains(&format!(
            "<p class=\"partial\"><strong>Partial report:</strong> {reason}."
        )),
        "{html}"
    );
}

#[test]
fn a_workload_that_exits_non_zero_gives_a_partial_report_and_its_exit_code() {
    let ws = Workspace::new();
    ws.cmd()
        .args([
            "-q",
            "report.outputs=[md,json,html]",
            "--",
            "sh",
            "-c",
            "exit 3",
        ])
        .assert()
        .code(4);
    let run = &ws.run_dirs()[0];
    let record = read_json(&run.join("run.json"));
    assert_eq!(record["workload_exit_code"], 3);
    assert_eq!(record["workload_signal"], serde_json::Value::Null);
    assert_partial(run, "the workload exited with code 3");

    // `report` of the run directory says so again: it comes from run.json.
    let out = ws.dir.path().join("again");
    assert_cmd::Command::cargo_bin("profile-run")
        .unwrap()
        .arg("report")
        .arg(run)
        .arg("--out")
        .arg(&out)
        .assert()
        .success();
    assert_eq!(
        read_json(&out.join("report.json"))["run"]["partial"],
        "the workload exited with code 3"
    );
}

#[test]
fn a_workload_killed_by_a_signal_is_recorded_with_it() {
    let ws = Workspace::new();
    ws.cmd()
        .args([
            "-q",
            "report.outputs=[md,json,html]",
            "--",
            "sh",
            "-c",
            "kill -9 $$",
        ])
        .assert()
        .code(4);
    let run = &ws.run_dirs()[0];
    let record = read_json(&run.join("run.json"));
    assert_eq!(record["workload_exit_code"], 137);
    assert_eq!(record["workload_signal"], 9);
    assert_partial(run, "the workload was killed by signal 9 (SIGKILL)");
}

#[test]
fn a_run_that_ended_well_is_not_partial_and_records_exit_code_0() {
    let ws = Workspace::new();
    ws.cmd().args(["-q", "--", "true"]).assert().success();
    let run = &ws.run_dirs()[0];
    let record = read_json(&run.join("run.json"));
    assert_eq!(record["workload_exit_code"], 0);
    let json = read_json(&run.join("report.json"));
    assert_eq!(json["run"]["partial"], serde_json::Value::Null);
    let md = std::fs::read_to_string(run.join("report.md")).unwrap();
    assert!(!md.contains("Partial report"));
}

#[test]
fn an_interrupted_run_says_so_in_every_report() {
    let ws = Workspace::new();
    let mut child = ws
        .std_cmd_with(&super::fake_ncu())
        .env("FAKE_NCU_MODE", "slow")
        .args(["-q", "report.outputs=[md,json,html]", "--", "true"])
        .stdin(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let log = |ws: &Workspace| {
        ws.run_dirs()
            .first()
            .and_then(|d| std::fs::read_to_string(d.join("ncu.log")).ok())
            .unwrap_or_default()
    };
    let deadline = Instant::now() + Duration::from_secs(20);
    while !log(&ws).contains("slow_kernel") {
        assert!(Instant::now() < deadline, "the fake ncu never started");
        std::thread::sleep(Duration::from_millis(50));
    }
    kill(Pid::from_raw(child.id() as i32), Signal::SIGTERM).unwrap();
    assert_eq!(child.wait().unwrap().code(), Some(128 + 15));
    let run = &ws.run_dirs()[0];
    assert_partial(run, "the run was interrupted by signal 15 (SIGTERM)");
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    assert!(stderr.contains("what was captured is kept"), "{stderr}");
}

/// Whether `pid` has ended (gone, or a zombie no one has reaped yet).
fn ended(pid: i32) -> bool {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    stat.is_empty()
        || stat[stat.rfind(')').unwrap() + 1..]
            .trim_start()
            .starts_with('Z')
}

/// The children of `parent`, with their command lines.
fn children(parent: u32) -> Vec<(i32, String)> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<i32>().ok())
        else {
            continue;
        };
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let Some(after) = stat.rfind(')').map(|at| &stat[at + 1..]) else {
            continue;
        };
        if after.split_whitespace().nth(1) == Some(&parent.to_string()) {
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            found.push((pid, String::from_utf8_lossy(&cmdline).replace('\0', " ")));
        }
    }
    found
}

#[test]
fn sigkill_of_profile_run_takes_ncu_and_the_workload_down() {
    let ws = Workspace::new();
    let pid_file = ws.dir.path().join("workload.pid");
    let workload = format!("echo $$ > {}; exec sleep 120", pid_file.display());
    let mut child = ws
        .std_cmd_with(&super::fake_ncu())
        .args(["-q", "--", "sh", "-c", &workload])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    let workload_pid = loop {
        if let Some(pid) = std::fs::read_to_string(&pid_file)
            .ok()
            .and_then(|t| t.trim().parse::<i32>().ok())
        {
            break pid;
        }
        assert!(Instant::now() < deadline, "the workload never started");
        std::thread::sleep(Duration::from_millis(20));
    };
    let ncu_pid = children(child.id())
        .into_iter()
        .find(|(_, cmd)| cmd.contains("fake-ncu"))
        .map(|(pid, _)| pid)
        .expect("the fake ncu runs under profile-run");
    kill(Pid::from_raw(child.id() as i32), Signal::SIGKILL).unwrap();
    child.wait().unwrap();
    let gone = (0..200).any(|_| {
        std::thread::sleep(Duration::from_millis(25));
        ended(ncu_pid) && ended(workload_pid)
    });
    assert!(
        gone,
        "ncu ({ncu_pid}) and the workload ({workload_pid}) outlived profile-run"
    );
}
