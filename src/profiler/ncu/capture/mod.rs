//! A profiling run under ncu: its command line, the run's files (config, command, record, log) and
//! the live progress read from ncu's `==PROF==` lines; what the run left is read in `outcome`.
//!
//! Floor: profiler (see `crate::profiler`): imports run, process, analysis, insights, report,
//! config, region and the ground floor, and its own profiler's rooms.

pub mod cli;
pub mod coverage;
pub mod diagnose;
pub mod export_pages;
mod injection;
pub mod inputs;
pub mod log;
pub mod nvtx;
mod outcome;
pub mod sampling;
pub mod topup;
pub mod trace;

pub use outcome::{failure, incomplete, interrupted_notes, report};

use std::path::Path;

use crate::config::{Config, TimingSource};
use crate::console::err_line;
use crate::error::{Error, Result};
use crate::process::progress::Display;
use crate::process::{resolve_program, run_streaming, Finished, Flow, ProfilerError, Unrunnable};
use crate::profiler::{Capture, ProfilerPlan};
use crate::run::{PassRecord, RunDir, RunRecord, REPORT_BASE};

use self::cli::NcuCli;
use self::log::LOG;

/// One ncu run of a profiling run: the only one, or a pass of a sampled run.
struct Pass {
    /// How messages name it.
    name: &'static str,
    cli: NcuCli,
    /// Its log, in the run directory.
    log: &'static str,
}

/// The ncu runs a profiling run in `dir` makes, in order: one, or the timing and the deep pass of a
/// sampled run (`pipeline.ncu.sampling`), both with the same NVTX filter and process options.
/// Under `timing: trace` the trace pass stands for the timing pass: only a sampled run's deep pass
/// runs under ncu.
fn passes(config: &Config, plan: &ProfilerPlan, dir: &Path, workload: &[String]) -> Vec<Pass> {
    let cli = NcuCli::profile(config, &plan.nvtx, &dir.join(REPORT_BASE), workload);
    let ncu = &config.pipeline.ncu;
    if traced(config) {
        if !ncu.sampling.enabled {
            return Vec::new();
        }
        let deep = sampling::deep_flags(
            &ncu.ncu_cli,
            ncu.sampling.launch_count,
            ncu.sampling.skip_cold_start,
        );
        return vec![Pass {
            name: "ncu's deep pass",
            cli: cli.with_flags(deep, &dir.join(sampling::DEEP_REPORT_BASE)),
            log: sampling::DEEP_LOG,
        }];
    }
    if !ncu.sampling.enabled {
        return vec![Pass {
            name: "ncu",
            cli,
            log: LOG,
        }];
    }
    let timing = sampling::timing_flags(&ncu.ncu_cli, &config.report.time_metric);
    let deep = sampling::deep_flags(
        &ncu.ncu_cli,
        ncu.sampling.launch_count,
        ncu.sampling.skip_cold_start,
    );
    vec![
        Pass {
            name: "ncu's timing pass",
            cli: cli.clone().with_flags(timing, &dir.join(REPORT_BASE)),
            log: LOG,
        },
        Pass {
            name: "ncu's deep pass",
            cli: cli.with_flags(deep, &dir.join(sampling::DEEP_REPORT_BASE)),
            log: sampling::DEEP_LOG,
        },
    ]
}

/// Whether kernel times come from the CUPTI trace (`pipeline.ncu.timing: trace`).
fn traced(config: &Config) -> bool {
    config.pipeline.ncu.timing == TimingSource::Trace
}

