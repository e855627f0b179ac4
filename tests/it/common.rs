//! Shared helpers for the integration tests.

use std::path::PathBuf;

/// The repository root.
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A committed fixture under tests/fixtures.
pub fn fixture(rel: &str) -> PathBuf {
    repo().join("tests/fixtures").join(rel)
}

/// `profile-run report` of a copy of fixture `rel` (so nothing lands beside the committed file) with
/// `overrides`, into a fresh directory: the directory (kept alive by the guard) and its report.json.
pub fn render_fixture_copy(
    rel: &str,
    overrides: &[&str],
) -> (tempfile::TempDir, PathBuf, serde_json::Value) {
    let dir = tempfile::tempdir().unwrap();
    let name = std::path::Path::new(rel).file_name().unwrap();
    let copy = dir.path().join(name);
    std::fs::copy(fixture(rel), &copy).unwrap();
    let out = dir.path().join("out");
    assert_cmd::Command::cargo_bin("profile-run")
        .unwrap()
        .arg("report")
        .arg(&copy)
        .arg("--out")
        .arg(&out)
        .args(overrides)
        .assert()
        .success();
    let report =
        serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    (dir, out, report)
}

/// The report of raw exports (no details pages, no ranks) under `config`, as `profile-run report`
/// builds it.
pub fn analyze(
    config: &profile_run::config::Config,
    raw: &[PathBuf],
    context: &profile_run::analysis::RunContext,
) -> profile_run::error::Result<profile_run::report::model::Report> {
    let sets: Vec<ExportSet> = raw.iter().cloned().map(ExportSet::raw_only).collect();
    analyze_sets(config, &sets, context)
}

/// The report of several captures' exports under `config`.
pub fn analyze_sets(
    config: &profile_run::config::Config,
    sets: &[ExportSet],
    context: &profile_run::analysis::RunContext,
) -> profile_run::error::Result<profile_run::report::model::Report> {
    let plan = profile_run::plan::Plan::new(config)?;
    let reading = ncu_plan(&plan).reading();
    profile_run::profiler::ncu::observe::source::analyze_exports(&reading, sets, context)
}

/// ncu's part of the plan of an ncu configuration.
pub fn ncu_plan(plan: &profile_run::plan::Plan) -> &profile_run::profiler::ncu::NcuPlan {
    match &plan.profiler {
        profile_run::profiler::ProfilerPlan::Ncu(ncu) => ncu,
        other => panic!("an ncu configuration plans for ncu, not {other:?}"),
    }
}

pub use profile_run::profiler::ncu::observe::source::ExportSet;

