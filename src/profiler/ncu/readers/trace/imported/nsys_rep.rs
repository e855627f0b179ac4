//! An Nsight Systems report (`.nsys-rep`) exported to SQLite with `nsys export --type sqlite` (the
//! `nsys` on PATH), into the report's own directory under a name no other file has, so the user's
//! file and its folder are never written to. Without nsys, the error says how to export it by hand.

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::run::fresh_path;

/// The program that exports reports.
const NSYS: &str = "nsys";

/// `R.nsys-rep`.
pub(super) fn is_nsys_rep(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "nsys-rep")
}

/// The arguments of `nsys export` that write `report` as SQLite to `out`.
fn export_args(report: &Path, out: &Path) -> Vec<std::ffi::OsString> {
    let mut args: Vec<std::ffi::OsString> = ["export", "--type", "sqlite", "--output"]
        .into_iter()
        .map(Into::into)
        .collect();
    args.push(out.into());
    args.push(report.into());
    args
}

/// Exports `report` into `dir`; the path of the SQLite file written.
pub(super) fn export(report: &Path, dir: &Path) -> Result<PathBuf> {
    let stem = report
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("nsys-export");
    let out = fresh_path(dir, stem, "sqlite");
    let by_hand = format!(
        "export it yourself with `nsys export --type sqlite --output {stem}.sqlite {}` and give the .sqlite file",
        report.display()
    );
    let output = duct::cmd(NSYS, export_args(report, &out))
        .stdout_capture()
        .stderr_capture()
        .unchecked()
        .run();
    let output = match output {
        Ok(output) => output,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(Error::Usage(format!(
            "{} is an Nsight Systems report, and `{NSYS}` is not on PATH to export it: {by_hand}",
            report.display()
        )))
        }
        Err(e) => {
            return Err(Error::Usage(format!(
                "could not start `{NSYS}` to export {} ({e}): {by_hand}",
                report.display()
            )))
        }
    };
    if !output.status.success() || !out.is_file() {
        let _ = std::fs::remove_file(&out);
        let stderr = String::from_utf8_lossy(&output.stderr);
        let cause = stderr
            .lines()
            .rfind(|l| !l.trim().is_empty())
            .unwrap_or("no message");
        return Err(Error::Usage(format!(
            "`{NSYS} export` could not export {} ({cause}): {by_hand}",
            report.display()
        )));
    }
    Ok(out)
}
