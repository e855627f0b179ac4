//! Spawning a program with duct (no shell: every argument verbatim), reading its merged stdout and
//! stderr line by line into a log file and a callback, and collecting its exit status. After a
//! signal, the program gets a grace period to close its output; then it and everything it started
//! are killed, so a profiler that ignores the signal cannot keep profile-run waiting for the workload.
//! The line callback may also ask for the workload to stop ([`Flow::StopWorkload`]): the program's
//! descendants get SIGTERM while the program itself (the profiler) is left to finish its output, with
//! the same grace period before the kill.

use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::watchdog::Watchdog;
use super::{tree, ProfilerError, SignalGuard};

/// How long output is still read after the kill: a process that cannot be killed (another user's,
/// say) may hold the pipe open forever.
const DRAIN_AFTER_KILL: Duration = Duration::from_secs(2);

/// How the program ended.
#[derive(Debug, Clone)]
pub struct Finished {
    /// Exit code, when it exited normally.
    pub code: Option<i32>,
    /// Signal that killed it, if any.
    pub killed_by: Option<i32>,
    /// Signal profile-run itself received while waiting, if any.
    pub interrupted_by: Option<i32>,
    /// Whether profile-run killed the program because it had not stopped within the grace period.
    pub killed_after_grace: bool,
    /// Whether the line callback asked for the workload to stop and its descendants got SIGTERM.
    pub workload_stopped: bool,
    /// Whether the program was ended because its output was complete ([`Flow::EndProgram`]).
    pub ended_when_complete: bool,
    /// When it ended (`None`: rebuilt from a record that did not say): passes that run one after
    /// another are each stamped when they end, not when the last of them does.
    pub ended: Option<std::time::SystemTime>,
}

/// What the line callback of [`run_streaming`] asks for after a line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    /// Keep running.
    Continue,
    /// End the workload: SIGTERM to every process the program started, not to the program itself,
    /// which (a profiler) then ends as it does when its workload ends. Asked again, nothing more
    /// happens.
    StopWorkload,
    /// The program's output is complete, though it keeps running (a tool that serves a UI once its
    /// files are written): SIGTERM to it and everything it started, SIGKILL after the grace period.
    EndProgram,
}

impl Finished {
    pub fn success(&self) -> bool {
        self.code == Some(0)
    }
}

/// Runs `command` (named `program` in messages), writes every output line to `log` and hands it to
/// `on_line`. `grace`: how long after the first signal, or after `on_line` asked for the workload
/// to stop, the program may take to close its output before it and its descendants are killed
/// with SIGKILL.
pub fn run_streaming(
    program: &str,
    command: duct::Expression,
    log: &Path,
    grace: Duration,
    on_line: &mut dyn FnMut(&str) -> Flow,
) -> Result<Finished, ProfilerError> {
    run_watched(program, command, log, grace, on_line, &mut || {
        Flow::Continue
    })
}

