//! Where `report` / `merge` write: `--out`, else (for `report`) the run directory, else a fresh
//! directory under `output.root`; `merge` never writes into an input. An existing report is never replaced without `--force`, and one directory is
//! written by one command at a time ([`Claim`]).

use std::path::{Path, PathBuf};

use super::claim::Claim;
use super::fresh_dir;
use crate::console::err_line;
use crate::error::{Error, Result};
use crate::report::inside::occupied;
use crate::report::render::manifest::{self, MANIFEST};

/// The output directory of one `report` command, decided in two steps: checked before any input is
/// read, created once the analysis has succeeded (or earlier, when a bare `.ncu-rep` needs somewhere
/// to export to).
pub struct ReportOut {
    out: Option<PathBuf>,
    force: bool,
    root: PathBuf,
    made: Option<PathBuf>,
    /// The files the report writes at the top of its directory (`report.md`, `report.html`, …).
    files: Vec<&'static str>,
}

impl ReportOut {
    /// Checks `--out` at once: a file there, a report (any of `files`, or an earlier report's
    /// manifest) without `--force`, or a manifest that is not a small regular file stops before
    /// anything is read.
    pub fn new(
        out: Option<PathBuf>,
        force: bool,
        root: &str,
        files: Vec<&'static str>,
    ) -> Result<ReportOut> {
        let report_out = ReportOut {
            out,
            force,
            root: super::absolute_root(root)?,
            made: None,
            files,
        };
        if let Some(out) = &report_out.out {
            report_out.check_out(out)?;
        }
        Ok(report_out)
    }

    /// The directory a report file's CSV pages are exported into: the report's own (`--out`); without
    /// one, the run directory `run` the report file lies in (where the report goes too), else a fresh
    /// one under `output.root`, made on first need and reused. Never an input run directory when
    /// the report is written elsewhere.
    pub fn export_dir(&mut self, run: Option<&Path>) -> Result<PathBuf> {
        if let (None, Some(run)) = (&self.out, run) {
            return Ok(run.to_path_buf());
        }
        if let Some(dir) = &self.made {
            return Ok(dir.clone());
        }
        let dir = match &self.out {
            Some(out) => create(out)?,
            None => fresh_dir(&self.root, "report")?,
        };
        self.made = Some(dir.clone());
        Ok(dir)
    }

    /// The directory report.md and report.json go to, created. `run_dir`: the run directory the first
    /// input belongs to. A run directory that already holds a report keeps it, and the new one goes
    /// into a fresh `report-…` sub-directory, unless `--force`.
    ///
    /// The directory comes with its [`Claim`]: hold it until the report is written. The check for an
    /// existing report is made again once the claim is held, so that "is there a report?" and "write
    /// one" are one step for every command that writes there.
    pub fn into_dir(self, run_dir: Option<&Path>) -> Result<(PathBuf, Claim)> {
        if let Some(out) = &self.out {
            self.check_out(out)?;
            let dir = create(out)?;
            let claim = Claim::take(&dir)?;
            self.check_out(&dir)?;
            return Ok((dir, claim));
        }
        if let Some(run) = run_dir {
            let claim = Claim::take(run)?;
            manifest::previous(run)?;
            if self.force || self.existing_report(run).is_none() {
                return Ok((run.to_path_buf(), claim));
            }
            drop(claim);
            let fresh = fresh_dir(run, "report")?;
            err_line(&format!(
                "note: {} already holds a report, kept as it is; writing into {} (--force replaces it in place)",
                run.display(),
                fresh.display()
            ));
            let claim = Claim::take(&fresh)?;
            return Ok((fresh, claim));
        }
        let dir = match self.made {
            Some(made) => made,
            None => fresh_dir(&self.root, "report")?,
        };
        let claim = Claim::take(&dir)?;
        Ok((dir, claim))
    }

    /// A file of an earlier report in `dir`: one this report would write, report.md or report.json
    /// (whatever `report.outputs` says now), or the manifest of an earlier report's files.
    fn existing_report(&self, dir: &Path) -> Option<PathBuf> {
        let earlier = ["report.md", "report.json", MANIFEST];
        self.files
            .iter()
            .chain(earlier.iter())
            .map(|name| dir.join(name))
            .find(|path| occupied(path))
    }

    /// `--out` must be a directory (or not exist yet) without a report in it, unless `--force`; its
    /// manifest, if any, a small regular file.
    fn check_out(&self, out: &Path) -> Result<()> {
        if out.exists() && !out.is_dir() {
            return Err(Error::Usage(format!(
                "--out {} is a file, not a directory; give a directory for report.md and report.json (it is created if missing)",
                out.display()
            )));
        }
        if out.is_dir() {
            manifest::previous(out)?;
        }
        match self.existing_report(out).filter(|_| !self.force) {
            Some(file) if file.ends_with(MANIFEST) => Err(Error::Usage(format!(
                "{} holds an earlier report (its files are listed in {}), which is not replaced; pass --force to replace it, or choose another --out",
                out.display(),
                file.display()
            ))),
            Some(file) => Err(Error::Usage(format!(
                "{} already exists and is not replaced; pass --force to replace it, or choose another --out",
                file.display()
            ))),
            None => Ok(()),
        }
    }
}

fn create(out: &Path) -> Result<PathBuf> {
    std::fs::create_dir_all(out).map_err(|source| Error::Write {
        path: out.to_path_buf(),
        source,
    })?;
    Ok(out.to_path_buf())
}
