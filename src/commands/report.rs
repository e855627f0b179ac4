//! `profile-run report|merge INPUT...`: captures already on disk (run directories, exports, report
//! files, Neuron profiles told apart by content) analysed again, into a fresh or `--force`d directory.
//! A run directory is re-rendered with the configuration it recorded (`config.yaml`), with the
//! command's own `--config` files and overrides on top; other inputs with the command's alone. The
//! recorded configuration is data: what it says about programs and files is left out unless
//! `--trust-run-config` (`config::trust`).

use crate::cli::ReportArgs;
use crate::error::{exit, Error, Result};
use crate::plan::Plan;
use crate::profiler::{Analysed, Profiler};
use crate::run;

use super::{
    load_config_over, planned_files, print_selection_notes, print_stdout, write_reports_into,
};
use crate::config::trust;
use crate::config::Recorded;
use crate::console;
use crate::report::model::Report;
use crate::report::workload;

pub fn report_command(args: ReportArgs) -> Result<i32> {
    let (input_paths, config_args) = args.split();
    // Before any directory is made: a refused input leaves nothing behind.
    run::check_report_inputs(&input_paths)?;
    let recorded = recorded_config(&input_paths).map(|path| Recorded {
        path,
        trusted: args.trust_run_config,
    });
    let loaded = load_config_over(recorded.as_ref(), &config_args)?;
    let plan = Plan::new(&loaded.config)?;
    if input_paths.is_empty() {
        return Err(Error::Usage(
            "no input given; name a run directory, a `--page raw` CSV export, an .ncu-rep or a Neuron profile".into(),
        ));
    }
    let mut out = run::ReportOut::new(
        args.out.clone(),
        args.force,
        &loaded.config.output.root,
        planned_files(&plan),
    )?;
    // `merge` writes nothing into its inputs: neither exported pages nor the report.
    let merging = args.merging;
    let inputs = Profiler::find_inputs(&input_paths, &loaded.config, &mut |run| {
        out.export_dir(run.filter(|_| !merging))
    })?;
    let Analysed { report, details } =
        inputs.analyze(&loaded.config, &plan.profiler, loaded.fingerprint())?;
    if args.verbose {
        for line in &details {
            console::err_line(&format!("note: {line}"));
        }
    }
    if inputs.merges_captures() && !args.allow_incomparable {
        refuse_unrelated(&report)?;
    }
    // Created only now, so a failed analysis leaves no empty directory behind.
    let (out, _claim) = out.into_dir(inputs.run_dir().filter(|_| !merging))?;
    let md = write_reports_into(&report, &plan, &out, args.force)?;
    print_selection_notes(&report);
    print_stdout(&md.display().to_string())?;
    Ok(exit::OK)
}

/// Several captures merged into one report must be one workload (the ranks of one job): captures on
/// different GPU models, or whose kernels barely overlap, would add up to numbers about nothing.
fn refuse_unrelated(report: &Report) -> Result<()> {
    let why = workload::unrelated_scopes(report);
    if why.is_empty() {
        return Ok(());
    }
    Err(Error::Usage(format!(
        "these inputs look like unrelated runs, so one report of them would mix workloads:\n  {}\n  merge captures of one workload (the ranks of one job), or pass --allow-incomparable to merge them anyway",
        why.join("\n  ")
    )))
}

/// The configuration the first run directory among the inputs recorded (its own `config.yaml`, or
/// its first rank's), said on stderr; `None` when no input is a run directory. Merged runs were
/// profiled alike, so the first stands for all; one recorded differently is named.
fn recorded_config(inputs: &[std::path::PathBuf]) -> Option<std::path::PathBuf> {
    let recorded: Vec<std::path::PathBuf> = inputs
        .iter()
        .filter(|p| p.is_dir())
        .filter_map(|dir| {
            let own = dir.join(run::CONFIG_FILE);
            if own.is_file() {
                return Some(own);
            }
            let mut ranks: Vec<_> = std::fs::read_dir(dir)
                .ok()?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| {
                    p.file_name()
                        .and_then(|n| n.to_str())
                        .is_some_and(|n| n.starts_with("rank"))
                        && p.join(run::CONFIG_FILE).is_file()
                })
                .collect();
            ranks.sort();
            ranks.first().map(|r| r.join(run::CONFIG_FILE))
        })
        .collect();
    let first = recorded.first()?.clone();
    let text = |p: &std::path::Path| trust::read_recorded(p).unwrap_or_default();
    let first_text = text(&first);
    for other in recorded.iter().skip(1).filter(|p| text(p) != first_text) {
        console::err_line(&format!(
            "note: {} differs from {}; the report uses the first (give --config or overrides to change it)",
            other.display(),
            first.display()
        ));
    }
    console::err_line(&format!(
        "note: using the configuration recorded in {} (--config files and overrides apply on top)",
        first.display()
    ));
    Some(first)
}
