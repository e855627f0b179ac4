//! A profiling run under ncu: its command line, the run's files (config, command, record, log), the
//! live progress read from ncu's `==PROF==` lines, and afterwards the report of what was captured.

use std::path::Path;

use crate::analysis::RunContext;
use crate::config::{Config, Loaded};
use crate::console::err_line;
use crate::error::{Error, Result};
use crate::plan::Plan;
use crate::process::progress::Display;
use crate::process::{resolve_program, run_streaming, Finished, ProfilerError, Unrunnable};
use crate::report::model::Report;
use crate::run::{RunDir, RunRecord, REPORT_BASE};

use super::cli::NcuCli;
use super::report_source::{analyze_report_files, ReportInput};
use super::source::{analyze_exports, ExportSet};
use super::{diagnose, export_pages, log};

/// The log file ncu's output goes to, in the run directory.
pub const LOG: &str = "ncu.log";

/// What `--dry-run` prints: the ncu command line for a run in `dir`.
pub fn dry_run(config: &Config, plan: &Plan, dir: &Path, workload: &[String]) -> String {
    let cli = NcuCli::profile(config, &plan.nvtx, &dir.join(REPORT_BASE), workload);
    for warning in cli.warnings() {
        err_line(&format!("warning: {warning}"));
    }
    cli.shell_line()
}

/// Fails with exit 3 and the fix when the configured ncu cannot be started.
pub fn check_runnable(config: &Config) -> Result<()> {
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
        }
        .into()),
    }
}

/// Runs the workload under ncu into `run`, keeping the run record up to date; returns how ncu ended.
pub fn capture(
    loaded: &Loaded,
    plan: &Plan,
    run: &RunDir,
    record: &mut RunRecord,
    workload: &[String],
    quiet: bool,
) -> Result<Finished> {
    let config = &loaded.config;
    let cli = NcuCli::profile(config, &plan.nvtx, &run.report_base(), workload);
    for warning in cli.warnings() {
        err_line(&format!("warning: {warning}"));
    }
    record.profiler_command = std::iter::once(cli.program().to_string())
        .chain(cli.argv())
        .collect();
    record.profiler_version = export_pages::profiler_version(cli.program());
    run.write_text("config.yaml", &loaded.to_yaml())?;
    run.write_text("command.txt", &format!("{}\n", cli.shell_line()))?;
    run.write_record(record)?;

    let display = Display::new(quiet);
    display.status(format!("starting {}", cli.program()));
    let mut profiled = 0u64;
    let finished = run_streaming(
        cli.program(),
        cli.expression(),
        &run.path(LOG),
        std::time::Duration::from_secs(config.pipeline.signal_grace_seconds),
        &mut |line| match log::parse_prof(line) {
            Some(log::Progress::Profiling { name, index }) => {
                profiled += 1;
                display.status(format!("profiling {name} (#{index}, {profiled} so far)"));
            }
            Some(log::Progress::Connected { process }) => {
                display.status(format!("connected to {process}"))
            }
            Some(_) => {}
            None => display.passthrough(line),
        },
    )?;
    display.finish();
    record.finish(&finished);
    run.write_record(record)?;
    Ok(finished)
}

/// The report of what the run captured, or `None` when ncu wrote no report file or rendering is off
/// (the capture and the exports are then the result). Exports the CSV pages
/// `pipeline.ncu.export.pages` lists; analyses the report file itself under `pipeline.ncu.reader:
/// native`, the raw and details pages under `csv`.
pub fn report(
    loaded: &Loaded,
    plan: &Plan,
    run: &RunDir,
    record: &RunRecord,
    quiet: bool,
) -> Result<Option<Report>> {
    let report_file = run.report_file();
    if !report_file.exists() {
        return Ok(None);
    }
    let config = &loaded.config;
    let pages = export_pages::export_pages(config, &report_file, run.root())?;
    if !quiet {
        for (_, path) in &pages {
            err_line(&format!("exported {}", path.display()));
        }
    }
    if !config.output.render {
        return Ok(None);
    }
    let page = |name: &str| {
        pages
            .iter()
            .find(|(page, _)| page == name)
            .map(|(_, path)| path.clone())
    };
    let rank = record.rank.as_ref().map(|r| r.rank);
    let context = RunContext {
        command: record.workload.clone(),
        profiler_command: record.profiler_command.clone(),
        profiler_version: record.profiler_version.clone(),
        config_fingerprint: loaded.fingerprint(),
    };
    let report = if config.pipeline.ncu.reader == "csv" {
        let raw = page("raw").ok_or_else(|| {
            Error::Usage(
                "pipeline.ncu.export.pages must include `raw` when pipeline.ncu.reader is `csv`"
                    .into(),
            )
        })?;
        let set = ExportSet {
            details: page("details"),
            raw,
            rank,
        };
        analyze_exports(plan, &[set], &context)?
    } else {
        let input = ReportInput {
            path: report_file,
            rank,
        };
        analyze_report_files(plan, &[input], &context)?
    };
    Ok(Some(report))
}

/// What to tell a user whose run was interrupted: why it may have needed it, from the log.
pub fn interrupted_notes(config: &Config, run: &RunDir, finished: &Finished) -> Vec<String> {
    let mut notes = Vec::new();
    if finished.killed_after_grace {
        notes.push(format!(
            "{} and the processes holding its output had not all ended {} s after the signal (pipeline.signal_grace_seconds); those left were killed",
            config.pipeline.ncu.executable, config.pipeline.signal_grace_seconds
        ));
    }
    let log_text = std::fs::read_to_string(run.path(LOG)).unwrap_or_default();
    for diagnosis in log::diagnose(&log_text) {
        notes.push(format!("{}\n  fix: {}", diagnosis.cause, diagnosis.fix));
    }
    notes
}

/// Why a run that did not succeed failed, with the fix.
pub fn failure(run: &RunDir, finished: &Finished, partial_report: bool) -> ProfilerError {
    let log_text = std::fs::read_to_string(run.path(LOG)).unwrap_or_default();
    diagnose::failure(finished, &log_text, run, partial_report)
}
