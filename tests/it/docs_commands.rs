//! Every `profile-run` command fenced in README.md and docs/*.md runs as the page shows it, as the
//! link test does for links: `report`, `merge`, `diff` and `config` for real on the committed
//! fixtures; a profiling command with `--dry-run` added, against the fake ncu and fake Neuron tools
//! of tests/support, so its presets, keys and flags are checked without a GPU. A block a page marks
//! `<!-- docs-test: skip: WHY -->` is left out, and the test prints WHY; `<!-- docs-test: exit N -->`
//! says the block's commands exit N (a gate that fails) instead of 0.
//!
//! Each page runs in a fresh directory holding `tests/` and `conf/` (links into the repository),
//! `train.py` (the workload the pages name) and `bin/`: `profile-run` (the binary, `--dry-run` added
//! to a profiling command), `ncu`, `neuron-explorer`, `python`/`python3` stubs and stand-ins for
//! `torchrun`, `srun` and `mpirun` that run the `profile-run …` they are given as rank 0 of 2.

use std::collections::BTreeSet;
use std::os::unix::fs::{symlink, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Command;

use pulldown_cmark::{CodeBlockKind, Event, Parser, Tag, TagEnd};

use crate::common::{path_with_python, repo};

/// Launchers a page may put in front of `profile-run`; the stand-ins run what follows them.
const LAUNCHERS: [&str; 3] = ["torchrun", "srun", "mpirun"];

/// What a page says about the block that follows a `<!-- docs-test: … -->` comment.
#[derive(Clone, Debug, PartialEq)]
enum Marker {
    Skip(String),
    Exit(i32),
}

/// One command of a page: where it is, its text (continuations joined) and what it exits with.
#[derive(Debug)]
struct DocCommand {
    line: usize,
    text: String,
    marker: Option<Marker>,
}

fn marker(html: &str) -> Option<Marker> {
    let body = html
        .trim()
        .strip_prefix("<!--")?
        .strip_suffix("-->")?
        .trim();
    let rest = body.strip_prefix("docs-test:")?.trim();
    if let Some(why) = rest.strip_prefix("skip:") {
        return Some(Marker::Skip(why.trim().to_string()));
    }
    let code = rest.strip_prefix("exit")?.trim().parse().ok()?;
    Some(Marker::Exit(code))
}

/// Whether a line names profile-run as a program (not inside an error message or a path).
fn names_profile_run(line: &str) -> bool {
    line.split_whitespace()
        .map(|w| w.trim_start_matches(['\'', '"', '(', '$']))
        .any(|w| w == "profile-run" || w.ends_with("/profile-run"))
        || line.contains("cargo run --release --")
}

/// The shell lines of a fenced block, `\`-continuations joined, each with its first line. In a
/// `text` block only `$ `-prompted lines are commands; the rest is output.
fn shell_lines(code: &str, first_line: usize, prompted_only: bool) -> Vec<(usize, String)> {
    let mut lines = Vec::new();
    let mut pending: Option<(usize, String)> = None;
    for (i, raw) in code.lines().enumerate() {
        let (start, mut text) = pending.take().unwrap_or((first_line + i, String::new()));
        let piece = if text.is_empty() {
            let trimmed = raw.trim_start();
            match trimmed.strip_prefix("$ ") {
                Some(command) => command,
                None if prompted_only => continue,
                None => trimmed,
            }
        } else {
            raw.trim_start()
        };
        match piece.strip_suffix('\\') {
            Some(head) => {
                text.push_str(head);
                pending = Some((start, text));
            }
            None => {
                text.push_str(piece);
                lines.push((start, text));
            }
        }
    }
    lines
}

/// Every command of a page that names profile-run, in the order the page shows them.
fn commands(text: &str) -> Vec<DocCommand> {
    let mut found = Vec::new();
    let mut pending_marker = None;
    let mut block: Option<(usize, bool, String)> = None;
    for (event, range) in Parser::new(text).into_offset_iter() {
        match event {
            Event::Html(html) if block.is_none() => {
                if let Some(m) = marker(&html) {
                    pending_marker = Some(m);
                }
            }
            Event::Start(Tag::CodeBlock(kind)) => {
                let lang = match &kind {
                    CodeBlockKind::Fenced(info) => info.split_whitespace().next().unwrap_or(""),
                    CodeBlockKind::Indented => "indented",
                };
                let shell = matches!(lang, "" | "sh" | "bash" | "shell" | "console");
                let prompted = lang == "text";
                let line = text[..range.start].matches('\n').count() + 2;
                block = (shell || prompted).then(|| (line, prompted, String::new()));
                if block.is_none() {
                    pending_marker = None;
                }
            }
            Event::Text(t) => {
                if let Some((_, _, code)) = block.as_mut() {
                    code.push_str(&t);
                }
            }
            Event::End(TagEnd::CodeBlock) => {
                let marker = pending_marker.take();
                if let Some((line, prompted, code)) = block.take() {
                    for (line, text) in shell_lines(&code, line, prompted) {
                        if !text.starts_with('#') && names_profile_run(&text) {
                            found.push(DocCommand {
                                line,
                                text,
                                marker: marker.clone(),
                            });
                        }
                    }
                }
            }
            _ => {}
        }
    }
    found
}

/// The program a command line starts with, past `VAR=value` assignments.
fn program(text: &str) -> &str {
    text.split_whitespace()
        .find(|w| {
            !w.split_once('=')
                .is_some_and(|(name, _)| name.chars().all(|c| c.is_ascii_uppercase() || c == '_'))
        })
        .unwrap_or("")
}

/// Why a command cannot be run as written here, if it cannot.
fn unrunnable(text: &str) -> Option<String> {
    let first = program(text);
    if first == "profile-run" || text.starts_with("cargo run --release -- ") {
        return None;
    }
    if first.contains("$(") && text.contains("profile-run") {
        return None;
    }
    if LAUNCHERS.contains(&first) && text.split_whitespace().any(|w| w == "profile-run") {
        return None;
    }
    Some(format!(
        "starts with `{first}`, not `profile-run`, `cargo run --release --` or a launcher: mark \
         its block `<!-- docs-test: skip: WHY -->`"
    ))
}

fn write_script(path: &Path, body: &str) {
    std::fs::write(path, body).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// A fresh directory to run one page's commands in; its `PATH`.
fn workspace(dir: &Path) -> std::ffi::OsString {
    let path = path_with_python(dir);
    let bin = dir.join("bin");
    for linked in ["tests", "conf"] {
        symlink(repo().join(linked), dir.join(linked)).unwrap();
    }
    std::fs::write(dir.join("train.py"), "# a workload the docs name\n").unwrap();
    symlink(repo().join("tests/support/fake-ncu"), bin.join("ncu")).unwrap();
    symlink(
        repo().join("tests/support/fake-neuron-explorer"),
        bin.join("neuron-explorer"),
    )
    .unwrap();
    let exe = env!("CARGO_BIN_EXE_profile-run");
    write_script(
        &bin.join("profile-run"),
        &format!(
            "#!/usr/bin/env bash\n\
             # profile-run, with --dry-run added to a profiling command (one with `--` and no subcommand).\n\
             for a in \"$@\"; do\n\
               case \"$a\" in --) break;; report|merge|diff|config) exec '{exe}' \"$@\";; esac\n\
             done\n\
             case \" $* \" in *' -- '*) case \" $* \" in *' --dry-run '*) ;; *) exec '{exe}' --dry-run \"$@\";; esac;; esac\n\
             exec '{exe}' \"$@\"\n"
        ),
    );
    for launcher in LAUNCHERS {
        write_script(
            &bin.join(launcher),
            "#!/bin/sh\n# A launcher's stand-in: runs the `profile-run …` it is given as rank 0 of 2.\n\
             while [ $# -gt 0 ] && [ \"$1\" != profile-run ]; do shift; done\n\
             [ $# -eq 0 ] && exit 0\n\
             RANK=0 WORLD_SIZE=2 exec \"$@\"\n",
        );
    }
    path
}

/// Runs one command in `dir`; the failure, if it does not exit as the page says.
fn run(dir: &Path, path: &std::ffi::OsStr, library: &Path, command: &DocCommand) -> Option<String> {
    let text = command
        .text
        .replace("cargo run --release -- ", "profile-run ");
    let expected = match command.marker {
        Some(Marker::Exit(code)) => code,
        _ => 0,
    };
    let out = Command::new("timeout")
        .args(["120", "bash", "-c", &format!("set -o pipefail; {text}")])
        .current_dir(dir)
        .env("PATH", path)
        .env("PROFILE_RUN_PIPELINE__NCU__TRACE__LIBRARY", library)
        .env_remove("RANK")
        .output()
        .unwrap();
    let code = out.status.code().unwrap_or(-1);
    (code != expected).then(|| {
        let stderr = String::from_utf8_lossy(&out.stderr);
        let tail: Vec<&str> = stderr.lines().rev().take(6).collect();
        format!(
            "exited {code}, not {expected}: `{}`\n    {}",
            command.text,
            tail.into_iter().rev().collect::<Vec<_>>().join("\n    ")
        )
    })
}

/// Every file and folder under tests/fixtures: a command that writes beside a committed capture would
/// change the repository through the workspace's `tests` link.
fn fixture_paths() -> BTreeSet<PathBuf> {
    fn walk(dir: &Path, found: &mut BTreeSet<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() && !path.is_symlink() {
                walk(&path, found);
            }
            found.insert(path);
        }
    }
    let mut found = BTreeSet::new();
    walk(&repo().join("tests/fixtures"), &mut found);
    found
}

/// What a page's commands wrote into tests/fixtures, removed again.
fn written_into_fixtures(before: &BTreeSet<PathBuf>) -> Vec<PathBuf> {
    let new: Vec<PathBuf> = fixture_paths().difference(before).cloned().collect();
    for path in &new {
        if path.is_dir() {
            let _ = std::fs::remove_dir_all(path);
        } else {
            let _ = std::fs::remove_file(path);
        }
    }
    new
}

fn pages() -> Vec<PathBuf> {
    let mut docs: Vec<PathBuf> = std::fs::read_dir(repo().join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    docs.insert(0, repo().join("README.md"));
    docs
}

#[test]
fn commands_are_found_in_shell_blocks_with_their_markers() {
    let page = "Intro\n\n```sh\nprofile-run report a.csv \\\n    --out x\n# profile-run in a comment\nls\n```\n\n\
                <!-- docs-test: exit 6 -->\n```\nRANK=1 profile-run diff a b --fail-above 5\n```\n\n\
                ```text\n$ profile-run config show\nerror: profile-run refused it\n```\n\n\
                ```python\nsubprocess.run(['profile-run'])\n```\n\n\
                <!-- docs-test: skip: needs a GPU -->\n```sh\nnohup profile-run -- python train.py &\n```\n";
    let found = commands(page);
    let shown: Vec<(usize, &str, Option<Marker>)> = found
        .iter()
        .map(|c| (c.line, c.text.as_str(), c.marker.clone()))
        .collect();
    assert_eq!(
        shown,
        [
            (4, "profile-run report a.csv --out x", None),
            (
                12,
                "RANK=1 profile-run diff a b --fail-above 5",
                Some(Marker::Exit(6))
            ),
            (16, "profile-run config show", None),
            (
                26,
                "nohup profile-run -- python train.py &",
                Some(Marker::Skip("needs a GPU".into()))
            ),
        ]
    );
    assert_eq!(unrunnable(&found[1].text), None);
    assert!(unrunnable(&found[3].text).is_some());
}

#[test]
fn every_command_in_the_readme_and_the_docs_runs_as_shown() {
    let mut failures = Vec::new();
    let mut ran = 0;
    let mut readme_ran = 0;
    let fixtures = fixture_paths();
    for page in pages() {
        let shown = page.strip_prefix(repo()).unwrap().display().to_string();
        let found = commands(&std::fs::read_to_string(&page).unwrap());
        if found.is_empty() {
            continue;
        }
        let dir = tempfile::tempdir().unwrap();
        let path = workspace(dir.path());
        let library = crate::trace::library(dir.path());
        for command in &found {
            if let Some(Marker::Skip(why)) = &command.marker {
                assert!(!why.is_empty(), "{shown}:{}: a skip says why", command.line);
                eprintln!(
                    "skipped {shown}:{}: {why}: `{}`",
                    command.line, command.text
                );
                continue;
            }
            if let Some(why) = unrunnable(&command.text) {
                failures.push(format!(
                    "{shown}:{}: `{}` {why}",
                    command.line, command.text
                ));
                continue;
            }
            ran += 1;
            readme_ran += usize::from(shown == "README.md");
            if let Some(failure) = run(dir.path(), &path, &library, command) {
                failures.push(format!("{shown}:{}: {failure}", command.line));
            }
        }
        let written = written_into_fixtures(&fixtures);
        if !written.is_empty() {
            failures.push(format!(
                "{shown}: its commands wrote into tests/fixtures (give them --out): {written:?}"
            ));
        }
    }
    assert!(
        ran >= 30,
        "only {ran} commands found: is the parser reading the docs?"
    );
    assert!(readme_ran >= 4, "only {readme_ran} README commands ran");
    assert!(
        failures.is_empty(),
        "{} of {ran} commands failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// The one `yaml` block of docs/ci.md: the GitHub Actions workflow.
fn ci_workflow() -> serde_yaml::Value {
    let page = std::fs::read_to_string(repo().join("docs/ci.md")).unwrap();
    let block = page
        .split("```yaml\n")
        .nth(1)
        .and_then(|rest| rest.split("\n```").next())
        .expect("docs/ci.md shows a workflow in a ```yaml block");
    serde_yaml::from_str(block).expect("the workflow in docs/ci.md is valid YAML")
}

#[test]
fn the_ci_recipe_keeps_a_baseline_and_its_gate_fails_a_regression() {
    let workflow = ci_workflow();
    let steps = workflow["jobs"]["profile"]["steps"].as_sequence().unwrap();
    let step = |uses: &str, name: &str| {
        steps
            .iter()
            .find(|s| {
                s["uses"].as_str().is_some_and(|u| u.contains(uses))
                    && s["with"]["name"].as_str() == Some(name)
            })
            .unwrap_or_else(|| panic!("no `{uses}` step for the artifact `{name}`"))
    };
    let kept = step("upload-artifact", "perf-baseline");
    assert_eq!(kept["if"].as_str(), Some("github.event_name == 'push'"));
    let fetched = step("download-artifact", "perf-baseline");
    assert_eq!(fetched["with"]["branch"].as_str(), Some("main"));
    let runs: Vec<&str> = steps.iter().filter_map(|s| s["run"].as_str()).collect();
    let [profile, gate] = runs[..] else {
        panic!("two run steps, the profile and the gate: {runs:?}")
    };
    assert!(gate.starts_with("profile-run diff "), "{gate}");
    assert!(gate.contains(" --fail-above 5"), "{gate}");
    let baseline = format!("{}/report.json", fetched["with"]["path"].as_str().unwrap());
    let candidate = kept["with"]["path"].as_str().unwrap();
    assert!(
        gate.contains(&baseline) && gate.contains(candidate),
        "{gate}"
    );

    // The profile step runs (dry) as written; its report.json is what the baseline step keeps.
    let dir = tempfile::tempdir().unwrap();
    let path = workspace(dir.path());
    let library = crate::trace::library(dir.path());
    let command = |text: &str, exit| DocCommand {
        line: 0,
        text: text.to_string(),
        marker: Some(Marker::Exit(exit)),
    };
    assert_eq!(run(dir.path(), &path, &library, &command(profile, 0)), None);
    assert!(
        profile.contains("output.run_name=candidate")
            && candidate.starts_with("profile-output/candidate/")
    );

    // The gate, literally, on reports of committed runs: an even run against itself passes, against
    // a run with a slow rank it fails with exit 6.
    let fixture = |name: &str| format!("tests/fixtures/ncu/h200x4-cupti-straggle/{name}");
    let render = |input: &str, out: &str| {
        let text = format!("profile-run report {} --out {out} --force", fixture(input));
        assert_eq!(run(dir.path(), &path, &library, &command(&text, 0)), None);
    };
    render("ddp-even", "baseline");
    render("ddp-even", "profile-output/candidate");
    assert_eq!(run(dir.path(), &path, &library, &command(gate, 0)), None);
    render("ddp-straggle", "profile-output/candidate");
    assert_eq!(run(dir.path(), &path, &library, &command(gate, 6)), None);
}
