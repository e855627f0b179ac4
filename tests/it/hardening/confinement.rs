//! Everything stays inside `--out`: the manifest of an earlier report's files is read without
//! following a link, as a small regular file, and never deletes outside the directory; no output is
//! written through a link (charts, Neuron views); no file is replaced without `--force`, whoever
//! wrote it; run names are one directory name.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use assert_cmd::Command;

use super::{code_and_stderr, entries, Workspace};
use crate::common::fixture;

const MANUAL: &str = "ncu/h200-2025.3.1/manual_raw.csv";

/// A directory holding a copy of the manual export (`manual_raw.csv`), the set-up.
fn workdir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(fixture(MANUAL), dir.path().join("manual_raw.csv")).unwrap();
    dir
}

/// `profile-run report manual_raw.csv --out o ARGS…` in `dir`, killed (and the test failed) if it
/// takes more than 20 s: a hang is a failure, not a stuck test suite.
fn report_in(dir: &Path, args: &[&str]) -> (i32, String, Duration) {
    let started = Instant::now();
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("profile-run"))
        .current_dir(dir)
        .args(["report", "manual_raw.csv", "--out", "o"])
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > Duration::from_secs(20) {
            child.kill().unwrap();
            panic!("profile-run {args:?} hung");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let output = child.wait_with_output().unwrap();
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stderr).into_owned(),
        started.elapsed(),
    )
}