/// [`run_streaming`], and `on_tick` asked about every 100 ms, output or not: what it returns is
/// acted on as a line's [`Flow`] is (a tool that never exits is ended once `on_tick` sees its output
/// complete).
pub fn run_watched(
    program: &str,
    command: duct::Expression,
    log: &Path,
    grace: Duration,
    on_line: &mut dyn FnMut(&str) -> Flow,
    on_tick: &mut dyn FnMut() -> Flow,
) -> Result<Finished, ProfilerError> {
    let spawn_error = |source| ProfilerError::Spawn {
        program: program.to_string(),
        source,
        fix: format!("check that `{program}` is a program built for this machine"),
    };
    let mut log_file = File::create(log).map_err(spawn_error)?;
    let expression = command.stderr_to_stdout().unchecked();
    let guard = SignalGuard::install().map_err(spawn_error)?;
    let reader = expression.reader().map_err(|source| match source.kind() {
        std::io::ErrorKind::NotFound => ProfilerError::NotFound {
            program: program.to_string(),
            hint: String::new(),
        },
        _ => spawn_error(source),
    })?;
    let reader = Arc::new(reader);
    let pids = reader.pids();
    guard.watch(pids.clone());
    // Killed with SIGKILL, profile-run cannot stop the profiler itself: the watcher does.
    let watchdog = pids.first().and_then(|&pid| Watchdog::start(pid));
    let pipe = pids.first().and_then(|&pid| tree::stdout_pipe(pid));
    let lines = read_lines(Arc::clone(&reader));
    let mut killed_at: Option<Instant> = None;
    let mut stopping: Option<tree::Stopping> = None;
    let mut ending: Option<Instant> = None;
    loop {
        let flow = match lines.recv_timeout(Duration::from_millis(100)) {
            Ok(line) => {
                // Keep the log byte-exact; show the line lossily decoded.
                let _ = log_file.write_all(&line);
                let text = String::from_utf8_lossy(&line);
                on_line(text.trim_end_matches(['\n', '\r']))
            }
            Err(RecvTimeoutError::Disconnected) => break,
            Err(RecvTimeoutError::Timeout) => Flow::Continue,
        };
        match (flow, on_tick()) {
            (Flow::StopWorkload, _) if stopping.is_none() => {
                stopping = pids.first().map(|&root| tree::Stopping::start(root));
            }
            (Flow::EndProgram, _) | (_, Flow::EndProgram) if ending.is_none() => {
                pids.iter().copied().for_each(tree::terminate_tree);
                ending = Some(Instant::now());
            }
            _ => {}
        }
        if let (Some(stopping), None) = (stopping.as_mut(), killed_at) {
            stopping.tell_new();
            // A covered stop gives the workload the grace period, then kills what is left of it;
            // the profiler, writing its report, is not killed for the stop.
            if stopping.since().elapsed() >= grace {
                stopping.kill_remaining();
            }
        }
        match killed_at {
            Some(at) if at.elapsed() >= DRAIN_AFTER_KILL => break,
            Some(_) => {}
            None if guard
                .first_received_at()
                .or(ending)
                .is_some_and(|t| t.elapsed() >= grace) =>
            {
                pids.iter().copied().for_each(tree::kill_tree);
                if let Some(pipe) = &pipe {
                    tree::kill_all(&tree::pipe_holders(pipe));
                }
                killed_at = Some(Instant::now());
            }
            None => {}
        }
    }
    let _ = log_file.flush();
    let status = wait_status(&reader).map_err(spawn_error)?;
    if let Some(watchdog) = watchdog {
        watchdog.stand_down();
    }
    Ok(Finished {
        code: status.code(),
        killed_by: status.signal(),
        interrupted_by: guard.received(),
        killed_after_grace: killed_at.is_some(),
        workload_stopped: stopping.is_some(),
        ended_when_complete: ending.is_some(),
        ended: Some(std::time::SystemTime::now()),
    })
}

/// The program's exit status, once it has one.
fn wait_status(reader: &duct::ReaderHandle) -> std::io::Result<std::process::ExitStatus> {
    loop {
        match reader.try_wait() {
            Ok(Some(output)) => return Ok(output.status),
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(source) => return Err(source),
        }
    }
}

/// Reads the program's output on its own thread, one line per message, so the caller can stop
/// waiting for it; the channel closes at end of output or on a read error.
fn read_lines(reader: Arc<duct::ReaderHandle>) -> mpsc::Receiver<Vec<u8>> {
    let (send, receive) = mpsc::channel();
    std::thread::spawn(move || {
        let mut lines = BufReader::new(&*reader);
        loop {
            let mut buf = Vec::new();
            match lines.read_until(b'\n', &mut buf) {
                Ok(0) => break,
                Ok(_) => {
                    if send.send(buf).is_err() {
                        break;
                    }
                }
                // EINTR from our own signal handling: keep reading until the profiler closes its
                // output.
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(_) => break,
            }
        }
    });
    receive
}

/// How long a probe may take to end after a signal was forwarded to it before it is killed.
const PROBE_GRACE: Duration = Duration::from_secs(2);

