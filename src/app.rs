//! Commands: profile, report, merge, config show. Each turns parsed arguments into work on the other
//! modules; nothing here parses CSV or builds ncu flags itself.

use std::path::{Path, PathBuf};

use clap::Parser;

use crate::analysis::RunContext;
use crate::cli::{Cli, Command, ConfigArgs, ConfigCommand, ProfileArgs, ReportArgs};
use crate::config::{self, ConfigSources, Loaded};
use crate::console::err_line;
use crate::error::{exit, Error, Result};
use crate::plan::Plan;
use crate::process::progress::Display;
use crate::process::{resolve_program, run_streaming, ProfilerError, Unrunnable};
use crate::profiler::ncu::cli::NcuCli;
use crate::profiler::ncu::source::{analyze_exports, ExportSet};
use crate::profiler::ncu::{export_pages, log};
use crate::report::model::Report;
use crate::report::render;
use crate::report::render::json::Json;
use crate::report::render::markdown::Markdown;
use crate::run::{self, RunDir, RunRecord};

pub fn main() -> Result<i32> {
    let cli = Cli::parse();
    match cli.command {
        Some(Command::Report(args)) => report_command(args),
        // `merge` is `report` given several captures: the same inputs, the same analysis.
        Some(Command::Merge(args)) => report_command(args),
        Some(Command::Config(ConfigCommand::Show { origin, config })) => {
            let loaded = load_config(&config)?;
            print_stdout(&if origin {
                loaded.show_with_origin()
            } else {
                loaded.to_yaml()
            })?;
            Ok(exit::OK)
        }
        None => profile_command(cli.profile),
    }
}

/// Prints to stdout; a closed pipe (`| head`) is not an error, a full disk (`> /dev/full`) is.
fn print_stdout(text: &str) -> Result<()> {
    crate::console::out_text(text).map_err(|source| Error::Stdout { source })
}

fn load_config(args: &ConfigArgs) -> Result<Loaded> {
    let sources = ConfigSources::with_process_env(args.configs.clone(), args.overrides.clone());
    Ok(config::load(&sources)?)
}

fn profile_command(args: ProfileArgs) -> Result<i32> {
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

/// Explains a failed profiler run from its exit status and log.
fn failure(
    finished: &crate::process::Finished,
    log_text: &str,
    run: &RunDir,
    partial_report: bool,
) -> ProfilerError {
    let diagnoses = log::diagnose(log_text);
    let workload_code = log::application_exit_code(log_text);
    let (cause, fix) = match diagnoses.first() {
        Some(d) => (d.cause.clone(), d.fix.clone()),
        None if workload_code.is_some() => (
            format!(
                "the workload exited with an error{}",
                workload_code.map(shell_signal_note).unwrap_or_default()
            ),
            "run the workload without profile-run to see its own error; its output is in the log"
                .to_string(),
        ),
        None if finished.killed_by.is_some() => (
            format!(
                "ncu was killed by signal {}",
                signal_name(finished.killed_by.unwrap_or_default())
            ),
            "if the OOM killer or a batch system's limit stopped it, give the job more memory or time; \
             otherwise profile fewer kernels (tighter regions.include, fewer sections) and keep the log \
             for a bug report to NVIDIA"
                .to_string(),
        ),
        None if !partial_report => (
            "ncu wrote no report".to_string(),
            "see the log for ncu's own message".to_string(),
        ),
        None => (
            "ncu exited with an error".to_string(),
            "see the log for ncu's own message".to_string(),
        ),
    };
    let mut code = match (workload_code, finished.code, finished.killed_by) {
        (Some(w), _, _) => format!(" (workload exit code {w})"),
        (None, Some(c), _) => format!(" (ncu exit code {c})"),
        (None, None, Some(s)) => format!(" (killed by signal {s})"),
        _ => String::new(),
    };
    if partial_report {
        code.push_str(&format!(
            "; a partial report from what was captured is in {}",
            run.root().display()
        ));
    }
    let tail: Vec<&str> = log_text.lines().rev().take(8).collect();
    ProfilerError::Failed(Box::new(crate::process::Failure {
        what: "profiling".into(),
        code,
        cause,
        fix,
        log: run.path("ncu.log"),
        tail: if tail.is_empty() {
            String::new()
        } else {
            format!(
                "\n  last lines of the log:\n    {}",
                tail.into_iter().rev().collect::<Vec<_>>().join("\n    ")
            )
        },
    }))
}

/// `11 (SIGSEGV)`, or just the number for a signal this platform does not name.
fn signal_name(signal: i32) -> String {
    match nix::sys::signal::Signal::try_from(signal) {
        Ok(s) => format!("{signal} ({})", s.as_str()),
        Err(_) => signal.to_string(),
    }
}

/// For an exit code above 128, which shells and ncu report for a process killed by signal
/// `code - 128`: ` (139 = 128 + 11: killed by signal 11 (SIGSEGV))`.
fn shell_signal_note(code: i32) -> String {
    match code.checked_sub(128) {
        Some(signal) if (1..=64).contains(&signal) => {
            format!(
                " ({code} = 128 + {signal}: killed by signal {})",
                signal_name(signal)
            )
        }
        _ => String::new(),
    }
}

/// Exports the run's .ncu-rep to CSV, analyses it and writes the reports. Returns report.md's path.
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
    let raw = pages
        .iter()
        .find(|(page, _)| page == "raw")
        .map(|(_, path)| path.clone());
    let raw = raw.ok_or_else(|| {
        Error::Usage("pipeline.ncu.export.pages must include `raw` to build region reports".into())
    })?;
    if !config.output.render {
        return Ok(raw);
    }
    let set = ExportSet {
        details: pages
            .iter()
            .find(|(page, _)| page == "details")
            .map(|(_, path)| path.clone()),
        raw,
        rank: record.rank.as_ref().map(|r| r.rank),
    };
    let context = RunContext {
        command: record.workload.clone(),
        profiler_command: record.profiler_command.clone(),
        profiler_version: record.profiler_version.clone(),
        config_fingerprint: loaded.fingerprint(),
    };
    let report = analyze_exports(plan, &[set], &context)?;
    let md = write_reports(&report, plan, run.root())?;
    print_selection_notes(&report);
    Ok(md)
}

