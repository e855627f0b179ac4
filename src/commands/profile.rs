//! `profile-run [KEY=VALUE]... -- WORKLOAD`: plan, run directory, capture, the exports asked for,
//! analysis (the report file read natively, or its CSV pages), reports. Every check runs in
//! [`Plan::new`] before the profiler starts.

use std::path::{Path, PathBuf};

use crate::analysis::RunContext;
use crate::cli::ProfileArgs;
use crate::config::Loaded;
use crate::console::err_line;
use crate::error::{exit, Error, Result};
use crate::plan::Plan;
use crate::process::progress::Display;
use crate::process::{resolve_program, run_streaming, ProfilerError, Unrunnable};
use crate::profiler::ncu::cli::NcuCli;
use crate::profiler::ncu::diagnose::failure;
use crate::profiler::ncu::report_source::{analyze_report_files, ReportInput};
use crate::profiler::ncu::source::{analyze_exports, ExportSet};
use crate::profiler::ncu::{export_pages, log};
use crate::run::{self, RunDir, RunRecord};

use super::{load_config, print_selection_notes, print_stdout, write_reports};

pub fn profile_command(args: ProfileArgs) -> Result<i32> {
    let loaded = load_config(&args.config)?;
    let config = &loaded.config;
    if args.workload.is_empty() {
        return Err(Error::Usage(
            "no workload to profile; put its command after `--`: profile-run [OPTIONS] [KEY=VALUE]... -- python train.py"
                .into(),
        ));
    }
    let plan = Plan::new(config)?;
    // `NcuCli::warnings` repeats the plan's warnings alongside its own, so they are printed from there.
    let root = PathBuf::from(&config.output.root);
    let (run_name, rank) = run::name_for(config, &|var| std::env::var(var).ok());

    if args.dry_run {
        let dir = run::planned_path(&root, &run_name, rank.as_ref());
        let cli = NcuCli::profile(
            config,
            &plan.nvtx,
            &dir.join(run::REPORT_BASE),
            &args.workload,
        );
        for warning in cli.warnings() {
            err_line(&format!("warning: {warning}"));
        }
        print_stdout(&format!(
            "{}\nrun directory: {}",
            cli.shell_line(),
            dir.display()
        ))?;
        return Ok(exit::OK);
    }

    let program = &config.pipeline.ncu.executable;
    match resolve_program(program) {
        Ok(_) => {}
        Err(Unrunnable::Missing(why)) => {
            return Err(ProfilerError::NotFound {
                program: program.clone(),
                hint: format!(
                    " ({why}); install Nsight Compute and put `ncu` on PATH, or set pipeline.ncu.executable=/path/to/ncu"
                ),
            }
            .into())
        }
        Err(Unrunnable::NotRunnable(why)) => {
            return Err(ProfilerError::NotRunnable {
                program: program.clone(),
                why,
            }
            .into())
        }
    }
    let run = RunDir::create(&root, &run_name, rank.as_ref())?;
    let cli = NcuCli::profile(config, &plan.nvtx, &run.report_base(), &args.workload);
    for warning in cli.warnings() {
        err_line(&format!("warning: {warning}"));
    }
    let profiler_argv: Vec<String> = std::iter::once(cli.program().to_string())
        .chain(cli.argv())
        .collect();
    let mut record = RunRecord::new(&args.workload, &profiler_argv, &loaded.fingerprint(), rank);
    record.profiler_version = export_pages::profiler_version(program);
    run.write_text("config.yaml", &loaded.to_yaml())?;
    run.write_text("command.txt", &format!("{}\n", cli.shell_line()))?;
    run.write_record(&record)?;

    let display = Display::new(args.quiet);
    display.status(format!("starting {}", cli.program()));
    let mut profiled = 0u64;
    let finished = run_streaming(
        cli.program(),
        cli.expression(),
        &run.path("ncu.log"),
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
    run.write_record(&record)?;

    let log_text = std::fs::read_to_string(run.path("ncu.log")).unwrap_or_default();
    let report_file = run.report_file();
    let rendered = if report_file.exists() {
        export_and_render(&run, &loaded, &plan, &record, &report_file, args.quiet).map(Some)
    } else {
        Ok(None)
    };

    if let Some(signal) = finished.interrupted_by {
        // Say why the run might have needed interrupting (a stalled collective, say) and keep 128+n
        // even when rendering what was captured failed: the interrupt is what the caller must see.
        if finished.killed_after_grace {
            err_line(&format!(
                "note: {} and the processes holding its output had not all ended {} s after the signal (pipeline.signal_grace_seconds); those left were killed",
                cli.program(),
                config.pipeline.signal_grace_seconds
            ));
        }
        for diagnosis in log::diagnose(&log_text) {
            err_line(&format!(
                "note: {}\n  fix: {}",
                diagnosis.cause, diagnosis.fix
            ));
        }
        if let Err(render_error) = &rendered {
            err_line(&format!(
                "note: the partial capture could not be rendered: {render_error}"
            ));
        }
        return Err(Error::Interrupted {
            signal,
            run_dir: run.root().to_path_buf(),
        });
    }
    let rendered = rendered?;
    if !finished.success() || rendered.is_none() {
        return Err(failure(&finished, &log_text, &run, rendered.is_some()).into());
    }
    if let Some(md) = rendered {
        print_stdout(&md.display().to_string())?;
    }
    Ok(exit::OK)
}

/// Exports the run's .ncu-rep to the CSV pages `pipeline.ncu.export.pages` lists, analyses the capture
/// (the report file itself under `pipeline.ncu.reader: native`, the raw and details pages under
/// `csv`) and writes the reports. Returns report.md's path (the capture's when not rendering).
fn export_and_render(
    run: &RunDir,
    loaded: &Loaded,
    plan: &Plan,
    record: &RunRecord,
    report_file: &Path,
    quiet: bool,
) -> Result<PathBuf> {
    let config = &loaded.config;
    let pages = export_pages::export_pages(config, report_file, run.root())?;
    if !quiet {
        for (_, path) in &pages {
            err_line(&format!("exported {}", path.display()));
        }
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
        if !config.output.render {
            return Ok(raw);
        }
        let set = ExportSet {
            details: page("details"),
            raw,
            rank,
        };
        analyze_exports(plan, &[set], &context)?
    } else {
        if !config.output.render {
            return Ok(report_file.to_path_buf());
        }
        let input = ReportInput {
            path: report_file.to_path_buf(),
            rank,
        };
        analyze_report_files(plan, &[input], &context)?
    };
    let md = write_reports(&report, plan, run.root())?;
    print_selection_notes(&report);
    Ok(md)
}
