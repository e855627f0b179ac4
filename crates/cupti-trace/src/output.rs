//! Where a process's trace goes: `$PROFILE_RUN_TRACE_DIR/cupti.<pid>.trace`, written whole under a
//! temporary name and renamed, so a reader never sees half a file; a process that could not trace
//! writes `cupti.<pid>.error` instead, which profile-run reports, and one whose in-process counters
//! have collected nothing because they cannot run writes `cupti.<pid>.no-counters` beside its trace
//! ([`no_counters`]), profile-run's cue to measure the deep metrics under ncu instead.

use std::path::PathBuf;

use crate::trace::{Trace, Who};

/// The environment variable naming the trace directory.
pub const DIR_VAR: &str = "PROFILE_RUN_TRACE_DIR";

pub fn directory() -> Option<PathBuf> {
    std::env::var_os(DIR_VAR)
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
}

/// Where launchers put a process's rank, first found wins: torchrun (and torch.distributed's
/// env:// convention), Open MPI, MPICH/PMI, then Slurm's task id (set for every `srun` task, so last).
const RANK_VARS: [&str; 4] = ["RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID"];
/// The job's size, from the same launchers in the same order.
const WORLD_SIZE_VARS: [&str; 4] = [
    "WORLD_SIZE",
    "OMPI_COMM_WORLD_SIZE",
    "PMI_SIZE",
    "SLURM_NTASKS",
];

/// This process's launcher rank, where a launcher set one.
pub fn rank() -> Option<u32> {
    from_launcher(&RANK_VARS)
}

/// The first of `vars` set to a number.
fn from_launcher(vars: &[&str]) -> Option<u32> {
    vars.iter()
        .find_map(|var| std::env::var(var).ok()?.trim().parse().ok())
}

fn host() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: the buffer and its length match; gethostname NUL-terminates within it on success.
    let ok = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) } == 0;
    if !ok {
        return String::new();
    }
    let end = buf.iter().position(|b| *b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).into_owned()
}

fn process_name() -> String {
    std::fs::read_to_string("/proc/self/comm")
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

/// Writes the process's trace.
pub fn write(trace: &Trace, libcupti: &str) {
    let Some(dir) = directory() else { return };
    let pid = std::process::id();
    let who = Who {
        pid,
        host: host(),
        process: process_name(),
        rank: rank(),
        world_size: from_launcher(&WORLD_SIZE_VARS),
    };
    let text = trace.render(&who, libcupti);
    let path = dir.join(format!("cupti.{pid}.trace"));
    let partial = dir.join(format!(".cupti.{pid}.trace.partial"));
    let written = std::fs::write(&partial, text).and_then(|()| std::fs::rename(&partial, &path));
    if let Err(e) = written {
        eprintln!("profile-run trace: could not write {}: {e}", path.display());
    }
}

/// How the file that says a process's counters cannot run ends: `cupti.<pid>.no-counters`.
pub const NO_COUNTERS_SUFFIX: &str = ".no-counters";

fn no_counters_path() -> Option<PathBuf> {
    directory().map(|dir| dir.join(format!("cupti.{}{NO_COUNTERS_SUFFIX}", std::process::id())))
}

/// Records why this process's in-process counters cannot run while none of its launches has been
/// profiled: read at the end of the trace pass, before the trace itself (no trace is read to learn
/// it). The trace keeps the same reason among its counters' errors.
pub fn no_counters(why: &str) {
    if let Some(path) = no_counters_path() {
        if let Err(e) = std::fs::write(&path, format!("{why}\n")) {
            eprintln!("profile-run trace: could not write {}: {e}", path.display());
        }
    }
}

/// A launch was profiled after all (on another context): the counters run, so the cue goes.
pub fn counters_work() {
    if let Some(path) = no_counters_path() {
        let _ = std::fs::remove_file(path);
    }
}

/// Records why this process could not trace, for profile-run to report.
pub fn failure(why: &str) {
    eprintln!("profile-run trace: {why}");
    if let Some(dir) = directory() {
        let path = dir.join(format!("cupti.{}.error", std::process::id()));
        if let Err(e) = std::fs::write(&path, format!("{why}\n")) {
            eprintln!("profile-run trace: could not write {}: {e}", path.display());
        }
    }
}
