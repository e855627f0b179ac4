//! Outputs: one [`Output`] per file format, each in its own file here (`json`, `markdown`). Every
//! output renders the same [`Report`]; [`write_all`] renders them side by side into temporary files
//! and puts them in place only once all of them rendered, so a failing template never leaves a
//! report.json newer than its report.md.

pub mod json;
pub mod markdown;

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::report::model::Report;
use crate::report::write::{stage, Staged};
use crate::report::RenderError;

/// One output format.
pub trait Output: Sync {
    /// The file this output writes, relative to the report directory.
    fn file_name(&self) -> &'static str;

    /// Writes the whole file into `out`. Further files that belong to it (report.md's scope pages)
    /// are returned as (path relative to the report directory, contents).
    fn render(
        &self,
        report: &Report,
        out: &mut dyn Write,
    ) -> Result<Vec<(PathBuf, Vec<u8>)>, RenderError>;
}

/// Renders every output into `dir` and returns the path of each output's main file, in order.
/// `threads` bounds how many outputs render at once (0: one per core).
pub fn write_all(
    report: &Report,
    outputs: &[&dyn Output],
    dir: &Path,
    threads: usize,
) -> Result<Vec<PathBuf>, RenderError> {
    let staged = crate::parallel::map(outputs.to_vec(), threads, |output| {
        stage_output(report, output, dir)
    });
    let mut all = Vec::new();
    for files in staged {
        all.extend(files?);
    }
    for file in all {
        file.commit()?;
    }
    Ok(outputs.iter().map(|o| dir.join(o.file_name())).collect())
}

fn stage_output(
    report: &Report,
    output: &dyn Output,
    dir: &Path,
) -> Result<Vec<Staged>, RenderError> {
    let mut extra = Vec::new();
    let mut failed = None;
    let main = stage(&dir.join(output.file_name()), |out| {
        match output.render(report, out) {
            Ok(files) => extra = files,
            Err(err) => failed = Some(err),
        }
        match &failed {
            Some(_) => Err(std::io::Error::other("rendering failed")),
            None => Ok(()),
        }
    });
    if let Some(err) = failed {
        return Err(err);
    }
    let mut staged = vec![main?];
    for (rel, contents) in extra {
        let path = dir.join(&rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|source| RenderError::Write {
                path: parent.to_path_buf(),
                source,
            })?;
        }
        staged.push(stage(&path, |out| out.write_all(&contents))?);
    }
    Ok(staged)
}
