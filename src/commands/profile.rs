//! `profile-run [KEY=VALUE]... -- WORKLOAD`: plan, run directory, capture, analysis, reports. Three
//! steps: [`validate`] (every check, in [`Plan::new`] and here, before the profiler starts), a dry
//! run that only prints and checks, or [`run`] and its [`outcome`]. What the profiler does is
//! behind [`Profiler`].

use std::path::{Path, PathBuf};

use crate::cli::ProfileArgs;
use crate::config::Loaded;
use crate::console::err_line;
use crate::error::{exit, Error, Result};
use crate::plan::Plan;
use crate::process::{check_workload, received_signal};
use crate::profiler::{AfterRun, BeforeRun, Capture, Judgement, Profiler, ProfilerPlan};
use crate::report::headline;
use crate::report::model::Report;
use crate::run::{self, Journal, Rank, RunDir, RunRecord};

use super::{load_config, print_selection_notes, print_stdout, write_reports};

pub fn profile_command(args: ProfileArgs) -> Result<i32> {
    let checked = validate(&args)?;
    if args.dry_run {
        dry_run(&checked, &args.workload)
    } else {
        run(checked, &args)
    }
}

/// A profile run that passed every check: nothing has started and no directory exists yet.
struct Checked {
    loaded: Loaded,
    plan: Plan,
    root: PathBuf,
    run_name: String,
    rank: Option<Rank>,
}

/// Loads the configuration and checks it and the workload against each other, so that every
/// mistake exits 2 before anything starts.
fn validate(args: &ProfileArgs) -> Result<Checked> {
    let mut loaded = load_config(&args.config)?;
    let settled = Profiler::of(&loaded.config).settle(&mut loaded.config);
    for note in &settled.notes {
        err_line(&format!("note: {note}"));
    }
    let config = &loaded.config;
    if args.workload.is_empty() && settled.needs_workload {
        return Err(Error::Usage(
            "no workload to profile; put its command after `--`: profile-run [OPTIONS] [KEY=VALUE]... -- python train.py"
                .into(),
        ));
    }
    if !args.workload.is_empty() && !settled.needs_workload {
        return Err(Error::Usage(format!(
            "pipeline.neuron.mode is `neff`: the NEFF (pipeline.neuron.neff) runs by itself, so `{}` after `--` would not run; drop it, or profile a workload with --config neuron/default",
            args.workload.join(" ")
        )));
    }
    let plan = Plan::new(config)?;
    let root = run::absolute_root(&config.output.root)?;
    let (run_name, rank) = run::name_for(config, &|var| std::env::var(var).ok())?;
    Ok(Checked {
        loaded,
        plan,
        root,
        run_name,
        rank,
    })
}

/// `--dry-run`: the command lines and run directory, then what the run would find out only after
/// starting (the profiler, then the workload).
fn dry_run(checked: &Checked, workload: &[String]) -> Result<i32> {
    let before = BeforeRun {
        plan: &checked.plan.profiler,
        config: &checked.loaded.config,
    };
    let dir = run::planned_path(&checked.root, &checked.run_name, checked.rank.as_ref());
    let line = before.dry_run(&dir, workload);
    print_stdout(&format!("{line}\nrun directory: {}", dir.display()))?;
    let found = before.check_starts()?;
    check_workload(workload).map_err(|why| Error::Usage(format!("--dry-run: {why}")))?;
    err_line(&format!(
        "checked: {found}; the workload's program was found"
    ));
    Ok(exit::OK)
}

/// Captures, renders what was captured, and turns how the run ended into the exit code.
fn run(checked: Checked, args: &ProfileArgs) -> Result<i32> {
    let Checked {
        loaded,
        plan,
        root,
        run_name,
        rank,
    } = checked;
    BeforeRun {
        plan: &plan.profiler,
        config: &loaded.config,
    }
    .check_runnable()?;
    let run = RunDir::create(&root, &run_name, rank.as_ref())?;
    let record = RunRecord::new(&args.workload, &[], &loaded.fingerprint(), rank);
    let journal = Journal::new(&run, record);
    let finished = Capture {
        plan: &plan.profiler,
        loaded: &loaded,
        journal: &journal,
        workload: &args.workload,
        quiet: args.quiet,
    }
    .run()?;
    let record = journal.into_record();
    let after = AfterRun {
        plan: &plan.profiler,
        loaded: &loaded,
        run: &run,
        record: &record,
        finished: &finished,
        quiet: args.quiet,
    };
    let rendered = after.report().and_then(|report| match report {
        Some(report) => write_and_tell(&report, &plan, run.root(), args.quiet).map(Some),
        None => Ok(None),
    });
    outcome(&after, rendered)
}

/// The exit code of a run that captured: 128+n after a signal, the profiler's failure, a capture
/// that missed passes, or the path of the report (or of the run directory, with `output.render`
/// off) on stdout.
fn outcome(after: &AfterRun<'_, ProfilerPlan>, rendered: Result<Option<PathBuf>>) -> Result<i32> {
    let AfterRun { run, finished, .. } = *after;
    // A signal while the capture was exported or rendered (after ncu ended) still ends the run with
    // 128+n once what was captured is written.
    if let Some(signal) = finished.interrupted_by.or_else(received_signal) {
        // Say why the run might have needed interrupting (a stalled collective, say) and keep 128+n
        // even when rendering what was captured failed: the interrupt is what the caller must see.
        for note in after.interrupted_notes() {
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
    match after.judge(rendered.is_some()) {
        Judgement::Whole => {}
        Judgement::Failed(why) => return Err(why.into()),
        Judgement::Incomplete(missing) => {
            if let Some(md) = &rendered {
                err_line(&format!(
                    "note: report of what was captured: {}",
                    md.display()
                ));
            }
            return Err(missing.into());
        }
    }
    // With output.render off, the run directory (capture and exports) is the result.
    let result = rendered.unwrap_or_else(|| run.root().to_path_buf());
    print_stdout(&result.display().to_string())?;
    Ok(exit::OK)
}

/// Writes the reports and says on stderr what changes how the numbers read and, unless `quiet`, where
/// the time went; returns the path to print.
fn write_and_tell(report: &Report, plan: &Plan, dir: &Path, quiet: bool) -> Result<PathBuf> {
    let md = write_reports(report, plan, dir)?;
    print_selection_notes(report);
    if !quiet {
        for line in headline::lines(report) {
            err_line(&line);
        }
    }
    Ok(md)
}
