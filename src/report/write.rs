//! Atomic file writes: the new contents go to a temporary file in the target's directory, are
//! flushed to disk, then renamed over the target. A reader (or a crash) sees the old file or the new
//! one, never a truncated one.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use super::RenderError;

pub fn write_atomic(path: &Path, contents: &[u8]) -> Result<(), RenderError> {
    write_atomic_with(path, |out| out.write_all(contents))
}

/// Like [`write_atomic`], with the contents written by `fill` straight into the temporary file, so a
/// large report never has to exist as one string in memory.
pub fn write_atomic_with(
    path: &Path,
    fill: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> Result<(), RenderError> {
    stage(path, fill)?.commit()
}

/// A file written in full to a temporary beside its target and synced, not yet in place: several
/// files can be staged and put in place only once all of them rendered. Dropped uncommitted, the
/// temporary is removed.
#[derive(Debug)]
pub struct Staged {
    tmp: PathBuf,
    target: PathBuf,
    committed: bool,
}

pub fn stage(
    path: &Path,
    fill: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> Result<Staged, RenderError> {
    let error = |source| RenderError::Write {
        path: path.to_path_buf(),
        source,
    };
    let (tmp, file) = create_temp(&parent_of(path), path).map_err(error)?;
    let staged = Staged {
        tmp,
        target: path.to_path_buf(),
        committed: false,
    };
    let mut out = std::io::BufWriter::with_capacity(1 << 20, file);
    fill(&mut out)
        .and_then(|()| out.into_inner().map_err(|e| e.into_error()))
        .and_then(|file| file.sync_all())
        .map_err(error)?;
    Ok(staged)
}

impl Staged {
    /// Where the file goes.
    pub fn target(&self) -> &Path {
        &self.target
    }

    /// Renames the file into place (replacing what was there) and makes the rename durable.
    pub fn commit(mut self) -> Result<(), RenderError> {
        std::fs::rename(&self.tmp, &self.target).map_err(|source| RenderError::Write {
            path: self.target.clone(),
            source,
        })?;
        self.committed = true;
        sync_dir(&parent_of(&self.target));
        Ok(())
    }
}

impl Staged {
    /// Like [`Staged::commit`], but never replaces anything already at the target (a file, a link):
    /// refused instead, atomically where the system can (`renameat2` with `RENAME_NOREPLACE`).
    pub fn commit_new(mut self) -> Result<(), RenderError> {
        rename_no_replace(&self.tmp, &self.target).map_err(|source| {
            if source.kind() == std::io::ErrorKind::AlreadyExists {
                not_replaced(&self.target)
            } else {
                RenderError::Write {
                    path: self.target.clone(),
                    source,
                }
            }
        })?;
        self.committed = true;
        sync_dir(&parent_of(&self.target));
        Ok(())
    }
}

/// The refusal to replace a file without `--force`.
pub fn not_replaced(path: &Path) -> RenderError {
    RenderError::Refused {
        path: path.to_path_buf(),
        reason: "already exists and is not replaced; pass --force to replace it, or choose another --out".into(),
    }
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn rename_no_replace(from: &Path, to: &Path) -> std::io::Result<()> {
    use nix::errno::Errno;
    use nix::fcntl::{renameat2, RenameFlags, AT_FDCWD};
    match renameat2(AT_FDCWD, from, AT_FDCWD, to, RenameFlags::RENAME_NOREPLACE) {
        Ok(()) => Ok(()),
        // A file system without the flag: check, then rename.
        Err(Errno::EINVAL | Errno::ENOSYS) => checked_rename(from, to),
        Err(e) => Err(e.into()),
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn rename_no_replace(from: &Path, to: &Path) -> std::io::Result<()> {
    checked_rename(from, to)
}

fn checked_rename(from: &Path, to: &Path) -> std::io::Result<()> {
    if std::fs::symlink_metadata(to).is_ok() {
        return Err(std::io::ErrorKind::AlreadyExists.into());
    }
    std::fs::rename(from, to)
}

impl Drop for Staged {
    fn drop(&mut self) {
        if !self.committed {
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}

fn parent_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// `.<name>.<random>.tmp` beside the target; `create_new` so two writers never share one.
fn create_temp(dir: &Path, target: &Path) -> std::io::Result<(PathBuf, File)> {
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "report".to_string());
    loop {
        let tmp = dir.join(format!(".{name}.{:016x}.tmp", rand::random::<u64>()));
        match OpenOptions::new().write(true).create_new(true).open(&tmp) {
            Ok(file) => return Ok((tmp, file)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
}

/// Makes the rename itself durable. Best effort: some filesystems refuse to sync a directory, and
/// the file is already complete either way.
fn sync_dir(dir: &Path) {
    #[cfg(unix)]
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
    #[cfg(not(unix))]
    let _ = dir;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_the_file_and_leaves_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("report.md");
        std::fs::write(&path, "old").unwrap();
        write_atomic(&path, b"new contents").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new contents");
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 1);
    }

    #[test]
    fn commit_new_never_replaces_a_file_or_a_link() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("report.html");
        std::fs::write(&path, "mine").unwrap();
        let staged = stage(&path, |out| out.write_all(b"new")).unwrap();
        let err = staged.commit_new().unwrap_err().to_string();
        assert!(err.contains("already exists and is not replaced"), "{err}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "mine");
        std::fs::remove_file(&path).unwrap();
        std::os::unix::fs::symlink("/nonexistent", &path).unwrap();
        let staged = stage(&path, |out| out.write_all(b"new")).unwrap();
        assert!(
            staged.commit_new().is_err(),
            "a dangling link is in the way too"
        );
        std::fs::remove_file(&path).unwrap();
        stage(&path, |out| out.write_all(b"new"))
            .unwrap()
            .commit_new()
            .unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 1, "no temporary left");
    }

    #[test]
    fn a_missing_directory_is_a_write_error_naming_the_path() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("missing/report.json");
        let err = write_atomic(&path, b"{}").unwrap_err();
        assert!(err.to_string().contains("missing/report.json"), "{err}");
    }
}
