//! One writer per report directory: `.profile-run.lock`, held with an OS lock (`flock`) for as long
//! as the report is being written. The lock, not a process id, says whether the claim is alive: the
//! kernel releases it when its holder exits however it ends, and it is seen across PID namespaces,
//! containers and (where the file system forwards `flock`, as NFS does) hosts. The file records the
//! holder's host and process id only so that a refusal can say who holds it.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use crate::console::err_line;
use crate::error::{Error, Result};
use crate::file_kind::odd_kind;

/// The file that says a command is writing a report into its directory.
pub const CLAIM_FILE: &str = ".profile-run.lock";

/// The most of a claim file ever read: the holder's line is far shorter.
const HOLDER_BYTES: u64 = 512;

/// A directory claimed for writing a report; the claim file is removed and the lock released when
/// dropped.
#[derive(Debug)]
pub struct Claim {
    path: PathBuf,
    /// Holds the lock for as long as it is open.
    _file: File,
}

impl Claim {
    /// Claims `dir`. A claim file whose lock is free (its writer was killed, or it is empty, junk or
    /// another host's leftover) is taken over in the same atomic step as any fresh claim; one whose
    /// lock is held is refused, naming its holder. A claim file that is not a regular file (a
    /// symbolic link, a FIFO, a device) is refused without being read.
    pub fn take(dir: &Path) -> Result<Claim> {
        let path = dir.join(CLAIM_FILE);
        // A holder removes its file before it lets go of the lock, so the file locked here can be
        // one that is no longer at `path`: then try again on whatever is there now.
        for _ in 0..64 {
            refuse_odd_kind(&path)?;
            let mut file = open_claim(&path)?;
            match file.try_lock() {
                Ok(()) => {}
                Err(std::fs::TryLockError::WouldBlock) => {
                    return Err(held_by_another(dir, &path, &mut file))
                }
                Err(std::fs::TryLockError::Error(source)) => {
                    return Err(Error::Write { path, source })
                }
            }
            if !still_at(&path, &file) {
                continue;
            }
            let left = holder(&mut file);
            record_holder(&mut file).map_err(|source| Error::Write {
                path: path.clone(),
                source,
            })?;
            if !left.is_empty() {
                err_line(&format!(
                    "note: took over the claim on {} left by {left}, which no longer holds it",
                    dir.display()
                ));
            }
            return Ok(Claim { path, _file: file });
        }
        Err(Error::Usage(format!(
            "{} keeps being replaced while profile-run tries to claim {}; make sure only profile-run writes there, or choose another --out",
            path.display(),
            dir.display()
        )))
    }
}

impl Drop for Claim {
    fn drop(&mut self) {
        // Removed while still locked, so that no one can lock this file once it is gone from the
        // directory without noticing (see `still_at`).
        let _ = std::fs::remove_file(&self.path);
    }
}

/// A claim path that exists as anything but a regular file is refused before it is opened: opening
/// a FIFO could block, and reading a device could never end.
fn refuse_odd_kind(path: &Path) -> Result<()> {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return Ok(());
    };
    let Some(what) = odd_kind(&meta) else {
        return Ok(());
    };
    Err(Error::Usage(format!(
        "{} is {what}, not a claim profile-run made (a plain file); remove it, or choose another --out",
        path.display()
    )))
}

/// Opens (or creates) the claim file without following a symbolic link and without blocking, so a
/// file swapped in after [`refuse_odd_kind`] cannot send the claim elsewhere or hang it.
fn open_claim(path: &Path) -> Result<File> {
    let flags = nix::fcntl::OFlag::O_NOFOLLOW | nix::fcntl::OFlag::O_NONBLOCK;
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o644)
        .custom_flags(flags.bits())
        .open(path)
        .map_err(|source| match source.raw_os_error() {
            Some(code) if code == nix::errno::Errno::ELOOP as i32 => Error::Usage(format!(
                "{} is a symbolic link, not a claim profile-run made (a plain file); remove it, or choose another --out",
                path.display()
            )),
            _ => Error::Write {
                path: path.to_path_buf(),
                source,
            },
        })?;
    let regular = file.metadata().map(|m| m.is_file()).unwrap_or(false);
    if !regular {
        refuse_odd_kind(path)?;
        return Err(Error::Usage(format!(
            "{} is not a regular file; remove it, or choose another --out",
            path.display()
        )));
    }
    Ok(file)
}

