//! System profiles (issue 33, item 4): the tables `SystemProfileEvents`, `DeviceProfileList` and
//! `SystemProfileMetadata` with the columns profile schema 7.4.0 documents, written by the test's own
//! generator ([`write_instance`]); several instances' directories on shared storage read as one run,
//! one scope per worker; tables and columns the schema does not document refused by name.

use std::path::{Path, PathBuf};

use profile_run::profiler::neuron::readers::model::system::WorkerKey;
use profile_run::profiler::neuron::readers::parquet::system;

use super::parquet_gen::{write_table, Col};

/// The schema reference's own example instance and first timestamp.
const INSTANCE_A: &str = "i-0b1ea78ca2865fd32";
const INSTANCE_B: &str = "i-07c4d2e9a1b3f5680";
const FIRST_NS: i64 = 1_766_072_156_592_459_482;

/// One event: name, worker, start and end offsets from [`FIRST_NS`] in ns.
struct Event(&'static str, i64, i64, i64);

/// Writes `<root>/<instance>_pid_<pid>/system@latest/` with the three system tables: each worker's
/// `nrt_execute` events, and one device profile per worker.
fn write_instance(root: &Path, instance: &str, pid: i64, events: &[Event]) -> PathBuf {
    let dir = root
        .join(format!("{instance}_pid_{pid}"))
        .join("system@latest");
    std::fs::create_dir_all(&dir).unwrap();
    let n = events.len();
    let all = |v: Option<i64>| vec![v; n];
    write_table(
        &dir.join("SystemProfileEvents.parquet"),
        "SystemProfileEvents",
        &[
            Col::I64("id", (0..n as i64).map(Some).collect()),
            Col::Str("name", events.iter().map(|e| Some(e.0.into())).collect()),
            Col::I64(
                "start_ts",
                events.iter().map(|e| Some(FIRST_NS + e.2)).collect(),
            ),
            Col::I64(
                "end_ts",
                events.iter().map(|e| Some(FIRST_NS + e.3)).collect(),
            ),
            Col::I64(
                "duration_ns",
                events.iter().map(|e| Some(e.3 - e.2)).collect(),
            ),
            Col::Str("trace_event_source", vec![Some("neuron_rt".into()); n]),
            Col::Str("instance_id", vec![Some(instance.into()); n]),
            Col::I64("process_id", all(Some(pid))),
            Col::I64("thread_id", all(Some(pid + 1))),
            Col::I64("nc_idx", events.iter().map(|e| Some(e.1 % 2)).collect()),
            Col::I64("worker_gid", events.iter().map(|e| Some(e.1)).collect()),
        ],
    );
    let mut workers: Vec<i64> = events.iter().map(|e| e.1).collect();
    workers.dedup();
    write_table(
        &dir.join("DeviceProfileList.parquet"),
        "DeviceProfileList",
        &[
            Col::Str(
                "device_profile_name",
                workers
                    .iter()
                    .map(|w| Some(format!("neuron_profile_{w:03}")))
                    .collect(),
            ),
            Col::Str("instance_id", vec![Some(instance.into()); workers.len()]),
            Col::I64("process_id", vec![Some(pid); workers.len()]),
            Col::I64("nc_id", workers.iter().map(|w| Some(w % 2)).collect()),
        ],
    );
    write_table(
        &dir.join("SystemProfileMetadata.parquet"),
        "SystemProfileMetadata",
        &[
            Col::Str(
                "first_ts",
                vec![Some("2025-12-18 15:35:56.592459482 +0000 UTC".into())],
            ),
            Col::Str("first_ts_ns", vec![Some(FIRST_NS.to_string())]),
            Col::Str(
                "last_ts_ns",
                vec![Some((FIRST_NS + 747_796_101).to_string())],
            ),
            Col::I64("ntff_version", vec![Some(5)]),
            Col::I64("hbm_capacity_bytes", vec![Some(17_179_869_184)]),
        ],
    );
    dir
}

/// Two instances of two workers each; worker 3 starts its second execution late.
fn two_instances(root: &Path) -> (PathBuf, PathBuf) {
    let a = write_instance(
        root,
        INSTANCE_A,
        4242,
        &[
            Event("nrt_execute", 0, 1_000, 51_000),
            Event("nrt_execute", 0, 60_000, 110_000),
            Event("nrt_execute", 1, 1_200, 51_000),
            Event("nrt_execute", 1, 60_100, 110_000),
        ],
    );
    let b = write_instance(
        root,
        INSTANCE_B,
        977,
        &[
            Event("nrt_execute", 2, 900, 51_000),
            Event("nrt_execute", 2, 60_050, 110_000),
            Event("nrt_execute", 3, 1_100, 51_000),
            Event("nrt_execute", 3, 95_000, 110_000),
        ],
    );
    (a, b)
}

#[test]
fn instances_on_shared_storage_merge_into_one_run_with_a_scope_per_worker() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, _) = two_instances(tmp.path());
    // not an instance directory: ignored
    std::fs::create_dir_all(tmp.path().join("notes")).unwrap();
    let one = system::read(&a).unwrap();
    assert_eq!(one.events.len(), 4);
    assert_eq!(one.devices.len(), 2);
    assert_eq!(one.metadata[0].first_ns, Some(FIRST_NS as u64));
    assert_eq!(one.metadata[0].ntff_version, Some(5));

    let run = system::read_instances(tmp.path()).unwrap();
    assert_eq!(run.sources.len(), 2);
    assert_eq!(run.events.len(), 8);
    assert_eq!(run.devices.len(), 4);
    assert!(run
        .events
        .windows(2)
        .all(|w| w[0].start_ns <= w[1].start_ns));
    let workers = run.by_worker();
    let labels: Vec<String> = workers.keys().map(WorkerKey::label).collect();
    assert_eq!(
        labels,
        [
            format!("{INSTANCE_B} worker 2"),
            format!("{INSTANCE_B} worker 3"),
            format!("{INSTANCE_A} worker 0"),
            format!("{INSTANCE_A} worker 1"),
        ]
    );
    assert!(workers.values().all(|events| events.len() == 2));
}

