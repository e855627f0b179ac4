//! The captures a run just made, found in its run directory as `report` would find them again, and
//! their report: the trace pass's traces, or ncu's report file (its CSV pages exported first), with
//! a sampled run's deep pass.

use std::path::PathBuf;

use crate::config::Config;
use crate::console::err_line;
use crate::error::{Error, Result};
use crate::profiler::job::AfterRun;
use crate::profiler::ncu::capture::run::{diagnose, export_pages};
use crate::profiler::ncu::capture::{sampling, trace};
use crate::profiler::ncu::observe::report_source::ReportInput;
use crate::profiler::ncu::observe::source::ExportSet;
use crate::profiler::ncu::plan::{FirstPass, NcuPlan};
use crate::report::model::Report;
use crate::run::{ncu_report_file, RunDir};

use super::{reads_report_files, Captures, NcuInputs};

/// The report of what the run captured, or `None` when ncu wrote no report file or rendering is off
/// (the capture and the exports are then the result). Exports the CSV pages
/// `pipeline.ncu.export.pages` lists; analyses the report file itself under `pipeline.ncu.reader:
/// native`, the raw and details pages under `csv`.
pub fn report(after: &AfterRun<'_, NcuPlan>) -> Result<Option<Report>> {
    let AfterRun {
        plan,
        loaded,
        run,
        record,
        quiet,
        ..
    } = *after;
    let config = &loaded.config;
    let rank = record.rank.as_ref().map(|r| r.rank);
    // An in-process run has a deep pass under ncu where CUDA graph kernels needed one.
    let deep = (plan.passes.deep || record.deep_pass.is_some())
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
    let mut report = inputs.read(plan, config, &inputs.context)?;
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
    if reads_report_files(config) {
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
