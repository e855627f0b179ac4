//! The top-level error: each domain's error folded in, and the exit code each one means (the table
//! itself is `src/exit.rs`, at the bottom of the crate, so that any module can name a code).
//!
//! Each domain keeps its own error type; this enum folds them together and decides the exit code, so
//! `main` only prints the message chain and exits.
//!
//! Floor: ground. Imports nothing above it, except each domain's `*Error` type that it folds in.
//! (docs/architecture.md, checked by tests/it/architecture.rs)

use std::path::PathBuf;

use thiserror::Error;

use crate::config::ConfigError;
use crate::process::ProfilerError;
use crate::profiler::ReadError;
use crate::report::RenderError;

pub use crate::exit::{self, write_exit_code, write_message};

#[derive(Debug, Error)]
pub enum Error {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Profiler(#[from] ProfilerError),
    #[error(transparent)]
    Read(#[from] ReadError),
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
    #[error("a range stack in {sources} is {depth} levels deep, past regions.max_depth ({limit}); a stack that deep is usually a range pushed in a loop and never popped: fix the program's ranges, or raise the limit with regions.max_depth={depth} (memory grows with the square of the depth)")]
    RegionsTooDeep {
        depth: usize,
        limit: usize,
        sources: String,
    },
    #[error("{}", interrupted_message(*signal, run_dir, *captured))]
    Interrupted {
        signal: i32,
        run_dir: PathBuf,
        /// Whether anything was captured before the signal (a report of it is then in `run_dir`).
        captured: bool,
    },
}

fn interrupted_message(signal: i32, run_dir: &std::path::Path, captured: bool) -> String {
    let dir = run_dir.display();
    if captured {
        format!("interrupted by signal {signal}; what was captured is kept in {dir}")
    } else {
        format!(
            "interrupted by signal {signal} before anything was captured (nothing to report); run directory: {dir}"
        )
    }
}

impl Error {
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::Config(_) | Error::Usage(_) => exit::USAGE,
            Error::Profiler(e) => e.exit_code(),
            Error::Read(e) => e.exit_code(),
            Error::RegionsTooDeep { .. } => exit::EXPORT_UNREADABLE,
            Error::Render(e) => e.exit_code(),
            Error::Write { source, .. } => write_exit_code(source),
            Error::Stdout { .. } => exit::INTERNAL,
            Error::Interrupted { signal, .. } => exit::SIGNAL_BASE + signal,
        }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

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
