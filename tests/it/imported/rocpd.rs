//! rocpd databases (rocprofv3 `--output-format rocpd`, schema 3): the sample built from rocpd's
//! schema (tests/fixtures/rocprof/rocpd-schema3), every ROCTx range's GPU time equal to an SQL query
//! over the database and to the same sample read as CSV; a database of two processes split by
//! process, and `merge` of two processes' databases;
//! `diff` gating a slowed copy; unknown
//! schema versions, missing views and columns refused naming them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use assert_cmd::Command;
use rusqlite::Connection;

use super::{assert_same_times, inclusive_by_path, region_times, run_report};
use crate::common::fixture;

const THREAD_SCOPE: &str = "pipeline.ncu.ncu_cli.nvtx.push_pop_scope=thread";
/// The sample's kernel dispatch table: rocpd names each table with its run's uuid.
const DISPATCHES: &str = "rocpd_kernel_dispatch_00000000_0000_0000_0000_000000000000";

fn database() -> PathBuf {
    fixture("rocprof/rocpd-schema3/sample.db")
}

/// A copy of the database in `dir`, changed by `sql`.
fn changed_copy(dir: &Path, name: &str, sql: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::copy(database(), &path).unwrap();
    Connection::open(&path).unwrap().execute_batch(sql).unwrap();
    path
}

/// Each kernel with the ROCTx ranges open on its launching call's thread when the call started
/// (outermost first) and its time, all by SQL over rocpd's own views.
fn kernels_by_sql(db: &Connection) -> Vec<(Vec<String>, f64)> {
    let mut kernels = db
        .prepare(
            "SELECT k.end - k.start, c.start, c.tid FROM kernels k
             JOIN regions c ON c.corr_id = k.corr_id AND c.category LIKE 'HIP%'",
        )
        .unwrap();
    let mut ranges = db
        .prepare(
            "SELECT name FROM regions WHERE category LIKE 'MARKER%' AND start < end
             AND tid = ?1 AND start < ?2 AND end > ?2 ORDER BY start, end DESC",
        )
        .unwrap();
    let rows: Vec<(i64, i64, i64)> = kernels
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    rows.into_iter()
        .map(|(time, launch, thread)| {
            let path = ranges
                .query_map([thread, launch], |r| r.get::<_, String>(0))
                .unwrap()
                .map(Result::unwrap)
                .collect();
            (path, time as f64)
        })
        .collect()
}

#[test]
fn each_roctx_ranges_time_equals_an_sql_query_over_the_database() {
    let tmp = tempfile::tempdir().unwrap();
    let (report, _) = run_report(
        &["report", THREAD_SCOPE],
        &[&database()],
        &tmp.path().join("r"),
    );
    let db = Connection::open(database()).unwrap();
    let kernels = kernels_by_sql(&db);
    assert_eq!(kernels.len(), 7, "every kernel has its hipLaunchKernel");
    let want = inclusive_by_path(
        &kernels
            .into_iter()
            .filter(|(path, _)| !path.is_empty())
            .collect::<Vec<_>>(),
    );
    assert_eq!(want.len(), 3, "{want:?}");
    assert_same_times(&region_times(&report, "device 1"), &want);
    let scope = &report["scopes"][0];
    assert!(
        scope["label"].as_str().unwrap().contains("(pid 69)"),
        "{scope:#}"
    );
    assert_eq!(scope["total"]["kernel_count"], 7);
    assert_eq!(report["run"]["profiler"]["name"], "rocprofv3");
    let notes = report["notes"].to_string();
    assert!(notes.contains("rocpd database (schema 3)"), "{notes}");
}

#[test]
fn the_database_and_the_csv_trace_of_one_run_give_the_same_regions() {
    let tmp = tempfile::tempdir().unwrap();
    let csv = fixture("rocprof/sdk-docs-sample/kernel_trace.csv");
    for scope in [
        "pipeline.ncu.ncu_cli.nvtx.push_pop_scope=process",
        THREAD_SCOPE,
    ] {
        let out = |name: &str| tmp.path().join(format!("{name}-{}", scope.len()));
        let (db, _) = run_report(&["report", scope], &[&database()], &out("db"));
        let (csv, _) = run_report(&["report", scope], &[&csv], &out("csv"));
        let (db, csv) = (
            region_times(&db, "device 1"),
            region_times(&csv, "device 1"),
        );
        assert!(!db.is_empty());
        assert_same_times(&db, &csv);
    }
}

#[test]
fn two_processes_databases_merge_into_one_report_of_two_scopes() {
    let tmp = tempfile::tempdir().unwrap();
    let other = changed_copy(
        tmp.path(),
        "pid70.db",
        "UPDATE rocpd_info_process_00000000_0000_0000_0000_000000000000 SET pid = 70",
    );
    let (report, _) = run_report(&["merge"], &[&database(), &other], &tmp.path().join("m"));
    let scopes = report["scopes"].as_array().unwrap();
    let labels: Vec<&str> = scopes
        .iter()
        .map(|s| s["label"].as_str().unwrap())
        .collect();
    assert_eq!(scopes.len(), 2, "{labels:?}");
    assert!(labels.iter().any(|l| l.contains("(pid 70)")), "{labels:?}");
    for scope in scopes {
        assert_eq!(scope["total"]["kernel_count"], 7, "{scope:#}");
    }
}

