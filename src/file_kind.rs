//! What a path is, told from its metadata before anything opens it: `open()` on a FIFO waits for a
//! writer that may never come, and a device such as `/dev/zero` reads without end, so an input that is
//! not a regular file is refused by kind instead of opened; and a small file profile-run keeps (a
//! manifest, a recorded configuration) read without following a link, blocking, or reading on.
//!
//! Floor: ground. Imports nothing of the crate.

use std::fs::OpenOptions;
use std::io::Read;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

/// `is a FIFO (named pipe)`, `is a character device`, …; `None` for a regular file, a directory, or a
/// path that does not exist (each caller words those itself). Symlinks are followed: a link to a FIFO
/// is a FIFO to whoever opens it.
pub fn special_kind(path: &Path) -> Option<&'static str> {
    let kind = std::fs::metadata(path).ok()?.file_type();
    if kind.is_fifo() {
        Some("is a FIFO (named pipe)")
    } else if kind.is_char_device() {
        Some("is a character device")
    } else if kind.is_block_device() {
        Some("is a block device")
    } else if kind.is_socket() {
        Some("is a socket")
    } else {
        None
    }
}

/// How a path that should be a regular file is something else: [`special_kind`], or `is a directory`;
/// `None` for a regular file or a missing path.
pub fn not_a_file(path: &Path) -> Option<&'static str> {
    if path.is_dir() {
        return Some("is a directory");
    }
    special_kind(path)
}

/// Why a small file was not read: refused by kind or size (the reason, worded for the user), or an
/// I/O error.
#[derive(Debug)]
pub enum SmallFileError {
    Refused { reason: String },
    Io { source: std::io::Error },
}

/// The text of a small file profile-run keeps in a report or run directory, or `None` when there is
/// none. Refused, without blocking or reading on, when it is a link, a FIFO, a device, a folder, or
/// longer than `limit` bytes; the refusal says it is not `what`, and `fix`.
pub fn read_small(
    path: &Path,
    limit: u64,
    what: &str,
    fix: &str,
) -> Result<Option<String>, SmallFileError> {
    let refused = |reason: String| SmallFileError::Refused {
        reason: format!("{reason}, not {what}; {fix}"),
    };
    let meta = match std::fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => return Err(SmallFileError::Io { source }),
    };
    if let Some(kind) = odd_kind(&meta) {
        return Err(refused(format!("is {kind}")));
    }
    let flags = nix::fcntl::OFlag::O_NOFOLLOW | nix::fcntl::OFlag::O_NONBLOCK;
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(flags.bits())
        .open(path)
        .map_err(|source| SmallFileError::Io { source })?;
    // Checked again on what was opened: the path may have been swapped since.
    let opened = file
        .metadata()
        .map_err(|source| SmallFileError::Io { source })?;
    if let Some(kind) = odd_kind(&opened) {
        return Err(refused(format!("is {kind}")));
    }
    if opened.len() > limit {
        return Err(refused(format!(
            "holds {} bytes (at most {limit} expected)",
            opened.len()
        )));
    }
    let mut bytes = Vec::new();
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(|source| SmallFileError::Io { source })?;
    if bytes.len() as u64 > limit {
        return Err(refused(format!("holds more than {limit} bytes")));
    }
    Ok(Some(String::from_utf8_lossy(&bytes).into_owned()))
}

/// What a path is when it is not a regular file, from its own (not followed) metadata: `a symbolic
/// link`, `a FIFO`, `a device`, …; `None` for a regular file.
pub fn odd_kind(meta: &std::fs::Metadata) -> Option<&'static str> {
    let kind = meta.file_type();
    if kind.is_file() {
        None
    } else if kind.is_symlink() {
        Some("a symbolic link")
    } else if kind.is_fifo() {
        Some("a FIFO")
    } else if kind.is_char_device() || kind.is_block_device() {
        Some("a device")
    } else if kind.is_dir() {
        Some("a directory")
    } else {
        Some("not a regular file")
    }
}
