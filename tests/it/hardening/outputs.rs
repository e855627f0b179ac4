//! Interrupts and outputs: SIGINT is forwarded and what was captured is rendered; a failed render
//! leaves the previous report as it was; an earlier run directory is never touched; runs started
//! together get their own directories.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;

use super::{entries, fixture_bytes, read_json, report_on, Workspace};

/// Every file under `dir` with its contents and modification time.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, (Vec<u8>, SystemTime)> {
    let mut files = BTreeMap::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(snapshot(&path));
        } else {
            let meta = std::fs::metadata(&path).unwrap();
            files.insert(
                path.clone(),
                (std::fs::read(&path).unwrap(), meta.modified().unwrap()),
            );
        }
    }
    files
}

#[test]
fn sigint_without_a_terminal_is_forwarded_and_the_capture_rendered() {
    let ws = Workspace::new();
    let mut child = ws
        .std_cmd_with(&super::fake_ncu())
        .env("FAKE_NCU_MODE", "slow")
        .args(["-q", "--", "true"])
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while !ws.run_dirs().first().is_some_and(|d| {
        std::fs::read_to_string(d.join("ncu.log"))
            .unwrap_or_default()
            .contains("slow_kernel")
    }) {
        assert!(
            Instant::now() < deadline,
            "the fake ncu never reached its slow phase"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let sent = Instant::now();
    kill(Pid::from_raw(child.id() as i32), Signal::SIGINT).unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    // The fake ncu waits 30 s unless a signal reaches it.
    assert!(
        sent.elapsed() < Duration::from_secs(15),
        "SIGINT was not forwarded"
    );
    let run = &ws.run_dirs()[0];
    let record = read_json(&run.join("run.json"));
    assert_eq!(record["interrupted_by"], 2);
    assert_eq!(record["profiler_exit_code"], 130, "ncu saw the SIGINT");
    assert!(
        run.join("report.md").is_file(),
        "what was captured was rendered"
    );
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    assert!(stderr.contains("interrupted by signal 2"), "{stderr}");
}

#[test]
fn a_failed_render_leaves_the_previous_report_untouched() {
    let first = report_on(&fixture_bytes(), &[]);
    assert_eq!(first.code, 0, "{}", first.stderr);
    let before = snapshot(&first.out());
    std::thread::sleep(Duration::from_millis(20));

    let template = first.dir.path().join("broken.md.j2");
    std::fs::write(
        &template,
        "# ok\n{% for s in report.scopes %}\n{{ s.no_such_field }}\n{% endfor %}\n",
    )
    .unwrap();
    let output = assert_cmd::Command::cargo_bin("profile-run")
        .unwrap()
        .current_dir(first.dir.path())
        .args(["report", "export.csv", "--out", "out", "--force"])
        .arg(format!("report.template={}", template.display()))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("broken.md.j2") && stderr.contains("line 3"),
        "{stderr}"
    );
    assert_eq!(
        snapshot(&first.out()),
        before,
        "report.md and report.json untouched"
    );
    assert_eq!(
        entries(&first.out()),
        [".profile-run-outputs", "report.json", "report.md"],
        "no temporary left"
    );
}

#[test]
fn an_earlier_run_directory_is_never_touched() {
    let ws = Workspace::new();
    ws.cmd()
        .args(["-q", "output.run_name=fixed", "--", "true"])
        .assert()
        .success();
    let earlier = ws.root().join("fixed");
    let before = snapshot(&earlier);
    std::thread::sleep(Duration::from_millis(20));
    ws.cmd()
        .args(["-q", "output.run_name=fixed", "--", "true"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "already exists and is never overwritten",
        ));
    ws.cmd().args(["-q", "--", "true"]).assert().success();
    assert_eq!(snapshot(&earlier), before);
    assert_eq!(ws.run_dirs().len(), 2);
}

#[test]
fn runs_started_together_get_distinct_complete_directories() {
    let ws = Workspace::new();
    let children: Vec<_> = (0..6)
        .map(|_| {
            ws.std_cmd_with(&super::fake_ncu())
                .args(["-q", "--", "true"])
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let mut printed = Vec::new();
    for child in children {
        let output = child.wait_with_output().unwrap();
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        printed.push(String::from_utf8(output.stdout).unwrap().trim().to_string());
    }
    printed.sort();
    printed.dedup();
    assert_eq!(
        printed.len(),
        6,
        "each run printed its own report: {printed:?}"
    );
    let runs = ws.run_dirs();
    assert_eq!(runs.len(), 6);
    for run in &runs {
        let report = read_json(&run.join("report.json"));
        // The fake ncu's report file is the acceptance workload's: `A` holds 61 results.
        assert_eq!(report["scopes"][0]["regions"][0]["path"], "A");
        assert_eq!(report["scopes"][0]["regions"][0]["kernel_count"], 61);
        assert!(run.join("report.md").is_file());
    }
}
