//! Outputs: one [`Output`] per file format, each in its own file here (`json`, `markdown`, `html`,
//! `svg`, `trace`; `layout` is the synthetic timeline the charts and the trace share). Every
//! output renders the same [`Report`]; [`write_all`] renders them side by side into temporary files
//! and puts them in place only once all of them rendered, so a failing template never leaves a
//! report.json newer than its report.md.
//!
//! Floor: report (see `crate::report`): imports config, region and the ground floor only.

pub mod glance;
pub mod html;
pub mod json;
pub mod layout;
pub mod manifest;
pub mod markdown;
pub mod shown;
pub mod svg;
pub mod trace;

use std::io::Write;
use std::path::{Path, PathBuf};

pub use crate::config::Format;
use crate::parallel;
use crate::report::inside;
use crate::report::model::Report;
use crate::report::write;
use crate::report::write::{commit_all, not_replaced, stage, Folders, Staged};
use crate::report::RenderError;

/// One output format.
pub trait Output: Sync {
    /// The file this output writes, relative to the report directory.
    fn file_name(&self) -> &'static str;

    /// False for an output made only of further files (the SVG charts): `file_name` then names the
    /// folder they go to, and nothing is written under that name itself.
    fn writes_main_file(&self) -> bool {
        true
    }

    /// Writes the whole file into `out`. Further files that belong to it (report.md's scope pages)
    /// are returned as (path relative to the report directory, contents).
    fn render(
        &self,
        report: &Report,
        out: &mut dyn Write,
    ) -> Result<Vec<(PathBuf, Vec<u8>)>, RenderError>;
}

/// Renders every output into `dir` and returns the path of each output's main file, in order (for an
/// output without one, the folder its files go to).
/// `threads` bounds how many outputs render at once (0: one per core). No file already in `dir` is
/// replaced, whoever wrote it: when one is in the way, nothing is put in place.
pub fn write_all(
    report: &Report,
    outputs: &[&dyn Output],
    dir: &Path,
    threads: usize,
) -> Result<Vec<PathBuf>, RenderError> {
    write_outputs(report, outputs, dir, threads, false)
}

/// [`write_all`] for `--force`: files already in `dir` are replaced, and those an earlier report
/// wrote (its manifest) and this one does not are removed.
pub fn write_all_replacing(
    report: &Report,
    outputs: &[&dyn Output],
    dir: &Path,
    threads: usize,
) -> Result<Vec<PathBuf>, RenderError> {
    write_outputs(report, outputs, dir, threads, true)
}

fn write_outputs(
    report: &Report,
    outputs: &[&dyn Output],
    dir: &Path,
    threads: usize,
    replace: bool,
) -> Result<Vec<PathBuf>, RenderError> {
    let previous = manifest::previous(dir)?;
    // The caller holds the directory's claim: any temporary file in it is a killed render's.
    write::sweep_stale(dir);
    let staged = parallel::map(outputs.to_vec(), threads, |output| {
        stage_output(report, output, dir)
    });
    let mut all = Vec::new();
    for files in staged {
        all.extend(files?);
    }
    let written: Vec<PathBuf> = all
        .iter()
        .filter_map(|f| f.target().strip_prefix(dir).ok().map(Path::to_path_buf))
        .collect();
    if !replace {
        // All checked before any is put in place; each put in place without replacing (a file that
        // appeared since is refused, not overwritten).
        if let Some(taken) = all.iter().find(|f| inside::occupied(f.target())) {
            return Err(not_replaced(taken.target()));
        }
    }
    commit_all(all, replace)?;
    manifest::replace(dir, &previous, &written)?;
    Ok(outputs.iter().map(|o| dir.join(o.file_name())).collect())
}

fn stage_output(
    report: &Report,
    output: &dyn Output,
    dir: &Path,
) -> Result<Vec<Staged>, RenderError> {
    if !output.writes_main_file() {
        let extra = output.render(report, &mut std::io::sink())?;
        return stage_extra(dir, extra, Vec::new());
    }
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
    stage_extra(dir, extra, vec![main?])
}

fn stage_extra(
    dir: &Path,
    extra: Vec<(PathBuf, Vec<u8>)>,
    mut staged: Vec<Staged>,
) -> Result<Vec<Staged>, RenderError> {
    // One descriptor per folder however many files go in it (a page per scope of 10,000 ranks).
    let mut folders = Folders::batch(dir);
    for (rel, contents) in extra {
        // Its folders made and checked here; opened again, never through a link, when staged.
        inside::target(dir, &rel)?;
        staged.push(folders.stage(&rel, |out| out.write_all(&contents))?);
    }
    Ok(staged)
}

/// How a report is rendered, for every output (report.md, report.html, the SVG charts): the limits of
/// what tables show, the template, threads, and whether the charts are among the outputs.
#[derive(Debug, Clone)]
pub struct RenderOptions {
    /// A user template (`report.template`); `None` uses the built-in one.
    pub template: Option<PathBuf>,
    /// Regions in each scope's summary table (the rest are only in report.json).
    pub max_regions: usize,
    /// Kernels listed per region or scope.
    pub max_kernels: usize,
    /// Threads rendering the built-in template's scope sections (0: one per core, 1: none apart).
    pub threads: usize,
    /// The SVG charts are among the outputs: each scope section links its charts.
    pub charts: bool,
}

impl Default for RenderOptions {
    fn default() -> Self {
        RenderOptions {
            template: None,
            max_regions: 200,
            max_kernels: 10,
            threads: 1,
            charts: false,
        }
    }
}

/// The outputs for `formats`, in that order (a format named twice is written once). report.md and
/// report.html link the SVG chart files when they are among them.
pub fn outputs_for(formats: &[Format], options: &RenderOptions) -> Vec<Box<dyn Output>> {
    let mut seen = Vec::new();
    let mut outputs: Vec<Box<dyn Output>> = Vec::new();
    for &format in formats {
        if seen.contains(&format) {
            continue;
        }
        seen.push(format);
        outputs.push(match format {
            Format::Md => Box::new(markdown::Markdown {
                options: RenderOptions {
                    charts: formats.contains(&Format::Svg),
                    ..options.clone()
                },
            }),
            Format::Json => Box::new(json::Json {
                threads: options.threads,
            }),
            Format::Html => Box::new(html::Html {
                options: RenderOptions {
                    charts: formats.contains(&Format::Svg),
                    ..options.clone()
                },
            }),
            Format::Svg => Box::new(svg::Svg {
                max_regions: options.max_regions,
            }),
            Format::Trace => Box::new(trace::Trace),
        });
    }
    outputs
}
