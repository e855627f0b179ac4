//! The list of files a render wrote into its report directory (`.profile-run-outputs`, one relative
//! path a line). The next render into the same directory (`--force`) removes the files the earlier
//! one wrote and this one did not (charts and scope pages of a larger report, a trace no longer
//! asked for), and nothing else: a file the user put there is never touched.

use std::path::{Component, Path, PathBuf};

use crate::report::write::write_atomic;
use crate::report::RenderError;

/// The manifest's name in the report directory.
pub const MANIFEST: &str = ".profile-run-outputs";

/// Records `written` as this render's files, after removing what the previous manifest listed and
/// this render did not write again. Folders left empty by that (`charts/`, `scopes/`) go too.
pub fn replace(dir: &Path, written: &[PathBuf]) -> Result<(), RenderError> {
    for stale in previous(dir).iter().filter(|p| !written.contains(p)) {
        let path = dir.join(stale);
        if std::fs::remove_file(&path).is_ok() {
            if let Some(parent) = stale.parent().filter(|p| !p.as_os_str().is_empty()) {
                // Only an empty folder is removed (remove_dir refuses any other).
                let _ = std::fs::remove_dir(dir.join(parent));
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

/// The files the previous render recorded; entries that could name anything outside `dir` (absolute,
/// `..`) are ignored, so an edited manifest cannot make a render delete elsewhere.
fn previous(dir: &Path) -> Vec<PathBuf> {
    let Ok(text) = std::fs::read_to_string(dir.join(MANIFEST)) else {
        return Vec::new();
    };
    text.lines()
        .map(PathBuf::from)
        .filter(|p| {
            !p.as_os_str().is_empty() && p.components().all(|c| matches!(c, Component::Normal(_)))
        })
        .collect()
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
        replace(d, &first).unwrap();
        replace(d, &[PathBuf::from("report.md")]).unwrap();
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
        replace(d, &[]).unwrap();
        assert!(outside.path().exists());
    }
}
