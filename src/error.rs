//! The top-level error and the one table of exit codes (documented in docs/running.md).
//!
//! Each domain keeps its own error type; this enum folds them together and decides the exit code, so
//! `main` only prints the message chain and exits.

use std::path::PathBuf;

use thiserror::Error;

use crate::config::ConfigError;
use crate::ncu::export::ExportError;
use crate::ncu::report_file::ReportFileError;
use crate::process::ProfilerError;
use crate::report::RenderError;

/// Exit codes. Keep in sync with the table in docs/running.md.
pub mod exit {
    pub const OK: i32 = 0;
    pub const INTERNAL: i32 = 1;
    pub const USAGE: i32 = 2;
    pub const PROFILER_NOT_STARTED: i32 = 3;
    pub const PROFILER_FAILED: i32 = 4;
    pub const EXPORT_UNREADABLE: i32 = 5;
    /// Killed or interrupted by signal `n`: `128 + n`.
    pub const SIGNAL_BASE: i32 = 128;
}

#[derive(Debug, Error)]
pub enum Error {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Profiler(#[from] ProfilerError),
    #[error(transparent)]
    Export(#[from] ExportError),
    #[error(transparent)]
    ReportFile(#[from] ReportFileError),
    #[error(transparent)]
    Render(#[from] RenderError),
    #[error("{0}")]
    Usage(String),
    #[error("could not write {path}: {source}")]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("interrupted by signal {signal}; what was captured is kept in {run_dir}")]
    Interrupted { signal: i32, run_dir: PathBuf },
}

impl Error {
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::Config(_) | Error::Usage(_) => exit::USAGE,
            Error::Profiler(e) => e.exit_code(),
            Error::Export(_) | Error::ReportFile(_) => exit::EXPORT_UNREADABLE,
            Error::Render(e) => e.exit_code(),
            Error::Write { .. } => exit::INTERNAL,
            Error::Interrupted { signal, .. } => exit::SIGNAL_BASE + signal,
        }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
