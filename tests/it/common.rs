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
    profile_run::profiler::ncu::observe::source::analyze_exports(&plan.profiler, sets, context)
}

pub use profile_run::profiler::ncu::observe::source::ExportSet;
