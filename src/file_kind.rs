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

/// What a path is, by the file type of its metadata: the one classification every wording below is
/// derived from. Whether a link is followed is the caller's choice of metadata
/// (`std::fs::metadata` or `symlink_metadata`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    File,
    Directory,
    SymbolicLink,
    Fifo,
    CharDevice,
    BlockDevice,
    Socket,
    /// A file type this platform reports that is none of the above.
    Other,
}

impl Kind {
    pub fn of(meta: &std::fs::Metadata) -> Self {
        let kind = meta.file_type();
        if kind.is_file() {
            Kind::File
        } else if kind.is_dir() {
            Kind::Directory
        } else if kind.is_symlink() {
            Kind::SymbolicLink
        } else if kind.is_fifo() {
            Kind::Fifo
        } else if kind.is_char_device() {
            Kind::CharDevice
        } else if kind.is_block_device() {
            Kind::BlockDevice
        } else if kind.is_socket() {
            Kind::Socket
        } else {
            Kind::Other
        }
    }

    /// The wording for an input that would block or never end when opened, precise about which
    /// (`is a FIFO (named pipe)`, `is a character device`, …); `None` for a regular file or a
    /// directory, which callers word themselves, and for what a followed path cannot be.
    pub fn special(self) -> Option<&'static str> {
        match self {
            Kind::Fifo => Some("is a FIFO (named pipe)"),
            Kind::CharDevice => Some("is a character device"),
            Kind::BlockDevice => Some("is a block device"),
            Kind::Socket => Some("is a socket"),
            Kind::File | Kind::Directory | Kind::SymbolicLink | Kind::Other => None,
        }
    }

    /// The short wording for anything that is not a regular file (`a symbolic link`, `a FIFO`,
    /// `a device`, `a directory`), to follow `is`; `None` for a regular file.
    pub fn odd(self) -> Option<&'static str> {
        match self {
            Kind::File => None,
            Kind::SymbolicLink => Some("a symbolic link"),
            Kind::Fifo => Some("a FIFO"),
            Kind::CharDevice | Kind::BlockDevice => Some("a device"),
            Kind::Directory => Some("a directory"),
            Kind::Socket | Kind::Other => Some("not a regular file"),
        }
    }
}

/// [`Kind::special`] of a path, symlinks followed (a link to a FIFO is a FIFO to whoever opens it);
/// `None` also for a path that does not exist (each caller words that itself).
pub fn special_kind(path: &Path) -> Option<&'static str> {
    Kind::of(&std::fs::metadata(path).ok()?).special()
}

/// How a path that should be a regular file is something else: [`special_kind`], or `is a directory`
/// (symlinks followed); `None` for a regular file or a missing path.
pub fn not_a_file(path: &Path) -> Option<&'static str> {
    match Kind::of(&std::fs::metadata(path).ok()?) {
        Kind::Directory => Some("is a directory"),
        kind => kind.special(),
    }
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

/// [`Kind::odd`] of metadata the caller read without following a link: `a symbolic link`, `a FIFO`,
/// `a device`, …; `None` for a regular file.
pub fn odd_kind(meta: &std::fs::Metadata) -> Option<&'static str> {
    Kind::of(meta).odd()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A regular file, a folder, a FIFO, a socket, a link to the FIFO and a link to nowhere, made in a
    /// fresh folder.
    fn objects() -> (tempfile::TempDir, std::os::unix::net::UnixListener) {
        let dir = tempfile::tempdir().unwrap();
        let at = |name: &str| dir.path().join(name);
        std::fs::write(at("file"), "x").unwrap();
        std::fs::create_dir(at("folder")).unwrap();
        nix::unistd::mkfifo(&at("fifo"), nix::sys::stat::Mode::S_IRWXU).unwrap();
        let socket = std::os::unix::net::UnixListener::bind(at("socket")).unwrap();
        std::os::unix::fs::symlink(at("fifo"), at("link")).unwrap();
        std::os::unix::fs::symlink(at("nowhere"), at("dangling")).unwrap();
        (dir, socket)
    }

    #[test]
    fn one_classification_gives_both_wordings() {
        let (dir, _socket) = objects();
        let own = |name: &str| Kind::of(&std::fs::symlink_metadata(dir.path().join(name)).unwrap());
        let cases = [
            ("file", Kind::File, None, None),
            ("folder", Kind::Directory, None, Some("a directory")),
            (
                "fifo",
                Kind::Fifo,
                Some("is a FIFO (named pipe)"),
                Some("a FIFO"),
            ),
            (
                "socket",
                Kind::Socket,
                Some("is a socket"),
                Some("not a regular file"),
            ),
            ("link", Kind::SymbolicLink, None, Some("a symbolic link")),
        ];
        for (name, kind, special, odd) in cases {
            assert_eq!(own(name), kind, "{name}");
            assert_eq!((kind.special(), kind.odd()), (special, odd), "{name}");
        }
        let null = Kind::of(&std::fs::symlink_metadata("/dev/null").unwrap());
        assert_eq!(null, Kind::CharDevice);
        assert_eq!(
            (null.special(), null.odd()),
            (Some("is a character device"), Some("a device"))
        );
    }

    #[test]
    fn the_path_wordings_follow_links_and_the_metadata_one_does_not() {
        let (dir, _socket) = objects();
        let at = |name: &str| dir.path().join(name);
        assert_eq!(special_kind(&at("link")), Some("is a FIFO (named pipe)"));
        assert_eq!(not_a_file(&at("link")), Some("is a FIFO (named pipe)"));
        let link = std::fs::symlink_metadata(at("link")).unwrap();
        assert_eq!(odd_kind(&link), Some("a symbolic link"));
        assert_eq!(not_a_file(&at("folder")), Some("is a directory"));
        assert_eq!(
            special_kind(&at("folder")),
            None,
            "callers word a directory themselves"
        );
        for quiet in ["file", "dangling", "missing"] {
            assert_eq!(special_kind(&at(quiet)), None, "{quiet}");
            assert_eq!(not_a_file(&at(quiet)), None, "{quiet}");
        }
    }
}