#[test]
fn a_manifest_entry_through_a_symlink_deletes_nothing_outside_out() {
    // mkdir o v; echo x > v/victim; ln -s ../v o/lnk; echo lnk/victim > o/.profile-run-outputs
    let dir = workdir();
    let d = dir.path();
    std::fs::create_dir_all(d.join("o")).unwrap();
    std::fs::create_dir_all(d.join("v")).unwrap();
    std::fs::write(d.join("v/victim"), "x\n").unwrap();
    std::os::unix::fs::symlink("../v", d.join("o/lnk")).unwrap();
    std::fs::write(d.join("o/.profile-run-outputs"), "lnk/victim\n").unwrap();
    let (code, stderr, _) = report_in(d, &[]);
    assert_eq!(code, 2, "an earlier report's manifest: {stderr}");
    assert!(
        stderr.contains("holds an earlier report") && stderr.contains("--force"),
        "{stderr}"
    );
    let (code, stderr, _) = report_in(d, &["--force"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(std::fs::read_to_string(d.join("v/victim")).unwrap(), "x\n");
    assert!(std::fs::symlink_metadata(d.join("o/lnk"))
        .unwrap()
        .file_type()
        .is_symlink());
    // Absolute and `..` entries are ignored as well, with --force.
    let manifest = format!("../v/victim\n{}\n", d.join("v/victim").display());
    std::fs::write(d.join("o/.profile-run-outputs"), manifest).unwrap();
    let (code, stderr, _) = report_in(d, &["--force"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(d.join("v/victim").exists());
}

#[test]
fn a_huge_sparse_manifest_is_refused_quickly_with_bounded_memory() {
    let dir = workdir();
    let d = dir.path();
    std::fs::create_dir_all(d.join("o")).unwrap();
    let manifest = std::fs::File::create(d.join("o/.profile-run-outputs")).unwrap();
    manifest.set_len(3 << 30).unwrap();
    // At most 1 GiB of address space: reading the manifest in full would abort.
    let started = Instant::now();
    let output = std::process::Command::new("bash")
        .current_dir(d)
        .arg("-c")
        .arg(format!(
            "ulimit -v 1048576; exec '{}' report manual_raw.csv --out o --force",
            assert_cmd::cargo::cargo_bin("profile-run").display()
        ))
        .output()
        .unwrap();
    let elapsed = started.elapsed();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(".profile-run-outputs")
            && stderr.contains("3221225472 bytes")
            && stderr.contains("remove it"),
        "{stderr}"
    );
    assert!(elapsed < Duration::from_secs(5), "{elapsed:?}");
    assert!(!d.join("o/report.md").exists(), "nothing written");
}

#[test]
fn a_fifo_or_symlinked_manifest_is_refused_not_read() {
    let dir = workdir();
    let d = dir.path();
    std::fs::create_dir_all(d.join("o")).unwrap();
    let manifest = d.join("o/.profile-run-outputs");
    nix::unistd::mkfifo(&manifest, nix::sys::stat::Mode::S_IRWXU).unwrap();
    let (code, stderr, took) = report_in(d, &["--force"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("is a FIFO"), "{stderr}");
    assert!(took < Duration::from_secs(5), "{took:?}");
    std::fs::remove_file(&manifest).unwrap();
    let elsewhere = d.join("list");
    std::fs::write(&elsewhere, "manual_raw.csv\n").unwrap();
    std::os::unix::fs::symlink(&elsewhere, &manifest).unwrap();
    let (code, stderr, _) = report_in(d, &["--force"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("is a symbolic link"), "{stderr}");
    assert!(
        d.join("manual_raw.csv").exists(),
        "the input is never removed"
    );
}

#[test]
fn a_users_own_files_in_out_are_never_replaced_without_force() {
    let dir = workdir();
    let d = dir.path();
    // Where a report with every output puts its files: learnt from a render elsewhere.
    let all = "report.outputs=[md,json,html,svg,trace]";
    let (code, stderr, _) = report_in(d, &[all]);
    assert_eq!(code, 0, "{stderr}");
    let chart = entries(&d.join("o/charts")).remove(0);
    std::fs::remove_dir_all(d.join("o")).unwrap();
    for own in [
        "report.html".to_string(),
        "trace.json".to_string(),
        format!("charts/{chart}"),
    ] {
        let out = d.join("o");
        let _ = std::fs::remove_dir_all(&out);
        let path = out.join(&own);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, "the user's own\n").unwrap();
        let (code, stderr, _) = report_in(d, &[all]);
        assert_eq!(code, 2, "{own}: {stderr}");
        assert!(
            stderr.contains(&own) && stderr.contains("--force"),
            "{own}: {stderr}"
        );
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "the user's own\n",
            "{own}"
        );
        assert!(
            !out.join("report.md").exists(),
            "{own}: nothing put in place"
        );
        let (code, stderr, _) = report_in(d, &[all, "--force"]);
        assert_eq!(code, 0, "{own}: {stderr}");
        assert_ne!(std::fs::read_to_string(&path).unwrap(), "the user's own\n");
    }
}

#[test]
fn a_charts_symlink_never_sends_the_svgs_outside_out() {
    let dir = workdir();
    let d = dir.path();
    std::fs::create_dir_all(d.join("o")).unwrap();
    std::fs::create_dir_all(d.join("elsewhere")).unwrap();
    std::os::unix::fs::symlink("../elsewhere", d.join("o/charts")).unwrap();
    for force in [&[][..], &["--force"][..]] {
        let mut args = vec!["report.outputs=[md,svg]"];
        args.extend_from_slice(force);
        let (code, stderr, _) = report_in(d, &args);
        assert_eq!(code, 2, "{stderr}");
        assert!(
            stderr.contains("charts") && stderr.contains("symbolic link"),
            "{stderr}"
        );
        assert!(entries(&d.join("elsewhere")).is_empty(), "nothing written");
        assert!(!d.join("o/report.md").exists(), "nothing put in place");
    }
}

/// The temporary files a killed render left in `o` and `o/charts` are removed by the next render
/// there; a user's file of a similar name stays.
#[test]
fn a_killed_renders_temporary_files_are_removed_by_the_next_render() {
    let dir = workdir();
    let d = dir.path();
    std::fs::create_dir_all(d.join("o/charts")).unwrap();
    let stale = [
        d.join("o/.profile-run-tmp.report.md.5f3a"),
        d.join("o/charts/.profile-run-tmp.scope-1-time.svg.5f3a"),
    ];
    for path in &stale {
        std::fs::write(path, "half a file").unwrap();
    }
    std::fs::write(d.join("o/.report.md.notes.tmp"), "mine").unwrap();
    let (code, stderr, _) = report_in(d, &["report.outputs=[md,svg]"]);
    assert_eq!(code, 0, "{stderr}");
    for path in &stale {
        assert!(!path.exists(), "{} left", path.display());
    }
    assert!(d.join("o/.report.md.notes.tmp").exists());
    assert!(d.join("o/report.md").exists());
}

fn refused_run_name(ws: &Workspace, set: &[(&str, &str)], args: &[&str]) -> String {
    let mut cmd = ws.cmd();
    for (var, value) in set {
        cmd.env(var, value);
    }
    let (code, stderr) = code_and_stderr(cmd.args(args).args(["-q", "--", "true"]));
    assert_eq!(code, 2, "{set:?} {args:?}: {stderr}");
    assert!(stderr.contains("not one directory name"), "{stderr}");
    stderr
}

#[test]
fn run_names_that_are_not_one_directory_name_are_refused() {
    let ws = Workspace::new();
    let escape = ws.dir.path().join("escaped");
    let stderr = refused_run_name(&ws, &[], &["output.run_name=../escaped"]);
    assert!(stderr.contains("output.run_name"), "{stderr}");
    let absolute = format!("output.run_name={}", escape.display());
    refused_run_name(&ws, &[], &[&absolute]);
    let stderr = refused_run_name(
        &ws,
        &[("RANK", "0"), ("TORCHELASTIC_RUN_ID", "../../escaped")],
        &[],
    );
    assert!(stderr.contains("TORCHELASTIC_RUN_ID"), "{stderr}");
    let stderr = refused_run_name(&ws, &[("RANK", "0"), ("SLURM_JOB_ID", "../escaped")], &[]);
    assert!(stderr.contains("SLURM_JOB_ID"), "{stderr}");
    assert!(!escape.exists());
    assert!(
        !ws.root().exists() || ws.run_dirs().is_empty(),
        "no run directory made"
    );
    assert!(!PathBuf::from(ws.dir.path()).join("escaped").exists());
    // An ordinary name still works.
    Command::from_std(ws.std_cmd_with(&super::fake_ncu()))
        .args(["output.run_name=plain-1", "-q", "--", "true"])
        .assert()
        .success();
    assert_eq!(entries(&ws.root()), ["plain-1"]);
}

#[test]
fn a_views_symlink_never_sends_a_neuron_view_outside_out() {
    // An inspect output directory, viewed into `--out` whose `views` is a link to elsewhere.
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let proc = d.join("inspect/i-1_pid_77");
    std::fs::create_dir_all(&proc).unwrap();
    std::fs::write(proc.join("neff_ab12.neff"), "n").unwrap();
    std::fs::write(proc.join("ab12_instid_0_vnc_0.ntff"), "t").unwrap();
    std::fs::create_dir_all(d.join("o")).unwrap();
    std::fs::create_dir_all(d.join("elsewhere")).unwrap();
    std::os::unix::fs::symlink("../elsewhere", d.join("o/views")).unwrap();
    let tool = crate::common::repo().join("tests/support/fake-neuron-explorer");
    let (code, stderr) = code_and_stderr(
        Command::cargo_bin("profile-run")
            .unwrap()
            .current_dir(d)
            .env("HOME", d)
            .env("FAKE_NEURON_ARGV_LOG", d.join("argv.log"))
            .args(["report", "inspect", "--out", "o", "--force"])
            .arg(format!("pipeline.neuron.executable={}", tool.display()))
            .arg("pipeline.neuron.view.format=json"),
    );
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("views") && stderr.contains("symbolic link"),
        "{stderr}"
    );
    assert!(entries(&d.join("elsewhere")).is_empty(), "nothing written");
    assert!(!d.join("argv.log").exists(), "the tool never ran");
}