/// What `--dry-run` prints: the ncu command line for a run in `dir`, or both of a sampled run (the
/// trace pass's line first under `timing: trace`).
pub fn dry_run(config: &Config, plan: &ProfilerPlan, dir: &Path, workload: &[String]) -> String {
    let passes = passes(config, plan, dir, workload);
    if let Some(first) = passes.first() {
        for warning in first.cli.warnings() {
            err_line(&format!("warning: {warning}"));
        }
    }
    let mut lines: Vec<(&str, String)> = Vec::new();
    if traced(config) {
        lines.push(("the trace pass", trace::shell_line(config, dir, workload)));
    }
    lines.extend(passes.iter().map(|p| (p.name, p.cli.shell_line())));
    lines.extend(coverage::dry_run_note(config, &plan.nvtx));
    let sampling = &config.pipeline.ncu.sampling;
    if sampling.enabled && sampling.adaptive {
        lines.push((
            "a top-up pass may follow",
            format!(
                "# if some launch key's first-pass durations ask for more deep samples than launch_count ({}; at most max_samples, {}), the deep pass's command runs again for those keys, with --kernel-name regex:^(?:NAME|…)$ --launch-skip S+K --launch-count M, writing {}",
                sampling.launch_count,
                sampling.max_samples,
                dir.join(crate::run::ncu_report_file(sampling::TOPUP_REPORT_BASE)).display()
            ),
        ));
    }
    if lines.len() == 1 {
        return lines.remove(0).1;
    }
    lines
        .iter()
        .map(|(name, line)| format!("# {name}\n{line}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Fails with exit 3 and the fix when the configured ncu cannot be started (or, under
/// `timing: trace`, the injection library is missing or not one).
pub fn check_runnable(config: &Config) -> Result<()> {
    if traced(config) {
        trace::check_library(config)?;
        if !config.pipeline.ncu.sampling.enabled {
            return Ok(());
        }
    }
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

/// `--dry-run`'s check of what the run starts, as a clause for its `checked:` line: ncu resolves
/// (exit 3 otherwise) and `ncu --version` answers with a version (exit 3 with its path otherwise: an
/// ncu that cannot start would fail the run). Under `timing: trace` the injection library is found
/// and is an ELF shared object (exit 3 otherwise); a time-only traced run needs no ncu.
pub fn check_starts(config: &Config) -> Result<String> {
    check_runnable(config)?;
    let traced = traced(config);
    let library = traced.then(|| {
        format!(
            "the CUPTI injection library ({}, an ELF shared object) found",
            trace::library(config).display()
        )
    });
    // A time-only traced run starts no ncu: the injection library is all it needs.
    let ncu = if traced && !config.pipeline.ncu.sampling.enabled {
        None
    } else {
        Some(ncu_answers(config)?)
    };
    Ok([library, ncu]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join(", "))
}

/// The Nsight Compute release every fixture and measurement of this project comes from.
const TESTED_NCU: &str = "2025.3";

/// A note for an ncu of another release than [`TESTED_NCU`]: it may name sections and metrics
/// otherwise, or write another report file format, which the reports then say; nothing is refused
/// for the version alone.
fn untested_version_note(version: &str) -> Option<String> {
    let release: Vec<&str> = version.split('.').take(2).collect();
    (release.join(".") != TESTED_NCU).then(|| {
        format!(
            "note: ncu {version} is not the release profile-run is tested with ({TESTED_NCU}.1): sections, metric names and the report file's format may differ; a report names every metric it could not find, and a run that is not sampled can read any release's CSV export instead (pipeline.ncu.reader=csv 'pipeline.ncu.export.pages=[raw]')"
        )
    })
}

/// The version ncu says it is, for the run record; a release other than the tested one is noted
/// unless `quiet`.
fn version_of(program: &str, run: &RunDir, quiet: bool) -> Result<Option<String>> {
    let version = export_pages::profiler_version(program).map_err(|signal| Error::Interrupted {
        signal,
        run_dir: run.root().to_path_buf(),
        captured: false,
    })?;
    let note = version.as_deref().and_then(untested_version_note);
    if let Some(note) = note.filter(|_| !quiet) {
        err_line(&note);
    }
    Ok(version)
}

/// `ncu --version` answers with a version: `ncu 2025.3.1.0 (ncu) runs`.
fn ncu_answers(config: &Config) -> Result<String> {
    let program = &config.pipeline.ncu.executable;
    match export_pages::profiler_version(program) {
        Ok(Some(version)) => {
            if let Some(note) = untested_version_note(&version) {
                err_line(&note);
            }
            Ok(format!("ncu {version} ({program}) runs"))
        }
        Ok(None) => Err(ProfilerError::Spawn {
            program: program.clone(),
            source: std::io::Error::other("`--version` printed no version"),
        }
        .into()),
        Err(signal) => Err(crate::error::Error::Interrupted {
            signal,
            run_dir: std::path::PathBuf::from("no directory (a dry run captures nothing)"),
            captured: false,
        }),
    }
}

/// Runs the workload under ncu into `run`, keeping the run record up to date; returns how ncu ended.
/// A sampled run runs it twice: the deep pass only after a timing pass that succeeded, and how the
/// deep pass went is in the record (`deep_pass`) unless a signal ended it, which is returned.
pub fn capture(plan: &ProfilerPlan, capture: Capture<'_>) -> Result<Finished> {
    let Capture {
        loaded,
        run,
        record,
        workload,
        quiet,
    } = capture;
    let config = &loaded.config;
    let traced = traced(config);
    let passes = passes(config, plan, run.root(), workload);
    if let Some(first) = passes.first() {
        for warning in first.cli.warnings() {
            err_line(&format!("warning: {warning}"));
        }
    }
    let command = |cli: &NcuCli| -> Vec<String> {
        std::iter::once(cli.program().to_string())
            .chain(cli.argv())
            .collect()
    };
    let (timing, deep) = match (traced, passes.as_slice()) {
        (true, [deep]) => (None, Some(deep)),
        (true, _) => (None, None),
        (false, [timing, deep]) => (Some(timing), Some(deep)),
        (false, [only]) => (Some(only), None),
        (false, _) => (None, None),
    };
    record.profiler_command = match timing {
        Some(pass) => command(&pass.cli),
        None => trace_command(config, run.root(), workload),
    };
    record.deep_pass = deep.map(|deep| PassRecord {
        command: command(&deep.cli),
        ..PassRecord::default()
    });
    if let Some(ncu) = passes.first() {
        record.profiler_version = version_of(ncu.cli.program(), run, quiet)?;
    }
    let mut lines: Vec<String> = Vec::new();
    if traced {
        let dir = run.path(trace::TRACE_DIR);
        std::fs::create_dir_all(&dir).map_err(|source| Error::Write { path: dir, source })?;
        lines.push(trace::shell_line(config, run.root(), workload));
    }
    lines.extend(passes.iter().map(|p| p.cli.shell_line()));
    run.write_start(&loaded.to_yaml(), &lines, record)?;

    // A signal between the probe and now: do not start ncu at all.
    if let Some(signal) = crate::process::received_signal() {
        return Err(crate::error::Error::Interrupted {
            signal,
            run_dir: run.root().to_path_buf(),
            captured: false,
        });
    }
    let grace = std::time::Duration::from_secs(config.pipeline.signal_grace_seconds);
    let display = Display::new(quiet);
    let first = match timing {
        Some(pass) => run_pass(pass, run, grace, &display, None)?.0,
        None => run_trace(config, run, workload, grace, &display)?,
    };
    record.finish(&first);
    // Under ncu the workload's exit code is in ncu's log; a traced workload ran as the pass itself.
    let workload_exit = match timing {
        Some(pass) => {
            let log_text = std::fs::read_to_string(run.path(pass.log)).unwrap_or_default();
            log::application_exit_code(&log_text)
        }
        None => first.code.or(first.killed_by.map(|signal| 128 + signal)),
    };
    record.set_workload_exit(workload_exit);
    run.write_record(record)?;
    let Some(deep) = deep.filter(|_| first.success() && first.interrupted_by.is_none()) else {
        display.finish();
        return Ok(first);
    };
    let topup = topup::TopUpRun {
        config,
        plan,
        run,
        workload,
        grace,
        display: &display,
    };
    let finished = run_deep(deep, topup, record);
    display.finish();
    Ok(finished?.unwrap_or(first))
}

/// Runs the deep pass and, in an adaptive run whose keys need more samples, the top-up pass after
/// it; returns how the pass a signal stopped ended (`None`: none was). Both read the first pass's
/// launches: the top-up pass to size it, each pass (`stop_when_covered`) to know when it has
/// profiled everything it will take.
fn run_deep(
    deep: &Pass,
    topup: topup::TopUpRun<'_>,
    record: &mut RunRecord,
) -> Result<Option<Finished>> {
    let (config, run) = (topup.config, topup.run);
    let sampling = &config.pipeline.ncu.sampling;
    let countable = coverage::uncountable(config, &topup.plan.nvtx).is_none();
    let first = (sampling.adaptive || countable)
        .then(|| topup::first_pass_durations(config, topup.plan, run, record));
    let expected = coverage::deep_expected(config, &topup.plan.nvtx, first.as_ref());
    let (finished, covered) = run_pass(deep, run, topup.grace, topup.display, expected)?;
    if let Some(pass) = record.deep_pass.as_mut() {
        pass.finish(&finished, covered);
    }
    record.interrupted_by = finished.interrupted_by;
    run.write_record(record)?;
    if finished.interrupted_by.is_some() {
        return Ok(Some(finished));
    }
    let ended_well = record
        .deep_pass
        .as_ref()
        .is_some_and(PassRecord::ended_well);
    let Some(first) = first.filter(|_| sampling.adaptive && ended_well) else {
        return Ok(None);
    };
    // A top-up pass that fails keeps the deep pass's results: only a signal ends the run here.
    Ok(topup::top_up(topup, record, first.as_ref())?
        .filter(|topped| topped.interrupted_by.is_some()))
}

/// The trace pass's command as run.json records it: the environment, then the workload.
fn trace_command(config: &Config, dir: &Path, workload: &[String]) -> Vec<String> {
    let mut command = vec!["env".to_string()];
    command.extend(
        trace::environment(config, dir)
            .into_iter()
            .map(|(k, v)| format!("{k}={v}")),
    );
    command.extend(workload.iter().cloned());
    command
}

/// Runs the workload under the CUPTI trace, passing its output through.
fn run_trace(
    config: &Config,
    run: &RunDir,
    workload: &[String],
    grace: std::time::Duration,
    display: &Display,
) -> Result<Finished> {
    display.status("starting the trace pass".to_string());
    let (program, expression) = trace::expression(config, run.root(), workload);
    Ok(run_streaming(
        &program,
        expression,
        &run.path(trace::LOG),
        grace,
        &mut |line| {
            display.passthrough(line);
            Flow::Continue
        },
    )?)
}

/// Runs one pass, showing ncu's progress lines as status and passing everything else through;
/// `expected`: the results after which its workload is stopped (`None`: it runs to its end).
/// Returns how ncu ended and, when the workload was stopped, the results counted then.
fn run_pass(
    pass: &Pass,
    run: &RunDir,
    grace: std::time::Duration,
    display: &Display,
    expected: Option<u64>,
) -> Result<(Finished, Option<u64>)> {
    let cli = &pass.cli;
    display.status(format!("starting {}", pass.name));
    let mut coverage = coverage::Coverage::new(expected);
    let finished = run_streaming(
        cli.program(),
        cli.expression(),
        &run.path(pass.log),
        grace,
        &mut |line| match log::parse_prof(line) {
            Some(log::Progress::Profiling { name, index }) => {
                let flow = coverage.profiled();
                let profiled = coverage.count();
                display.status(match flow {
                    Flow::Continue => format!(
                        "{}: profiling {name} (#{index}, {profiled} so far)",
                        pass.name
                    ),
                    // Coverage only ever stops the workload; ncu itself always exits.
                    Flow::StopWorkload | Flow::EndProgram => format!(
                        "{}: all {profiled} results profiled; ending the workload",
                        pass.name
                    ),
                });
                flow
            }
            Some(log::Progress::Connected { process }) => {
                display.status(format!("{}: connected to {process}", pass.name));
                Flow::Continue
            }
            Some(_) => Flow::Continue,
            None => {
                display.passthrough(line);
                Flow::Continue
            }
        },
    )?;
    let covered = expected.filter(|_| finished.workload_stopped);
    Ok((finished, covered))
}

#[cfg(test)]
mod tests {
    use super::untested_version_note;

    #[test]
    fn only_another_release_than_the_tested_one_gets_a_note() {
        assert_eq!(untested_version_note("2025.3.1.0"), None);
        assert_eq!(untested_version_note("2025.3.0.0"), None);
        let note = untested_version_note("2023.2.0.0").unwrap();
        assert!(
            note.contains("ncu 2023.2.0.0") && note.contains("2025.3.1"),
            "{note}"
        );
        assert!(untested_version_note("2025.4.0.0").is_some());
    }
}
