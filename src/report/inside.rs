//! Paths inside a report directory: every file a report writes, and every stale file it removes, is
//! reached from the directory through real sub-directories only. A symbolic link inside the
//! directory (a `charts` link, a link in a manifest entry's path) is never followed out of it, and a
//! small list file there (the manifest) is read only as a regular file of bounded size, so a FIFO,
//! a device or a huge sparse file can neither hang a report nor exhaust its memory.

use std::fs::OpenOptions;
use std::io::Read;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::{Component, Path, PathBuf};

use super::RenderError;

/// `dir/rel`, its folders created as needed. Refused when `rel` is not a plain relative path or a
/// folder on the way is a symbolic link or not a folder (the file would land outside `dir`).
pub fn target(dir: &Path, rel: &Path) -> Result<PathBuf, RenderError> {
    let (folders, _) = split_plain(rel).ok_or_else(|| RenderError::Refused {
        path: dir.join(rel),
        reason: "not a plain path inside the report directory".into(),
    })?;
    let mut at = dir.to_path_buf();
    for folder in folders {
        at.push(folder);
        match std::fs::symlink_metadata(&at) {
            Ok(meta) if meta.is_dir() => {}
            Ok(meta) => return Err(not_a_folder(&at, &meta)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                std::fs::create_dir(&at).map_err(|source| RenderError::Write {
                    path: at.clone(),
                    source,
                })?;
            }
            Err(source) => return Err(RenderError::Write { path: at, source }),
        }
    }
    Ok(dir.join(rel))
}

/// [`target`] for a file that a program other than profile-run writes (it would follow a link):
/// refused also when `dir/rel` itself is a symbolic link.
pub fn unlinked_target(dir: &Path, rel: &Path) -> Result<PathBuf, RenderError> {
    let path = target(dir, rel)?;
    match std::fs::symlink_metadata(&path) {
        Ok(meta) if meta.file_type().is_symlink() => Err(RenderError::Refused {
            path,
            reason: "is a symbolic link: profile-run writes only inside the report directory and does not follow it; remove it, or choose another --out".into(),
        }),
        _ => Ok(path),
    }
}

fn not_a_folder(path: &Path, meta: &std::fs::Metadata) -> RenderError {
    let what = if meta.file_type().is_symlink() {
        "is a symbolic link: profile-run writes only inside the report directory and does not follow it"
    } else {
        "is in the way of a folder profile-run writes"
    };
    RenderError::Refused {
        path: path.to_path_buf(),
        reason: format!("{what}; remove or rename it, or choose another --out"),
    }
}

/// Removes `dir/rel` if it is a file (or a link, itself) reached through real folders inside `dir`;
/// anything else is left alone. Returns whether something was removed.
pub fn remove_file(dir: &Path, rel: &Path) -> bool {
    let Some((folders, _)) = split_plain(rel) else {
        return false;
    };
    let mut at = dir.to_path_buf();
    for folder in folders {
        at.push(folder);
        if !std::fs::symlink_metadata(&at).is_ok_and(|m| m.is_dir()) {
            return false;
        }
    }
    let path = dir.join(rel);
    let removable = std::fs::symlink_metadata(&path).is_ok_and(|m| !m.is_dir());
    removable && std::fs::remove_file(&path).is_ok()
}

/// Whether anything (a file, a folder, a link, even a dangling one) is at `path`.
pub fn occupied(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok()
}

/// The folders and the file name of a relative path made of plain names only; `None` for an empty,
/// absolute or `..` path.
fn split_plain(rel: &Path) -> Option<(Vec<&std::ffi::OsStr>, &std::ffi::OsStr)> {
    let mut names = Vec::new();
    for component in rel.components() {
        match component {
            Component::Normal(name) => names.push(name),
            _ => return None,
        }
    }
    let last = names.pop()?;
    Some((names, last))
}

