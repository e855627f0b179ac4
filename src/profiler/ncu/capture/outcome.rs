//! What a finished ncu run left behind, read afterwards: the report of its capture (the report file
//! or the exported pages), the notes an interrupted run gets, the failure a run that captured
//! nothing gives, and whether a sampled run's passes all completed.

use std::path::PathBuf;

use crate::config::{Config, Loaded};
use crate::console::err_line;
use crate::error::{Error, Result};
use crate::process::{Failure, Finished, ProfilerError};
use crate::profiler::ncu::observe::report_source::ReportInput;
use crate::profiler::ncu::observe::source::ExportSet;
use crate::profiler::ncu::plan::{FirstPass, NcuPlan};
use crate::report::model::Report;
use crate::run::{ncu_report_file, read_run_text, RunDir, RunRecord};

use super::inputs::{self, Captures, NcuInputs};
use super::run::log::{self, LOG};
use super::run::{diagnose, export_pages};
use super::{sampling, trace};

/// The report of what the run captured, or `None` when ncu wrote no report file or rendering is off
/// (the capture and the exports are then the result). Exports the CSV pages
/// `pipeline.ncu.export.pages` lists; analyses the report file itself under `pipeline.ncu.reader:
/// native`, the raw and details pages under `csv`.
pub fn report(
    plan: &NcuPlan,
    loaded: &Loaded,
    run: &RunDir,
    record: &RunRecord,
    quiet: bool,
) -> Result<Option<Report>> {
    let config = &loaded.config;
    let rank = record.rank.as_ref().map(|r| r.rank);
    let deep = plan
        .passes
        .deep
        .then(|| run.path(&ncu_report_file(sampling::DEEP_REPORT_BASE)));
    let captures = match plan.passes.first {
        FirstPass::Trace => {
            let traces = match trace::traces(run, rank, config.pipeline.ncu.trace.max_mib) {
                Ok(traces) => traces,
                // A workload that failed explains itself (`failure`); its missing traces do not.
                Err(_) if record.profiler_exit_code != Some(0) => return Ok(None),
                Err(e) => return Err(e.into()),
            };
            if !config.output.render {
                return Ok(None);
            }
            let deep = deep.map(|d| vec![(d, rank)]).unwrap_or_default();
            Captures::Traces { traces, deep }
        }
        FirstPass::Ncu => match exported(config, run, rank, deep, quiet)? {
            Some(captures) => captures,
            None => return Ok(None),
        },
    };
    let inputs = NcuInputs {
        captures,
        context: record.context(loaded.fingerprint()),
        run_dir: None,
    };
    let mut report = inputs.analyze(plan, config, &inputs.context)?;
    if plan.passes.first == FirstPass::Ncu {
        let results =
            report.kernel_selection.results_selected + report.kernel_selection.results_excluded;
        let notes = diagnose::replay_notes(run, record.profiler_exit_code, results);
        report.notes.extend(notes);
    }
    Ok(Some(report))
}

/// The capture of a run under ncu, once the pages `pipeline.ncu.export.pages` lists are exported:
/// its report file (with `deep`, a sampled run's deep pass) under the native reader, its raw and
/// details pages under `csv`; `None` when ncu wrote no report file or rendering is off.
fn exported(
    config: &Config,
    run: &RunDir,
    rank: Option<u32>,
    deep: Option<PathBuf>,
    quiet: bool,
) -> Result<Option<Captures>> {
    let report_file = run.report_file();
    if !report_file.exists() {
        return Ok(None);
    }
    let pages = export_pages::export_pages(config, &report_file, run.root())?;
    if !quiet {
        for (_, path) in &pages {
            err_line(&format!("exported {}", path.display()));
        }
    }
    if !config.output.render {
        return Ok(None);
    }
    if inputs::reads_report_files(config) {
        return Ok(Some(Captures::ReportFiles(vec![ReportInput {
            deep,
            path: report_file,
            rank,
        }])));
    }
    let page = |name: &str| {
        pages
            .iter()
            .find(|(page, _)| page == name)
            .map(|(_, path)| path.clone())
    };
    let raw = page("raw").ok_or_else(|| {
        Error::Usage(
            "pipeline.ncu.export.pages must include `raw` when pipeline.ncu.reader is `csv`".into(),
        )
    })?;
    Ok(Some(Captures::Exports(vec![ExportSet {
        details: page("details"),
        raw,
        rank,
    }])))
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
    let log_text = read_run_text(&run.path(LOG));
    for diagnosis in log::diagnose(&log_text) {
        notes.push(format!("{}\n  fix: {}", diagnosis.cause, diagnosis.fix));
    }
    notes
}

/// Why a run that did not succeed failed, with the fix.
pub fn failure(
    plan: &NcuPlan,
    run: &RunDir,
    finished: &Finished,
    partial_report: bool,
) -> ProfilerError {
    if plan.passes.first == FirstPass::Trace {
        return trace::failure(run, finished, partial_report);
    }
    let log_text = read_run_text(&run.path(LOG));
    let log = (log_text.as_str(), run.path(LOG));
    diagnose::failure("profiling", finished, log, run, partial_report)
}

/// A sampled run whose timing pass succeeded but whose deep pass failed or profiled no kernel: the
/// report of the timing pass stands (every time exact, no deep metrics, with a note), and the run
/// still fails (exit 4) with why and what to do. `None` for any other run.
pub fn incomplete(run: &RunDir, record: &RunRecord) -> Option<ProfilerError> {
    let deep = record.deep_pass.as_ref().filter(|d| d.finished.is_some())?;
    // A deep pass run as workers stands while one of them profiled something: the keys of a worker
    // that failed are unmatched, and said so when it failed.
    let some_worker_measured = record.deep_workers.iter().any(|w| {
        w.pass.ended_well()
            && sampling::report_results(&run.path(&w.report), None).is_ok_and(|n| n > 0)
    });
    if some_worker_measured {
        return None;
    }
    let what = "the deep pass of sampled profiling";
    let log_path = run.path(sampling::DEEP_LOG);
    let log_text = read_run_text(&log_path);
    let finished = Finished {
        code: deep.exit_code,
        killed_by: deep.signal,
        interrupted_by: None,
        killed_after_grace: false,
        workload_stopped: deep.stopped_when_covered,
        ended_when_complete: false,
        ended: None,
    };
    let report = run.path(&ncu_report_file(sampling::DEEP_REPORT_BASE));
    if !deep.ended_well() || !report.is_file() {
        let partial = !deep.ended_well();
        let log = (log_text.as_str(), log_path);
        return Some(diagnose::failure(what, &finished, log, run, partial));
    }
    let timing_report = format!(
        "; the timing pass's report (times, no deep metrics) is in {}",
        run.root().display()
    );
    let (cause, fix) = match sampling::report_results(&report, None) {
        Ok(0) => (
            "it profiled no kernel in the regions, though the timing pass did".to_string(),
            "the workload must launch the same kernels when run a second time: make its first run \
             do no one-off work (downloads, compilation caches) inside the regions, or profile without \
             sampling (drop --config ncu/sampled)",
        ),
        Ok(_) => return None,
        Err(e) => (
            format!("its report file cannot be read, so it was left out: {e}"),
            "a deep pass cut short (a full disk, a killed ncu) leaves such a file: make room or \
             find what stopped ncu (its log below), then profile again for the deep metrics",
        ),
    };
    Some(ProfilerError::Failed(Box::new(Failure {
        what: what.into(),
        code: timing_report,
        cause,
        fix: fix.into(),
        log: log_path,
        tail: diagnose::log_tail(&log_text),
    })))
}
