//! What a finished ncu run's log and record say, read afterwards: the notes an interrupted run gets,
//! the failure a run that captured nothing gives, and whether a sampled run's passes all completed.
//! The report of what it captured is found like any capture, in `crate::profiler::ncu::inputs`.

use crate::config::Config;
use crate::process::{Failure, Finished, ProfilerError};
use crate::profiler::ncu::plan::{FirstPass, NcuPlan};
use crate::run::{ncu_report_file, read_run_text, RunDir, RunRecord};

use super::run::diagnose;
use super::run::log::{self, LOG};
use super::{sampling, trace};

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
