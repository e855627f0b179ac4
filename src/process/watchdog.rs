//! A profiler that outlives profile-run: SIGKILL cannot be caught, so profile-run cannot stop ncu
//! itself when it is killed. A small watcher process (profile-run again, hidden command
//! `__watch-profiler`) is started beside the profiler with a pipe from profile-run as its stdin.
//! However profile-run ends, the kernel closes that pipe; a clean end writes one byte first. End of
//! input without that byte means profile-run died, and the watcher kills the profiler and every
//! process it started (the same tree walk as the grace kill). No process group or unsafe code is
//! needed, and ncu and the workload stay in the terminal's process group, so Ctrl-C still reaches them.

use std::io::{Read, Write};
use std::process::{Child, ChildStdin, Command, Stdio};

use super::tree;

/// The hidden command that runs the watcher.
pub const WATCH_COMMAND: &str = "__watch-profiler";

/// The byte a clean end writes: the profiler has ended and must be left alone.
const STAND_DOWN: u8 = b'.';

/// A running watcher; [`Watchdog::stand_down`] when the profiler has ended.
pub struct Watchdog {
    child: Child,
    stdin: Option<ChildStdin>,
}

impl Watchdog {
    /// Starts a watcher for `pid` (the profiler); `None` when it cannot be started (no `/proc`, the
    /// executable gone), in which case the run goes on unguarded, as it did before watchers existed.
    pub fn start(pid: u32) -> Option<Watchdog> {
        let started = start_time(pid)?;
        let exe = std::env::current_exe().ok()?;
        let mut child = Command::new(exe)
            .args([WATCH_COMMAND, &pid.to_string(), &started.to_string()])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .ok()?;
        let stdin = child.stdin.take();
        Some(Watchdog { child, stdin })
    }

    /// The profiler has ended: the watcher exits without killing anything.
    pub fn stand_down(mut self) {
        if let Some(mut stdin) = self.stdin.take() {
            let _ = stdin.write_all(&[STAND_DOWN]);
        }
        let _ = self.child.wait();
    }
}

/// The watcher itself: waits for profile-run's pipe to close, and kills the profiler's process tree
/// unless told to stand down. Signals sent to the whole process group (a terminal's Ctrl-C) are
/// ignored, so the watcher outlives the interrupt it guards. Returns the exit code.
pub fn watch(pid: u32, started: u64) -> i32 {
    for signal in [
        signal_hook::consts::SIGINT,
        signal_hook::consts::SIGTERM,
        signal_hook::consts::SIGHUP,
    ] {
        let ignored = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let _ = signal_hook::flag::register(signal, ignored);
    }
    let mut byte = [0u8; 1];
    let told = loop {
        match std::io::stdin().read(&mut byte) {
            Ok(0) => break false,
            Ok(_) => break byte[0] == STAND_DOWN,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => break false,
        }
    };
    // The pid could have been reused by an unrelated process after the profiler ended: only the
    // process started at the recorded time is the profiler.
    if !told && start_time(pid) == Some(started) {
        tree::kill_tree(pid);
    }
    0
}

/// When `pid` started, in clock ticks since boot (`/proc/PID/stat` field 22): with the pid, it
/// names one process, never a later one given the same pid.
fn start_time(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after_name = &stat[stat.rfind(')')? + 1..];
    // Fields after the name start at field 3 (state); field 22 is the 20th of them.
    after_name.split_whitespace().nth(19)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn start_time_names_this_process_and_no_other() {
        let mine = start_time(std::process::id()).unwrap();
        assert!(mine > 0);
        assert_eq!(start_time(u32::MAX), None);
    }
}