/// Whether the file locked is still the one at `path` (same device and inode).
fn still_at(path: &Path, file: &File) -> bool {
    match (std::fs::symlink_metadata(path), file.metadata()) {
        (Ok(at), Ok(held)) => at.dev() == held.dev() && at.ino() == held.ino(),
        _ => false,
    }
}

/// Who the claim file says holds it (`pid 4242 on node-a`), read within bounds and made printable;
/// empty for an empty file.
fn holder(file: &mut File) -> String {
    let mut bytes = Vec::new();
    let _ = file.rewind();
    let _ = file.take(HOLDER_BYTES).read_to_end(&mut bytes);
    let text = String::from_utf8_lossy(&bytes);
    let line = text.lines().next().unwrap_or("").trim();
    line.chars()
        .map(|c| if c.is_control() { '?' } else { c })
        .collect()
}

/// Writes this process's line into the claim it holds.
fn record_holder(file: &mut File) -> std::io::Result<()> {
    let host = nix::unistd::gethostname()
        .ok()
        .and_then(|h| h.into_string().ok())
        .unwrap_or_else(|| "an unknown host".into());
    file.set_len(0)?;
    file.rewind()?;
    writeln!(file, "pid {} on {host}", std::process::id())?;
    file.sync_all()
}

/// The refusal when another process holds the lock: who, as its file says.
fn held_by_another(dir: &Path, path: &Path, file: &mut File) -> Error {
    let who = holder(file);
    let who = if who.is_empty() {
        "a writer that has not yet said who it is".to_string()
    } else {
        who
    };
    Error::Usage(format!(
        "another profile-run ({who}) is writing a report into {} (it holds {} locked); wait for it to finish, or choose another --out",
        dir.display(),
        path.display()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::{Arc, Barrier};

    #[test]
    fn racing_takeovers_of_a_stale_claim_never_make_two_holders() {
        let dir = tempfile::tempdir().unwrap();
        let holders = Arc::new(AtomicUsize::new(0));
        let most = Arc::new(AtomicUsize::new(0));
        for _ in 0..40 {
            // A claim left behind by a writer that was killed: its pid, no lock.
            std::fs::write(dir.path().join(CLAIM_FILE), "pid 999999 on gone\n").unwrap();
            let barrier = Arc::new(Barrier::new(4));
            let threads: Vec<_> = (0..4)
                .map(|_| {
                    let (dir, holders, most, barrier) = (
                        dir.path().to_path_buf(),
                        holders.clone(),
                        most.clone(),
                        barrier.clone(),
                    );
                    std::thread::spawn(move || {
                        barrier.wait();
                        if let Ok(claim) = Claim::take(&dir) {
                            let now = holders.fetch_add(1, Ordering::SeqCst) + 1;
                            most.fetch_max(now, Ordering::SeqCst);
                            std::thread::sleep(std::time::Duration::from_millis(2));
                            holders.fetch_sub(1, Ordering::SeqCst);
                            drop(claim);
                        }
                    })
                })
                .collect();
            for t in threads {
                t.join().unwrap();
            }
            assert!(!dir.path().join(CLAIM_FILE).exists());
        }
        assert_eq!(most.load(Ordering::SeqCst), 1, "never two holders at once");
    }

    #[test]
    fn a_held_claim_is_refused_naming_its_holder_and_freed_on_drop() {
        let dir = tempfile::tempdir().unwrap();
        let first = Claim::take(dir.path()).unwrap();
        let text = std::fs::read_to_string(dir.path().join(CLAIM_FILE)).unwrap();
        assert!(
            text.starts_with(&format!("pid {} on ", std::process::id())),
            "{text}"
        );
        let err = Claim::take(dir.path()).unwrap_err().to_string();
        assert!(
            err.contains(&format!("pid {} on ", std::process::id())),
            "{err}"
        );
        drop(first);
        assert!(!dir.path().join(CLAIM_FILE).exists());
        drop(Claim::take(dir.path()).unwrap());
    }
}
