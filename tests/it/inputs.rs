//! What `report` and `merge` refuse, and how: JSON that is no capture (`{}`, profile-run's own
//! report.json), a missing file named as missing with no directory left behind, a garbage `.ncu-rep`
//! in plain printable text; and a gzip-compressed CSV export read like the plain one.

use std::io::Write;
use std::path::Path;

use assert_cmd::Command;
use serde_json::Value;

use crate::common::{fixture, repo};

/// `profile-run report ARGS…` run in `cwd`: exit code and stderr.
fn report_in(cwd: &Path, args: &[&str]) -> (i32, String) {
    let out = Command::cargo_bin("profile-run")
        .unwrap()
        .current_dir(cwd)
        .arg("report")
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8(out.stderr).expect("stderr is UTF-8"),
    )
}

/// Nothing was created in `dir` besides `kept`.
fn only(dir: &Path, kept: &[&str]) {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, kept, "nothing left behind in {}", dir.display());
}

#[test]
fn an_empty_json_object_is_refused_with_what_to_give_instead() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("profile.json"), "{}\n").unwrap();
    let (code, stderr) = report_in(dir.path(), &["profile.json", "--out", "out"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("profile.json: an empty JSON object (`{}`) holds no profile"),
        "{stderr}"
    );
    only(dir.path(), &["profile.json"]);
}

#[test]
fn profile_runs_own_report_json_is_refused_pointing_to_diff_and_merge() {
    let dir = tempfile::tempdir().unwrap();
    let own = repo().join("tests/it/golden/rep_kernel.report.json");
    let (code, stderr) = report_in(dir.path(), &[own.to_str().unwrap()]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("this is a report.json written by profile-run, not a capture")
            && stderr.contains("`profile-run diff A.json B.json`")
            && stderr.contains("`merge`"),
        "{stderr}"
    );
    only(dir.path(), &[]);
}

#[test]
fn a_missing_file_is_named_as_missing_and_leaves_no_directory() {
    let dir = tempfile::tempdir().unwrap();
    for args in [&["X.ncu-rep", "--out", "out"][..], &["X.ncu-rep"][..]] {
        let (code, stderr) = report_in(dir.path(), args);
        assert_eq!(code, 2, "{stderr}");
        assert_eq!(
            stderr.lines().next().unwrap(),
            "error: X.ncu-rep does not exist; give a run directory, an .ncu-rep[.gz], a `--page raw` CSV export (.csv or .csv.gz), a CUPTI trace (cupti.<pid>.trace[.gz]) or a Neuron profile"
        );
        only(dir.path(), &[]);
    }
    // With a real capture beside it, merge names the one that is missing.
    let real = fixture("ncu/h100-2025.3.1-pytorch/rep_kernel.ncu-rep.gz");
    let (code, stderr) = report_in(dir.path(), &[real.to_str().unwrap(), "rank1.ncu-rep"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("rank1.ncu-rep does not exist"), "{stderr}");
    only(dir.path(), &[]);
}

#[test]
fn a_garbage_report_file_prints_a_plain_error() {
    let dir = tempfile::tempdir().unwrap();
    // Bytes that are no UTF-8: a lossy decoding would print replacement characters.
    std::fs::write(
        dir.path().join("garbage.ncu-rep"),
        [0x44, 0x28, 0xe7, 0xde, 0x9f, 0x00, 0xff, 0x1b, 0x5b],
    )
    .unwrap();
    let (code, stderr) = report_in(dir.path(), &["garbage.ncu-rep", "--out", "out"]);
    assert_eq!(code, 5, "{stderr}");
    assert!(
        stderr.contains("the file starts with `D(\\xe7\\xde`, expected `NVR\\0`"),
        "{stderr}"
    );
    assert!(
        stderr
            .chars()
            .all(|c| c == '\n' || (' '..='~').contains(&c)),
        "printable ASCII only: {stderr:?}"
    );
    only(dir.path(), &["garbage.ncu-rep"]);
}

fn gzip(from: &Path, to: &Path) {
    let mut gz = flate2::write::GzEncoder::new(
        std::fs::File::create(to).unwrap(),
        flate2::Compression::fast(),
    );
    gz.write_all(&std::fs::read(from).unwrap()).unwrap();
    gz.finish().unwrap();
}

fn regions(report: &Value) -> Vec<(String, Value)> {
    report["scopes"][0]["regions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["path"].as_str().unwrap().to_string(),
                r["inclusive"].clone(),
            )
        })
        .collect()
}

#[test]
fn a_compressed_csv_export_reads_like_the_plain_one_with_its_details() {
    let dir = tempfile::tempdir().unwrap();
    let plain = fixture("ncu/h200-2025.3.1/manual_raw.csv");
    gzip(&plain, &dir.path().join("manual_raw.csv.gz"));
    gzip(
        &fixture("ncu/h200-2025.3.1/manual_details.csv"),
        &dir.path().join("manual_details.csv.gz"),
    );
    let (code, stderr) = report_in(dir.path(), &["manual_raw.csv.gz", "--out", "gz"]);
    assert_eq!(code, 0, "{stderr}");
    let (code, stderr) = report_in(dir.path(), &[plain.to_str().unwrap(), "--out", "plain"]);
    assert_eq!(code, 0, "{stderr}");
    let read = |d: &str| -> Value {
        serde_json::from_str(
            &std::fs::read_to_string(dir.path().join(d).join("report.json")).unwrap(),
        )
        .unwrap()
    };
    let (gz, plain) = (read("gz"), read("plain"));
    assert!(!regions(&plain).is_empty());
    assert_eq!(regions(&gz), regions(&plain));
    let insights = |r: &Value| {
        r["scopes"][0]["regions"]
            .to_string()
            .matches("\"source\":\"ncu\"")
            .count()
    };
    assert!(insights(&gz) > 0, "the details page was read too");
    assert_eq!(insights(&gz), insights(&plain));
    // The compressed input is left as it was, beside nothing new.
    assert!(dir.path().join("manual_raw.csv.gz").is_file());
    assert!(!dir.path().join("manual_raw.csv").exists());
}
