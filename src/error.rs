//! The top-level error: each domain's error folded in, and the exit code each one means (the table
//! itself is `src/exit.rs`, at the bottom of the crate, so that any module can name a code).
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

pub use crate::exit::{self, write_exit_code, write_message};

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
    Trace(#[from] crate::profiler::ncu::trace::file::TraceError),
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
            Error::Export(_) | Error::ReportFile(_) | Error::Trace(_) => exit::EXPORT_UNREADABLE,
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
