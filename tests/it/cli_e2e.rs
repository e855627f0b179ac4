//! End-to-end runs of the profile-run binary against the fake ncu in tests/support/fake-ncu.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use predicates::prelude::*;
use serde_json::Value;

use crate::common::{fixture, repo};

pub(crate) fn fake_ncu() -> PathBuf {
    repo().join("tests/support/fake-ncu")
}

pub(crate) struct Env {
    pub(crate) dir: tempfile::TempDir,
}

impl Env {
    pub(crate) fn new() -> Env {
        Env {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    pub(crate) fn root(&self) -> PathBuf {
        self.dir.path().join("out")
    }

    pub(crate) fn argv_log(&self) -> PathBuf {
        self.dir.path().join("argv.log")
    }

    /// profile-run with the fake ncu and a private output root.
    pub(crate) fn cmd(&self) -> Command {
        let mut cmd = Command::cargo_bin("profile-run").unwrap();
        cmd.current_dir(self.dir.path())
            .env("FAKE_NCU_ARGV_LOG", self.argv_log())
            .env_remove("FAKE_NCU_MODE")
            .arg(format!("pipeline.ncu.executable={}", fake_ncu().display()))
            .arg(format!("output.root={}", self.root().display()));
        cmd
    }

    pub(crate) fn run_dirs(&self) -> Vec<PathBuf> {
        let mut dirs: Vec<PathBuf> = std::fs::read_dir(self.root())
            .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).collect())
            .unwrap_or_default();
        dirs.sort();
        dirs
    }

    /// The argv of the first profile (not import) invocation of the fake ncu.
    pub(crate) fn profile_argv(&self) -> Vec<String> {
        let text = std::fs::read_to_string(self.argv_log()).unwrap();
        text.split("--END--\n")
            .map(|block| block.lines().map(String::from).collect::<Vec<_>>())
            .find(|args| args.first().map(String::as_str) != Some("--import") && !args.is_empty())
            .expect("a profile invocation")
    }
}

pub(crate) fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The overrides that read the capture through ncu's CSV pages (the fake ncu exports a real pair).
pub(crate) const CSV_READER: [&str; 2] = [
    "pipeline.ncu.reader=csv",
    "pipeline.ncu.export.pages=[raw,details]",
];

