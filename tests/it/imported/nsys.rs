//! Nsight Systems SQLite exports: the two-process export of tests/fixtures/nsys split by process,
//! every NVTX range's GPU time equal to an SQL query over the file; `diff` gating a slowed copy; a
//! `.nsys-rep` exported with the `nsys` on PATH (and the message without one); unknown schema
//! versions, tables and columns refused naming them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use assert_cmd::Command;
use rusqlite::Connection;

use super::{assert_same_times, inclusive_by_path, region_times, run_report};
use crate::common::fixture;

fn export() -> PathBuf {
    fixture("nsys/nsys-ai-h100-2gpu/h100_2gpu_1s.sqlite")
}

/// A copy of the export in `dir`, changed by `sql`.
fn changed_copy(dir: &Path, name: &str, sql: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::copy(export(), &path).unwrap();
    Connection::open(&path).unwrap().execute_batch(sql).unwrap();
    path
}

/// Each kernel of process `pid` with the push/pop ranges open on its launching thread when the
/// launch started (outermost first; none for a kernel whose launch the export lacks) and its time,
/// all by SQL over the export.
fn kernels_by_sql(db: &Connection, pid: i64) -> Vec<(Vec<String>, f64)> {
    let mut kernels = db
        .prepare(
            "SELECT k.end - k.start, r.start, r.globalTid FROM CUPTI_ACTIVITY_KIND_KERNEL k
             LEFT JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.correlationId = k.correlationId
               AND r.globalTid / 16777216 = k.globalPid / 16777216
             WHERE (k.globalPid / 16777216) % 16777216 = ?1",
        )
        .unwrap();
    let mut ranges = db
        .prepare(
            "SELECT COALESCE(n.text, s.value) FROM NVTX_EVENTS n LEFT JOIN StringIds s ON s.id = n.textId
             WHERE n.eventType = 59 AND n.globalTid = ?1 AND n.start < ?2 AND n.end > ?2
             ORDER BY n.start, n.end DESC",
        )
        .unwrap();
    let rows: Vec<(i64, Option<i64>, Option<i64>)> = kernels
        .query_map([pid], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    rows.into_iter()
        .map(|(time, launch, thread)| {
            let Some((launch, thread)) = launch.zip(thread) else {
                return (Vec::new(), time as f64);
            };
            let path = ranges
                .query_map([thread, launch], |r| r.get::<_, String>(0))
                .unwrap()
                .map(Result::unwrap)
                .collect();
            (path, time as f64)
        })
        .collect()
}

const THREAD_SCOPE: &str = "pipeline.ncu.ncu_cli.nvtx.push_pop_scope=thread";

#[test]
fn each_processs_ranges_equal_an_sql_query_over_the_export() {
    let tmp = tempfile::tempdir().unwrap();
    let (report, _) = run_report(
        &["report", THREAD_SCOPE],
        &[&export()],
        &tmp.path().join("r"),
    );
    let db = Connection::open(export()).unwrap();
    for pid in [111, 112] {
        let kernels = kernels_by_sql(&db, pid);
        assert_eq!(kernels.len(), 1721);
        let in_ranges: Vec<_> = kernels.into_iter().filter(|(p, _)| !p.is_empty()).collect();
        let want = inclusive_by_path(&in_ranges);
        assert!(want.len() > 100);
        assert_same_times(&region_times(&report, &format!("pid {pid}")), &want);
    }
    let labels: Vec<&str> = report["scopes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["label"].as_str().unwrap())
        .collect();
    assert_eq!(labels.len(), 2, "{labels:?}");
    assert!(
        labels[0].contains("python3 (pid 111)") && labels[0].contains("device 0"),
        "{labels:?}"
    );
    assert!(
        labels[1].contains("(pid 112)") && labels[1].contains("device 1"),
        "{labels:?}"
    );
    let total: f64 = db
        .query_row(
            "SELECT SUM(end - start) FROM CUPTI_ACTIVITY_KIND_KERNEL",
            [],
            |r| r.get(0),
        )
        .unwrap();
    let aggregate = report["aggregate"]["total"]["metrics"]["gpu__time_duration.sum"]["value"]
        .as_f64()
        .unwrap_or_else(|| panic!("{:#}", report["aggregate"]["total"]));
    assert!(
        (aggregate - total).abs() <= total * 1e-3,
        "{aggregate} vs {total}"
    );
}

#[test]
fn the_pytorch_preset_folds_emit_nvtx_names() {
    let tmp = tempfile::tempdir().unwrap();
    let (report, _) = run_report(
        &["report", "--config", "ncu/pytorch"],
        &[&export()],
        &tmp.path().join("r"),
    );
    let times = region_times(&report, "pid 111");
    assert!(
        times
            .keys()
            .any(|p| p == &["aten::linear", "aten::matmul", "aten::mm"]),
        "{:?}",
        times.keys().take(20).collect::<Vec<_>>()
    );
    assert!(times.keys().all(|p| p.iter().all(|s| !s.contains("op_id"))));
}

#[test]
fn diff_of_two_exports_gates_on_the_slower_region() {
    let tmp = tempfile::tempdir().unwrap();
    let same = changed_copy(tmp.path(), "same.sqlite", "SELECT 1");
    let slower = changed_copy(
        tmp.path(),
        "slower.sqlite",
        "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET end = start + (end - start) * 2
         WHERE demangledName IN (SELECT id FROM StringIds WHERE value LIKE '%xmma_gemm%')",
    );
    let diff = |b: &Path| {
        Command::cargo_bin("profile-run")
            .unwrap()
            .args(["diff", "--config", "ncu/pytorch", "--fail-above", "10"])
            .arg(export())
            .arg(b)
            .output()
            .unwrap()
    };
    let out = diff(&same);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = diff(&slower);
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(6), "{text}");
    assert!(text.contains("aten::mm"), "{text}");
}

/// A shell script named `nsys` in `dir` that copies the fixture to its `--output` argument.
fn fake_nsys(dir: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let script = format!(
        "#!/bin/sh\n[ \"$1\" = export ] || exit 9\nwhile [ $# -gt 1 ]; do [ \"$1\" = --output ] && out=$2; shift; done\n/bin/cp '{}' \"$out\"\n",
        export().display()
    );
    let path = dir.join("nsys");
    std::fs::write(&path, script).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn an_nsys_report_is_exported_with_nsys_into_the_report_directory() {
    let tmp = tempfile::tempdir().unwrap();
    let inputs = tmp.path().join("inputs");
    std::fs::create_dir(&inputs).unwrap();
    let rep = inputs.join("run.nsys-rep");
    std::fs::write(&rep, b"not read by profile-run").unwrap();
    let bin = tmp.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let report = |path: &std::ffi::OsStr, out: &Path| {
        Command::cargo_bin("profile-run")
            .unwrap()
            .env("PATH", path)
            .arg("report")
            .arg(&rep)
            .arg("--out")
            .arg(out)
            .output()
            .unwrap()
    };
    let without = report(bin.as_os_str(), &tmp.path().join("none"));
    let stderr = String::from_utf8_lossy(&without.stderr);
    assert_eq!(without.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("`nsys` is not on PATH"), "{stderr}");
    assert!(
        stderr.contains("nsys export --type sqlite --output run.sqlite"),
        "{stderr}"
    );
    fake_nsys(&bin);
    let out = tmp.path().join("out");
    let with = report(bin.as_os_str(), &out);
    assert!(
        with.status.success(),
        "{}",
        String::from_utf8_lossy(&with.stderr)
    );
    assert!(out.join("run.sqlite").is_file());
    let beside: Vec<_> = std::fs::read_dir(&inputs).unwrap().collect();
    assert_eq!(
        beside.len(),
        1,
        "nothing is written beside the user's report"
    );
}

/// `profile-run report` of `path`: its exit code and stderr.
fn refusal(path: &Path) -> (Option<i32>, String) {
    let out = Command::cargo_bin("profile-run")
        .unwrap()
        .arg("report")
        .arg(path)
        .arg("--out")
        .arg(path.with_extension("out"))
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn unknown_versions_tables_and_columns_are_refused_naming_them() {
    let tmp = tempfile::tempdir().unwrap();
    let cases: BTreeMap<&str, (&str, &str)> = BTreeMap::from([
        (
            "version",
            (
                "UPDATE META_DATA_EXPORT SET value = '4.1.0' WHERE name = 'EXPORT_SCHEMA_VERSION'",
                "`EXPORT_SCHEMA_VERSION` is `4.1.0`",
            ),
        ),
        (
            "column",
            (
                "ALTER TABLE CUPTI_ACTIVITY_KIND_KERNEL RENAME COLUMN correlationId TO corr",
                "table `CUPTI_ACTIVITY_KIND_KERNEL` has no column `correlationId`",
            ),
        ),
        (
            "strings",
            ("DROP TABLE StringIds", "has no `StringIds` table"),
        ),
        (
            "meta",
            (
                "DROP TABLE META_DATA_EXPORT",
                "has no `META_DATA_EXPORT` table",
            ),
        ),
        (
            "backwards",
            (
                "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET end = start - 5 WHERE rowid = 7",
                "before it starts",
            ),
        ),
    ]);
    for (name, (sql, names)) in cases {
        let path = changed_copy(tmp.path(), &format!("{name}.sqlite"), sql);
        let (code, stderr) = refusal(&path);
        assert_ne!(code, Some(0), "{name}");
        assert!(stderr.contains(names), "{name}: {stderr}");
        assert!(
            stderr.contains(&format!("{name}.sqlite")),
            "{name}: {stderr}"
        );
    }
}
