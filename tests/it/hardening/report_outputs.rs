//! Where `report` writes and what it reads: the same capture given twice is refused, an existing report
//! is never replaced without `--force`, a bare export's report never lands in the source tree, output
//! that cannot be written names the path, and notes that change the numbers reach stderr.

use std::path::{Path, PathBuf};

use assert_cmd::Command;

use super::{code_and_stderr, entries, fake_ncu, read_json, Workspace, CSV_READER};
use crate::common::fixture;

const MANUAL: &str = "ncu/h200-2025.3.1/manual_raw.csv";

fn report() -> Command {
    let mut cmd = Command::cargo_bin("profile-run").unwrap();
    cmd.arg("report");
    cmd
}

fn text(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// A finished run directory made with the fake ncu (its report.md rendered from the CSV pages, which
/// it keeps beside its report file).
fn finished_run(ws: &Workspace) -> PathBuf {
    ws.cmd()
        .args(CSV_READER)
        .args(["-q", "--", "true"])
        .assert()
        .success();
    ws.run_dirs().remove(0)
}

#[test]
fn the_same_export_twice_is_refused_naming_both_arguments() {
    let dir = tempfile::tempdir().unwrap();
    let export = fixture(MANUAL);
    let link = dir.path().join("link_raw.csv");
    std::os::unix::fs::symlink(&export, &link).unwrap();
    let out = dir.path().join("out");
    let (code, stderr) =
        code_and_stderr(report().args([text(&export), text(&export), "--out", text(&out)]));
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("is given twice") && stderr.contains("counted twice"),
        "{stderr}"
    );
    let (code, stderr) =
        code_and_stderr(report().args([text(&export), text(&link), "--out", text(&out)]));
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains(&format!("`{}` and `{}`", export.display(), link.display())),
        "{stderr}"
    );
    assert!(!out.exists(), "nothing written");
}

#[test]
fn a_run_directory_and_its_own_export_are_one_capture() {
    let ws = Workspace::new();
    let run = finished_run(&ws);
    let raw = run.join("export_raw.csv");
    let out = ws.dir.path().join("again");
    let (code, stderr) =
        code_and_stderr(report().args([text(&run), text(&raw), "--out", text(&out)]));
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains(&format!("`{}` and `{}`", run.display(), raw.display())),
        "{stderr}"
    );
    // A shared directory and one of its rank directories, for merge.
    let shared = ws.dir.path().join("ddp");
    std::fs::create_dir_all(shared.join("rank0")).unwrap();
    std::fs::copy(fixture(MANUAL), shared.join("rank0/export_raw.csv")).unwrap();
    let mut merge = Command::cargo_bin("profile-run").unwrap();
    let (code, stderr) = code_and_stderr(merge.args([
        "merge",
        text(&shared),
        text(&shared.join("rank0")),
        "--out",
        text(&out),
    ]));
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("name the same capture"), "{stderr}");
}

#[test]
fn an_existing_report_in_out_is_replaced_only_with_force() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let export = fixture(MANUAL);
    report()
        .args([text(&export), "--out", text(&out)])
        .assert()
        .success();
    let before = std::fs::read(out.join("report.json")).unwrap();
    let (code, stderr) = code_and_stderr(report().args([
        text(&export),
        "--out",
        text(&out),
        "report.aggregate=false",
    ]));
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains(&out.join("report.md").display().to_string()),
        "{stderr}"
    );
    assert!(
        stderr.contains("--force") && stderr.contains("another --out"),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read(out.join("report.json")).unwrap(),
        before,
        "untouched"
    );
    report()
        .args([
            text(&export),
            "--out",
            text(&out),
            "--force",
            r#"report.kernels.include=["*nothing*"]"#,
        ])
        .assert()
        .success();
    assert_ne!(
        std::fs::read(out.join("report.json")).unwrap(),
        before,
        "replaced"
    );
}

#[test]
fn a_bare_exports_report_goes_to_a_fresh_directory_under_output_root() {
    let source_tree = tempfile::tempdir().unwrap();
    std::fs::copy(fixture(MANUAL), source_tree.path().join("manual_raw.csv")).unwrap();
    let root = source_tree.path().join("profile-output");
    let output = report()
        .current_dir(source_tree.path())
        .args(["manual_raw.csv", &format!("output.root={}", root.display())])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let printed = PathBuf::from(String::from_utf8(output.stdout).unwrap().trim());
    let made = entries(&root);
    assert_eq!(made.len(), 1, "{made:?}");
    assert!(made[0].starts_with("report-"), "{made:?}");
    assert_eq!(printed, root.join(&made[0]).join("report.md"));
    assert!(printed.is_file());
    assert_eq!(
        entries(source_tree.path()),
        ["manual_raw.csv", "profile-output"],
        "nothing written beside the export"
    );
}

