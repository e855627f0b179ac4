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
    let error = |source| RenderError::Write {
        path: path.to_path_buf(),
        source,
    };
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let (tmp, file) = create_temp(&dir, path).map_err(error)?;
    let mut out = std::io::BufWriter::with_capacity(1 << 20, file);
    let written = fill(&mut out)
        .and_then(|()| out.into_inner().map_err(|e| e.into_error()))
        .and_then(|file| {
            file.sync_all()?;
            drop(file);
            std::fs::rename(&tmp, path)
        });
    if let Err(source) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(error(source));
    }
    sync_dir(&dir);
    Ok(())
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
    fn a_missing_directory_is_a_write_error_naming_the_path() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("missing/report.json");
        let err = write_atomic(&path, b"{}").unwrap_err();
        assert!(err.to_string().contains("missing/report.json"), "{err}");
    }
}
