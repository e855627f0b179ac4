//! After a capture: the report file's CSV pages (`ncu --import … --csv`) and ncu's version, each
//! through [`super::cli`]'s argument builders.

use std::path::{Path, PathBuf};

use crate::config::Config;
use crate::error::Result;
use crate::process::ProfilerError;
use crate::process::{run_probe, Failure};
use crate::report::write::write_atomic;
use crate::run::{fresh_path, ncu_export_stem};

use super::cli;

/// Exports each configured page of `report` to CSV in `out_dir` with `ncu --import`; existing exports
/// are never overwritten. Returns (page, path) pairs.
pub fn export_pages(
    config: &Config,
    report: &Path,
    out_dir: &Path,
) -> Result<Vec<(String, PathBuf)>> {
    let program = &config.pipeline.ncu.executable;
    let mut exported = Vec::new();
    for page in &config.pipeline.ncu.export.pages {
        let target = fresh_path(out_dir, &ncu_export_stem(page.as_str()), "csv");
        let output = cli::import_command(config, report, page.as_str())
            .run()
            .map_err(|source| spawn_error(program, source))?;
        if !output.status.success() {
            let stderr = String::from_utf8_lossy(&output.stderr);
            return Err(ProfilerError::Failed(Box::new(Failure {
                what: format!("exporting {} (--page {page})", report.display()),
                code: output.status.code().map(|c| format!(" (ncu exit code {c})")).unwrap_or_default(),
                cause: stderr.lines().last().unwrap_or("ncu --import failed").to_string(),
                fix: "check that the report is complete and that this ncu can read it (same or newer version)".into(),
                log: report.to_path_buf(),
                tail: String::new(),
            }))
            .into());
        }
        write_atomic(&target, &output.stdout)?;
        exported.push((page.to_string(), target));
    }
    Ok(exported)
}

/// ncu could not be started to export a report: not found, or another spawn failure.
fn spawn_error(program: &str, source: std::io::Error) -> ProfilerError {
    match source.kind() {
        std::io::ErrorKind::NotFound => ProfilerError::NotFound {
            program: program.to_string(),
            hint: "; it is needed to export the .ncu-rep to CSV (set pipeline.ncu.executable)"
                .into(),
        },
        _ => super::not_started(ProfilerError::Spawn {
            program: program.to_string(),
            source,
            fix: String::new(),
        }),
    }
}

/// `ncu --version`'s version number (`2025.3.1.0`), or `None` when it cannot be run or read;
/// `Err(signal)` when a signal ended the probe (it is not left running).
pub fn profiler_version(program: &str) -> Result<Option<String>, i32> {
    let Some(stdout) = run_probe(cli::version_command(program))? else {
        return Ok(None);
    };
    let text = String::from_utf8_lossy(&stdout);
    Ok(text.lines().rev().find_map(|l| {
        l.trim()
            .strip_prefix("Version ")
            .map(|v| v.split_whitespace().next().unwrap_or(v).to_string())
    }))
}
