//! ncu's side of running it: its command lines (`cli`), the program checked before anything
//! starts, its version, its log read for known failures (`log`, `diagnose`) and the CSV pages it exports
//! afterwards (`export_pages`).
//!
//! Floor: profiler (see `crate::profiler`): imports run, process, analysis, insights, report,
//! config, region and the ground floor, and its own profiler's rooms.

pub mod cli;
pub mod diagnose;
pub mod export_pages;
pub mod log;

use std::path::PathBuf;

use crate::config::Config;
use crate::console::err_line;
use crate::error::{Error, Result};
use crate::process::{resolve_program, ProfilerError, Unrunnable};
use crate::run::RunDir;

/// What the messages about ncu's program say to fix.
const FIX_PROGRAM: &str = "set pipeline.ncu.executable to Nsight Compute's `ncu`";

/// Fails with exit 3 and the fix when the configured ncu cannot be started.
pub fn check_program(config: &Config) -> Result<()> {
    let program = &config.pipeline.ncu.executable;
    match resolve_program(program) {
        Ok(_) => Ok(()),
        Err(Unrunnable::Missing(why)) => Err(ProfilerError::NotFound {
            program: program.clone(),
            hint: format!(
                " ({why}); install Nsight Compute and put `ncu` on PATH, or set pipeline.ncu.executable=/path/to/ncu"
            ),
        }
        .into()),
        Err(Unrunnable::NotRunnable(why)) => Err(ProfilerError::NotRunnable {
            program: program.clone(),
            why,
            fix: format!("make it executable (`chmod +x`) or {FIX_PROGRAM}"),
        }
        .into()),
    }
}

/// ncu's program that could not be started, in words that name its setting.
pub fn not_started(e: ProfilerError) -> ProfilerError {
    match e {
        ProfilerError::Spawn { program, source, .. } => ProfilerError::Spawn {
            fix: format!(
                "check that pipeline.ncu.executable names Nsight Compute's `ncu` built for this machine (`{program} --version` should run)"
            ),
            program,
            source,
        },
        other => other,
    }
}

/// The Nsight Compute release every fixture and measurement of this project comes from.
const TESTED_NCU: &str = "2025.3";

/// A note for an ncu of another release than [`TESTED_NCU`]: it may name sections and metrics
/// otherwise, or write another report file format, which the reports then say; nothing is refused
/// for the version alone.
fn untested_version_note(version: &str) -> Option<String> {
    let release: Vec<&str> = version.split('.').take(2).collect();
    (release.join(".") != TESTED_NCU).then(|| {
        format!(
            "note: ncu {version} is not the release profile-run is tested with ({TESTED_NCU}.1): sections, metric names and the report file's format may differ; a report names every metric it could not find, and a run that is not sampled can read any release's CSV export instead (pipeline.ncu.reader=csv 'pipeline.ncu.export.pages=[raw]')"
        )
    })
}

/// The version ncu says it is, for the run record; a release other than the tested one is noted
/// unless `quiet`.
pub fn version_of(program: &str, run: &RunDir, quiet: bool) -> Result<Option<String>> {
    let version = export_pages::profiler_version(program).map_err(|signal| Error::Interrupted {
        signal,
        run_dir: run.root().to_path_buf(),
        captured: false,
    })?;
    let note = version.as_deref().and_then(untested_version_note);
    if let Some(note) = note.filter(|_| !quiet) {
        err_line(&note);
    }
    Ok(version)
}

/// `ncu --version` answers with a version: `ncu 2025.3.1.0 (ncu) runs`.
pub fn ncu_answers(config: &Config) -> Result<String> {
    let program = &config.pipeline.ncu.executable;
    match export_pages::profiler_version(program) {
        Ok(Some(version)) => {
            if let Some(note) = untested_version_note(&version) {
                err_line(&note);
            }
            Ok(format!("ncu {version} ({program}) runs"))
        }
        Ok(None) => Err(not_started(ProfilerError::Spawn {
            program: program.clone(),
            source: std::io::Error::other("`--version` printed no version"),
            fix: String::new(),
        })
        .into()),
        Err(signal) => Err(Error::Interrupted {
            signal,
            run_dir: PathBuf::from("no directory (a dry run captures nothing)"),
            captured: false,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_another_release_than_the_tested_one_gets_a_note() {
        assert_eq!(untested_version_note("2025.3.1.0"), None);
        assert_eq!(untested_version_note("2025.3.0.0"), None);
        let note = untested_version_note("2023.2.0.0").unwrap();
        assert!(
            note.contains("ncu 2023.2.0.0") && note.contains("2025.3.1"),
            "{note}"
        );
        assert!(untested_version_note("2025.4.0.0").is_some());
    }
}
