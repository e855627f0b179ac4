//! `merge` of per-rank CSV-export runs (one profile-run per rank under ncu) counts each rank once:
//! a byte copy of a rank's directory and a rank two `run.json` files name are refused, conflicting
//! world sizes, a rank past the world size and a missing rank are flagged in the Summary, each
//! scope carries the rank its run recorded (also for an export given by its own path), and a rank
//! directory linked from outside the shared run directory is not read. Built from the real runs of
//! tests/fixtures/ncu/h200x2-2025.3.1 (`ddp_rank0`, `ddp_rank1`).

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use serde_json::Value;

use crate::common::fixture;

const SOURCE: &str = "ncu/h200x2-2025.3.1";

/// One rank's run directory at `dir`: the real rank `from`'s export as its own process (a process
/// id of its own for each `from` and `rank`, so that no two are byte copies) and `run.json`, the
/// record naming `rank` (of `world` ranks, where given).
fn rank_run(dir: &Path, from: u32, rank: u32, world: Option<u32>) -> PathBuf {
    let source = fixture(SOURCE);
    std::fs::create_dir_all(dir).unwrap();
    let pid = (5000 + rank * 2 + from).to_string();
    let mut reader =
        csv::Reader::from_path(source.join(format!("ddp_rank{from}_raw.csv"))).unwrap();
    let column = reader
        .headers()
        .unwrap()
        .iter()
        .position(|h| h == "Process ID")
        .unwrap();
    let mut writer = csv::WriterBuilder::new()
        .quote_style(csv::QuoteStyle::Always)
        .from_path(dir.join("export_raw.csv"))
        .unwrap();
    writer.write_record(reader.headers().unwrap()).unwrap();
    for (i, row) in reader.records().enumerate() {
        let row = row.unwrap();
        // The units row (the first) has no process id.
        let cells = row
            .iter()
            .enumerate()
            .map(|(at, cell)| match at == column && i > 0 {
                true => pid.as_str(),
                false => cell,
            });
        writer.write_record(cells).unwrap();
    }
    writer.flush().unwrap();
    let text = std::fs::read_to_string(source.join(format!("ddp_rank{from}.run.json"))).unwrap();
    let mut record: Value = serde_json::from_str(&text).unwrap();
    record["rank"] = serde_json::json!({"rank": rank, "source": "RANK"});
    if let Some(world) = world {
        record["rank"]["world_size"] = world.into();
    }
    std::fs::write(dir.join("run.json"), record.to_string()).unwrap();
    dir.to_path_buf()
}

/// A shared run directory `root` of ranks `(from, rank, world)`, `rank<i>/` each.
fn job(root: &Path, ranks: &[(u32, u32, Option<u32>)]) -> PathBuf {
    for (i, &(from, rank, world)) in ranks.iter().enumerate() {
        rank_run(&root.join(format!("rank{i}")), from, rank, world);
    }
    root.to_path_buf()
}

fn merge(inputs: &[&Path], out: &Path) -> assert_cmd::assert::Assert {
    Command::cargo_bin("profile-run")
        .unwrap()
        .arg("-q")
        .arg("merge")
        .args(inputs)
        .arg("--out")
        .arg(out)
        .assert()
}

fn read_report(out: &Path) -> (Value, String) {
    let json = std::fs::read_to_string(out.join("report.json")).unwrap();
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    (serde_json::from_str(&json).unwrap(), md)
}

/// `(rank, why)` of every flagged rank.
fn flagged(report: &Value) -> Vec<(u64, String)> {
    report["run"]["flagged_ranks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["rank"].as_u64().unwrap(),
                f["why"].as_str().unwrap().into(),
            )
        })
        .collect()
}

fn stderr(assert: &assert_cmd::assert::Assert) -> String {
    String::from_utf8_lossy(&assert.get_output().stderr).into_owned()
}

#[test]
fn a_byte_copy_of_a_rank_directory_is_refused_not_counted_twice() {
    let tmp = tempfile::tempdir().unwrap();
    let root = job(&tmp.path().join("job"), &[(0, 0, None), (1, 1, None)]);
    crate::common::copy_tree(&root.join("rank1"), &root.join("rank2"));
    let out = tmp.path().join("out");
    let assert = merge(&[&root], &out).code(2);
    let err = stderr(&assert);
    assert!(
        err.contains("rank2/export_raw.csv is a byte copy of"),
        "{err}"
    );
    assert!(err.contains("rank1/export_raw.csv"), "{err}");
    assert!(!out.exists(), "a refused merge leaves no directory behind");
    // The copy without its run.json (so no repeated rank says it) is refused by content alone.
    std::fs::remove_file(root.join("rank2/run.json")).unwrap();
    let err = stderr(&merge(&[&root], &out).code(2));
    assert!(err.contains("is a byte copy of"), "{err}");
    // Given as bare exports too.
    let (a, b) = (
        root.join("rank1/export_raw.csv"),
        root.join("rank2/export_raw.csv"),
    );
    let err = stderr(&merge(&[&a, &b], &out).code(2));
    assert!(err.contains("is a byte copy of"), "{err}");
}

