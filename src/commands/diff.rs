//! `profile-run diff RUN_A RUN_B`: reads both runs' report.json (a run directory without one is
//! analysed in memory from its capture, the way `report` would), compares them with
//! `report::diff`, prints a table or JSON, and exits 6 when a regression gate failed.

use std::path::{Path, PathBuf};

use crate::cli::{ConfigArgs, DiffArgs, DiffFormat};
use crate::console::err_line;
use crate::error::{exit, Error, Result};
use crate::plan::Plan;
use crate::report::diff::{self, Gate, RunReport, Verdict};

use super::{load_config, print_stdout};

pub fn diff_command(args: DiffArgs) -> Result<i32> {
    let gates = gates(&args)?;
    let a = read_side(&args.a, &args.configs)?;
    let b = read_side(&args.b, &args.configs)?;
    check_gate_metrics(&gates, (&args.a, &a), (&args.b, &b))?;
    let result = diff::compare(
        (&args.a.display().to_string(), &a),
        (&args.b.display().to_string(), &b),
        &gates,
    );
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
    let json = serde_json::to_string_pretty(&result)
        .map_err(|e| Error::Usage(format!("could not serialise the diff: {e}")))?;
    if let Some(path) = &args.json {
        std::fs::write(path, format!("{json}\n")).map_err(|source| Error::Write {
            path: path.clone(),
            source,
        })?;
    }
    match args.format {
        DiffFormat::Table => print_stdout(&diff::table(&result))?,
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

/// A gate on a metric neither report collected would pass by measuring nothing: refuse it.
fn check_gate_metrics(
    gates: &[Gate],
    a: (&Path, &RunReport),
    b: (&Path, &RunReport),
) -> Result<()> {
    for metric in gates.iter().filter_map(|g| g.metric.as_deref()) {
        for (path, report) in [a, b] {
            if !report.metrics.iter().any(|m| m.name == metric) {
                return Err(Error::Usage(format!(
                    "--gate-metric {metric}: {} has no metric `{metric}`; gate on one of its metrics ({})",
                    path.display(),
                    report
                        .metrics
                        .iter()
                        .map(|m| m.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                )));
            }
        }
    }
    Ok(())
}

/// A report.json file, a run directory's report.json, or a run directory's capture analysed now.
fn read_side(path: &Path, configs: &[PathBuf]) -> Result<RunReport> {
    let file = if path.is_dir() {
        path.join("report.json")
    } else {
        path.to_path_buf()
    };
    if path.is_dir() && !file.exists() {
        return analyse_run_dir(path, configs);
    }
    let text = std::fs::read_to_string(&file).map_err(|e| {
        Error::Usage(format!(
            "cannot read {}: {e}; give a run directory or a report.json",
            file.display()
        ))
    })?;
    RunReport::parse(&text).map_err(|e| Error::Usage(format!("{}: {e}", file.display())))
}

/// A run directory without report.json (`output.render=false`): the same analysis `report` runs,
/// kept in memory; nothing is written into the run directory.
fn analyse_run_dir(dir: &Path, configs: &[PathBuf]) -> Result<RunReport> {
    let loaded = load_config(&ConfigArgs {
        configs: configs.to_vec(),
        overrides: Vec::new(),
    })?;
    let plan = Plan::new(&loaded.config)?;
    let inputs = crate::profiler::ncu::inputs::resolve_inputs(
        &[dir.to_path_buf()],
        &loaded.config,
        &mut || {
            Err(Error::Usage(format!(
            "{} has no report.json and no capture to analyse; run `profile-run report` on it first",
            dir.display()
        )))
        },
    )
    .map_err(|e| match e {
        Error::Usage(m) => Error::Usage(format!("{} has no report.json; {m}", dir.display())),
        other => other,
    })?;
    let mut context = inputs.context.clone();
    context.config_fingerprint = loaded.fingerprint();
    let report =
        crate::profiler::ncu::inputs::analyze_inputs(&plan, &loaded.config, &inputs, &context)?;
    let value = serde_json::to_string(&report).map_err(|e| {
        Error::Usage(format!(
            "could not serialise the report of {}: {e}",
            dir.display()
        ))
    })?;
    RunReport::parse(&value).map_err(|e| Error::Usage(format!("{}: {e}", dir.display())))
}
