//! Signals while the profiler runs: profile-run itself must not die on Ctrl-C, SIGTERM or SIGHUP,
//! because ncu needs time to finish and write its report. SIGTERM (and SIGINT when there is no
//! terminal to have delivered it to the whole process group) is forwarded to the profiler; SIGHUP (a
//! dropped ssh session) is forwarded as SIGTERM, the signal ncu is known to stop cleanly on, unless it
//! was ignored from the start (`nohup`). The last
//! signal is remembered so the run can exit with 128+n once everything is written, and the time of
//! the first one starts the grace period after which the profiler is killed.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Instant;

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use signal_hook::iterator::{Handle, Signals};

/// Installed for the duration of a profiler run.
pub struct SignalGuard {
    received: Arc<AtomicI32>,
    pids: Arc<Mutex<Vec<u32>>>,
    first_at: Arc<Mutex<Option<Instant>>>,
    handle: Handle,
    thread: Option<thread::JoinHandle<()>>,
}

impl SignalGuard {
    pub fn install() -> std::io::Result<SignalGuard> {
        let received = Arc::new(AtomicI32::new(0));
        let pids: Arc<Mutex<Vec<u32>>> = Arc::new(Mutex::new(Vec::new()));
        let first_at: Arc<Mutex<Option<Instant>>> = Arc::new(Mutex::new(None));
        // Under `nohup` SIGHUP is ignored on purpose; catching it would undo that.
        let handled: &[i32] = if hangup_ignored() {
            &[SIGINT, SIGTERM]
        } else {
            &[SIGINT, SIGTERM, SIGHUP]
        };
        let mut signals = Signals::new(handled)?;
        let handle = signals.handle();
        let interactive = std::io::stdin().is_terminal();
        let thread = {
            let received = Arc::clone(&received);
            let pids = Arc::clone(&pids);
            let first_at = Arc::clone(&first_at);
            thread::spawn(move || {
                for signal in signals.forever() {
                    received.store(signal, Ordering::SeqCst);
                    first_at
                        .lock()
                        .expect("signal time")
                        .get_or_insert_with(Instant::now);
                    // A terminal's Ctrl-C already reached the profiler (same process group); a
                    // second SIGINT could make it abort without writing its report.
                    if signal == SIGINT && interactive {
                        continue;
                    }
                    let forwarded = if signal == SIGHUP { SIGTERM } else { signal };
                    let Ok(sig) = Signal::try_from(forwarded) else {
                        continue;
                    };
                    for &pid in pids.lock().expect("pid list").iter() {
                        let _ = kill(Pid::from_raw(pid as i32), sig);
                    }
                }
            })
        };
        Ok(SignalGuard {
            received,
            pids,
            first_at,
            handle,
            thread: Some(thread),
        })
    }

    /// The processes to forward signals to.
    pub fn watch(&self, pids: Vec<u32>) {
        *self.pids.lock().expect("pid list") = pids;
    }

    /// When the first signal arrived, if one did: the start of the grace period.
    pub fn first_received_at(&self) -> Option<Instant> {
        *self.first_at.lock().expect("signal time")
    }

    /// The last signal received, if any.
    pub fn received(&self) -> Option<i32> {
        match self.received.load(Ordering::SeqCst) {
            0 => None,
            n => Some(n),
        }
    }
}

/// Whether SIGHUP is ignored in this process (inherited from `nohup`), read from the `SigIgn` mask of
/// `/proc/self/status`.
fn hangup_ignored() -> bool {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix("SigIgn:"))
        .and_then(|mask| u64::from_str_radix(mask.trim(), 16).ok())
        .is_some_and(|mask| mask & (1 << (SIGHUP - 1)) != 0)
}

impl Drop for SignalGuard {
    fn drop(&mut self) {
        self.handle.close();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
