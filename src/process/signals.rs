//! Signals while the profiler runs: profile-run itself must not die on Ctrl-C, SIGTERM or SIGHUP,
//! because ncu needs time to finish and write its report. SIGTERM (and SIGINT when there is no
//! terminal to have delivered it to the whole process group) is forwarded to the profiler; SIGHUP (a
//! dropped ssh session) is forwarded as SIGTERM, the signal ncu is known to stop cleanly on, unless it
//! was ignored from the start (`nohup`). The last
//! signal is remembered so the run can exit with 128+n once everything is written, and the time of
//! the first one starts the grace period after which the profiler is killed.
//!
//! The handlers are installed once, by the first guard, and stay for the life of the process: every
//! signal from then on is logged. A handler per guard would leave gaps: signal-hook keeps its
//! low-level handler when a registration is dropped, so a signal between two guards (after the
//! version probe, before the capture) or after the last one (while the capture is exported and
//! rendered) was neither handled nor fatal, and the run went on to exit 0. A guard only says which
//! processes receive forwarded signals and which signals arrived since it was installed;
//! [`received_signal`] tells the command about any signal at all.

use std::io::IsTerminal;
use std::sync::{Arc, Mutex, OnceLock};
use std::thread;
use std::time::Instant;

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use signal_hook::iterator::Signals;

/// What the process-wide handler thread shares with the guards.
#[derive(Default)]
struct Shared {
    /// Every signal received, in order, with when it arrived.
    log: Mutex<Vec<(i32, Instant)>>,
    /// The processes forwarded signals go to: every live guard's (deep workers run at once, each
    /// under its own); empty between guards, so a late signal never reaches a pid the system may
    /// have reused.
    pids: Mutex<Vec<u32>>,
}

impl Shared {
    fn log(&self) -> std::sync::MutexGuard<'_, Vec<(i32, Instant)>> {
        self.log.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn pids(&self) -> std::sync::MutexGuard<'_, Vec<u32>> {
        self.pids.lock().unwrap_or_else(|e| e.into_inner())
    }
}

static SHARED: OnceLock<Result<Arc<Shared>, String>> = OnceLock::new();

/// The process-wide handler, installed on first use.
fn shared() -> std::io::Result<Arc<Shared>> {
    SHARED
        .get_or_init(|| install_handlers().map_err(|e| e.to_string()))
        .clone()
        .map_err(std::io::Error::other)
}

fn install_handlers() -> std::io::Result<Arc<Shared>> {
    // Under `nohup` SIGHUP is ignored on purpose; catching it would undo that. Read before any
    // handler of ours is installed.
    let handled: &[i32] = if hangup_ignored() {
        &[SIGINT, SIGTERM]
    } else {
        &[SIGINT, SIGTERM, SIGHUP]
    };
    let mut signals = Signals::new(handled)?;
    let interactive = std::io::stdin().is_terminal();
    let shared = Arc::new(Shared::default());
    let state = Arc::clone(&shared);
    thread::spawn(move || {
        for signal in signals.forever() {
            state.log().push((signal, Instant::now()));
            // A terminal's Ctrl-C already reached the profiler (same process group); a second
            // SIGINT could make it abort without writing its report.
            if signal == SIGINT && interactive {
                continue;
            }
            let forwarded = if signal == SIGHUP { SIGTERM } else { signal };
            let Ok(sig) = Signal::try_from(forwarded) else {
                continue;
            };
            for &pid in state.pids().iter() {
                let _ = kill(Pid::from_raw(pid as i32), sig);
            }
        }
    });
    Ok(shared)
}

/// The last signal profile-run received, at any time since the first guard; `None` when none did.
pub fn received_signal() -> Option<i32> {
    let shared = SHARED.get()?.as_ref().ok()?;
    shared.log().last().map(|(signal, _)| *signal)
}

/// Held for the duration of a profiler run (or probe).
pub struct SignalGuard {
    shared: Arc<Shared>,
    /// Signals logged before this guard (they belong to earlier steps).
    since: usize,
    /// The processes this guard added to the forwarded ones, taken out again when it drops.
    watched: Mutex<Vec<u32>>,
}

impl SignalGuard {
    pub fn install() -> std::io::Result<SignalGuard> {
        let shared = shared()?;
        let since = shared.log().len();
        Ok(SignalGuard {
            shared,
            since,
            watched: Mutex::new(Vec::new()),
        })
    }

    /// The processes to forward signals to, beside those of the other guards alive at once.
    pub fn watch(&self, pids: Vec<u32>) {
        let mut watched = self.watched.lock().unwrap_or_else(|e| e.into_inner());
        let mut all = self.shared.pids();
        forget(&mut all, &watched);
        all.extend(&pids);
        *watched = pids;
    }

    /// When the first signal since this guard arrived, if one did: the start of the grace period.
    pub fn first_received_at(&self) -> Option<Instant> {
        self.shared.log().get(self.since).map(|(_, at)| *at)
    }

    /// The last signal received since this guard, if any.
    pub fn received(&self) -> Option<i32> {
        let log = self.shared.log();
        log[self.since.min(log.len())..]
            .last()
            .map(|(signal, _)| *signal)
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

/// `all` without one each of `these` (a pid two guards watch stays while either does).
fn forget(all: &mut Vec<u32>, these: &[u32]) {
    for pid in these {
        if let Some(at) = all.iter().position(|p| p == pid) {
            all.swap_remove(at);
        }
    }
}

impl Drop for SignalGuard {
    fn drop(&mut self) {
        let watched = self.watched.lock().unwrap_or_else(|e| e.into_inner());
        forget(&mut self.shared.pids(), &watched);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guards_alive_at_once_each_keep_their_processes_forwarded() {
        let (one, two) = (
            SignalGuard::install().unwrap(),
            SignalGuard::install().unwrap(),
        );
        one.watch(vec![4_000_001]);
        two.watch(vec![4_000_002]);
        let forwarded = || shared().unwrap().pids().clone();
        assert!(forwarded().contains(&4_000_001) && forwarded().contains(&4_000_002));
        drop(two);
        assert!(forwarded().contains(&4_000_001), "the other guard's stays");
        assert!(!forwarded().contains(&4_000_002));
        drop(one);
        assert!(!forwarded().contains(&4_000_001));
    }
}
