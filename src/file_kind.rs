//! What a path is, told from its metadata before anything opens it: `open()` on a FIFO waits for a
//! writer that may never come, and a device such as `/dev/zero` reads without end, so an input that is
//! not a regular file is refused by kind instead of opened; and a small file profile-run keeps (a
//! manifest, a recorded configuration) read without following a link, blocking, or reading on.
//!
//! Floor: ground. Imports nothing of the crate.

use std::fs::OpenOptions;
use std::io::Read;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

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

/// Why a file was not read: refused by kind, place or size (the reason, worded for the user), or an
/// I/O error.
#[derive(Debug)]
pub enum FileError {
    Refused { reason: String },
    Io { source: std::io::Error },
}

impl From<FileError> for std::io::Error {
    /// A refusal as an I/O error of kind `InvalidData` whose text is the reason, for readers whose
    /// errors carry an `io::Error` (they name the file themselves).
    fn from(e: FileError) -> Self {
        match e {
            FileError::Refused { reason } => {
                std::io::Error::new(std::io::ErrorKind::InvalidData, reason)
            }
            FileError::Io { source } => source,
        }
    }
}

/// How a checked open treats a symbolic link at the path it is given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Links {
    /// Never followed: a small file profile-run keeps itself.
    Refuse,
    /// Followed only to a file inside this directory: a file found in a run directory, which may come
    /// from anyone and must not read the user's files or devices elsewhere.
    Within(PathBuf),
    /// Followed: a path the user typed.
    Follow,
}

/// The most bytes a file may hold, or, compressed, inflate to; and how to raise it, for the refusal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limit {
    pub bytes: u64,
    /// What the user can do about a genuine file past the limit (`raise pipeline.ncu.trace.max_mib`).
    pub fix: &'static str,
}

/// How one input is opened: which links are followed and how much it may hold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checks {
    pub links: Links,
    pub limit: Limit,
}

impl Checks {
    /// A path named directly, links followed, read in full: for tools and tests that read a file
    /// they made themselves.
    pub fn unbounded() -> Checks {
        Checks {
            links: Links::Follow,
            limit: Limit {
                bytes: u64::MAX,
                fix: "",
            },
        }
    }
}

/// Opens a file for reading after checking it: a regular file (not a FIFO, a device, a socket or a
/// folder, by what a link points at too), reached through a link only as `links` allows, and no
/// longer than the limit. Never blocks: a FIFO swapped in after the checks is opened non-blocking
/// and refused by what was opened.
pub fn open_checked(path: &Path, checks: &Checks) -> Result<std::fs::File, FileError> {
    let refused = |reason: String| FileError::Refused { reason };
    let io = |source| FileError::Io { source };
    let own = std::fs::symlink_metadata(path).map_err(io)?;
    let linked = Kind::of(&own) == Kind::SymbolicLink;
    if linked {
        match &checks.links {
            Links::Refuse => return Err(refused("is a symbolic link".into())),
            Links::Within(dir) => outside(path, dir)?,
            Links::Follow => {}
        }
    }
    let target = std::fs::metadata(path).map_err(io)?;
    refuse_odd(&target, linked, &checks.limit)?;
    let mut flags = nix::fcntl::OFlag::O_NONBLOCK;
    if checks.links == Links::Refuse {
        flags |= nix::fcntl::OFlag::O_NOFOLLOW;
    }
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(flags.bits())
        .open(path)
        .map_err(io)?;
    // Checked again on what was opened: the path may have been swapped since.
    refuse_odd(&file.metadata().map_err(io)?, linked, &checks.limit)?;
    if let Links::Within(dir) = &checks.links {
        opened_inside(&file, dir)?;
    }
    Ok(file)
}

/// Refuses what is not a regular file, or is longer than the limit.
fn refuse_odd(meta: &std::fs::Metadata, linked: bool, limit: &Limit) -> Result<(), FileError> {
    let refused = |reason: String| Err(FileError::Refused { reason });
    if let Some(kind) = odd_kind(meta) {
        return match linked {
            true => refused(format!("is a symbolic link to {kind}")),
            false => refused(format!("is {kind}")),
        };
    }
    if meta.len() > limit.bytes {
        return refused(format!(
            "holds {} bytes, past the limit of {} bytes; {}",
            meta.len(),
            limit.bytes,
            limit.fix
        ));
    }
    Ok(())
}

