//! Atomic file writes: the new contents go to a temporary file in the target's directory, are
//! flushed to disk, then renamed over the target. A reader (or a crash) sees the old file or the new
//! one, never a truncated one.
//!
//! The directory is opened once (never through a link) and the temporary file is made, renamed and
//! removed relative to that open directory, so swapping the directory for a link while a report is
//! rendered (`o/charts` → elsewhere) cannot redirect a write. Temporary files carry one prefix
//! ([`TEMP_PREFIX`]); those a killed render left are removed by the next render of the directory
//! ([`sweep_stale`]).

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::Write;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use nix::errno::Errno;
use nix::fcntl::OFlag;
use nix::sys::stat::Mode;

use super::RenderError;

/// How every temporary file profile-run writes begins: `.profile-run-tmp.<name>.<random>`.
pub const TEMP_PREFIX: &str = ".profile-run-tmp.";

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
    /// The target's directory, as opened when the file was staged (shared by the files staged in
    /// it together).
    dir: Arc<OwnedFd>,
    tmp: OsString,
    name: OsString,
    target: PathBuf,
    committed: bool,
    /// Whether its contents are on disk already (else [`commit_all`] syncs them first).
    synced: bool,
}

/// Stages `path` in its directory, which is opened as named (the caller chose it, links and all).
pub fn stage(
    path: &Path,
    fill: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> Result<Staged, RenderError> {
    let name = path.file_name().unwrap_or(path.as_os_str());
    stage_in(&parent_of(path), Path::new(name), fill)
}

/// Stages `dir/rel`: `dir` (the report directory) opened as named, then each folder of `rel` opened
/// relative to the one before and never through a link, so a folder swapped for a link after
/// `inside::target` checked it cannot redirect the file; the temporary file is made in the last.
pub fn stage_in(
    dir: &Path,
    rel: &Path,
    fill: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> Result<Staged, RenderError> {
    Folders::new(dir).stage(rel, fill)
}

/// The folders of one report directory, each opened once however many files are staged in it: a
/// report of ten thousand ranks stages ten thousand scope pages in `scopes/` with one descriptor
/// held for the folder, not one per page.
pub struct Folders<'a> {
    dir: &'a Path,
    open: std::collections::HashMap<Vec<OsString>, Arc<OwnedFd>>,
    /// Whether each file is synced as it is staged; otherwise [`commit_all`] syncs them together.
    sync_each: bool,
}

impl<'a> Folders<'a> {
    /// Files synced one by one as they are staged.
    pub fn new(dir: &'a Path) -> Folders<'a> {
        Folders {
            dir,
            open: Default::default(),
            sync_each: true,
        }
    }

    /// Files left unsynced when staged, to be synced together by [`commit_all`]: one sync of the
    /// file system instead of one per file (ten thousand scope pages cost seconds each way).
    pub fn batch(dir: &'a Path) -> Folders<'a> {
        Folders {
            sync_each: false,
            ..Folders::new(dir)
        }
    }

    /// Stages `dir/rel` as [`stage_in`] does, in its folder as first opened here.
    pub fn stage(
        &mut self,
        rel: &Path,
        fill: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
    ) -> Result<Staged, RenderError> {
        let target = self.dir.join(rel);
        let error = |source| RenderError::Write {
            path: target.clone(),
            source,
        };
        let names: Vec<&OsStr> = rel
            .components()
            .map(|c| match c {
                std::path::Component::Normal(name) => Some(name),
                _ => None,
            })
            .collect::<Option<_>>()
            .ok_or_else(|| error(std::io::ErrorKind::InvalidInput.into()))?;
        let (name, folders) = names
            .split_last()
            .ok_or_else(|| error(std::io::ErrorKind::InvalidInput.into()))?;
        let key: Vec<OsString> = folders.iter().map(|f| f.to_os_string()).collect();
        let opened = match self.open.get(&key) {
            Some(opened) => opened.clone(),
            None => {
                let opened = Arc::new(self.open_folders(folders, &target)?);
                self.open.insert(key, opened.clone());
                opened
            }
        };
        let (tmp, file) = create_temp(&opened, name).map_err(error)?;
        let staged = Staged {
            dir: opened,
            tmp,
            name: name.to_os_string(),
            target: target.clone(),
            committed: false,
            synced: self.sync_each,
        };
        let mut out = std::io::BufWriter::with_capacity(1 << 20, file);
        let sync_each = self.sync_each;
        fill(&mut out)
            .and_then(|()| out.into_inner().map_err(|e| e.into_error()))
            .and_then(|file| if sync_each { file.sync_all() } else { Ok(()) })
            .map_err(error)?;
        Ok(staged)
    }

    fn open_folders(&self, folders: &[&OsStr], target: &Path) -> Result<OwnedFd, RenderError> {
        let mut opened = nix::fcntl::open(self.dir, DIR_FLAGS, Mode::empty()).map_err(|errno| {
            RenderError::Write {
                path: target.to_path_buf(),
                source: errno.into(),
            }
        })?;
        let mut at = self.dir.to_path_buf();
        for folder in folders {
            at.push(folder);
            opened = open_folder(&opened, folder, &at, target)?;
        }
        Ok(opened)
    }
}

/// How a directory written into is opened.
const DIR_FLAGS: OFlag = OFlag::O_DIRECTORY
    .union(OFlag::O_CLOEXEC)
    .union(OFlag::O_RDONLY);

/// Opens folder `name` of the open directory `parent`, never through a link: a link there is refused
/// as every output path through a link is (`inside.rs`). `at` names the folder, `writing` the file.
fn open_folder(
    parent: &OwnedFd,
    name: &OsStr,
    at: &Path,
    writing: &Path,
) -> Result<OwnedFd, RenderError> {
    nix::fcntl::openat(parent, name, DIR_FLAGS | OFlag::O_NOFOLLOW, Mode::empty()).map_err(
        |errno| match errno {
            Errno::ELOOP | Errno::ENOTDIR => RenderError::Refused {
                path: at.to_path_buf(),
                reason: "is a symbolic link: profile-run writes only inside the report directory and does not follow it; remove or rename it, or choose another --out".into(),
            },
            _ => RenderError::Write {
                path: writing.to_path_buf(),
                source: errno.into(),
            },
        },
    )
}

impl Staged {
    /// Where the file goes.
    pub fn target(&self) -> &Path {
        &self.target
    }

    /// Renames the file into place (replacing what was there) and makes the rename durable.
    pub fn commit(self) -> Result<(), RenderError> {
        commit_all(vec![self], true)
    }

    /// Renames the file into place, replacing what was there.
    fn rename(&mut self) -> Result<(), RenderError> {
        nix::fcntl::renameat(
            &self.dir,
            self.tmp.as_os_str(),
            &self.dir,
            self.name.as_os_str(),
        )
        .map_err(|errno| RenderError::Write {
            path: self.target.clone(),
            source: errno.into(),
        })?;
        self.committed = true;
        Ok(())
    }

    /// Renames the file into place unless something is at the target already.
    fn rename_new(&mut self) -> Result<(), RenderError> {
        rename_no_replace(&self.dir, &self.tmp, &self.name).map_err(|source| {
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
        Ok(())
    }
}

/// Puts staged files in place (replacing what is there when `replace`, else refusing to): the
/// contents of those staged unsynced made durable first by one sync of the file system of each of
/// their folders, then every rename, then one sync per folder, so that a thousand pages in one
/// folder cost one sync each way, not a thousand.
pub fn commit_all(mut files: Vec<Staged>, replace: bool) -> Result<(), RenderError> {
    for file in each_folder(files.iter().filter(|f| !f.synced)) {
        sync_contents(&file.dir).map_err(|source| RenderError::Write {
            path: file.target.clone(),
            source,
        })?;
    }
    for file in &mut files {
        match replace {
            true => file.rename()?,
            false => file.rename_new()?,
        }
    }
    for file in each_folder(files.iter()) {
        sync_dir(&file.dir);
    }
    Ok(())
}

/// The first of `files` staged in each folder.
fn each_folder<'s>(files: impl Iterator<Item = &'s Staged>) -> Vec<&'s Staged> {
    let mut first: Vec<&Staged> = Vec::new();
    for file in files {
        if !first.iter().any(|f| Arc::ptr_eq(&f.dir, &file.dir)) {
            first.push(file);
        }
    }
    first
}

/// Syncs the file system that holds folder `dir`, with every file staged in it.
#[cfg(target_os = "linux")]
fn sync_contents(dir: &OwnedFd) -> std::io::Result<()> {
    Ok(nix::unistd::syncfs(dir)?)
}

#[cfg(not(target_os = "linux"))]
fn sync_contents(_dir: &OwnedFd) -> std::io::Result<()> {
    nix::unistd::sync();
    Ok(())
}

/// The refusal to replace a file without `--force`.
pub fn not_replaced(path: &Path) -> RenderError {
    RenderError::Refused {
        path: path.to_path_buf(),
        reason: "already exists and is not replaced; pass --force to replace it, or choose another --out".into(),
    }
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn rename_no_replace(dir: &OwnedFd, from: &OsStr, to: &OsStr) -> std::io::Result<()> {
    use nix::fcntl::{renameat2, RenameFlags};
    match renameat2(dir, from, dir, to, RenameFlags::RENAME_NOREPLACE) {
        Ok(()) => Ok(()),
        // A file system without the flag: check, then rename.
        Err(Errno::EINVAL | Errno::ENOSYS) => checked_rename(dir, from, to),
        Err(e) => Err(e.into()),
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn rename_no_replace(dir: &OwnedFd, from: &OsStr, to: &OsStr) -> std::io::Result<()> {
    checked_rename(dir, from, to)
}

fn checked_rename(dir: &OwnedFd, from: &OsStr, to: &OsStr) -> std::io::Result<()> {
    use nix::fcntl::AtFlags;
    if nix::sys::stat::fstatat(dir, to, AtFlags::AT_SYMLINK_NOFOLLOW).is_ok() {
        return Err(std::io::ErrorKind::AlreadyExists.into());
    }
    Ok(nix::fcntl::renameat(dir, from, dir, to)?)
}

impl Drop for Staged {
    fn drop(&mut self) {
        if !self.committed {
            let _ = nix::unistd::unlinkat(
                &self.dir,
                self.tmp.as_os_str(),
                nix::unistd::UnlinkatFlags::NoRemoveDir,
            );
        }
    }
}

fn parent_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// `.profile-run-tmp.<name>.<random>` in the opened directory; created exclusively (never through a
/// link, never shared by two writers).
fn create_temp(dir: &OwnedFd, name: &OsStr) -> std::io::Result<(OsString, File)> {
    let flags =
        OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_EXCL | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
    loop {
        let mut tmp = OsString::from(TEMP_PREFIX);
        tmp.push(name);
        tmp.push(format!(".{:016x}", rand::random::<u64>()));
        match nix::fcntl::openat(dir, tmp.as_os_str(), flags, Mode::from_bits_truncate(0o644)) {
            Ok(fd) => return Ok((tmp, File::from(fd))),
            Err(Errno::EEXIST) => continue,
            Err(e) => return Err(e.into()),
        }
    }
}

/// Removes the temporary files a killed render left in `dir` and in its folders (charts, scope
/// pages), never following a link. Called by a render that holds the directory's claim, before it
/// stages anything, so no live writer's file is among them.
pub fn sweep_stale(dir: &Path) {
    let Ok(opened) = nix::fcntl::open(dir, DIR_FLAGS, Mode::empty()) else {
        return;
    };
    sweep_in(&opened, dir);
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let real_dir = entry.file_type().is_ok_and(|t| t.is_dir());
        if real_dir {
            let path = entry.path();
            if let Ok(sub) = open_folder(&opened, &entry.file_name(), &path, &path) {
                sweep_in(&sub, &path);
            }
        }
    }
}

fn sweep_in(opened: &OwnedFd, dir: &Path) {
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let name = entry.file_name();
        let ours = name.as_encoded_bytes().starts_with(TEMP_PREFIX.as_bytes());
        if ours && entry.file_type().is_ok_and(|t| t.is_file()) {
            let _ = nix::unistd::unlinkat(
                opened,
                name.as_os_str(),
                nix::unistd::UnlinkatFlags::NoRemoveDir,
            );
        }
    }
}

/// Makes the rename itself durable. Best effort: some filesystems refuse to sync a directory, and
/// the file is already complete either way.
fn sync_dir(dir: &OwnedFd) {
    let _ = nix::unistd::fsync(dir);
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
    fn committing_without_replacing_never_replaces_a_file_or_a_link() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("report.html");
        std::fs::write(&path, "mine").unwrap();
        let staged = stage(&path, |out| out.write_all(b"new")).unwrap();
        let err = commit_all(vec![staged], false).unwrap_err().to_string();
        assert!(err.contains("already exists and is not replaced"), "{err}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "mine");
        std::fs::remove_file(&path).unwrap();
        std::os::unix::fs::symlink("/nonexistent", &path).unwrap();
        let staged = stage(&path, |out| out.write_all(b"new")).unwrap();
        assert!(
            commit_all(vec![staged], false).is_err(),
            "a dangling link is in the way too"
        );
        std::fs::remove_file(&path).unwrap();
        commit_all(
            vec![stage(&path, |out| out.write_all(b"new")).unwrap()],
            false,
        )
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

    #[test]
    fn a_directory_swapped_for_a_link_after_staging_still_gets_the_file() {
        let tmp = tempfile::tempdir().unwrap();
        let charts = tmp.path().join("charts");
        let elsewhere = tmp.path().join("elsewhere");
        std::fs::create_dir(&charts).unwrap();
        std::fs::create_dir(&elsewhere).unwrap();
        let staged = stage_in(tmp.path(), Path::new("charts/a.svg"), |out| {
            out.write_all(b"<svg/>")
        })
        .unwrap();
        std::fs::rename(&charts, tmp.path().join("moved")).unwrap();
        std::os::unix::fs::symlink(&elsewhere, &charts).unwrap();
        staged.commit().unwrap();
        assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);
        let moved: Vec<_> = std::fs::read_dir(tmp.path().join("moved"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(moved, ["a.svg"]);
        let err = stage_in(tmp.path(), Path::new("charts/b.svg"), |out| {
            out.write_all(b"x")
        })
        .unwrap_err()
        .to_string();
        assert!(err.contains("is a symbolic link"), "{err}");
        assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);
    }

    #[test]
    fn files_staged_unsynced_in_one_folder_are_all_put_in_place_together() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::create_dir(tmp.path().join("scopes")).unwrap();
        let mut folders = Folders::batch(tmp.path());
        let staged: Vec<Staged> = (0..3)
            .map(|i| {
                let rel = format!("scopes/rank-{i}.md");
                folders
                    .stage(Path::new(&rel), |out| write!(out, "rank {i}"))
                    .unwrap()
            })
            .collect();
        assert!(staged.iter().all(|f| Arc::ptr_eq(&f.dir, &staged[0].dir)));
        commit_all(staged, false).unwrap();
        let mut names: Vec<_> = std::fs::read_dir(tmp.path().join("scopes"))
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        assert_eq!(names, ["rank-0.md", "rank-1.md", "rank-2.md"]);
        let page = std::fs::read_to_string(tmp.path().join("scopes/rank-2.md")).unwrap();
        assert_eq!(page, "rank 2");
    }

    #[test]
    fn a_killed_renders_temporary_files_are_swept_and_nothing_else() {
        let tmp = tempfile::tempdir().unwrap();
        let charts = tmp.path().join("charts");
        std::fs::create_dir(&charts).unwrap();
        let stale = [
            tmp.path().join(".profile-run-tmp.report.md.00ff"),
            charts.join(".profile-run-tmp.scope-1-time.svg.00ff"),
        ];
        for path in &stale {
            std::fs::write(path, "half written").unwrap();
        }
        let mine = tmp.path().join(".report.md.notes.tmp");
        std::fs::write(&mine, "a user's file").unwrap();
        sweep_stale(tmp.path());
        for path in &stale {
            assert!(!path.exists(), "{}", path.display());
        }
        assert!(mine.exists());
    }

    #[test]
    fn a_report_directory_named_through_a_link_is_written_into() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::create_dir(tmp.path().join("real")).unwrap();
        std::os::unix::fs::symlink("real", tmp.path().join("out")).unwrap();
        write_atomic(&tmp.path().join("out/report.md"), b"x").unwrap();
        assert!(tmp.path().join("real/report.md").is_file());
    }
}
