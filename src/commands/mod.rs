//! The commands: `profile` (the default), `report`, `merge`, `diff` and `config show`. Each is thin: it turns
//! parsed arguments into a checked plan and hands the work to the run, profiler, analysis and report
//! modules; nothing here parses profiler output or builds a profiler's flags.
//!
//! Floor: entry (with `lib.rs` and `cli.rs`). May import every floor below; names no profiler
//! module (profilers through `enum Profiler`). (docs/architecture.md, checked by
//! tests/it/architecture.rs)

mod diff;
mod profile;
mod report;

use std::path::{Path, PathBuf};

use crate::cli::{Cli, Command, ConfigArgs, ConfigCommand, ReportArgs};
use crate::config::{self, ConfigSources, Loaded};
use crate::console::err_line;
use crate::error::{exit, Error, Result};
use crate::plan::Plan;
use crate::report::model::Report;
use crate::report::render;

use crate::console;
use crate::process::watchdog;
use profile::profile_command;
use report::report_command;

pub fn main() -> Result<i32> {
    let cli = Cli::from_env().resolve().map_err(Error::Usage)?;
    match cli.command {
        Some(Command::Report(args)) => report_command(args),
        // `merge` is `report` given several captures: the same inputs, the same analysis.
        Some(Command::Merge(args)) => report_command(ReportArgs {
            merging: true,
            ..args
        }),
        Some(Command::Diff(args)) => diff::diff_command(args),
        Some(Command::Config(ConfigCommand::Show {
            origin,
            all,
            config,
        })) => {
            let loaded = load_config(&config)?;
            print_stdout(&match (all, origin) {
                (true, true) => loaded.show_with_origin(),
                (true, false) => loaded.to_yaml(),
                (false, origin) => loaded.show_own(origin),
            })?;
            Ok(exit::OK)
        }
        Some(Command::WatchProfiler { pid, started }) => Ok(watchdog::watch(pid, started)),
        None => profile_command(cli.profile),
    }
}

/// The files `report.outputs` writes at the top of a report directory (report.md, report.json,
/// report.html, trace.json), to check for before any input is read.
pub fn planned_files(plan: &Plan) -> Vec<&'static str> {
    render::outputs_for(&plan.outputs, &plan.render)
        .iter()
        .filter(|o| o.writes_main_file())
        .map(|o| o.file_name())
        .collect()
}

/// Prints to stdout; a closed pipe (`| head`) is not an error, a full disk (`> /dev/full`) is.
pub(crate) fn print_stdout(text: &str) -> Result<()> {
    console::out_text(text).map_err(|source| Error::Stdout { source })
}

pub(crate) fn load_config(args: &ConfigArgs) -> Result<Loaded> {
    load_config_over(None, args)
}

/// The configuration with a run directory's recorded one beneath the command's own; each recorded
/// value left out (it names a program or a file) is named on stderr.
pub(crate) fn load_config_over(
    recorded: Option<&config::Recorded>,
    args: &ConfigArgs,
) -> Result<Loaded> {
    let sources = ConfigSources::with_process_env(args.configs.clone(), args.overrides.clone());
    let loaded = config::load_over(recorded, &sources)?;
    if let Some(recorded) = recorded {
        for ignored in &loaded.ignored {
            let why = match ignored.limit {
                true => "limits come from your own configuration, never a run directory's",
                false => "a run directory's configuration names no program or file",
            };
            err_line(&format!(
                "note: {} records {}: {} ({}); not used, since {why}: set it with --config or {}=VALUE, or pass --trust-run-config for a run directory of your own",
                recorded.path.display(),
                ignored.key,
                ignored.recorded,
                ignored.names,
                ignored.key,
            ));
        }
    }
    Ok(loaded)
}

/// The notes that change how the numbers read (`Report::console_notes`), repeated on stderr.
pub(crate) fn print_selection_notes(report: &Report) {
    for note in &report.console_notes {
        err_line(&format!("note: {}", note.replace('\n', " ")));
    }
}

/// Writes the outputs of `report.outputs` into `dir` (atomically, all or none) and returns the path
/// to print: report.md's when it is among them, else the first output's. No file already there is
/// replaced.
pub fn write_reports(report: &Report, plan: &Plan, dir: &Path) -> Result<PathBuf> {
    write_reports_into(report, plan, dir, false)
}

/// [`write_reports`], replacing what is there when `replace` (`--force`).
pub fn write_reports_into(
    report: &Report,
    plan: &Plan,
    dir: &Path,
    replace: bool,
) -> Result<PathBuf> {
    let outputs = render::outputs_for(&plan.outputs, &plan.render);
    let refs: Vec<&dyn render::Output> = outputs.iter().map(|o| o.as_ref()).collect();
    let written = if replace {
        render::write_all_replacing(report, &refs, dir, 2)?
    } else {
        render::write_all(report, &refs, dir, 2)?
    };
    let md = plan.outputs.iter().position(|f| *f == render::Format::Md);
    Ok(written[md.unwrap_or(0)].clone())
}
