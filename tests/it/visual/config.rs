//! `report.outputs`: the default writes report.md and report.json only, a list writes exactly those
//! files, and an unknown name exits 2 naming the key before anything is read or written.

use assert_cmd::Command;

use crate::common::fixture;

const MANUAL: &str = "ncu/h200-2025.3.1/manual_raw.csv";

fn report(out: &std::path::Path, args: &[&str]) -> std::process::Output {
    Command::cargo_bin("profile-run")
        .unwrap()
        .arg("report")
        .arg(fixture(MANUAL))
        .arg("--out")
        .arg(out)
        .args(args)
        .output()
        .unwrap()
}

fn files(dir: &std::path::Path) -> Vec<String> {
    let mut out = Vec::new();
    for entry in walk(dir) {
        out.push(
            entry
                .strip_prefix(dir)
                .unwrap()
                .to_string_lossy()
                .into_owned(),
        );
    }
    out.sort();
    out
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let path = e.unwrap().path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}

#[test]
fn the_default_writes_markdown_and_json_only() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let o = report(&out, &[]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(
        files(&out),
        [".profile-run-outputs", "report.json", "report.md"]
    );
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(!md.contains("**Charts:**"));
}

#[test]
fn every_output_is_written_and_report_md_is_printed() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let o = report(&out, &["report.outputs=[md, json, html, svg, trace]"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(
        files(&out),
        [
            ".profile-run-outputs",
            "charts/scope-1-time.svg",
            "report.html",
            "report.json",
            "report.md",
            "trace.json"
        ]
    );
    let printed = String::from_utf8(o.stdout).unwrap();
    assert_eq!(
        printed.trim_end(),
        out.join("report.md").display().to_string()
    );
}

#[test]
fn without_markdown_the_first_output_is_printed() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let o = report(&out, &["report.outputs=[html, trace]"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(
        files(&out),
        [".profile-run-outputs", "report.html", "trace.json"]
    );
    let printed = String::from_utf8(o.stdout).unwrap();
    assert_eq!(
        printed.trim_end(),
        out.join("report.html").display().to_string()
    );
}

#[test]
fn an_unknown_output_is_a_config_error_naming_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let o = report(&out, &["report.outputs=[md, pdf]"]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("report.outputs"), "{stderr}");
    assert!(stderr.contains("pdf"), "{stderr}");
    assert!(
        stderr.contains("html"),
        "the valid names are listed: {stderr}"
    );
    assert!(!out.exists(), "nothing written");
    // The profile command refuses it before starting anything.
    let o = Command::cargo_bin("profile-run")
        .unwrap()
        .current_dir(dir.path())
        .args([
            "pipeline.ncu.executable=/nonexistent/ncu",
            "report.outputs=[svg, gif]",
            "--",
            "true",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("report.outputs"), "{stderr}");
}

#[test]
fn an_empty_list_is_a_config_error() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let o = report(&out, &["report.outputs=[]"]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("report.outputs"), "{stderr}");
}

#[test]
fn a_trace_bound_of_zero_slices_is_a_config_error_with_the_fix() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let with_trace = "report.outputs=[md, trace]";
    let o = report(&out, &[with_trace, "report.trace_events=0"]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("report.trace_events"), "{stderr}");
    assert!(stderr.contains("set it to 1 or more"), "{stderr}");
    assert!(!out.exists(), "nothing rendered");
    let o = report(&out, &[with_trace, "report.trace_events=1"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // Without trace.json the bound bounds nothing.
    let other = dir.path().join("other");
    let o = report(&other, &["report.outputs=[md]", "report.trace_events=0"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn force_removes_what_an_earlier_render_wrote_and_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let o = report(&out, &["report.outputs=[md, json, html, svg, trace]"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    std::fs::write(out.join("my-notes.txt"), "mine").unwrap();
    std::fs::write(out.join("charts/my-chart.svg"), "mine").unwrap();
    let o = report(&out, &["--force"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // The charts, report.html and trace.json of the earlier render are gone; the user's files stay.
    assert_eq!(
        files(&out),
        [
            ".profile-run-outputs",
            "charts/my-chart.svg",
            "my-notes.txt",
            "report.json",
            "report.md"
        ]
    );
}
