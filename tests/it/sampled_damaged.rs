//! A sampled run whose deep pass left a damaged report file (cut in half, empty, random bytes,
//! zero-filled: what a full disk or a killed ncu leaves), made from the real sampled capture of
//! tests/fixtures/ncu/h100-2025.3.1-sampled: the timing pass's report still stands, with a note
//! naming the file and the byte offset where reading failed; the live run exits 4, `report RUN` 0.
//! A FIFO in a deep worker's report's place never blocks the run.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use crate::common::fixture;
use crate::sampled::{fake_sampled, profile_run, read_json, regions};

/// The real deep pass's report file, as ncu wrote it (uncompressed).
fn deep_bytes() -> Vec<u8> {
    let mut bytes = Vec::new();
    flate2::read::GzDecoder::new(
        std::fs::File::open(fixture("ncu/h100-2025.3.1-sampled/train.deep.ncu-rep.gz")).unwrap(),
    )
    .read_to_end(&mut bytes)
    .unwrap();
    bytes
}

/// Each damage, by name, made from the real deep report: its first half, nothing, as many
/// pseudo-random bytes (a fixed seed) and as many zeros.
pub(crate) fn damaged_deep_reports() -> Vec<(&'static str, Vec<u8>)> {
    let real = deep_bytes();
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let random = (0..real.len())
        .map(|_| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed as u8
        })
        .collect();
    vec![
        ("cut in half", real[..real.len() / 2].to_vec()),
        ("empty", Vec::new()),
        ("random", random),
        ("zero-filled", vec![0; real.len()]),
    ]
}

/// `bytes` gzipped into `path`, as the fake ncu takes the report it writes.
fn gzipped(path: &Path, bytes: &[u8]) -> PathBuf {
    let mut out = flate2::write::GzEncoder::new(
        std::fs::File::create(path).unwrap(),
        flate2::Compression::fast(),
    );
    out.write_all(bytes).unwrap();
    out.finish().unwrap();
    path.to_path_buf()
}

/// The timing pass's report is whole: every result of `train_step` with its time.
fn assert_timing_report(report: &serde_json::Value, what: &str) {
    let train_step = regions(report)
        .into_iter()
        .find(|r| r["path"] == "train_step")
        .unwrap_or_else(|| panic!("{what}: the timing pass's regions"));
    assert_eq!(train_step["kernel_count"], 54, "{what}");
    let time = &train_step["inclusive"]["gpu__time_duration.sum"]["value"];
    assert!(time.as_f64().unwrap() > 0.0, "{what}: {time}");
}

/// The report's note on the damaged file: it names the file and where reading failed.
fn assert_damage_note(report: &serde_json::Value, what: &str) {
    let notes = report["notes"].to_string();
    assert!(
        notes.contains("profile.deep.ncu-rep cannot be read (at byte "),
        "{what}: {notes}"
    );
    assert!(!notes.contains("is missing"), "{what}: {notes}");
}

#[test]
fn a_damaged_deep_report_keeps_the_timing_report_exit_4_live_and_0_when_rendered_again() {
    for (what, bytes) in damaged_deep_reports() {
        let tmp = tempfile::tempdir().unwrap();
        let deep = gzipped(&tmp.path().join("deep.ncu-rep.gz"), &bytes);
        let out = fake_sampled(tmp.path())
            .env("FAKE_NCU_DEEP_REPORT", &deep)
            .args(["pipeline.ncu.sampling.adaptive=false", "--", "true"])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(4), "{what}: {stderr}");
        assert!(
            stderr.contains("profile.deep.ncu-rep") && stderr.contains("cannot be read"),
            "{what}: {stderr}"
        );
        let run = tmp.path().join("out/run");
        let live = read_json(&run.join("report.json"));
        assert_timing_report(&live, what);
        assert_damage_note(&live, what);
        assert!(run.join("report.md").is_file(), "{what}");

        // `report RUN` renders the same timing-pass report, exit 0.
        let again = tmp.path().join("again");
        let out = profile_run()
            .arg("report")
            .arg(&run)
            .arg("--out")
            .arg(&again)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{what}: {stderr}");
        let rendered = read_json(&again.join("report.json"));
        assert_timing_report(&rendered, what);
        assert_damage_note(&rendered, what);
        let md = std::fs::read_to_string(again.join("report.md")).unwrap();
        assert!(md.contains("cannot be read (at byte "), "{what}");
    }
}

#[test]
fn a_fifo_in_a_deep_workers_report_place_never_blocks_the_live_run() {
    let tmp = tempfile::tempdir().unwrap();
    // The deep pass's workers write no report; worker 1's workload leaves a FIFO where its report
    // goes (the first pass leaves the marker).
    let workload =
        "[ -f marker ] && mkfifo out/run/profile.deep.1.ncu-rep 2>/dev/null; touch marker; true";
    let started = std::time::Instant::now();
    let out = fake_sampled(tmp.path())
        .env("FAKE_NCU_DEEP_MODE", "no-report")
        .args([
            "pipeline.ncu.sampling.adaptive=false",
            "pipeline.ncu.sampling.deep_gpus=2",
            "--",
            "sh",
            "-c",
            workload,
        ])
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap();
    let took = started.elapsed();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let fifo = tmp.path().join("out/run/profile.deep.1.ncu-rep");
    assert!(
        std::fs::symlink_metadata(&fifo).is_ok_and(|m| !m.is_file()),
        "the FIFO was made"
    );
    assert!(took < std::time::Duration::from_secs(30), "took {took:?}");
    assert_eq!(out.status.code(), Some(4), "{stderr}");
    let report = read_json(&tmp.path().join("out/run/report.json"));
    assert_timing_report(&report, "fifo");
}