/// Refuses a link whose target lies outside `dir`.
fn outside(path: &Path, dir: &Path) -> Result<(), FileError> {
    let io = |source| FileError::Io { source };
    let target = std::fs::canonicalize(path).map_err(io)?;
    let root = std::fs::canonicalize(dir).map_err(io)?;
    if target.starts_with(&root) {
        return Ok(());
    }
    Err(FileError::Refused {
        reason: format!(
            "is a symbolic link to {}, outside {}",
            target.display(),
            dir.display()
        ),
    })
}

/// Refuses an opened file that lies outside `dir` (a link swapped after [`outside`] checked it), by
/// the path the kernel gives the descriptor; where `/proc` is not mounted the earlier check stands.
fn opened_inside(file: &std::fs::File, dir: &Path) -> Result<(), FileError> {
    use std::os::fd::AsRawFd;
    let Ok(opened) = std::fs::read_link(format!("/proc/self/fd/{}", file.as_raw_fd())) else {
        return Ok(());
    };
    let Ok(root) = std::fs::canonicalize(dir) else {
        return Ok(());
    };
    match opened.starts_with(&root) {
        true => Ok(()),
        false => Err(FileError::Refused {
            reason: format!("leads to {}, outside {}", opened.display(), dir.display()),
        }),
    }
}

/// A checked file ([`open_checked`]) as a stream of its text: inflated when its name ends in `.gz`,
/// and an error once more than the limit's bytes come out, so a small gzip file that inflates to
/// gigabytes of zeros is refused after the limit, never held.
pub fn open_text(path: &Path, checks: &Checks) -> Result<Box<dyn Read + Send>, FileError> {
    let file = open_checked(path, checks)?;
    let gzip = path.extension().is_some_and(|e| e == "gz");
    let text: Box<dyn Read + Send> = match gzip {
        true => Box::new(flate2::read::MultiGzDecoder::new(std::io::BufReader::new(
            file,
        ))),
        false => Box::new(file),
    };
    Ok(Box::new(Bounded {
        inner: text,
        left: checks.limit.bytes,
        limit: checks.limit.clone(),
        gzip,
    }))
}

/// The error of a checked text that went on past its limit (its text says so, and the fix).
#[derive(Debug)]
struct PastLimit(String);

impl std::fmt::Display for PastLimit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for PastLimit {}

/// Whether a read of [`open_text`] failed because the text went on past its limit (as opposed to a
/// damaged stream or an I/O error).
pub fn is_past_limit(e: &std::io::Error) -> bool {
    e.get_ref().is_some_and(|inner| inner.is::<PastLimit>())
}

/// A reader that fails once more than `limit.bytes` have come out of `inner`.
struct Bounded<R> {
    inner: R,
    left: u64,
    limit: Limit,
    gzip: bool,
}

impl<R: Read> Read for Bounded<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        if self.left == 0 {
            // At the limit: one byte more says whether the file goes on past it.
            let mut probe = [0u8; 1];
            if self.inner.read(&mut probe)? == 0 {
                return Ok(0);
            }
            let what = match self.gzip {
                true => "inflates to",
                false => "holds",
            };
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                PastLimit(format!(
                    "{what} more than {} bytes, past the limit; {}",
                    self.limit.bytes, self.limit.fix
                )),
            ));
        }
        let room = buf
            .len()
            .min(usize::try_from(self.left).unwrap_or(usize::MAX));
        let read = self.inner.read(&mut buf[..room])?;
        self.left -= read as u64;
        Ok(read)
    }
}

