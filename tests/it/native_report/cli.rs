//! `profile-run report` on report files and run directories with no ncu anywhere: a gzipped file, a run
//! directory holding only its report file and record, a damaged file, mixed inputs.

use std::collections::BTreeSet;
use std::path::PathBuf;

use crate::common::fixture;
use crate::report_file::report_path;

/// A copy of a fixture report in a fresh temporary directory, gunzipped when `plain`.
fn copied(name: &str, dir: &std::path::Path, file: &str, plain: bool) -> PathBuf {
    let target = dir.join(file);
    let bytes = std::fs::read(report_path(name)).unwrap();
    if plain {
        let mut out = Vec::new();
        std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&bytes[..]), &mut out)
            .unwrap();
        std::fs::write(&target, out).unwrap();
    } else {
        std::fs::write(&target, bytes).unwrap();
    }
    target
}

/// `profile-run report ARGS` with no ncu anywhere: the executable names a missing program and PATH
/// holds only the system directories.
fn report_without_ncu(cwd: &std::path::Path, args: &[&str]) -> std::process::Output {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_profile-run"));
    cmd.current_dir(cwd)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .arg("report")
        .args(args)
        .arg("pipeline.ncu.executable=/nonexistent/ncu");
    cmd.output().unwrap()
}

fn read_json(path: &std::path::Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn region_paths(json: &serde_json::Value) -> BTreeSet<String> {
    json["scopes"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|s| s["regions"].as_array().unwrap())
        .map(|r| r["path"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn report_reads_a_gzipped_report_file_without_ncu() {
    let tmp = tempfile::tempdir().unwrap();
    let rep = copied("rep_kernel", tmp.path(), "rep_kernel.ncu-rep.gz", false);
    let out = tmp.path().join("out");
    let result = report_without_ncu(
        tmp.path(),
        &[rep.to_str().unwrap(), "--out", out.to_str().unwrap()],
    );
    assert!(
        result.status.success(),
        "{}",
        String::from_utf8_lossy(&result.stderr)
    );
    let json = read_json(&out.join("report.json"));
    let paths = region_paths(&json);
    for want in ["A", "A/A1", "B"] {
        assert!(paths.contains(want), "{want} not in {paths:?}");
    }
    assert_eq!(json["run"]["profiler"]["name"], "ncu");
    // No CSV was exported: the numbers come from the file itself.
    let sources = json["run"]["sources"].as_array().unwrap();
    assert_eq!(sources.len(), 1);
    assert!(sources[0].as_str().unwrap().ends_with(".ncu-rep.gz"));
    assert!(!std::fs::read_dir(&out).unwrap().any(|e| e
        .unwrap()
        .path()
        .extension()
        .is_some_and(|x| x == "csv")));
}

#[test]
fn report_reads_a_run_directory_holding_only_its_report_file() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    std::fs::create_dir(&run).unwrap();
    copied("rep_multiproc", &run, "profile.ncu-rep", true);
    std::fs::copy(
        fixture("ncu/h100-2025.3.1-pytorch/rep_multiproc.run.json"),
        run.join("run.json"),
    )
    .unwrap();
    let out = tmp.path().join("out");
    let result = report_without_ncu(
        tmp.path(),
        &[run.to_str().unwrap(), "--out", out.to_str().unwrap()],
    );
    assert!(
        result.status.success(),
        "{}",
        String::from_utf8_lossy(&result.stderr)
    );
    let json = read_json(&out.join("report.json"));
    let pids: BTreeSet<u64> = json["scopes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["process_id"].as_u64().unwrap())
        .collect();
    assert_eq!(pids.len(), 2, "two processes: {pids:?}");
    let paths = region_paths(&json);
    assert!(paths.contains("A") && paths.contains("B"), "{paths:?}");
    // The run's record gives the profiler's version and settings.
    assert!(json["run"]["profiler"]["version"].is_string());
    assert_eq!(json["run"]["profiler"]["settings"]["replay_mode"], "kernel");
}

#[test]
fn a_damaged_report_file_exits_5_naming_it() {
    let tmp = tempfile::tempdir().unwrap();
    let rep = copied("rep_range", tmp.path(), "cut.ncu-rep", true);
    let bytes = std::fs::read(&rep).unwrap();
    std::fs::write(&rep, &bytes[..bytes.len() / 2 + 7]).unwrap();
    let result = report_without_ncu(
        tmp.path(),
        &[
            rep.to_str().unwrap(),
            "--out",
            tmp.path().join("o").to_str().unwrap(),
        ],
    );
    assert_eq!(result.status.code(), Some(5));
    assert!(String::from_utf8_lossy(&result.stderr).contains("cut.ncu-rep"));
}

#[test]
fn report_files_and_csv_exports_are_not_mixed_in_one_report() {
    let tmp = tempfile::tempdir().unwrap();
    let rep = copied("rep_kernel", tmp.path(), "rep_kernel.ncu-rep.gz", false);
    let raw = fixture("ncu/h100-2025.3.1-pytorch/rep_kernel_raw.csv");
    let result = report_without_ncu(
        tmp.path(),
        &[
            rep.to_str().unwrap(),
            raw.to_str().unwrap(),
            "--out",
            tmp.path().join("o").to_str().unwrap(),
        ],
    );
    assert_eq!(result.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&result.stderr);
    assert!(stderr.contains("pipeline.ncu.reader=csv"), "{stderr}");
    assert!(!tmp.path().join("o").exists());
}