/// The starts of the report notes that mean the numbers are not what was asked for: a requested metric
/// missing from the export, a kernel pattern that matched nothing, a kernel selection that left no
/// result. They are in report.md and report.json; these are repeated on stderr, where a user who does
/// not open the report sees them.
const STDERR_NOTES: &[&str] = &[
    "Not in the inputs, so not shown:",
    "The time metric `",
    "report.kernels.",
    "The kernel selection (report.kernels) left no result",
];

fn print_selection_notes(report: &Report) {
    for note in &report.notes {
        if STDERR_NOTES.iter().any(|start| note.starts_with(start)) {
            err_line(&format!("note: {}", note.replace('\n', " ")));
        }
    }
}

/// Writes report.md and report.json into `dir` (atomically, both or neither) and returns report.md's
/// path.
pub fn write_reports(report: &Report, plan: &Plan, dir: &Path) -> Result<PathBuf> {
    let markdown = Markdown {
        options: plan.markdown.clone(),
    };
    let json = Json {
        threads: plan.markdown.threads,
    };
    let written = render::write_all(report, &[&markdown, &json], dir, 2)?;
    Ok(written[0].clone())
}

fn report_command(args: ReportArgs) -> Result<i32> {
    let (input_paths, config_args) = args.split();
    let loaded = load_config(&config_args)?;
    let plan = Plan::new(&loaded.config)?;
    if input_paths.is_empty() {
        return Err(Error::Usage(
            "no input given; name a run directory, a `--page raw` CSV export or an .ncu-rep".into(),
        ));
    }
    let mut out = run::ReportOut::new(args.out.clone(), args.force, &loaded.config.output.root)?;
    let inputs = run::resolve_inputs(&input_paths, &loaded.config, &mut || out.bare_export_dir())?;
    let mut context = inputs.context.clone();
    context.config_fingerprint = loaded.fingerprint();
    let report = analyze_exports(&plan, &inputs.exports, &context)?;
    // Created only now, so a failed analysis leaves no empty directory behind.
    let out = out.into_dir(inputs.run_dir.as_deref())?;
    let md = write_reports(&report, &plan, &out)?;
    print_selection_notes(&report);
    print_stdout(&md.display().to_string())?;
    Ok(exit::OK)
}