/// Runs a short probe (a profiler's `--version`) under the same signal handling as a profiler run and
/// returns its output (stderr merged), `None` when it could not be run. A signal during it ends it
/// (forwarded, then killed with everything it started), leaves no process behind, and is returned as
/// `Err(signal)` so the caller exits 128+n instead of starting the profiler.
pub fn run_probe(command: duct::Expression) -> Result<Option<Vec<u8>>, i32> {
    let Ok(guard) = SignalGuard::install() else {
        return Ok(command
            .stdout_capture()
            .unchecked()
            .run()
            .ok()
            .map(|o| o.stdout));
    };
    let Ok(handle) = command
        .stderr_to_stdout()
        .stdout_capture()
        .unchecked()
        .start()
    else {
        return Ok(None);
    };
    let pids = handle.pids();
    guard.watch(pids.clone());
    let mut killed = false;
    loop {
        match handle.try_wait() {
            Ok(Some(output)) => {
                return match guard.received() {
                    Some(signal) => Err(signal),
                    None => Ok(Some(output.stdout.clone())),
                };
            }
            Ok(None) => {}
            Err(_) => return guard.received().map_or(Ok(None), Err),
        }
        if !killed
            && guard
                .first_received_at()
                .is_some_and(|t| t.elapsed() >= PROBE_GRACE)
        {
            pids.iter().copied().for_each(tree::kill_tree);
            killed = true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs `command` (a shell) with `grace`, asking for its workload to stop at the line
    /// `covered`: the lines it printed, and how it ended.
    fn stop_when_covered(
        command: duct::Expression,
        dir: &tempfile::TempDir,
        grace: Duration,
    ) -> (Vec<String>, Finished) {
        let mut lines = Vec::new();
        let finished = run_streaming("sh", command, &dir.path().join("log"), grace, &mut |line| {
            lines.push(line.to_string());
            match line {
                "covered" => Flow::StopWorkload,
                _ => Flow::Continue,
            }
        })
        .unwrap();
        (lines, finished)
    }

    #[test]
    fn a_stop_ends_the_programs_children_and_lets_the_program_finish() {
        let dir = tempfile::tempdir().unwrap();
        // The workload (inner sh) outlives the first SIGTERM (a trap) and then starts another
        // process, which must be told too.
        let command = duct::cmd!(
            "sh",
            "-c",
            "sh -c 'trap : TERM; sleep 0.5; sleep 60' & sleep 0.2; echo covered; wait $!; echo \"the rest ended with $?\""
        );
        let start = Instant::now();
        let (lines, finished) = stop_when_covered(command, &dir, Duration::from_secs(30));
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "waited for sleep"
        );
        // sh may say `Terminated` of its child in between.
        assert_eq!(lines.first().map(String::as_str), Some("covered"));
        assert_eq!(
            lines.last().map(String::as_str),
            Some("the rest ended with 143"),
            "{lines:?}"
        );
        assert!(finished.workload_stopped);
        assert_eq!(
            finished.code,
            Some(0),
            "the program itself was not signalled"
        );
        assert!(!finished.killed_after_grace);
    }

    #[test]
    fn after_a_stop_the_grace_ends_the_workload_never_the_profiler_writing_its_report() {
        let dir = tempfile::tempdir().unwrap();
        // The workload ignores SIGTERM; the program, once it has ended, takes 2 s to write its
        // report: longer than the 1 s grace, which must kill the workload and leave the program.
        let command = duct::cmd!(
            "sh",
            "-c",
            "sh -c 'trap : TERM; while :; do sleep 0.1; done' & echo covered; wait $!; sleep 2; echo report-written"
        );
        let (lines, finished) = stop_when_covered(command, &dir, Duration::from_secs(1));
        assert_eq!(
            lines.last().map(String::as_str),
            Some("report-written"),
            "{lines:?}"
        );
        assert_eq!(finished.code, Some(0));
        assert_eq!(finished.killed_by, None);
        assert!(!finished.killed_after_grace);
    }
}
