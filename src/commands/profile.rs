//! `profile-run [KEY=VALUE]... -- WORKLOAD`: plan, run directory, capture, analysis, reports. Every
//! check runs in [`Plan::new`] before the profiler starts; what the profiler does is behind
//! [`Profiler`].

use crate::cli::ProfileArgs;
use crate::console::err_line;
use crate::error::{exit, Error, Result};
use crate::plan::Plan;
use crate::profiler::{Capture, Profiler};
use crate::run::{self, RunDir, RunRecord};

use super::{load_config, print_selection_notes, print_stdout, write_reports};

pub fn profile_command(args: ProfileArgs) -> Result<i32> {
    let mut loaded = load_config(&args.config)?;
    let profiler = Profiler::of(&loaded.config);
    for note in profiler.settle(&mut loaded.config) {
        err_line(&format!("note: {note}"));
    }
    let config = &loaded.config;
    if args.workload.is_empty() && profiler.needs_workload(config) {
        return Err(Error::Usage(
            "no workload to profile; put its command after `--`: profile-run [OPTIONS] [KEY=VALUE]... -- python train.py"
                .into(),
        ));
    }
    if !args.workload.is_empty() && !profiler.needs_workload(config) {
        return Err(Error::Usage(format!(
            "pipeline.neuron.mode is `neff`: the NEFF (pipeline.neuron.neff) runs by itself, so `{}` after `--` would not run; drop it, or profile a workload with --config neuron/default",
            args.workload.join(" ")
        )));
    }
    let plan = Plan::new(config)?;
    let root = run::absolute_root(&config.output.root)?;
    let (run_name, rank) = run::name_for(config, &|var| std::env::var(var).ok())?;

    if args.dry_run {
        return dry_run(
            profiler,
            config,
            &plan,
            &args.workload,
            &root,
            &run_name,
            rank.as_ref(),
        );
    }

    profiler.check_runnable(&plan.profiler, config)?;
    let run = RunDir::create(&root, &run_name, rank.as_ref())?;
    let mut record = RunRecord::new(&args.workload, &[], &loaded.fingerprint(), rank);
    let finished = profiler.capture(
        &plan.profiler,
        Capture {
            loaded: &loaded,
            run: &run,
            record: &mut record,
            workload: &args.workload,
            quiet: args.quiet,
        },
    )?;
    let rendered = profiler
        .report(&loaded, &plan.profiler, &run, &record, args.quiet)
        .and_then(|report| match report {
            Some(report) => write_and_tell(&report, &plan, run.root(), args.quiet).map(Some),
            None => Ok(None),
        });

    // A signal while the capture was exported or rendered (after ncu ended) still ends the run with
    // 128+n once what was captured is written.
    if let Some(signal) = finished
        .interrupted_by
        .or_else(crate::process::received_signal)
    {
        // Say why the run might have needed interrupting (a stalled collective, say) and keep 128+n
        // even when rendering what was captured failed: the interrupt is what the caller must see.
        for note in profiler.interrupted_notes(config, &run, &finished) {
            err_line(&format!("note: {note}"));
        }
        if let Err(render_error) = &rendered {
            err_line(&format!(
                "note: the partial capture could not be rendered: {render_error}"
            ));
        }
        return Err(Error::Interrupted {
            signal,
            run_dir: run.root().to_path_buf(),
            captured: !matches!(rendered, Ok(None)),
        });
    }
    let rendered = rendered?;
    if !finished.success() || (rendered.is_none() && config.output.render) {
        return Err(profiler
            .failure(&plan.profiler, config, &run, &finished, rendered.is_some())
            .into());
    }
    if let Some(missing) = profiler.incomplete(&run, &record) {
        if let Some(md) = &rendered {
            err_line(&format!(
                "note: report of what was captured: {}",
                md.display()
            ));
        }
        return Err(missing.into());
    }
    // With output.render off, the run directory (capture and exports) is the result.
    let result = rendered.unwrap_or_else(|| run.root().to_path_buf());
    print_stdout(&result.display().to_string())?;
    Ok(exit::OK)
}

/// `--dry-run`: the command lines and run directory, then what the run would find out only after
/// starting (the profiler, then the workload).
fn dry_run(
    profiler: Profiler,
    config: &crate::config::Config,
    plan: &Plan,
    workload: &[String],
    root: &std::path::Path,
    run_name: &str,
    rank: Option<&run::Rank>,
) -> Result<i32> {
    let dir = run::planned_path(root, run_name, rank);
    let line = profiler.dry_run(config, &plan.profiler, &dir, workload);
    print_stdout(&format!("{line}\nrun directory: {}", dir.display()))?;
    let found = profiler.check_starts(&plan.profiler, config)?;
    crate::process::check_workload(workload)
        .map_err(|why| Error::Usage(format!("--dry-run: {why}")))?;
    err_line(&format!(
        "checked: {found}; the workload's program was found"
    ));
    Ok(exit::OK)
}

/// Writes the reports and says on stderr what changes how the numbers read and, unless `quiet`, where
/// the time went; returns the path to print.
fn write_and_tell(
    report: &crate::report::model::Report,
    plan: &Plan,
    dir: &std::path::Path,
    quiet: bool,
) -> Result<std::path::PathBuf> {
    let md = write_reports(report, plan, dir)?;
    print_selection_notes(report);
    if !quiet {
        for line in crate::report::headline::lines(report) {
            err_line(&line);
        }
    }
    Ok(md)
}