/// The text of a small file profile-run keeps in a report or run directory, or `None` when there is
/// none. Refused, without blocking or reading on, when it is a link, a FIFO, a device, a folder, or
/// longer than `limit` bytes; the refusal says it is not `what`, and `fix`.
pub fn read_small(
    path: &Path,
    limit: u64,
    what: &str,
    fix: &str,
) -> Result<Option<String>, RenderError> {
    let refused = |reason: String| RenderError::Refused {
        path: path.to_path_buf(),
        reason: format!("{reason}, not {what}; {fix}"),
    };
    let meta = match std::fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => {
            return Err(RenderError::Write {
                path: path.to_path_buf(),
                source,
            })
        }
    };
    if let Some(kind) = odd_kind(&meta) {
        return Err(refused(format!("is {kind}")));
    }
    let flags = nix::fcntl::OFlag::O_NOFOLLOW | nix::fcntl::OFlag::O_NONBLOCK;
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(flags.bits())
        .open(path)
        .map_err(|source| RenderError::Write {
            path: path.to_path_buf(),
            source,
        })?;
    // Checked again on what was opened: the path may have been swapped since.
    let opened = file.metadata().map_err(|source| RenderError::Write {
        path: path.to_path_buf(),
        source,
    })?;
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
        .map_err(|source| RenderError::Write {
            path: path.to_path_buf(),
            source,
        })?;
    if bytes.len() as u64 > limit {
        return Err(refused(format!("holds more than {limit} bytes")));
    }
    Ok(Some(String::from_utf8_lossy(&bytes).into_owned()))
}

/// What a path is when it is not a regular file: `a FIFO`, `a device`, ….
fn odd_kind(meta: &std::fs::Metadata) -> Option<&'static str> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_symlinked_folder_is_refused_and_a_plain_one_made() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path().join("charts")).unwrap();
        let err = target(dir.path(), Path::new("charts/a.svg")).unwrap_err();
        assert!(err.to_string().contains("symbolic link"), "{err}");
        let made = target(dir.path(), Path::new("scopes/a.md")).unwrap();
        assert_eq!(made, dir.path().join("scopes/a.md"));
        assert!(dir.path().join("scopes").is_dir());
        assert!(target(dir.path(), Path::new("../x")).is_err());
        std::os::unix::fs::symlink("/tmp", dir.path().join("scopes/l")).unwrap();
        assert!(target(dir.path(), Path::new("scopes/l")).is_ok());
        let err = unlinked_target(dir.path(), Path::new("scopes/l")).unwrap_err();
        assert!(err.to_string().contains("symbolic link"), "{err}");
        assert!(target(dir.path(), Path::new("/etc/x")).is_err());
    }

    #[test]
    fn a_file_behind_a_symlinked_folder_is_never_removed() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("victim"), "x").unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path().join("lnk")).unwrap();
        assert!(!remove_file(dir.path(), Path::new("lnk/victim")));
        assert!(outside.path().join("victim").exists());
        // A link itself, inside the directory, goes (not what it points at).
        std::os::unix::fs::symlink(outside.path().join("victim"), dir.path().join("l2")).unwrap();
        assert!(remove_file(dir.path(), Path::new("l2")));
        assert!(outside.path().join("victim").exists());
    }

    #[test]
    fn a_small_file_is_read_only_when_regular_and_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("list");
        assert_eq!(read_small(&path, 10, "a list", "remove it").unwrap(), None);
        std::fs::write(&path, "a\nb\n").unwrap();
        assert_eq!(
            read_small(&path, 10, "a list", "remove it")
                .unwrap()
                .unwrap(),
            "a\nb\n"
        );
        std::fs::write(&path, "0123456789ab").unwrap();
        let err = read_small(&path, 10, "a list", "remove it")
            .unwrap_err()
            .to_string();
        assert!(err.contains("12 bytes"), "{err}");
        std::fs::remove_file(&path).unwrap();
        nix::unistd::mkfifo(&path, nix::sys::stat::Mode::S_IRWXU).unwrap();
        let err = read_small(&path, 10, "a list", "remove it")
            .unwrap_err()
            .to_string();
        assert!(err.contains("is a FIFO"), "{err}");
    }
}
