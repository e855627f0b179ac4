//! What a path is, told from its metadata before anything opens it: `open()` on a FIFO waits for a
//! writer that may never come, and a device such as `/dev/zero` reads without end, so an input that is
//! not a regular file is refused by kind instead of opened.

use std::os::unix::fs::FileTypeExt;
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