#[test]
fn a_table_the_schema_does_not_document_is_refused_by_name() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, _) = two_instances(tmp.path());
    write_table(
        &a.join("SystemProfileTimeline.parquet"),
        "SystemProfileTimeline",
        &[Col::I64("start_ts", vec![Some(FIRST_NS)])],
    );
    let err = system::read(&a).unwrap_err().to_string();
    assert!(err.contains("table SystemProfileTimeline"), "{err}");
    assert!(err.contains("documents no such table"), "{err}");
    // the merge refuses it too, rather than leaving that instance out
    let err = system::read_instances(tmp.path()).unwrap_err().to_string();
    assert!(err.contains("SystemProfileTimeline"), "{err}");
}

#[test]
fn a_column_the_schema_does_not_document_is_refused_naming_table_and_column() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("p");
    std::fs::create_dir_all(&dir).unwrap();
    write_table(
        &dir.join("SystemProfileEvents.parquet"),
        "SystemProfileEvents",
        &[
            Col::Str("name", vec![Some("nrt_execute".into())]),
            Col::I64("start_ts", vec![Some(FIRST_NS)]),
            Col::I64("end_ts", vec![Some(FIRST_NS + 10)]),
            Col::Str("instance_id", vec![Some(INSTANCE_A.into())]),
            Col::I64("process_id", vec![Some(1)]),
            Col::I64("rank", vec![Some(0)]),
        ],
    );
    let err = system::read(&dir).unwrap_err().to_string();
    assert!(
        err.contains("table SystemProfileEvents, column `rank`"),
        "{err}"
    );
}

#[test]
fn a_needed_column_missing_is_refused_naming_table_and_column() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("p");
    std::fs::create_dir_all(&dir).unwrap();
    write_table(
        &dir.join("SystemProfileEvents.parquet"),
        "SystemProfileEvents",
        &[
            Col::Str("name", vec![Some("nrt_execute".into())]),
            Col::I64("start_ts", vec![Some(FIRST_NS)]),
            Col::I64("duration_ns", vec![Some(10)]),
            Col::I64("process_id", vec![Some(1)]),
        ],
    );
    let err = system::read(&dir).unwrap_err().to_string();
    assert!(
        err.contains("SystemProfileEvents") && err.contains("`instance_id`"),
        "{err}"
    );
    // no instance directory at all
    let err = system::read_instances(tmp.path()).unwrap_err().to_string();
    assert!(err.contains("_pid_"), "{err}");
}