/// The text of a small file profile-run keeps in a report or run directory, or `None` when there is
/// none (nor a directory to hold it). Refused, without blocking or reading on, when it is a link, a FIFO, a device, a folder, or
/// longer than `limit` bytes; the refusal says it is not `what`, and `fix`.
pub fn read_small(
    path: &Path,
    limit: u64,
    what: &str,
    fix: &str,
) -> Result<Option<String>, FileError> {
    // The size is checked here, to word it for a file profile-run writes itself.
    let checks = Checks {
        links: Links::Refuse,
        limit: Limit {
            bytes: u64::MAX,
            fix: "",
        },
    };
    let refused = |reason: String| FileError::Refused {
        reason: format!("{reason}, not {what}; {fix}"),
    };
    let file = match open_checked(path, &checks) {
        Ok(file) => file,
        Err(FileError::Io { source })
            if matches!(
                source.kind(),
                std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
            ) =>
        {
            return Ok(None)
        }
        Err(FileError::Refused { reason }) => return Err(refused(reason)),
        Err(e) => return Err(e),
    };
    let len = file
        .metadata()
        .map_err(|source| FileError::Io { source })?
        .len();
    if len > limit {
        return Err(refused(format!(
            "holds {len} bytes (at most {limit} expected)"
        )));
    }
    let mut bytes = Vec::new();
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(|source| FileError::Io { source })?;
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

    fn checks(links: Links, bytes: u64) -> Checks {
        Checks {
            links,
            limit: Limit {
                bytes,
                fix: "raise it",
            },
        }
    }

    fn refusal(result: Result<std::fs::File, FileError>) -> String {
        match result {
            Err(FileError::Refused { reason }) => reason,
            Err(FileError::Io { source }) => panic!("an I/O error, not a refusal: {source}"),
            Ok(_) => panic!("opened"),
        }
    }

    #[test]
    fn a_checked_open_follows_links_only_as_told_and_never_blocks() {
        let (dir, _socket) = objects();
        let at = |name: &str| dir.path().join(name);
        let inside = Links::Within(dir.path().to_path_buf());
        std::os::unix::fs::symlink(at("file"), at("to-file")).unwrap();
        std::os::unix::fs::symlink("/dev/zero", at("to-zero")).unwrap();
        assert!(open_checked(&at("to-file"), &checks(inside.clone(), 10)).is_ok());
        assert!(open_checked(&at("to-file"), &checks(Links::Follow, 10)).is_ok());
        assert_eq!(
            refusal(open_checked(&at("to-file"), &checks(Links::Refuse, 10))),
            "is a symbolic link"
        );
        let out = refusal(open_checked(&at("to-zero"), &checks(inside, 10)));
        assert!(
            out.starts_with("is a symbolic link to /dev/zero, outside"),
            "{out}"
        );
        assert_eq!(
            refusal(open_checked(&at("to-zero"), &checks(Links::Follow, 10))),
            "is a symbolic link to a device"
        );
        assert_eq!(
            refusal(open_checked(&at("fifo"), &checks(Links::Follow, 10))),
            "is a FIFO"
        );
        assert_eq!(
            refusal(open_checked(&at("file"), &checks(Links::Follow, 0))),
            "holds 1 bytes, past the limit of 0 bytes; raise it"
        );
    }

    #[test]
    fn a_checked_text_fails_once_past_its_limit() {
        let dir = tempfile::tempdir().unwrap();
        let plain = dir.path().join("t.trace");
        std::fs::write(&plain, "0123456789").unwrap();
        let read = |path: &Path, bytes: u64| {
            let mut text = String::new();
            open_text(path, &checks(Links::Follow, bytes))
                .map_err(std::io::Error::from)?
                .read_to_string(&mut text)
                .map(|_| text)
        };
        assert_eq!(read(&plain, 10).unwrap(), "0123456789");
        let gz = dir.path().join("t.trace.gz");
        let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        std::io::Write::write_all(&mut encoder, &[b'x'; 100]).unwrap();
        std::fs::write(&gz, encoder.finish().unwrap()).unwrap();
        assert_eq!(read(&gz, 100).unwrap().len(), 100);
        let err = read(&gz, 99).unwrap_err().to_string();
        assert_eq!(
            err,
            "inflates to more than 99 bytes, past the limit; raise it"
        );
    }
}
