//! Running the profiler: spawning it without a shell, streaming its log line by line, forwarding
//! signals, and telling "could not start" apart from "ran and failed".
//!
//! Floor: process. May import analysis, insights, report, config, region and the ground floor
//! (today: the ground floor only). (docs/architecture.md, checked by tests/it/architecture.rs)

pub mod progress;
mod run;
mod signals;
mod tree;
pub mod watchdog;
mod workload;

pub use run::{run_probe, run_streaming, run_watched, Finished, Flow};
pub use signals::{received_signal, SignalGuard};
pub use workload::check_workload;

use std::path::PathBuf;

use thiserror::Error;

use crate::error::DomainError;
use crate::exit;

#[derive(Debug, Error)]
pub enum ProfilerError {
    #[error("profiler `{program}` not found{hint}")]
    NotFound { program: String, hint: String },
    /// `fix` names the setting that names the program, in the words of the profiler that runs it.
    #[error("profiler `{program}` cannot be run: {why}; {fix}")]
    NotRunnable {
        program: String,
        why: String,
        fix: String,
    },
    /// `fix`: how to make the program start, naming the setting that names it; spawning knows no
    /// setting, so it says to check the program, and a profiler that knows its own key rewrites it.
    #[error("could not start `{program}`: {source}; {fix}")]
    Spawn {
        program: String,
        #[source]
        source: std::io::Error,
        fix: String,
    },
    /// A file the run loads beside the profiler (an injection library) is missing or is not what it
    /// must be: `{what} `{path}` {problem}; {fix}`.
    #[error("{what} `{path}` {problem}; {fix}")]
    RequiredFile {
        what: String,
        path: String,
        problem: String,
        fix: String,
    },
    #[error("{}", .0)]
    Failed(Box<Failure>),
}

/// A profiler run (or export) that started and failed: what, with which code, why, and how to fix it.
#[derive(Debug)]
pub struct Failure {
    pub what: String,
    /// ` (workload exit code 7)`, empty when unknown.
    pub code: String,
    pub cause: String,
    pub fix: String,
    /// The raw log (or the file the step worked on).
    pub log: PathBuf,
    /// The last lines of the log, formatted for the message; may be empty.
    pub tail: String,
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} failed{}: {}\n  fix: {}\n  log: {}{}",
            self.what,
            self.code,
            self.cause,
            self.fix,
            self.log.display(),
            self.tail
        )
    }
}

impl DomainError for ProfilerError {
    fn exit_code(&self) -> i32 {
        match self {
            ProfilerError::NotFound { .. }
            | ProfilerError::NotRunnable { .. }
            | ProfilerError::Spawn { .. }
            | ProfilerError::RequiredFile { .. } => exit::PROFILER_NOT_STARTED,
            ProfilerError::Failed(_) => exit::PROFILER_FAILED,
        }
    }
}

/// Why a program cannot be run.
#[derive(Debug, Clone, PartialEq)]
pub enum Unrunnable {
    /// No such file, or not on `PATH`.
    Missing(String),
    /// It exists but is not an executable file.
    NotRunnable(String),
}

/// Resolves a program name the way `execvp` would: a path is checked as is, a bare name is looked up
/// on `PATH`. Returns the path, or why it cannot be run.
pub fn resolve_program(program: &str) -> Result<PathBuf, Unrunnable> {
    use std::os::unix::fs::PermissionsExt;
    let runnable = |p: &std::path::Path| -> Result<(), Unrunnable> {
        let meta =
            std::fs::metadata(p).map_err(|_| Unrunnable::Missing("no such file".to_string()))?;
        if !meta.is_file() {
            return Err(Unrunnable::NotRunnable(format!(
                "{} is not a file",
                p.display()
            )));
        }
        if meta.permissions().mode() & 0o111 == 0 {
            return Err(Unrunnable::NotRunnable(format!(
                "{} is not executable",
                p.display()
            )));
        }
        Ok(())
    };
    if program.contains('/') {
        let path = PathBuf::from(program);
        runnable(&path)?;
        return Ok(path);
    }
    let path_var = std::env::var_os("PATH").unwrap_or_default();
    for dir in std::env::split_paths(&path_var) {
        let candidate = dir.join(program);
        if runnable(&candidate).is_ok() {
            return Ok(candidate);
        }
    }
    Err(Unrunnable::Missing("not on PATH".into()))
}
