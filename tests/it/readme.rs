//! The README's promises checked against the repository: the Rust version it names, the kernel-pattern
//! command it shows (run on the shipped fixture), and the steps of `.ci/run` it lists.

use crate::common::analyze;
use profile_run::analysis::RunContext;
use profile_run::config::{load, ConfigSources};

use crate::common::{fixture, repo};

fn read(rel: &str) -> String {
    std::fs::read_to_string(repo().join(rel)).unwrap()
}

#[test]
fn the_readme_names_cargo_toml_s_rust_version() {
    let cargo = read("Cargo.toml");
    let version = cargo
        .lines()
        .find_map(|l| l.strip_prefix("rust-version = "))
        .unwrap()
        .trim_matches('"');
    assert!(
        read("README.md").contains(&format!("Needs a Rust toolchain, {version} or newer")),
        "README and Cargo.toml disagree on {version}"
    );
}

#[test]
fn the_readme_s_kernel_pattern_command_selects_the_gemms() {
    let readme = read("README.md");
    // The shown command, continuation lines joined, split as a shell would.
    let command = readme.replace("\\\n", " ");
    let line = command
        .lines()
        .find(|l| l.contains("report.kernels.include="))
        .unwrap();
    let argv = shell_words::split(line).unwrap();
    let overrides: Vec<String> = argv
        .iter()
        .filter(|a| a.starts_with("report.kernels."))
        .cloned()
        .collect();
    assert_eq!(overrides.len(), 2, "{argv:?}");
    let config = load(&ConfigSources {
        overrides,
        ..ConfigSources::default()
    })
    .unwrap()
    .config;
    assert_eq!(config.report.kernels.include, ["*gemm*"]);
    let report = analyze(
        &config,
        &[fixture("ncu/h200-2025.3.1/manual_raw.csv")],
        &RunContext::default(),
    )
    .unwrap();
    // manual_raw.csv holds 11 GEMM results (region A/A1) among 100.
    assert_eq!(report.kernel_selection.results_selected, 11);
    assert_eq!(report.kernel_selection.results_excluded, 89);
    let kernels = &report.scopes[0].regions;
    assert!(kernels
        .iter()
        .flat_map(|r| &r.kernels)
        .all(|k| k.name.contains("gemm")));
}

#[test]
fn the_readme_lists_every_step_of_ci_run() {
    let readme = read("README.md");
    let ci = read(".ci/run");
    let steps: Vec<&str> = ci
        .lines()
        .filter(|l| {
            let l = l.trim_start();
            l.starts_with("cargo ") || l.starts_with("benches/") || l.starts_with("PROPTEST_CASES=")
        })
        .map(|l| l.trim().split(" \"$out\"").next().unwrap())
        .collect();
    assert!(steps.len() >= 6, "{steps:?}");
    for step in steps {
        let shown = if step.starts_with("cargo run --release -- report") {
            "report command above"
        } else {
            step
        };
        assert!(readme.contains(shown), "README does not list `{step}`");
    }
}
