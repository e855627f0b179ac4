//! The README's promises checked against the repository: the Rust version it names, its shape as a
//! front door (length, order, the first command a newcomer can run), the blocks `.ci/run` takes from
//! it, the steps of `.ci/run` it lists, and the quick start's kernel-pattern command (run on the
//! shipped fixture).

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
fn the_quick_start_s_kernel_pattern_command_selects_the_gemms() {
    let page = read("docs/quick-start.md");
    // The shown command, continuation lines joined, split as a shell would.
    let command = page.replace("\\\n", " ");
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
        .map(str::trim)
        .filter(|l| {
            l.starts_with("cargo ") || l.starts_with("benches/") || l.starts_with("PROPTEST_CASES=")
        })
        .collect();
    assert!(steps.len() >= 6, "{steps:?}");
    for step in steps {
        assert!(readme.contains(step), "README does not list `{step}`");
    }
}

/// The README's lines up to its `## More` heading.
fn front_door(readme: &str) -> Vec<&str> {
    readme.lines().take_while(|l| *l != "## More").collect()
}

/// The fenced block after the `<!-- ci: NAME -->` line, and the line the marker is on.
fn marked_block<'a>(readme: &'a str, name: &str) -> Option<(usize, Vec<&'a str>)> {
    let lines: Vec<&str> = readme.lines().collect();
    let marker = lines
        .iter()
        .position(|l| *l == format!("<!-- ci: {name} -->"))?;
    let open = marker
        + 1
        + lines[marker + 1..]
            .iter()
            .position(|l| l.starts_with("```"))?;
    let close = open
        + 1
        + lines[open + 1..]
            .iter()
            .position(|l| l.starts_with("```"))?;
    Some((marker + 1, lines[open + 1..close].to_vec()))
}

#[test]
fn the_readme_is_a_short_front_door_in_the_newcomer_s_order() {
    let readme = read("README.md");
    let door = front_door(&readme);
    assert!(
        door.len() < readme.lines().count(),
        "README.md has no `## More` heading"
    );
    assert!(door.len() <= 120, "{} lines before `## More`", door.len());
    let headings: Vec<&str> = door
        .iter()
        .copied()
        .filter(|l| l.starts_with("## "))
        .collect();
    assert_eq!(
        headings,
        [
            "## Try it without a GPU",
            "## Install",
            "## Profile your program",
            "## Mark regions in PyTorch",
            "## Headline figures",
        ]
    );
    // What it is: three lines between the title and the first heading.
    let intro = door[1..door.iter().position(|l| l.starts_with("## ")).unwrap()]
        .iter()
        .filter(|l| !l.is_empty())
        .count();
    assert_eq!(intro, 3);
    // The first command that runs without a GPU: the demo, on a real GPT-2 capture.
    let (line, demo) = marked_block(&readme, "demo").expect("a block marked <!-- ci: demo -->");
    assert!(line <= 40, "the demo starts at line {line}");
    assert!(
        demo.iter()
            .any(|l| l.contains("report tests/fixtures/") && l.contains("gpt2")),
        "{demo:?}"
    );
    let first_fence = door.iter().position(|l| l.starts_with("```")).unwrap() + 1;
    assert_eq!(
        first_fence,
        line + 1,
        "the demo is the README's first command"
    );
    // The three GPU commands, each explained in a line of its own.
    for preset in ["ncu/trace", "ncu/sampled", "ncu/default"] {
        assert!(
            door.iter()
                .any(|l| l.starts_with("profile-run -c ") && l.contains(preset)),
            "no `profile-run -c {preset}` command"
        );
        assert!(
            door.iter()
                .any(|l| l.starts_with(&format!("- **`{preset}`**"))),
            "no line on when to use {preset}"
        );
    }
    assert!(door.iter().any(|l| l.contains("(docs/performance.md)")));
}

#[test]
fn ci_runs_the_blocks_the_readme_marks_for_it() {
    let readme = read("README.md");
    let ci = read(".ci/run");
    let called: Vec<&str> = ci
        .lines()
        .flat_map(|l| l.split("readme_block ").skip(1))
        .map(|rest| rest.split(|c: char| !c.is_alphanumeric()).next().unwrap())
        .collect();
    for name in ["demo", "install", "check", "test"] {
        assert!(called.contains(&name), ".ci/run does not run `{name}`");
    }
    for name in called {
        let (_, block) = marked_block(&readme, name)
            .unwrap_or_else(|| panic!(".ci/run runs README block `{name}`, which is not marked"));
        assert!(!block.is_empty(), "README block `{name}` is empty");
    }
    let (_, install) = marked_block(&readme, "install").unwrap();
    assert!(
        install.iter().any(|l| l.contains("cargo build --release")),
        "the install builds the binary and libcupti_trace.so with `cargo build --release`: {install:?}"
    );
    let (_, check) = marked_block(&readme, "check").unwrap();
    assert!(
        check
            .iter()
            .any(|l| l.starts_with("profile-run --dry-run -c ncu/trace ")),
        "{check:?}"
    );
    assert_eq!(marked_block(&readme, "test").unwrap().1, ["cargo test"]);
}
