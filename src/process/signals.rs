//! Signals while the profiler runs: profile-run itself must not die on Ctrl-C or SIGTERM, because ncu
//! needs time to finish and write its report. SIGTERM (and SIGINT when there is no terminal to have
//! delivered it to the whole process group) is forwarded to the profiler; the last signal is
//! remembered so the run can exit with 128+n once everything is written.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use signal_hook::consts::{SIGINT, SIGTERM};
use signal_hook::iterator::{Handle, Signals};

/// Installed for the duration of a profiler run.
pub struct SignalGuard {
    received: Arc<AtomicI32>,
    pids: Arc<Mutex<Vec<u32>>>,
    handle: Handle,
    thread: Option<thread::JoinHandle<()>>,
}

impl SignalGuard {
    pub fn install() -> std::io::Result<SignalGuard> {
        let received = Arc::new(AtomicI32::new(0));
        let pids: Arc<Mutex<Vec<u32>>> = Arc::new(Mutex::new(Vec::new()));
        let mut signals = Signals::new([SIGINT, SIGTERM])?;
        let handle = signals.handle();
        let interactive = std::io::stdin().is_terminal();
        let thread = {
            let received = Arc::clone(&received);
            let pids = Arc::clone(&pids);
            thread::spawn(move || {
                for signal in signals.forever() {
                    received.store(signal, Ordering::SeqCst);
                    // A terminal's Ctrl-C already reached the profiler (same process group); a
                    // second SIGINT could make it abort without writing its report.
                    if signal == SIGINT && interactive {
                        continue;
                    }
                    let Ok(sig) = Signal::try_from(signal) else {
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
            handle,
            thread: Some(thread),
        })
    }

    /// The processes to forward signals to.
    pub fn watch(&self, pids: Vec<u32>) {
        *self.pids.lock().expect("pid list") = pids;
    }

    /// The last signal received, if any.
    pub fn received(&self) -> Option<i32> {
        match self.received.load(Ordering::SeqCst) {
            0 => None,
            n => Some(n),
        }
    }
}

impl Drop for SignalGuard {
    fn drop(&mut self) {
        self.handle.close();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
