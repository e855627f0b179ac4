//! The top-level error and the one table of exit codes (documented in docs/running.md).
//!
//! Each domain keeps its own error type; this enum folds them together and decides the exit code, so
//! `main` only prints the message chain and exits.

use std::path::PathBuf;

use thiserror::Error;

use crate::config::ConfigError;
use crate::process::ProfilerError;
use crate::profiler::ncu::export::ExportError;
use crate::profiler::ncu::report_file::ReportFileError;
use crate::profiler::neuron::NeuronError;
use crate::report::RenderError;

/// Exit codes. Keep in sync with the table in docs/running.md.
pub mod exit {
    pub const OK: i32 = 0;
    pub const INTERNAL: i32 = 1;
    pub const USAGE: i32 = 2;
    pub const PROFILER_NOT_STARTED: i32 = 3;
    pub const PROFILER_FAILED: i32 = 4;
    pub const EXPORT_UNREADABLE: i32 = 5;
    /// `diff`: a regression gate failed.
    pub const REGRESSION: i32 = 6;
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
    Neuron(#[from] NeuronError),
    #[error(transparent)]
    Render(#[from] RenderError),
    #[error("{0}")]
    Usage(String),
    #[error("{}", write_message(path, source))]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("could not write to standard output: {source}; the output was lost (a closed pipe is not an error, a full disk is)")]
    Stdout {
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
            Error::Neuron(e) => neuron_exit_code(e),
            Error::Render(e) => e.exit_code(),
            Error::Write { source, .. } => write_exit_code(source),
            Error::Stdout { .. } => exit::INTERNAL,
            Error::Interrupted { signal, .. } => exit::SIGNAL_BASE + signal,
        }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// A Neuron profile that cannot be read is exit 5 like an unreadable export; a missing tool is exit 3;
/// a wrong input, region name or environment is a usage error.
fn neuron_exit_code(e: &NeuronError) -> i32 {
    match e {
        NeuronError::Io { .. }
        | NeuronError::Parse { .. }
        | NeuronError::NeffMismatch { .. }
        | NeuronError::UnsupportedSchema { .. }
        | NeuronError::MissingColumn { .. } => exit::EXPORT_UNREADABLE,
        NeuronError::ToolNotFound { .. } => exit::PROFILER_NOT_STARTED,
        NeuronError::NoHome | NeuronError::Unrecognised { .. } => exit::USAGE,
    }
}

/// Why a file could not be written, for the errno values a user can act on.
enum WriteCause {
    Permission,
    ReadOnly,
    NotADirectory,
    Full,
    Other,
}

fn write_cause(source: &std::io::Error) -> WriteCause {
    use nix::errno::Errno;
    match source.raw_os_error().map(Errno::from_raw) {
        Some(Errno::EACCES | Errno::EPERM) => WriteCause::Permission,
        Some(Errno::EROFS) => WriteCause::ReadOnly,
        Some(Errno::ENOTDIR | Errno::EEXIST | Errno::EISDIR) => WriteCause::NotADirectory,
        Some(Errno::ENOSPC | Errno::EDQUOT) => WriteCause::Full,
        _ => WriteCause::Other,
    }
}

/// The message for a file or directory that could not be written: the path, the system's words and
/// what to do about it.
pub fn write_message(path: &std::path::Path, source: &std::io::Error) -> String {
    let path = path.display();
    let elsewhere = "choose another directory with `--out DIR` (report) or `output.root=DIR`";
    match write_cause(source) {
        WriteCause::Permission => format!(
            "permission denied writing {path} ({source}); {elsewhere}, or make it writable"
        ),
        WriteCause::ReadOnly => {
            format!("{path} is on a read-only filesystem ({source}); {elsewhere}")
        }
        WriteCause::NotADirectory => format!(
            "cannot write {path}: a file is in the way where a directory is needed ({source}); {elsewhere}"
        ),
        WriteCause::Full => format!(
            "no space left writing {path} ({source}): the disk or your quota is full; free some space or {elsewhere}"
        ),
        WriteCause::Other => format!("could not write {path}: {source}"),
    }
}

/// Exit code of a write failure: a place the user chose that cannot take the file (no permission,
/// read-only, a file in the way) is a usage error; a full disk or another I/O error is exit 1.
pub fn write_exit_code(source: &std::io::Error) -> i32 {
    match write_cause(source) {
        WriteCause::Permission | WriteCause::ReadOnly | WriteCause::NotADirectory => exit::USAGE,
        WriteCause::Full | WriteCause::Other => exit::INTERNAL,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_disk_names_the_path_and_the_fix() {
        use std::io::Write;
        let mut full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap();
        let source = full
            .write_all(b"x")
            .and_then(|()| full.flush())
            .unwrap_err();
        let err = Error::Write {
            path: PathBuf::from("/runs/x/report.md"),
            source,
        };
        let text = err.to_string();
        assert!(
            text.starts_with("no space left writing /runs/x/report.md"),
            "{text}"
        );
        assert!(text.contains("--out DIR"), "{text}");
        assert_eq!(err.exit_code(), exit::INTERNAL);
    }

    #[test]
    fn permission_and_read_only_are_usage_errors_naming_the_path() {
        for (errno, expected) in [
            (13, "permission denied writing /srv/out"),
            (30, "read-only filesystem"),
        ] {
            let err = Error::Write {
                path: PathBuf::from("/srv/out"),
                source: std::io::Error::from_raw_os_error(errno),
            };
            assert!(err.to_string().contains(expected), "{err}");
            assert!(err.to_string().contains("output.root=DIR"), "{err}");
            assert_eq!(err.exit_code(), exit::USAGE);
        }
    }
}
