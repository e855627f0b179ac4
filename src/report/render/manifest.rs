//! The list of files a render wrote into its report directory (`.profile-run-outputs`, one relative
//! path a line). The next render into the same directory (`--force`) removes the files the earlier
//! one wrote and this one did not (charts and scope pages of a larger report, a trace no longer
//! asked for), and nothing else: a file the user put there is never touched.

use std::path::{Component, Path, PathBuf};

use crate::report::inside;
use crate::report::write::write_atomic;
use crate::report::RenderError;

/// The manifest's name in the report directory.
pub const MANIFEST: &str = ".profile-run-outputs";

/// The largest manifest read: one short line per file written, so far more than any report needs.
pub const MANIFEST_LIMIT: u64 = 4 << 20;

/// Records `written` as this render's files, after removing what the `previous` manifest listed and
/// this render did not write again. Folders left empty by that (`charts/`, `scopes/`) go too. A
/// stale entry is removed only where it is a file reached through real folders inside `dir`.
pub fn replace(dir: &Path, previous: &[PathBuf], written: &[PathBuf]) -> Result<(), RenderError> {
    for stale in previous.iter().filter(|p| !written.contains(p)) {
        if inside::remove_file(dir, stale) {
            if let Some(parent) = stale.parent().filter(|p| !p.as_os_str().is_empty()) {
                // Only an empty, real folder is removed (remove_dir refuses any other).
                if std::fs::symlink_metadata(dir.join(parent)).is_ok_and(|m| m.is_dir()) {
                    let _ = std::fs::remove_dir(dir.join(parent));
                }
            }
        }
    }
    let mut text = String::new();
    for path in written {
        text.push_str(&path.to_string_lossy());
        text.push('\n');
    }
    write_atomic(&dir.join(MANIFEST), text.as_bytes())
}

/// The files the previous render recorded, read before anything is written. Entries that could name
/// anything outside `dir` (absolute, `..`) are ignored, so an edited manifest cannot make a render
/// delete elsewhere; a manifest that is a link, a FIFO, a device or larger than [`MANIFEST_LIMIT`]
/// is refused.
pub fn previous(dir: &Path) -> Result<Vec<PathBuf>, RenderError> {
    let Some(text) = inside::read_small(
        &dir.join(MANIFEST),
        MANIFEST_LIMIT,
        "the list of files an earlier report wrote",
        "remove it (profile-run makes it again)",
    )?
    else {
        return Ok(Vec::new());
    };
    Ok(text
        .lines()
        .map(PathBuf::from)
        .filter(|p| {
            !p.as_os_str().is_empty() && p.components().all(|c| matches!(c, Component::Normal(_)))
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_files_an_earlier_render_wrote_are_removed() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::create_dir_all(d.join("charts")).unwrap();
        for f in [
            "report.md",
            "charts/a.svg",
            "charts/b.svg",
            "notes.txt",
            "trace.json",
        ] {
            std::fs::write(d.join(f), "x").unwrap();
        }
        let first: Vec<PathBuf> = ["report.md", "charts/a.svg", "charts/b.svg", "trace.json"]
            .iter()
            .map(PathBuf::from)
            .collect();
        replace(d, &previous(d).unwrap(), &first).unwrap();
        replace(d, &previous(d).unwrap(), &[PathBuf::from("report.md")]).unwrap();
        assert!(d.join("report.md").exists());
        assert!(
            d.join("notes.txt").exists(),
            "never written by a render: kept"
        );
        assert!(
            !d.join("charts").exists(),
            "stale charts and their emptied folder go"
        );
        assert!(!d.join("trace.json").exists());
        // A manifest naming something outside the directory is not followed.
        let outside = tempfile::NamedTempFile::new().unwrap();
        let text = format!("../x\n{}\nreport.md\n", outside.path().display());
        std::fs::write(d.join(MANIFEST), text).unwrap();
        replace(d, &previous(d).unwrap(), &[]).unwrap();
        assert!(outside.path().exists());
    }
}
