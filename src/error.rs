//! The top-level error: each domain's error carried as a [`DomainError`], and the crate's own
//! cross-cutting failures (a write, standard output, a signal), each with the exit code it means
//! (the table itself is `src/exit.rs`, at the bottom of the crate, so that any module can name a
//! code).
//!
//! A domain (config, process, report, the profilers) keeps its own error type and says, through
//! [`DomainError`], which exit code it means; `?` boxes it into [`Error`], so `main` only prints the
//! message chain and exits, and this file names no domain.
//!
//! Floor: ground. Imports nothing above it. (docs/architecture.md, checked by
//! tests/it/architecture.rs)

use std::fmt;
use std::path::{Path, PathBuf};

pub use crate::exit::{self, write_exit_code, write_message};

/// A domain's error: its own wording (`Display`, and its causes through `source`) and the exit
/// code it means.
pub trait DomainError: std::error::Error + Send + Sync + 'static {
    fn exit_code(&self) -> i32;
}

#[derive(Debug)]
pub enum Error {
    /// A domain's error, worded and coded by the domain.
    Domain(Box<dyn DomainError>),
    Usage(String),
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    Stdout {
        source: std::io::Error,
    },
    RegionsTooDeep {
        depth: usize,
        limit: usize,
        sources: String,
    },
    Interrupted {
        signal: i32,
        run_dir: PathBuf,
        /// Whether anything was captured before the signal (a report of it is then in `run_dir`).
        captured: bool,
    },
}

impl<E: DomainError> From<E> for Error {
    fn from(error: E) -> Self {
        Error::Domain(Box::new(error))
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            // Transparent: the domain's words and its causes, as if it were the error itself.
            Error::Domain(e) => e.fmt(f),
            Error::Usage(message) => f.write_str(message),
            Error::Write { path, source } => f.write_str(&write_message(path, source)),
            Error::Stdout { source } => write!(f, "could not write to standard output: {source}; the output was lost (a closed pipe is not an error, a full disk is)"),
            Error::RegionsTooDeep { depth, limit, sources } => write!(f, "a range stack in {sources} is {depth} levels deep, past regions.max_depth ({limit}); a stack that deep comes from a range pushed in a loop and never popped, or from the same events read more than once (a profile given twice, or events duplicated in it: each copy nests inside its twin): fix the program's ranges or give each profile once, or raise the limit with regions.max_depth={depth} (memory grows with the square of the depth)"),
            Error::Interrupted { signal, run_dir, captured } => {
                f.write_str(&interrupted_message(*signal, run_dir, *captured))
            }
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Domain(e) => e.source(),
            Error::Write { source, .. } | Error::Stdout { source } => Some(source),
            Error::Usage(_) | Error::RegionsTooDeep { .. } | Error::Interrupted { .. } => None,
        }
    }
}

fn interrupted_message(signal: i32, run_dir: &Path, captured: bool) -> String {
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
            Error::Domain(e) => e.exit_code(),
            Error::Usage(_) => exit::USAGE,
            Error::RegionsTooDeep { .. } => exit::EXPORT_UNREADABLE,
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

    /// A domain's error as `?` makes it: its own words, causes and exit code, nothing of this file's.
    #[test]
    fn a_domain_error_keeps_its_words_causes_and_code() {
        #[derive(Debug)]
        struct Unreadable(std::io::Error);
        impl fmt::Display for Unreadable {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("profile.json line 3: not a profile; re-export it")
            }
        }
        impl std::error::Error for Unreadable {
            fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
                Some(&self.0)
            }
        }
        impl DomainError for Unreadable {
            fn exit_code(&self) -> i32 {
                exit::EXPORT_UNREADABLE
            }
        }
        let read = || -> Result<()> { Err(Unreadable(std::io::Error::other("cut short")))? };
        let err = read().unwrap_err();
        assert_eq!(
            err.to_string(),
            "profile.json line 3: not a profile; re-export it"
        );
        let cause = std::error::Error::source(&err).map(|c| c.to_string());
        assert_eq!(cause.as_deref(), Some("cut short"));
        assert_eq!(err.exit_code(), exit::EXPORT_UNREADABLE);
    }

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
