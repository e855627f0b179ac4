//! System profiles (issue 33, item 4): the tables `SystemProfileEvents`, `DeviceProfileList` and
//! `SystemProfileMetadata` with the columns profile schema 7.4.0 documents, written by the test's own
//! generator (`system_gen.rs`); several instances' directories on shared storage read as one run,
//! one scope per worker; tables and columns the schema does not document refused by name.

use profile_run::profiler::neuron::readers::model::system::WorkerKey;
use profile_run::profiler::neuron::readers::parquet::system;

use super::parquet_gen::{write_table, Col};
use super::system_gen::{training_run, FIRST_NS, INSTANCE_A, INSTANCE_B};

#[test]
fn instances_on_shared_storage_merge_into_one_run_with_a_scope_per_worker() {
    let tmp = tempfile::tempdir().unwrap();
    let dirs = training_run(tmp.path(), Some(3), true);
    // not an instance directory: ignored
    std::fs::create_dir_all(tmp.path().join("notes")).unwrap();
    let one = system::read(&dirs[0]).unwrap();
    assert_eq!(one.events.len(), 10);
    assert_eq!(one.devices.len(), 1);
    assert_eq!(one.metadata[0].first_ns, Some(FIRST_NS as u64));
    assert_eq!(one.metadata[0].ntff_version, Some(5));

    let run = system::read_instances(tmp.path()).unwrap();
    assert_eq!(run.sources.len(), 4);
    assert_eq!(run.events.len(), 40);
    assert_eq!(run.devices.len(), 4);
    assert!(run
        .events
        .windows(2)
        .all(|w| w[0].start_ns <= w[1].start_ns));
    // each process's framework events (no core, no worker) join the one worker it drives
    let workers = run.by_worker();
    let labels: Vec<String> = workers.keys().map(WorkerKey::label).collect();
    assert_eq!(
        labels,
        [
            format!("worker 2 (pid 977) on {INSTANCE_B}"),
            format!("worker 3 (pid 978) on {INSTANCE_B}"),
            format!("worker 0 (pid 4242) on {INSTANCE_A}"),
            format!("worker 1 (pid 4243) on {INSTANCE_A}"),
        ]
    );
    assert!(workers.values().all(|events| events.len() == 10));
    // the path `report` is given finds the same directories, by content
    let mut sorted = dirs.clone();
    sorted.sort();
    assert_eq!(system::system_dirs(tmp.path()), sorted);
    assert_eq!(system::system_dirs(&dirs[1]), [dirs[1].clone()]);
    // a process directory named on its own, its device profile's tables beside the system's
    let process = dirs[1].parent().unwrap();
    std::fs::create_dir_all(process.join("device@latest")).unwrap();
    std::fs::write(process.join("device@latest/Instruction.parquet"), b"PAR1").unwrap();
    assert_eq!(system::system_dirs(process), [dirs[1].clone()]);
    assert!(system::system_dirs(&tmp.path().join("notes")).is_empty());
}

#[test]
fn a_table_the_schema_does_not_document_is_refused_by_name() {
    let tmp = tempfile::tempdir().unwrap();
    let a = training_run(tmp.path(), None, true).remove(0);
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

#[test]
fn a_fractional_number_in_an_integer_column_is_refused_not_rounded() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("p");
    std::fs::create_dir_all(&dir).unwrap();
    write_table(
        &dir.join("SystemProfileEvents.parquet"),
        "SystemProfileEvents",
        &[
            Col::Str("name", vec![Some("nrt_execute".into()); 2]),
            Col::I64("start_ts", vec![Some(FIRST_NS); 2]),
            Col::I64("end_ts", vec![Some(FIRST_NS + 10); 2]),
            Col::Str("instance_id", vec![Some(INSTANCE_A.into()); 2]),
            Col::F64("process_id", vec![Some(4242.0), Some(4242.5)]),
        ],
    );
    let err = system::read(&dir).unwrap_err().to_string();
    assert!(
        err.contains("table SystemProfileEvents, row 1, column `process_id`")
            && err.contains("4242.5 is not a whole number"),
        "{err}"
    );
}
