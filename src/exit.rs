//! The one table of exit codes (docs/running.md), and the words and code for a file that could not be
//! written. At the bottom of the crate: it imports nothing of it, so every module may use it.
//!
//! Floor: ground. Imports nothing of the crate. (docs/architecture.md, checked by
//! tests/it/architecture.rs)

// Keep in sync with the table in docs/running.md.
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
        WriteCause::Permission | WriteCause::ReadOnly | WriteCause::NotADirectory => USAGE,
        WriteCause::Full | WriteCause::Other => INTERNAL,
    }
}