#[test]
fn a_database_of_two_processes_is_split_by_process() {
    let tmp = tempfile::tempdir().unwrap();
    let t = |name: &str| format!("{name}_00000000_0000_0000_0000_000000000000");
    // A second process (pid 70) whose thread 71 dispatched the same kernels on its own queues,
    // with no API trace: its kernels are placed at their own start on that thread.
    let sql = format!(
        "INSERT INTO {p} (id, guid, nid, pid) SELECT 2, guid, 1, 70 FROM {p};
         INSERT INTO {th} (id, guid, nid, pid, tid) SELECT 9, guid, 1, 2, 71 FROM {p} WHERE id = 1;
         INSERT INTO {q} (id, guid, nid, pid, name) SELECT id + 100, guid, nid, 2, name FROM {q};
         INSERT INTO {DISPATCHES} (guid, nid, pid, tid, agent_id, kernel_id, dispatch_id, queue_id,
           stream_id, start, end, workgroup_size_x, workgroup_size_y, workgroup_size_z,
           grid_size_x, grid_size_y, grid_size_z, region_name_id, event_id)
         SELECT guid, nid, 2, 9, agent_id, kernel_id, dispatch_id, queue_id + 100, stream_id,
           start, end, workgroup_size_x, workgroup_size_y, workgroup_size_z, grid_size_x,
           grid_size_y, grid_size_z, region_name_id, event_id FROM {DISPATCHES};",
        p = t("rocpd_info_process"),
        th = t("rocpd_info_thread"),
        q = t("rocpd_info_queue"),
    );
    let two = changed_copy(tmp.path(), "two.db", &sql);
    let (report, _) = run_report(&["report"], &[&two], &tmp.path().join("r"));
    let scopes = report["scopes"].as_array().unwrap();
    let labels: Vec<&str> = scopes
        .iter()
        .map(|s| s["label"].as_str().unwrap())
        .collect();
    assert_eq!(scopes.len(), 2, "{labels:?}");
    assert!(labels[0].contains("(pid 69)"), "{labels:?}");
    assert!(labels[1].contains("(pid 70)"), "{labels:?}");
    for scope in scopes {
        assert_eq!(scope["total"]["kernel_count"], 7, "{scope:#}");
    }
    // Process 69's regions are those of the database it alone was in; process 70 ran no ROCTx range.
    let (alone, _) = run_report(&["report"], &[&database()], &tmp.path().join("alone"));
    let alone = region_times(&alone, "(pid 69)");
    assert!(!alone.is_empty());
    assert_same_times(&region_times(&report, "(pid 69)"), &alone);
    assert!(region_times(&report, "(pid 70)").is_empty());
}

#[test]
fn diff_of_two_databases_gates_on_the_slower_region() {
    let tmp = tempfile::tempdir().unwrap();
    let slower = changed_copy(
        tmp.path(),
        "slower.db",
        &format!("UPDATE {DISPATCHES} SET end = start + (end - start) * 2"),
    );
    let diff = |b: &Path| {
        Command::cargo_bin("profile-run")
            .unwrap()
            .args(["diff", "--fail-above", "10"])
            .arg(database())
            .arg(b)
            .output()
            .unwrap()
    };
    let out = diff(&database());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = diff(&slower);
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(6), "{text}");
    assert!(text.contains("iteration"), "{text}");
}

#[test]
fn unknown_versions_views_and_columns_are_refused_naming_them() {
    let tmp = tempfile::tempdir().unwrap();
    let metadata = "rocpd_metadata_00000000_0000_0000_0000_000000000000";
    let cases: BTreeMap<&str, (String, &str)> = BTreeMap::from([
        (
            "version",
            (
                format!("UPDATE {metadata} SET value = '4' WHERE tag = 'schema_version'"),
                "`rocpd_metadata`'s `schema_version` is `4`",
            ),
        ),
        (
            "unversioned",
            (
                format!("DELETE FROM {metadata} WHERE tag = 'schema_version'"),
                "names no `schema_version`",
            ),
        ),
        (
            "view",
            ("DROP VIEW kernels".into(), "has no `kernels` view"),
        ),
        (
            "column",
            (
                format!("DROP VIEW kernels; CREATE VIEW kernels AS SELECT start, end, pid FROM {DISPATCHES}"),
                "view `kernels` has no column `corr_id` or `correlation_id`",
            ),
        ),
        (
            "backwards",
            (
                format!("UPDATE {DISPATCHES} SET end = start - 5 WHERE id = 3"),
                "before it starts",
            ),
        ),
    ]);
    for (name, (sql, names)) in cases {
        let path = changed_copy(tmp.path(), &format!("{name}.db"), &sql);
        let out = Command::cargo_bin("profile-run")
            .unwrap()
            .arg("report")
            .arg(&path)
            .arg("--out")
            .arg(path.with_extension("out"))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_ne!(out.status.code(), Some(0), "{name}");
        assert!(stderr.contains(names), "{name}: {stderr}");
        assert!(stderr.contains(&format!("{name}.db")), "{name}: {stderr}");
    }
}
