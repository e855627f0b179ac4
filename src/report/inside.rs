//! Paths inside a report directory: every file a report writes, and every stale file it removes, is
//! reached from the directory through real sub-directories only. A symbolic link inside the
//! directory (a `charts` link, a link in a manifest entry's path) is never followed out of it, and a
//! small list file there (the manifest) is read only as a regular file of bounded size, so a FIFO,
//! a device or a huge sparse file can neither hang a report nor exhaust its memory.

use std::path::{Component, Path, PathBuf};

use super::RenderError;
use crate::file_kind;
use crate::file_kind::FileError;

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

/// [`crate::file_kind::read_small`] with its refusal as a [`RenderError`] naming `path`.
pub fn read_small(
    path: &Path,
    limit: u64,
    what: &str,
    fix: &str,
) -> Result<Option<String>, RenderError> {
    file_kind::read_small(path, limit, what, fix).map_err(|e| match e {
        FileError::Refused { reason } => RenderError::Refused {
            path: path.to_path_buf(),
            reason,
        },
        FileError::Io { source } => RenderError::Write {
            path: path.to_path_buf(),
            source,
        },
    })
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
