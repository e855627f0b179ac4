//! Closed output streams and signals from outside: a closed stderr or stdout never stops a run, SIGHUP
//! is handled like SIGTERM, and a profiler that ignores the signal is killed after the grace period.

use std::process::Stdio;
use std::time::{Duration, Instant};

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;

use super::{read_json, Workspace};

/// Waits until the first run directory's ncu.log holds `text`.
fn wait_for_log(ws: &Workspace, text: &str) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !ws.run_dirs().first().is_some_and(|d| {
        std::fs::read_to_string(d.join("ncu.log"))
            .unwrap_or_default()
            .contains(text)
    }) {
        assert!(
            Instant::now() < deadline,
            "the fake ncu never printed {text}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Whether `pid` has ended (gone, or a zombie waiting for init).
fn ended(pid: i32) -> bool {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    stat.is_empty()
        || stat[stat.rfind(')').unwrap() + 1..]
            .trim_start()
            .starts_with('Z')
}

#[test]
fn a_closed_stderr_and_stdout_keep_the_run_and_its_report() {
    let ws = Workspace::new();
    // Progress lines and the workload's output all go to stderr, whose reader is gone before the
    // first line (as with `2>&1 | head -2` once head has its lines).
    let mut child = ws
        .std_cmd_with(&super::fake_ncu())
        .args([
            "--",
            "sh",
            "-c",
            "for i in 1 2 3 4 5; do echo workload line $i; done",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stderr.take());
    drop(child.stdout.take());
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0), "no panic, no failure: {status:?}");
    let run = &ws.run_dirs()[0];
    for file in ["profile.ncu-rep", "report.md", "report.json"] {
        assert!(run.join(file).is_file(), "{file} missing");
    }
    let log = std::fs::read_to_string(run.join("ncu.log")).unwrap();
    assert!(log.contains("workload line 5"), "the whole log was kept");
}

#[test]
fn piping_into_head_keeps_the_run_and_its_exit_code() {
    let ws = Workspace::new();
    // The shell line from the bug report: `profile-run … 2>&1 | head -2`, with profile-run's own exit
    // status taken from the pipeline.
    let cmd = ws.std_cmd_with(&super::fake_ncu());
    let args: Vec<String> = cmd
        .get_args()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let line = format!(
        "'{}' '{}' '{}' -- sh -c 'for i in $(seq 1 200); do echo workload line $i; done' 2>&1 | head -2 >/dev/null; echo ${{PIPESTATUS[0]}}",
        cmd.get_program().to_string_lossy(),
        args[0],
        args[1]
    );
    let output = std::process::Command::new("bash")
        .args(["-c", &line])
        .current_dir(ws.dir.path())
        .env("FAKE_NCU_ARGV_LOG", ws.argv_log())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let status = String::from_utf8_lossy(&output.stdout);
    assert_eq!(
        status.trim(),
        "0",
        "profile-run's exit status; stderr: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let run = &ws.run_dirs()[0];
    for file in ["profile.ncu-rep", "report.md", "report.json"] {
        assert!(run.join(file).is_file(), "{file} missing");
    }
    let log = std::fs::read_to_string(run.join("ncu.log")).unwrap();
    assert!(log.contains("workload line 200"), "the whole log was kept");
}

#[test]
fn a_closed_stderr_does_not_lose_an_error_exit_code() {
    let ws = Workspace::new();
    let mut child = ws
        .std_cmd_with(&super::fake_ncu())
        .args(["-q", "--", "sh", "-c", "exit 7"])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stderr.take());
    assert_eq!(child.wait().unwrap().code(), Some(4));
}

#[test]
fn sighup_is_handled_like_sigterm() {
    let ws = Workspace::new();
    let mut child = ws
        .std_cmd_with(&super::fake_ncu())
        .env("FAKE_NCU_MODE", "slow")
        .args(["-q", "--", "true"])
        .stdin(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for_log(&ws, "slow_kernel");
    let sent = Instant::now();
    kill(Pid::from_raw(child.id() as i32), Signal::SIGHUP).unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(128 + 1));
    assert!(
        sent.elapsed() < Duration::from_secs(15),
        "the signal reached the profiler (it waits 30 s otherwise)"
    );
    let run = &ws.run_dirs()[0];
    let record = read_json(&run.join("run.json"));
    assert_eq!(record["interrupted_by"], 1);
    assert!(record["finished"].is_string(), "the record was finished");
    assert_eq!(record["profiler_exit_code"], 143, "forwarded as SIGTERM");
    assert!(run.join("report.json").is_file());
    assert!(
        run.join("report.md").is_file(),
        "what was captured was rendered"
    );
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    assert!(stderr.contains("interrupted by signal 1"), "{stderr}");
}

/// A signal after ncu has ended (here while its report is exported to CSV, the slowest step after a
/// capture) is not lost: the report of the capture is still written, and the run exits 128+n. Before
/// the signal handlers stayed installed for the whole run, such a signal fell between two handlers
/// and was swallowed: exit 0, as in the flaky `sighup_is_handled_like_sigterm`.
#[test]
fn a_signal_after_the_capture_is_not_lost() {
    let ws = Workspace::new();
    let output = ws
        .std_cmd_with(&super::fake_ncu())
        .env("FAKE_NCU_IMPORT_SIGNAL", "HUP")
        .args(["-q", "pipeline.ncu.export.pages=[raw]", "--", "true"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(128 + 1), "{stderr}");
    assert!(stderr.contains("interrupted by signal 1"), "{stderr}");
    let run = &ws.run_dirs()[0];
    let record = read_json(&run.join("run.json"));
    assert_eq!(record["profiler_exit_code"], 0, "ncu itself finished");
    assert!(run.join("export_raw.csv").is_file());
    assert!(
        run.join("report.md").is_file(),
        "what was captured was rendered"
    );
}

#[test]
fn a_profiler_ignoring_the_signal_is_killed_with_its_workload_after_the_grace() {
    let ws = Workspace::new();
    let pid_file = ws.dir.path().join("workload.pid");
    let workload = format!("echo $$ > {}; exec sleep 120", pid_file.display());
    let mut child = ws
        .std_cmd_with(&super::fake_ncu())
        .env("FAKE_NCU_MODE", "stubborn")
        .args([
            "-q",
            "pipeline.signal_grace_seconds=1",
            "--",
            "sh",
            "-c",
            &workload,
        ])
        .stdin(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for_log(&ws, "stubborn_kernel");
    let deadline = Instant::now() + Duration::from_secs(10);
    while !pid_file.is_file()
        || std::fs::read_to_string(&pid_file)
            .unwrap()
            .trim()
            .is_empty()
    {
        assert!(Instant::now() < deadline, "the workload never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    let workload_pid: i32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let sent = Instant::now();
    kill(Pid::from_raw(child.id() as i32), Signal::SIGTERM).unwrap();
    let status = child.wait().unwrap();
    let took = sent.elapsed();
    assert_eq!(status.code(), Some(128 + 15));
    assert!(
        took >= Duration::from_secs(1),
        "the grace was given: {took:?}"
    );
    assert!(took < Duration::from_secs(10), "not kept waiting: {took:?}");
    let run = &ws.run_dirs()[0];
    let record = read_json(&run.join("run.json"));
    assert_eq!(record["interrupted_by"], 15);
    assert_eq!(record["profiler_signal"], 9, "the profiler was killed");
    let gone = (0..100).any(|_| {
        std::thread::sleep(Duration::from_millis(50));
        ended(workload_pid)
    });
    assert!(
        gone,
        "the workload {workload_pid} was killed with the profiler"
    );
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    assert!(stderr.contains("pipeline.signal_grace_seconds"), "{stderr}");
    assert!(stderr.contains("interrupted by signal 15"), "{stderr}");
}

#[test]
fn a_daemon_left_holding_the_output_is_killed_and_the_capture_rendered() {
    let ws = Workspace::new();
    let pid_file = ws.dir.path().join("daemon.pid");
    // The workload leaves a background process behind and exits: re-parented to init, it is no
    // longer in the profiler's tree but keeps the profiler's output pipe open.
    let workload = format!("sleep 120 & echo $! > {}", pid_file.display());
    let mut child = ws
        .std_cmd_with(&super::fake_ncu())
        .env("FAKE_NCU_MODE", "slow")
        .args([
            "-q",
            "pipeline.signal_grace_seconds=1",
            "--",
            "sh",
            "-c",
            &workload,
        ])
        .stdin(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for_log(&ws, "slow_kernel");
    let daemon: i32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let sent = Instant::now();
    kill(Pid::from_raw(child.id() as i32), Signal::SIGTERM).unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(128 + 15));
    assert!(
        sent.elapsed() < Duration::from_secs(10),
        "{:?}",
        sent.elapsed()
    );
    let run = &ws.run_dirs()[0];
    let record = read_json(&run.join("run.json"));
    assert_eq!(record["profiler_exit_code"], 143, "ncu stopped by itself");
    assert!(run.join("report.md").is_file(), "the capture was rendered");
    let gone = (0..100).any(|_| {
        std::thread::sleep(Duration::from_millis(50));
        ended(daemon)
    });
    assert!(gone, "the daemon {daemon} holding the pipe was killed");
}

#[test]
fn under_nohup_sighup_stays_ignored() {
    let ws = Workspace::new();
    let cmd = ws.std_cmd_with(&super::fake_ncu());
    let mut args: Vec<String> = vec![cmd.get_program().to_string_lossy().into_owned()];
    args.extend(cmd.get_args().map(|a| a.to_string_lossy().into_owned()));
    // What `nohup` does: SIGHUP ignored, then exec.
    let mut child = std::process::Command::new("sh")
        .args(["-c", "trap '' HUP; exec \"$@\"", "sh"])
        .args(&args)
        .args(["-q", "--", "true"])
        .current_dir(ws.dir.path())
        .env("FAKE_NCU_MODE", "slow")
        .stdin(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for_log(&ws, "slow_kernel");
    let pid = Pid::from_raw(child.id() as i32);
    kill(pid, Signal::SIGHUP).unwrap();
    std::thread::sleep(Duration::from_millis(500));
    assert!(
        child.try_wait().unwrap().is_none(),
        "SIGHUP was not acted on"
    );
    kill(pid, Signal::SIGTERM).unwrap();
    assert_eq!(child.wait().unwrap().code(), Some(128 + 15));
    let record = read_json(&ws.run_dirs()[0].join("run.json"));
    assert_eq!(record["interrupted_by"], 15, "only SIGTERM was received");
}
