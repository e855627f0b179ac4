//! A first run from anywhere: presets by name (or by their repository path) from a directory far
//! from the repository, `--dry-run` checking that ncu runs and that the workload exists, and the hint
//! towards `-c ncu/pytorch` for an emit_nvtx capture read without it.

use std::path::Path;

use assert_cmd::Command;

use crate::common::{fixture, repo};

fn fake_ncu() -> String {
    repo().join("tests/support/fake-ncu").display().to_string()
}

/// profile-run in `dir` (a fresh temporary directory: no conf/ beside it): exit code, stdout, stderr.
fn run_in(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let out = Command::cargo_bin("profile-run")
        .unwrap()
        .current_dir(dir)
        .env("PATH", crate::common::path_with_python(&dir.join(".stubs")))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn presets_resolve_by_name_and_by_repository_path_from_any_directory() {
    let dir = tempfile::tempdir().unwrap();
    for given in [
        "ncu/pytorch",
        "conf/ncu/pytorch.yaml",
        "/elsewhere/conf/ncu/pytorch.yaml",
    ] {
        let (code, stdout, stderr) =
            run_in(dir.path(), &["-c", given, "config", "show", "--origin"]);
        assert_eq!(code, 0, "{given}: {stderr}");
        let rename = stdout
            .lines()
            .find(|l| l.starts_with("regions.rename:"))
            .unwrap();
        assert!(
            rename.contains("(seq|op_id)") && rename.ends_with("# built-in preset `ncu/pytorch`"),
            "{given}: {rename}"
        );
    }
    // A file on disk at that path wins over the built-in preset.
    std::fs::create_dir_all(dir.path().join("conf/ncu")).unwrap();
    std::fs::write(
        dir.path().join("conf/ncu/pytorch.yaml"),
        "report: {max_regions: 7}\n",
    )
    .unwrap();
    let (code, stdout, stderr) = run_in(
        dir.path(),
        &["-c", "conf/ncu/pytorch.yaml", "config", "show", "--origin"],
    );
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("max_regions: 7"), "{stdout}");
    assert!(!stdout.contains("(seq|op_id)"), "{stdout}");
    // A name that is neither a file nor a preset lists the presets.
    let (code, _, stderr) = run_in(dir.path(), &["-c", "conf/ncu/nope.yaml", "config", "show"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("ncu/pytorch"), "{stderr}");
}

#[test]
fn dry_run_checks_that_ncu_runs() {
    let dir = tempfile::tempdir().unwrap();
    // No ncu on PATH: the command line is printed, then exit 3 with the fix.
    let (code, stdout, stderr) = run_in(
        dir.path(),
        &[
            "--dry-run",
            "pipeline.ncu.executable=no-such-ncu",
            "--",
            "true",
        ],
    );
    assert_eq!(code, 3, "{stderr}");
    assert!(stdout.starts_with("no-such-ncu --nvtx"), "{stdout}");
    assert!(
        stderr.contains("profiler `no-such-ncu` not found (not on PATH); install Nsight Compute"),
        "{stderr}"
    );
    // A program that runs but is no ncu.
    let (code, _, stderr) = run_in(
        dir.path(),
        &[
            "--dry-run",
            "pipeline.ncu.executable=/bin/true",
            "--",
            "true",
        ],
    );
    assert_eq!(code, 3, "{stderr}");
    assert!(
        stderr.contains("`--version` printed no version"),
        "{stderr}"
    );
    let ncu = format!("pipeline.ncu.executable={}", fake_ncu());
    let (code, _, stderr) = run_in(dir.path(), &["--dry-run", &ncu, "--", "true"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("checked: ncu 2025.3.1.0 ("), "{stderr}");
    assert!(
        !dir.path().join("profile-output").exists(),
        "a dry run makes no directory"
    );
}

#[test]
fn dry_run_checks_that_the_workload_exists() {
    let dir = tempfile::tempdir().unwrap();
    let ncu = format!("pipeline.ncu.executable={}", fake_ncu());
    let (code, _, stderr) = run_in(
        dir.path(),
        &["--dry-run", &ncu, "--", "no-such-program", "x"],
    );
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("the workload's program `no-such-program` cannot be found (not on PATH)"),
        "{stderr}"
    );
    let (code, _, stderr) = run_in(dir.path(), &["--dry-run", &ncu, "--", "./train.sh"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("`./train.sh` cannot be found (no such file)"),
        "{stderr}"
    );
    let (code, _, stderr) = run_in(
        dir.path(),
        &["--dry-run", &ncu, "--", "sh", "-u", "train.py"],
    );
    assert_eq!(
        code, 0,
        "only a Python interpreter's script is checked: {stderr}"
    );
    let (code, _, stderr) = run_in(
        dir.path(),
        &["--dry-run", &ncu, "--", "python3", "-u", "train.py"],
    );
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("the workload's script `train.py` does not exist"),
        "{stderr}"
    );
    std::fs::write(dir.path().join("train.py"), "print('hi')\n").unwrap();
    let (code, _, stderr) = run_in(
        dir.path(),
        &["--dry-run", &ncu, "--", "python3", "-u", "train.py"],
    );
    assert_eq!(code, 0, "{stderr}");
}

#[test]
fn an_emit_nvtx_capture_without_the_pytorch_preset_gets_a_one_line_hint() {
    let dir = tempfile::tempdir().unwrap();
    for capture in [
        "ncu/h100-2025.3.1-pytorch/emit_nvtx.ncu-rep.gz",
        "ncu/h100-2025.3.1-pytorch/emit_nvtx_raw.csv",
    ] {
        let input = fixture(capture);
        let input = input.to_str().unwrap();
        let (code, _, stderr) = run_in(dir.path(), &["report", input, "--out", "plain"]);
        assert_eq!(code, 0, "{stderr}");
        let hints: Vec<&str> = stderr
            .lines()
            .filter(|l| l.contains("ncu/pytorch"))
            .collect();
        assert_eq!(hints.len(), 1, "{capture}: {stderr}");
        assert!(
            hints[0].starts_with("note: ")
                && hints[0].contains("emit_nvtx calls numbered by `seq`/`op_id`"),
            "{}",
            hints[0]
        );
        let json = std::fs::read_to_string(dir.path().join("plain/report.json")).unwrap();
        assert!(
            json.contains("read it again with `-c ncu/pytorch`"),
            "{capture}"
        );
        let (code, _, stderr) = run_in(
            dir.path(),
            &["report", input, "-c", "ncu/pytorch", "--out", "pytorch"],
        );
        assert_eq!(code, 0, "{stderr}");
        assert!(!stderr.contains("ncu/pytorch"), "{capture}: {stderr}");
        std::fs::remove_dir_all(dir.path().join("plain")).unwrap();
        std::fs::remove_dir_all(dir.path().join("pytorch")).unwrap();
    }
}

#[test]
fn after_a_run_the_terminal_names_the_top_regions_and_the_top_finding() {
    let tmp = tempfile::tempdir().unwrap();
    let traces: Vec<String> = crate::trace::traces("gpt2")
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    let out = Command::cargo_bin("profile-run")
        .unwrap()
        .env("FAKE_TRACES", traces.join(" "))
        .args(["--config", "ncu/trace", "regions.include=[train_step]"])
        .arg(format!(
            "pipeline.ncu.trace.library={}",
            crate::trace::library(tmp.path()).display()
        ))
        .arg(format!("output.root={}", tmp.path().join("runs").display()))
        .arg("--")
        .arg(repo().join("tests/support/fake-traced-workload"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let line = stderr
        .lines()
        .find(|l| l.starts_with("most self time: "))
        .expect(&stderr);
    assert_eq!(
        line.matches(" (").count(),
        3,
        "three regions with their shares: {line}"
    );
    assert!(line.contains("train_step/"), "{line}");
    assert!(
        stderr.lines().any(|l| l.starts_with("top finding: ")),
        "{stderr}"
    );
    // stdout stays the report's path alone, for scripts.
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(stdout.lines().count(), 1, "{stdout}");
}

/// `--dry-run --config ncu/sampled` with `library` as the injection library: stdout and stderr.
fn sampled_dry_run(library: &Path) -> (String, String) {
    let out = Command::cargo_bin("profile-run")
        .unwrap()
        .args(["--dry-run", "--config", "ncu/sampled"])
        .arg(format!("pipeline.ncu.executable={}", fake_ncu()))
        .arg(format!("pipeline.ncu.trace.library={}", library.display()))
        .args(["--", "true"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn ncu_sampled_times_by_the_trace_when_the_library_is_there_and_by_ncu_with_a_note_when_not() {
    let tmp = tempfile::tempdir().unwrap();
    let (stdout, stderr) = sampled_dry_run(&crate::trace::library(tmp.path()));
    assert!(!stdout.contains("ncu's timing pass"), "{stdout}");
    assert!(stdout.contains("CUDA_INJECTION64_PATH="), "{stdout}");
    assert!(
        !stderr.contains("pipeline.ncu.timing is `auto`"),
        "{stderr}"
    );
    let (stdout, stderr) = sampled_dry_run(&tmp.path().join("missing/libcupti_trace.so"));
    assert!(stdout.contains("# ncu's timing pass"), "{stdout}");
    assert!(
        stderr.contains("pipeline.ncu.timing is `auto` and the injection library")
            && stderr.contains("was not found, so ncu's timing pass times every kernel"),
        "{stderr}"
    );
}