#[test]
fn a_rank_two_runs_name_is_refused_naming_both() {
    let tmp = tempfile::tempdir().unwrap();
    // Rank 0's real export, recorded as rank 1: another run than rank1's, naming the same rank.
    let root = job(
        &tmp.path().join("job"),
        &[(0, 0, None), (1, 1, None), (0, 1, None)],
    );
    let out = tmp.path().join("out");
    let err = stderr(&merge(&[&root], &out).code(2));
    assert!(
        err.contains("rank 1 is named by the run.json of both"),
        "{err}"
    );
    assert!(
        err.contains("job/rank1`") && err.contains("job/rank2`"),
        "{err}"
    );
    assert!(!out.exists());
}

#[test]
fn conflicting_world_sizes_are_flagged_in_the_summary() {
    let tmp = tempfile::tempdir().unwrap();
    let ranks = [
        (0, 0, Some(4)),
        (1, 1, Some(8)),
        (0, 2, Some(2)),
        (1, 3, Some(4)),
    ];
    let root = job(&tmp.path().join("job"), &ranks);
    let out = tmp.path().join("out");
    merge(&[&root], &out).success();
    let (report, md) = read_report(&out);
    let flagged = flagged(&report);
    let conflict = |rank: u64| {
        flagged
            .iter()
            .any(|(r, why)| *r == rank && why.starts_with("world size conflict"))
    };
    assert!(conflict(1) && conflict(2), "{flagged:?}");
    assert!(!conflict(0) && !conflict(3), "{flagged:?}");
    // Rank 2 of a world of 2 is past it as well.
    assert!(flagged
        .iter()
        .any(|(r, why)| *r == 2 && why.starts_with("beyond")));
    let summary = md.split("## Summary").nth(1).unwrap();
    assert!(summary.contains("world size conflict"), "{md}");
}

#[test]
fn a_rank_past_the_world_size_and_a_missing_rank_are_flagged() {
    let tmp = tempfile::tempdir().unwrap();
    let ranks = [
        (0, 0, Some(4)),
        (1, 1, Some(4)),
        (0, 2, Some(4)),
        (1, 7, Some(4)),
    ];
    let root = job(&tmp.path().join("job"), &ranks);
    let out = tmp.path().join("out");
    merge(&[&root], &out).success();
    let (report, md) = read_report(&out);
    let flagged = flagged(&report);
    assert!(
        flagged
            .iter()
            .any(|(r, why)| *r == 7 && why.starts_with("beyond the world size")),
        "{flagged:?}"
    );
    assert!(flagged
        .iter()
        .any(|(r, why)| *r == 3 && why.starts_with("missing")));
    assert!(md.contains("rank 7 beyond the world size"), "{md}");
}

#[test]
fn every_scope_has_its_rank_also_from_an_export_given_by_its_path() {
    let tmp = tempfile::tempdir().unwrap();
    let root = job(&tmp.path().join("job"), &[(0, 0, Some(2)), (1, 1, Some(2))]);
    let out = tmp.path().join("out");
    let (a, b) = (
        root.join("rank0/export_raw.csv"),
        root.join("rank1/export_raw.csv"),
    );
    merge(&[&a, &b], &out).success();
    let (report, _) = read_report(&out);
    let ranks: Vec<Value> = report["scopes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["rank"].clone())
        .collect();
    assert_eq!(ranks, [Value::from(0), Value::from(1)]);
    // And their records are checked as run directories' are: two exports whose runs name rank 1.
    let c = rank_run(&tmp.path().join("other"), 0, 1, Some(2)).join("export_raw.csv");
    let err = stderr(&merge(&[&a, &b, &c], &tmp.path().join("out2")).code(2));
    assert!(
        err.contains("rank 1 is named by the run.json of both"),
        "{err}"
    );
}

#[test]
fn a_rank_directory_linked_from_outside_the_shared_root_is_not_read() {
    let tmp = tempfile::tempdir().unwrap();
    let root = job(&tmp.path().join("job"), &[(0, 0, Some(2))]);
    let elsewhere = rank_run(&tmp.path().join("elsewhere/rank1"), 1, 1, Some(2));
    std::os::unix::fs::symlink(&elsewhere, root.join("rank1")).unwrap();
    let out = tmp.path().join("out");
    let assert = merge(&[&root], &out).success();
    let (report, _) = read_report(&out);
    assert_eq!(report["scopes"].as_array().unwrap().len(), 1);
    let note = report["notes"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .find(|n| n.contains("is a link to"))
        .unwrap_or_else(|| panic!("{}", report["notes"]))
        .to_string();
    assert!(
        note.contains("job/rank1`") && note.contains("elsewhere/rank1`"),
        "{note}"
    );
    assert!(stderr(&assert).contains("is a link to"));
    // Not read, so rank 1 is missing from a job of two.
    assert!(flagged(&report)
        .iter()
        .any(|(r, why)| *r == 1 && why.starts_with("missing")));
    // A link that stays inside the shared directory is followed as before.
    std::fs::remove_file(root.join("rank1")).unwrap();
    std::fs::rename(&elsewhere, root.join("real1")).unwrap();
    std::os::unix::fs::symlink(root.join("real1"), root.join("rank1")).unwrap();
    merge(&[&root], &tmp.path().join("out2")).success();
    let (report, _) = read_report(&tmp.path().join("out2"));
    assert_eq!(report["scopes"].as_array().unwrap().len(), 2);
}