#[test]
fn rerendering_a_run_directory_keeps_its_report_unless_forced() {
    let ws = Workspace::new();
    let run = finished_run(&ws);
    let original = std::fs::read(run.join("report.json")).unwrap();
    let output = report()
        .args([text(&run), r#"report.kernels.include=["*reduce*"]"#])
        .args(CSV_READER)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    let printed = PathBuf::from(String::from_utf8(output.stdout).unwrap().trim());
    assert_eq!(
        printed.parent().unwrap().parent().unwrap(),
        run,
        "a sub-directory of the run"
    );
    assert!(
        stderr.contains("already holds a report") && stderr.contains("--force"),
        "{stderr}"
    );
    assert_eq!(
        read_json(&printed.with_file_name("report.json"))["kernel_selection"]["results_excluded"],
        4
    );
    assert_eq!(
        std::fs::read(run.join("report.json")).unwrap(),
        original,
        "kept"
    );
    report()
        .args([
            text(&run),
            "--force",
            r#"report.kernels.include=["*reduce*"]"#,
        ])
        .args(CSV_READER)
        .assert()
        .success();
    assert_eq!(
        read_json(&run.join("report.json"))["kernel_selection"]["results_excluded"],
        4
    );
}

#[test]
fn outputs_that_cannot_be_written_name_the_path() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a-file");
    std::fs::write(&file, "x").unwrap();
    let export = fixture(MANUAL);
    let (code, stderr) = code_and_stderr(report().args([text(&export), "--out", text(&file)]));
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains(&format!("--out {} is a file", file.display())),
        "{stderr}"
    );
    // A directory below a file: a file is in the way.
    let below = file.join("out");
    let (code, stderr) = code_and_stderr(report().args([text(&export), "--out", text(&below)]));
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains(&below.display().to_string()), "{stderr}");
    assert!(!stderr.contains("internal error"), "{stderr}");
    // Not writable even by root: sysfs refuses new entries (permission denied or read-only).
    let (code, stderr) =
        code_and_stderr(report().args([text(&export), "--out", "/sys/profile-run-out"]));
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("/sys/profile-run-out"), "{stderr}");
    assert!(
        stderr.contains("permission denied") || stderr.contains("read-only"),
        "{stderr}"
    );
    // A profile run whose output.root cannot be created.
    let ws = Workspace::new();
    let (code, stderr) = code_and_stderr(ws.cmd_with(&fake_ncu()).args([
        &format!("output.root={}", below.display()),
        "-q",
        "--",
        "true",
    ]));
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains(&below.display().to_string()) && stderr.contains("output.root=DIR"),
        "{stderr}"
    );
}

#[test]
fn config_show_fails_on_a_full_disk_and_succeeds_on_a_closed_pipe() {
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let output = std::process::Command::new(assert_cmd::cargo::cargo_bin("profile-run"))
        .args(["config", "show"])
        .stdout(full)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("could not write to standard output: No space left on device"),
        "{stderr}"
    );

    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("profile-run"))
        .args(["config", "show", "--origin"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let output = child.wait_with_output().unwrap();
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(output.stderr.is_empty(), "silent");
}

#[test]
fn notes_that_change_the_numbers_are_printed_on_stderr_too() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    // The app-range capture has no launch__waves_per_multiprocessor column.
    let export = fixture("ncu/h200-2025.3.1/apprange_manual_raw.csv");
    let (code, stderr) = code_and_stderr(report().args([
        text(&export),
        "--out",
        text(&out),
        r#"report.kernels.include=["*no_such_kernel*"]"#,
    ]));
    assert_eq!(code, 0, "{stderr}");
    let lines: Vec<&str> = stderr.lines().collect();
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("note: Not in the inputs, so not shown:")
                && l.contains("launch__waves_per_multiprocessor")),
        "{stderr}"
    );
    assert!(
        lines.contains(
            &"note: report.kernels.include pattern `*no_such_kernel*` matched no kernel name."
        ),
        "{stderr}"
    );
    let notes = read_json(&out.join("report.json"))["notes"].to_string();
    assert!(
        notes.contains("matched no kernel name"),
        "the same note is in the report: {notes}"
    );
}

#[test]
fn a_bare_ncu_rep_is_exported_into_the_reports_directory_not_beside_it() {
    let source_tree = tempfile::tempdir().unwrap();
    std::fs::write(source_tree.path().join("capture.ncu-rep"), "fake profile").unwrap();
    let root = tempfile::tempdir().unwrap();
    let output = report()
        .current_dir(source_tree.path())
        .args([
            "capture.ncu-rep",
            &format!("output.root={}", root.path().display()),
        ])
        .args(CSV_READER)
        .arg(format!("pipeline.ncu.executable={}", fake_ncu().display()))
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(
        entries(source_tree.path()),
        ["capture.ncu-rep"],
        "nothing beside the input"
    );
    let printed = PathBuf::from(String::from_utf8(output.stdout).unwrap().trim());
    let dir = printed.parent().unwrap();
    assert_eq!(dir.parent().unwrap(), root.path());
    assert_eq!(
        entries(dir),
        [
            ".profile-run-outputs",
            "export_details.csv",
            "export_raw.csv",
            "report.json",
            "report.md"
        ]
    );
    assert_eq!(
        read_json(&dir.join("report.json"))["scopes"][0]["regions"][0]["kernel_count"],
        6
    );
}

/// `report RUN --out o` of a run directory holding only its report file, read through ncu's CSV
/// pages: the pages are exported under `o`, and the run directory is left as it was.
#[test]
fn a_run_directorys_report_file_is_exported_under_out_not_into_the_run() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    std::fs::create_dir(&run).unwrap();
    std::fs::write(run.join("profile.ncu-rep"), "fake profile").unwrap();
    let output = report()
        .current_dir(tmp.path())
        .args(["run", "--out", "o"])
        .args(CSV_READER)
        .arg(format!("pipeline.ncu.executable={}", fake_ncu().display()))
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(
        entries(&run),
        ["profile.ncu-rep"],
        "nothing written into the input"
    );
    let out = tmp.path().join("o");
    assert!(entries(&out).contains(&"export_raw.csv".to_string()));
    assert_eq!(
        read_json(&out.join("report.json"))["scopes"][0]["regions"][0]["kernel_count"],
        6
    );
}