/// A `PATH` that finds `python` and `python3` (stubs written under `dir/bin`) before the system's,
/// for `--dry-run` tests that name a Python workload on machines without Python.
pub fn path_with_python(dir: &std::path::Path) -> std::ffi::OsString {
    use std::os::unix::fs::PermissionsExt;
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    for name in ["python", "python3"] {
        let stub = bin.join(name);
        std::fs::write(&stub, "#!/bin/sh\nexit 0\n").unwrap();
        std::fs::set_permissions(&stub, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let mut paths = vec![bin];
    paths.extend(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    ));
    std::env::join_paths(paths).unwrap()
}

/// Whether a racing writer's refusal says the report directory is claimed by another profile-run.
/// The holder may not have written its `pid N on HOST` line yet when the loser reads the claim, so
/// the refusal then names "a writer that has not yet said who it is"; both are the same refusal.
pub fn refused_as_claimed(stderr: &str) -> bool {
    stderr.contains("another profile-run (")
}

/// The name full replay gives a sampled run's metric: a trace-timed run keeps the deep pass's
/// duration as `serialized__` + the time metric, which full replay measured as the time metric.
fn full_replay_name(metric: &str) -> &str {
    metric.strip_prefix("serialized__").unwrap_or(metric)
}

/// Holds a sampled report against full replay of the same workload, region by region of the first
/// scope: kernel counts equal, and every deep metric (`sampling.deep_metrics`) with a non-zero
/// full-replay value within `bound` (relative) of it. How many values were compared.
pub fn assert_deep_values_within(
    sampled: &serde_json::Value,
    full: &serde_json::Value,
    bound: f64,
) -> usize {
    let regions = |r: &serde_json::Value| r["scopes"][0]["regions"].as_array().unwrap().clone();
    let full_regions = regions(full);
    let deep_metrics = sampled["sampling"]["deep_metrics"].as_array().unwrap();
    let value = |r: &serde_json::Value, name: &str| r["inclusive"][name]["value"].as_f64();
    let mut compared = 0;
    for region in regions(sampled) {
        let twin = full_regions
            .iter()
            .find(|r| r["path"] == region["path"])
            .unwrap_or_else(|| panic!("{} in the full run", region["path"]));
        assert_eq!(
            region["kernel_count"], twin["kernel_count"],
            "{}",
            region["path"]
        );
        for metric in deep_metrics {
            let metric = metric.as_str().unwrap();
            let (Some(s), Some(f)) = (
                value(&region, metric),
                value(twin, full_replay_name(metric)),
            ) else {
                continue;
            };
            if f == 0.0 {
                continue;
            }
            assert!(
                (s / f - 1.0).abs() < bound,
                "{} {metric}: sampled {s}, full {f}",
                region["path"]
            );
            compared += 1;
        }
    }
    compared
}

/// How often full replay's value lies inside a sampled report's 95% intervals: over every region
/// of the first scope and every deep metric with an interval whose full-replay twin has a value,
/// (inside, compared, the misses as `path metric: full not in [lo, hi]`).
pub fn interval_coverage(
    sampled: &serde_json::Value,
    full: &serde_json::Value,
) -> (usize, usize, Vec<String>) {
    let regions = |r: &serde_json::Value| r["scopes"][0]["regions"].as_array().unwrap().clone();
    let full_regions = regions(full);
    let (mut inside, mut compared, mut misses) = (0, 0, Vec::new());
    for region in regions(sampled) {
        let Some(twin) = full_regions.iter().find(|r| r["path"] == region["path"]) else {
            continue;
        };
        for (metric, value) in region["inclusive"].as_object().unwrap() {
            let Some(interval) = value["interval95"].as_array() else {
                continue;
            };
            let Some(f) = twin["inclusive"][full_replay_name(metric)]["value"].as_f64() else {
                continue;
            };
            let (lo, hi) = (interval[0].as_f64().unwrap(), interval[1].as_f64().unwrap());
            compared += 1;
            // Full replay's own numbers are rounded the same way: a bound equal to it holds it.
            if lo - 1e-9 * lo.abs() <= f && f <= hi + 1e-9 * hi.abs() {
                inside += 1;
            } else {
                misses.push(format!(
                    "{} {metric}: {f} not in [{lo}, {hi}]",
                    region["path"]
                ));
            }
        }
    }
    (inside, compared, misses)
}

/// Copies the folder `from` (recursively) to `to`: a fixture folder a test may write into.
pub fn copy_tree(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// Gives the traces of the run directory `dir` (`trace/cupti.*.trace[.gz]`) the process id `pid`
/// in their `process` line, so that a rank made by copying another's run is a capture of its own,
/// not a byte copy that `merge` refuses.
pub fn retag_traces(dir: &std::path::Path, pid: u64) {
    use std::io::{Read, Write};
    for entry in std::fs::read_dir(dir.join("trace")).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let gz = name.ends_with(".trace.gz");
        if !gz && !name.ends_with(".trace") {
            continue;
        }
        let bytes = std::fs::read(&path).unwrap();
        let mut text = String::new();
        match gz {
            true => flate2::read::GzDecoder::new(&bytes[..])
                .read_to_string(&mut text)
                .unwrap(),
            false => bytes.as_slice().read_to_string(&mut text).unwrap(),
        };
        let lines: Vec<String> = text
            .split('\n')
            .map(|line| match line.strip_prefix("process\t") {
                Some(rest) => {
                    let tail = rest.split_once('\t').map_or("", |(_, t)| t);
                    format!("process\t{pid}\t{tail}")
                }
                None => line.to_string(),
            })
            .collect();
        let text = lines.join("\n");
        let out = match gz {
            true => {
                let mut enc =
                    flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
                enc.write_all(text.as_bytes()).unwrap();
                enc.finish().unwrap()
            }
            false => text.into_bytes(),
        };
        std::fs::write(&path, out).unwrap();
    }
}

/// `profile-run -q report INPUTS --out OUT`, which must succeed: the report.json it wrote.
pub fn report_json(inputs: &[&std::path::Path], out: &std::path::Path) -> serde_json::Value {
    assert_cmd::Command::cargo_bin("profile-run")
        .unwrap()
        .args(["-q", "report"])
        .args(inputs)
        .arg("--out")
        .arg(out)
        .assert()
        .success();
    serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap()
}
