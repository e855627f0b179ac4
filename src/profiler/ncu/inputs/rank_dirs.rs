//! The `rank<N>` run directories of a shared run directory (one profile-run per rank), in rank
//! order. A `rank<N>` that is a link to a directory outside the shared one is not followed: it is
//! left out with a note naming the link and its target (then flagged as a missing rank where the
//! job's world size is known), since what lies outside may be another job's run.

use std::path::{Path, PathBuf};

use crate::console::escape_controls;
use crate::error::{Error, Result};

/// The rank directories of `dir`; a note in `notes` for each link out of it.
pub fn rank_dirs(dir: &Path, notes: &mut Vec<String>) -> Result<Vec<PathBuf>> {
    let unreadable = |e: std::io::Error| {
        Error::Usage(format!("could not read directory {}: {e}", dir.display()))
    };
    let root = dir.canonicalize().map_err(unreadable)?;
    let mut ranks: Vec<(u64, PathBuf)> = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(unreadable)?.flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if !name.starts_with("rank") || !path.is_dir() {
            continue;
        }
        let is_link = entry.file_type().is_ok_and(|t| t.is_symlink());
        if is_link {
            if let Some(note) = outside(&path, &root) {
                notes.push(note);
                continue;
            }
        }
        let number = name["rank".len()..].parse::<u64>().unwrap_or(u64::MAX);
        ranks.push((number, path));
    }
    ranks.sort();
    Ok(ranks.into_iter().map(|(_, path)| path).collect())
}

/// The note for `link` when it leads out of `root`; `None` when its target lies inside.
fn outside(link: &Path, root: &Path) -> Option<String> {
    let target = link.canonicalize().ok()?;
    if target.starts_with(root) {
        return None;
    }
    let shown = |p: &Path| escape_controls(&p.display().to_string()).into_owned();
    Some(format!(
        "`{}` is a link to `{}`, outside the shared run directory `{}`, and was not read: what lies outside may be another job's run. Give `{}` as an argument of its own if it is this job's rank.",
        shown(link),
        shown(&target),
        shown(root),
        shown(&target)
    ))
}