#[test]
fn a_run_leaves_a_complete_run_directory_and_prints_the_report_path() {
    // The fake ncu writes the acceptance workload's real report file (A, A/A1, B), read natively:
    // no export is made, and ncu is run only to profile and for its version.
    let env = Env::new();
    let out = env
        .cmd()
        .args([
            "-q",
            "regions.include=[A]",
            "--",
            "echo",
            "workload says hi",
        ])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let dirs = env.run_dirs();
    assert_eq!(dirs.len(), 1, "one run directory");
    let run = &dirs[0];
    for file in [
        "profile.ncu-rep",
        "ncu.log",
        "command.txt",
        "config.yaml",
        "run.json",
        "report.md",
        "report.json",
    ] {
        assert!(
            run.join(file).is_file(),
            "{file} missing from {}",
            run.display()
        );
    }
    assert!(!run.join("export_raw.csv").exists(), "no page exported");
    let printed = String::from_utf8(out).unwrap();
    assert_eq!(printed.trim(), run.join("report.md").display().to_string());
    let log = std::fs::read_to_string(run.join("ncu.log")).unwrap();
    assert!(
        log.contains("workload says hi"),
        "program output kept in the log"
    );

    let report = read_json(&run.join("report.json"));
    assert_eq!(
        report["run"]["command"],
        serde_json::json!(["echo", "workload says hi"])
    );
    assert_eq!(report["run"]["profiler"]["version"], "2025.3.1.0");
    assert_eq!(
        report["run"]["sources"],
        serde_json::json!([run.join("profile.ncu-rep").display().to_string()])
    );
    let regions = report["scopes"][0]["regions"].as_array().unwrap();
    let paths: Vec<&str> = regions
        .iter()
        .map(|r| r["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths, ["A", "A/A1"]);
    // As rep_kernel_raw.csv counts them: 28 results in A alone, 33 in A/A1 (GEMMs launch more than
    // one kernel).
    assert_eq!(regions[0]["kernel_count"], 61);
    assert_eq!(regions[1]["kernel_count"], 33);
    assert!(
        !regions[0]["insights"].as_array().unwrap().is_empty(),
        "ncu's rule results come from the file"
    );
    // The report file tells visits apart: manual_nvtx_regions.py pushes A once.
    assert_eq!(regions[0]["instances"]["count"], 1);
    assert_eq!(
        regions[0]["instances"]["max"],
        regions[0]["inclusive"]["gpu__time_duration.sum"]["value"]
    );

    let argv = env.profile_argv();
    let include_at = argv.iter().position(|a| a == "--nvtx-include").unwrap();
    assert_eq!(argv[include_at + 1], "A/");
    assert!(argv.contains(&"--clock-control".to_string()));
    assert_eq!(&argv[argv.len() - 2..], ["echo", "workload says hi"]);
    let log = std::fs::read_to_string(env.argv_log()).unwrap();
    assert!(!log.contains("--import"), "ncu --import never ran");
}

#[test]
fn with_the_csv_reader_a_run_exports_its_pages_and_reads_them() {
    let env = Env::new();
    env.cmd()
        .args(CSV_READER)
        .args(["-q", "regions.include=[decode]", "--", "true"])
        .assert()
        .success();
    let run = &env.run_dirs()[0];
    for file in ["profile.ncu-rep", "export_raw.csv", "export_details.csv"] {
        assert!(run.join(file).is_file(), "{file} missing");
    }
    let report = read_json(&run.join("report.json"));
    let regions = report["scopes"][0]["regions"].as_array().unwrap();
    assert_eq!(regions.len(), 1);
    assert_eq!(regions[0]["path"], "decode");
    assert_eq!(regions[0]["kernel_count"], 6);
    // Listed pages are exported under the native reader too, and the report still reads the file.
    let env = Env::new();
    env.cmd()
        .args(["-q", "pipeline.ncu.export.pages=[raw]", "--", "true"])
        .assert()
        .success();
    let run = &env.run_dirs()[0];
    assert!(run.join("export_raw.csv").is_file());
    let report = read_json(&run.join("report.json"));
    assert_eq!(report["scopes"][0]["regions"][0]["path"], "A");
}

#[test]
fn workload_arguments_reach_the_child_verbatim_never_through_a_shell() {
    let env = Env::new();
    let marker = env.dir.path().join("pwned");
    let hostile = format!("; touch {} #", marker.display());
    env.cmd()
        .args(["-q", "--", "printf", "%s|", &hostile, "$(whoami)", "a b"])
        .assert()
        .success();
    assert!(!marker.exists(), "nothing was run through a shell");
    let argv = env.profile_argv();
    let expected = ["printf", "%s|", hostile.as_str(), "$(whoami)", "a b"];
    assert_eq!(&argv[argv.len() - expected.len()..], expected);
}

#[test]
fn dry_run_prints_escaped_nvtx_expressions_for_each_replay_mode() {
    for mode in ["kernel", "range", "app-range"] {
        let env = Env::new();
        // --dry-run checks that the script exists.
        std::fs::write(env.dir.path().join("train.py"), "").unwrap();
        let out = env
            .cmd()
            .env("PATH", crate::common::path_with_python(env.dir.path()))
            .args([
                "--dry-run",
                &format!("pipeline.ncu.ncu_cli.replay_mode={mode}"),
                "regions.include=[LLM@prefill, train_step/forward, decode*]",
                "--",
                "python",
                "train.py",
            ])
            .assert()
            .success()
            .get_output()
            .stdout
            .clone();
        let text = String::from_utf8(out).unwrap();
        let line = text.lines().next().unwrap();
        assert!(line.contains(&format!("--replay-mode {mode}")), "{line}");
        assert!(line.contains(r"--nvtx-include 'LLM\@prefill/'"), "{line}");
        assert!(
            line.contains("--nvtx-include train_step/forward/"),
            "{line}"
        );
        assert!(line.contains("--nvtx-include 'regex:decode.*/'"), "{line}");
        assert!(line.ends_with("python train.py"), "{line}");
        assert!(text.contains("run directory:"));
        assert!(env.run_dirs().is_empty(), "a dry run creates nothing");
        assert!(!env.argv_log().exists(), "a dry run runs nothing");
    }
}

/// An ncu of another release than the tested one is named in a note, by `--dry-run` and by a run;
/// the tested release gets none, and nothing is refused for the version alone.
#[test]
fn an_untested_ncu_release_gets_a_note_not_a_refusal() {
    for (version, noted) in [("2025.3.1.0", false), ("2023.2.0.0", true)] {
        let env = Env::new();
        let dry = env
            .cmd()
            .env("FAKE_NCU_VERSION", version)
            .args(["--dry-run", "--", "true"])
            .assert()
            .success();
        let stderr = String::from_utf8_lossy(&dry.get_output().stderr).into_owned();
        let note = format!("note: ncu {version} is not the release profile-run is tested with");
        assert_eq!(stderr.contains(&note), noted, "{stderr}");
        let run = env
            .cmd()
            .env("FAKE_NCU_VERSION", version)
            .args(["--", "true"])
            .assert()
            .success();
        let stderr = String::from_utf8_lossy(&run.get_output().stderr).into_owned();
        assert_eq!(stderr.contains(&note), noted, "{stderr}");
    }
}

#[test]
fn a_missing_profiler_exits_3_with_the_fix() {
    let env = Env::new();
    env.cmd()
        .args(["pipeline.ncu.executable=/nonexistent/ncu", "--", "true"])
        .assert()
        .code(3)
        .stderr(predicate::str::contains("pipeline.ncu.executable"));
    assert!(
        env.run_dirs().is_empty(),
        "no run directory for a run that could not start"
    );
}

#[test]
fn a_bad_config_key_exits_2_naming_the_key() {
    let env = Env::new();
    env.cmd()
        .args(["report.kernel.include=[x]", "--", "true"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("report.kernel"));
}

#[test]
fn a_failing_workload_exits_4_with_its_code_and_keeps_a_partial_report() {
    let env = Env::new();
    env.cmd()
        .args(["-q", "--", "sh", "-c", "exit 7"])
        .assert()
        .code(4)
        .stderr(predicate::str::contains("workload exit code 7"));
    let run = &env.run_dirs()[0];
    assert!(run.join("report.json").is_file(), "partial report rendered");
    assert!(run.join("ncu.log").is_file());
}

#[test]
fn profiler_faults_name_cause_and_fix() {
    let cases = [
        ("perm", "SYS_ADMIN"),
        ("unsupported-api", "warm up outside the range"),
        ("no-kernels", "profiled no kernel"),
    ];
    for (mode, expected) in cases {
        let env = Env::new();
        env.cmd()
            .env("FAKE_NCU_MODE", mode)
            .args(["-q", "--", "true"])
            .assert()
            .code(4)
            .stderr(predicate::str::contains(expected));
        let run = &env.run_dirs()[0];
        assert!(run.join("ncu.log").is_file(), "{mode}: raw log kept");
    }
}

#[test]
fn a_range_replay_that_ends_with_exit_9_says_the_likely_cause_and_what_to_run_instead() {
    let env = Env::new();
    env.cmd()
        .env("FAKE_NCU_MODE", "range-exit-9")
        .args([
            "pipeline.ncu.ncu_cli.replay_mode=range",
            "regions.include=[train_step]",
            "-q",
            "--",
            "true",
        ])
        .assert()
        .code(4)
        .stderr(predicate::str::contains(
            "ncu exited with code 9 and no results",
        ))
        .stderr(predicate::str::contains(
            "`==ERROR== Unsupported API during capture (cuKernelSetAttribute)`",
        ))
        .stderr(predicate::str::contains("backward pass"))
        .stderr(predicate::str::contains("replay_mode=kernel"))
        .stderr(predicate::str::contains("forward-only range"));
    // With a partial capture, its report says the same.
    let partial = Env::new();
    partial
        .cmd()
        .env("FAKE_NCU_MODE", "range-exit-9")
        .env("FAKE_NCU_PARTIAL", "1")
        .args([
            "pipeline.ncu.ncu_cli.replay_mode=range",
            "regions.include=[A]",
            "-q",
            "--",
            "true",
        ])
        .assert()
        .code(4);
    let md = std::fs::read_to_string(partial.run_dirs()[0].join("report.md")).unwrap();
    assert!(
        md.contains("range replay could not capture the range: ncu exited with code 9"),
        "{md}"
    );
    assert!(
        md.contains("replay\\_mode=kernel") || md.contains("replay_mode=kernel"),
        "{md}"
    );
    // Kernel replay of the same failure names no range cause.
    env.cmd()
        .env("FAKE_NCU_MODE", "range-exit-9")
        .args(["-q", "--", "true"])
        .assert()
        .code(4)
        .stderr(predicate::str::contains("could not capture the range").not());
}

#[test]
fn sigterm_is_forwarded_and_what_was_captured_is_rendered() {
    let env = Env::new();
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("profile-run"))
        .current_dir(env.dir.path())
        .env("FAKE_NCU_MODE", "slow")
        .arg(format!("pipeline.ncu.executable={}", fake_ncu().display()))
        .arg(format!("output.root={}", env.root().display()))
        .args(["-q", "--", "true"])
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until the fake profiler is inside its slow phase.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let ready = env
            .run_dirs()
            .first()
            .map(|d| std::fs::read_to_string(d.join("ncu.log")).unwrap_or_default())
            .is_some_and(|log| log.contains("slow_kernel"));
        if ready || std::time::Instant::now() > deadline {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(128 + 15));
    let run = &env.run_dirs()[0];
    assert!(
        run.join("profile.ncu-rep").is_file(),
        "the profiler wrote its report before exiting"
    );
    assert!(
        run.join("report.md").is_file(),
        "what was captured was rendered"
    );
}

#[test]
fn report_rerenders_from_a_run_directory_with_new_filters() {
    let env = Env::new();
    env.cmd()
        .args(CSV_READER)
        .args(["-q", "--", "true"])
        .assert()
        .success();
    let run = env.run_dirs()[0].clone();
    Command::cargo_bin("profile-run")
        .unwrap()
        .args([
            "report",
            run.to_str().unwrap(),
            "--force",
            r#"report.kernels.include=["*reduce*"]"#,
        ])
        .args(CSV_READER)
        .assert()
        .success();
    let report = read_json(&run.join("report.json"));
    assert_eq!(report["scopes"][0]["regions"][0]["kernel_count"], 2);
    assert_eq!(report["kernel_selection"]["results_excluded"], 4);
    assert_eq!(report["run"]["command"], serde_json::json!(["true"]));
}

#[test]
fn report_on_a_bare_export_writes_into_out() {
    let out = tempfile::tempdir().unwrap();
    Command::cargo_bin("profile-run")
        .unwrap()
        .args([
            "report",
            fixture("ncu/h100-2025.3.1/rreplay_nested_raw.csv")
                .to_str()
                .unwrap(),
        ])
        .args(["--out", out.path().to_str().unwrap()])
        .assert()
        .success()
        .stdout(predicate::str::contains("report.md"));
    let report = read_json(&out.path().join("report.json"));
    assert_eq!(
        report["run"]["profiler"]["settings"]["replay_mode"],
        "range"
    );
    let paths: Vec<&str> = report["scopes"][0]["regions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["path"].as_str().unwrap())
        .collect();
    // A default-domain range named `LLM@prefill`, written as ncu's grammar escapes it (decisions.md).
    assert_eq!(paths, [r"LLM\@prefill", r"LLM\@prefill/attn"]);
}

#[test]
fn report_on_a_raw_export_picks_up_its_details_page_as_advice() {
    let out = tempfile::tempdir().unwrap();
    Command::cargo_bin("profile-run")
        .unwrap()
        .args([
            "report",
            fixture("ncu/h200-2025.3.1/manual_raw.csv")
                .to_str()
                .unwrap(),
        ])
        .args(["--out", out.path().to_str().unwrap()])
        .assert()
        .success();
    let report = read_json(&out.path().join("report.json"));
    let sources = report["run"]["sources"].as_array().unwrap();
    assert!(sources
        .iter()
        .any(|s| s.as_str().unwrap().ends_with("manual_details.csv")));
    let md = std::fs::read_to_string(out.path().join("report.md")).unwrap();
    assert!(md.contains("**Insights**"));
    assert!(
        md.contains("| LaunchConfiguration | ncu | opportunity | 50 |"),
        "B's launch advice"
    );
}

#[test]
fn config_mistakes_found_late_before_now_stop_the_run_before_ncu_starts() {
    // Each used to surface only after profiling: a kernel glob that does not compile, a template
    // file that does not exist or does not parse, and a rename rule that is not a regex.
    let env = Env::new();
    let bad_template = env.dir.path().join("bad.md.j2");
    std::fs::write(&bad_template, "{% for x in %}\n").unwrap();
    let cases: Vec<(String, &str)> = vec![
        (
            r#"report.kernels.include=["gemm[*"]"#.into(),
            "report.kernels.include",
        ),
        ("report.template=missing.md.j2".into(), "missing.md.j2"),
        (
            format!("report.template={}", bad_template.display()),
            "line 1",
        ),
        (
            r#"regions.rename=[{pattern: "(", replace: ""}]"#.into(),
            "regions.rename[0].pattern",
        ),
    ];
    for (override_, expected) in cases {
        env.cmd()
            .args(["-q", override_.as_str(), "--", "echo", "hi"])
            .assert()
            .code(2)
            .stderr(predicate::str::contains(expected));
        assert!(!env.argv_log().exists(), "ncu ran for {override_}");
        assert!(
            env.run_dirs().is_empty(),
            "a run directory was made for {override_}"
        );
    }
}

#[test]
fn global_flags_work_before_or_after_the_command() {
    let dir = tempfile::tempdir().unwrap();
    let export = fixture("ncu/h200-2025.3.1/manual_raw.csv");
    let run = |args: &[&str], out: &str| {
        Command::cargo_bin("profile-run")
            .unwrap()
            .args(
                args.iter()
                    .map(|a| a.replace("EXPORT", export.to_str().unwrap())),
            )
            .arg("--out")
            .arg(dir.path().join(out))
            .assert()
    };
    // `-q` and `-c` before `report`: once read as overrides of the profiling command.
    run(&["-q", "-c", "ncu/memory", "report", "EXPORT"], "before").success();
    run(&["report", "EXPORT", "-q", "-c", "ncu/memory"], "after").success();
    let before = read_json(&dir.path().join("before/report.json"));
    let after = read_json(&dir.path().join("after/report.json"));
    run(&["report", "EXPORT"], "plain").success();
    let plain = read_json(&dir.path().join("plain/report.json"));
    let fingerprint = |r: &Value| r["run"]["config_fingerprint"].clone();
    assert_eq!(
        fingerprint(&before),
        fingerprint(&after),
        "the preset applied both ways"
    );
    assert_ne!(
        fingerprint(&before),
        fingerprint(&plain),
        "and it did apply"
    );
    // `--force` before the command replaces the report, as after it does.
    run(&["report", "EXPORT"], "before")
        .code(2)
        .stderr(predicate::str::contains("--force"));
    run(&["--force", "report", "EXPORT"], "before").success();
    // Where no command takes it, --force is refused by name.
    Command::cargo_bin("profile-run")
        .unwrap()
        .args(["--force", "--dry-run", "--", "true"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "--force applies to `report` and `merge`",
        ));
}
