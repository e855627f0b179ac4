//! `profile-run diff RUN_A RUN_B`: reads both runs' report.json (a run directory without one, or a
//! Neuron profile such as a `view --output-format json` file, is analysed in memory the way `report`
//! would), compares them with `report::diff`, prints a table or JSON, and exits 6 when a regression
//! gate failed.

use std::path::{Path, PathBuf};

use crate::cli::{ConfigArgs, DiffArgs, DiffFormat};
use crate::console::err_line;
use crate::error::{exit, Error, Result};
use crate::plan::Plan;
use crate::profiler::Profiler;
use crate::report::diff::{self, Gate, RunReport, Verdict};

use super::{load_config, print_stdout};
use crate::console;
use crate::run;

pub fn diff_command(args: DiffArgs) -> Result<i32> {
    let mut gates = gates(&args)?;
    let a = read_side(&args.a, &args.configs)?;
    let b = read_side(&args.b, &args.configs)?;
    resolve_gate_metrics(&mut gates, (&args.a, &a), (&args.b, &b))?;
    let result = diff::compare(
        (&args.a.display().to_string(), &a),
        (&args.b.display().to_string(), &b),
        &gates,
    )
    .map_err(Error::Usage)?;
    if !result.incomparable.is_empty() && !args.allow_incomparable {
        let lines: Vec<String> = result
            .incomparable
            .iter()
            .map(|d| format!("  {}: A {} | B {}", d.what, d.a, d.b))
            .collect();
        return Err(Error::Usage(format!(
            "{} and {} were recorded differently, so their numbers do not compare:\n{}\n  profile both the same way, or pass --allow-incomparable to compare them anyway",
            args.a.display(),
            args.b.display(),
            lines.join("\n")
        )));
    }
    // The table prints its warnings; with JSON on stdout they go to stderr, so that a CI job that
    // keeps only the JSON still shows them in its log, once.
    if args.format == DiffFormat::Json {
        for w in &result.warnings {
            err_line(&format!("warning: {w}"));
        }
    }
    let json = serde_json::to_string_pretty(&result)
        .map_err(|e| Error::Usage(format!("could not serialise the diff: {e}")))?;
    if let Some(path) = &args.json {
        std::fs::write(path, format!("{json}\n")).map_err(|source| Error::Write {
            path: path.clone(),
            source,
        })?;
    }
    match args.format {
        DiffFormat::Table => {
            // Region and scope names come from the inputs: shown, never sent to the terminal raw.
            print_stdout(&console::escape_controls(&diff::table(&result)))?
        }
        DiffFormat::Json => print_stdout(&format!("{json}\n"))?,
    }
    if result.verdict == Verdict::Fail {
        err_line(&format!("regression gate failed: {}", result.summary));
        return Ok(exit::REGRESSION);
    }
    Ok(exit::OK)
}

fn gates(args: &DiffArgs) -> Result<Vec<Gate>> {
    let mut gates = Vec::new();
    if let Some(pct) = &args.fail_above {
        gates.push(diff::gate_time(pct).map_err(Error::Usage)?);
    }
    for text in &args.gate_metrics {
        gates.push(Gate::parse_metric(text).map_err(Error::Usage)?);
    }
    Ok(gates)
}

/// Each `--gate-metric` to the raw name both reports know it by (it may be given by the label the
/// report tables show); a gate on a metric a report lacks would pass by measuring nothing: refused.
fn resolve_gate_metrics(
    gates: &mut [Gate],
    a: (&Path, &RunReport),
    b: (&Path, &RunReport),
) -> Result<()> {
    for gate in gates.iter_mut() {
        let Some(given) = gate.metric.clone() else {
            continue;
        };
        let mut raw = None;
        for (path, report) in [a, b] {
            let Some(name) = report.metric_named(&given) else {
                return Err(Error::Usage(format!(
                    "--gate-metric {given}: {} has no metric `{given}`; gate on one of its metrics, by name or label ({})",
                    path.display(),
                    report
                        .metrics
                        .iter()
                        .map(|m| match &m.label {
                            Some(label) => format!("{} = {label}", m.name),
                            None => m.name.clone(),
                        })
                        .collect::<Vec<_>>()
                        .join(", ")
                )));
            };
            match raw {
                Some(known) if known != name => {
                    return Err(Error::Usage(format!(
                        "--gate-metric {given}: the label means `{known}` in {} but `{name}` in {}; give the raw metric name",
                        a.0.display(),
                        path.display()
                    )));
                }
                _ => raw = Some(name),
            }
        }
        gate.metric = raw.map(str::to_string);
    }
    Ok(())
}

/// A report.json file, a run directory's report.json, or a run directory's capture analysed now; in
/// the words of the profiler it names.
fn read_side(path: &Path, configs: &[PathBuf]) -> Result<RunReport> {
    let mut report = read_report(path, configs)?;
    report.item_noun = Profiler::recorded(&report.run.profiler.name).item_noun();
    Ok(report)
}

fn read_report(path: &Path, configs: &[PathBuf]) -> Result<RunReport> {
    run::check_readable(path)?;
    let file = if path.is_dir() {
        path.join("report.json")
    } else {
        path.to_path_buf()
    };
    if path.is_dir() && std::fs::symlink_metadata(&file).is_err() {
        return analyse_capture(path, configs);
    }
    // A file that is not a report.json is a capture: `diff` reads whatever `report` reads.
    if !path.is_dir() && !run::starts_as_report_json(path)? {
        return analyse_capture(path, configs);
    }
    // A run directory's report.json may be anything a stranger put there: checked, never followed
    // out of the directory, and bounded before it is read.
    let run_dir = path.is_dir().then_some(path);
    let text = run::read_report_json(&file, run_dir)?;
    RunReport::parse(&text).or_else(|e| {
        if Profiler::reads_as_capture(path) {
            return analyse_capture(path, configs);
        }
        Err(Error::Usage(format!("{}: {e}", file.display())))
    })
}

/// A run directory without report.json (`output.render=false`) or a capture file (a CSV export, a
/// report file, a trace, a Neuron profile): the same analysis `report` runs, kept in memory; nothing
/// is written.
fn analyse_capture(dir: &Path, configs: &[PathBuf]) -> Result<RunReport> {
    let loaded = load_config(&ConfigArgs {
        configs: configs.to_vec(),
        overrides: Vec::new(),
    })?;
    let plan = Plan::new(&loaded.config)?;
    // `diff` writes nothing into the runs it compares: a capture that must first be exported (a
    // report file under the CSV reader) is exported into a scratch directory, removed afterwards.
    let mut scratch: Option<PathBuf> = None;
    let found = Profiler::find_inputs(&[dir.to_path_buf()], &loaded.config, &mut |_| {
        if let Some(made) = &scratch {
            return Ok(made.clone());
        }
        let made = run::fresh_dir(&std::env::temp_dir(), "profile-run-diff")?;
        scratch = Some(made.clone());
        Ok(made)
    })
    .map_err(|e| match e {
        Error::Usage(m) => Error::Usage(format!("{} has no report.json; {m}", dir.display())),
        other => other,
    });
    let analysed = found
        .and_then(|inputs| inputs.analyze(&loaded.config, &plan.profiler, loaded.fingerprint()));
    if let Some(made) = scratch {
        let _ = std::fs::remove_dir_all(made);
    }
    let report = analysed?.report;
    let value = serde_json::to_string(&report).map_err(|e| {
        Error::Usage(format!(
            "could not serialise the report of {}: {e}",
            dir.display()
        ))
    })?;
    RunReport::parse(&value).map_err(|e| Error::Usage(format!("{}: {e}", dir.display())))
}
