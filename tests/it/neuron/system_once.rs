//! A system profile counted once (issue 42, item 4): the same process's profile reached twice (a
//! link to the shared folder, a parent and its child, a copy, one process under `system@latest/`
//! and a timestamped folder, a table part written twice) is read once, with a note saying what was
//! left out; and a table that is a FIFO or a link out of its profile directory is left out with a
//! note, never opened. The profiles come from the project's generator (`system_gen.rs`).

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use profile_run::profiler::neuron::readers::parquet::system;

use super::cli::report_json;
use super::parquet_gen::{write_table, Col};
use super::system_gen::{training_run, FIRST_NS, INSTANCE_B};
use super::system_report::run;

/// The late worker of [`training_run`] with `Some(3)`.
fn late() -> String {
    format!("worker 3 (pid 978) on {INSTANCE_B}")
}

fn notes(report: &Value) -> Vec<String> {
    report["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap().to_string())
        .collect()
}

/// The report of a four-worker run read once: ten events per worker, no phase inside its own twin,
/// no share past the whole, the late worker named with its real phases, and a note that `says`.
fn assert_counted_once(out: &Path, says: &str) {
    let report = report_json(out);
    let scopes = report["scopes"].as_array().unwrap();
    assert_eq!(scopes.len(), 4, "{}", report["scopes"]);
    for scope in scopes {
        assert_eq!(scope["total"]["kernel_count"], 10, "{}", scope["label"]);
        for r in scope["regions"].as_array().unwrap() {
            let segments: Vec<&str> = r["segments"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| s.as_str().unwrap())
                .collect();
            assert!(
                segments.windows(2).all(|w| w[0] != w[1]),
                "a phase inside its twin: {}",
                r["path"]
            );
            let share = r["time_share"].as_f64().unwrap();
            assert!(share <= 1.0, "{} holds {share} of its scope", r["path"]);
        }
    }
    let s = &report["cross_rank"]["straggler"];
    assert_eq!(s["scope"], late().as_str());
    assert_eq!(s["cause"]["region"], "train_step/nrt_tensor_write");
    let notes = notes(&report);
    assert!(notes.iter().any(|n| n.contains(says)), "{notes:?}");
}

#[test]
fn the_shared_folder_given_again_through_a_link_is_read_once() {
    let tmp = tempfile::tempdir().unwrap();
    let shared = tmp.path().join("shared");
    training_run(&shared, Some(3), true);
    let link = tmp.path().join("again");
    std::os::unix::fs::symlink(&shared, &link).unwrap();
    let out = run("report", tmp.path(), &[shared, link]).unwrap();
    assert_counted_once(
        &out,
        "(the same directory, by its resolved path): read once",
    );
}

#[test]
fn a_parent_and_its_child_given_together_are_read_once() {
    let tmp = tempfile::tempdir().unwrap();
    let shared = tmp.path().join("shared");
    let dirs = training_run(&shared, Some(3), true);
    let child = dirs[3].parent().unwrap().to_path_buf();
    let out = run("report", tmp.path(), &[shared, child]).unwrap();
    assert_counted_once(&out, "read once");
    let report = report_json(&out);
    assert_eq!(report["run"]["sources"].as_array().unwrap().len(), 4);
}

#[test]
fn a_copy_of_the_shared_folder_adds_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let shared = tmp.path().join("shared");
    training_run(&shared, Some(3), true);
    let copy = tmp.path().join("copy");
    copy_dir(&shared, &copy);
    let out = run("report", tmp.path(), &[shared, copy]).unwrap();
    assert_counted_once(&out, "holds the same events as");
}

#[test]
fn one_process_under_system_latest_and_a_timestamped_folder_is_read_once() {
    let tmp = tempfile::tempdir().unwrap();
    let shared = tmp.path().join("shared");
    let dirs = training_run(&shared, Some(3), true);
    // the runtime's timestamped run folder beside its `system@latest/`
    let process = dirs[3].parent().unwrap();
    copy_dir(
        &dirs[3],
        &process.join("20251218_153556").join("system@latest"),
    );
    let out = run("report", tmp.path(), &[shared]).unwrap();
    assert_counted_once(&out, "holds the same events as");
}

#[test]
fn a_table_part_written_twice_counts_its_events_once() {
    let tmp = tempfile::tempdir().unwrap();
    let shared = tmp.path().join("shared");
    let dirs = training_run(&shared, Some(3), true);
    let events = dirs[3].join("SystemProfileEvents.parquet");
    std::fs::copy(&events, dirs[3].join("SystemProfileEvents_1.parquet")).unwrap();
    let out = run("report", tmp.path(), &[shared]).unwrap();
    assert_counted_once(&out, "10 of its 20 events appear twice in it");
}

#[test]
fn an_event_is_known_by_its_id_and_content_so_twins_with_two_ids_are_both_kept() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp
        .path()
        .join(format!("{INSTANCE_B}_pid_978"))
        .join("system@latest");
    std::fs::create_dir_all(&dir).unwrap();
    // rows 0 and 1 alike but for their ids (two calls at one instant); row 2 is row 0 again
    write_table(
        &dir.join("SystemProfileEvents.parquet"),
        "SystemProfileEvents",
        &[
            Col::I64("id", vec![Some(0), Some(1), Some(0)]),
            Col::Str("name", vec![Some("nrt_execute".into()); 3]),
            Col::I64("start_ts", vec![Some(FIRST_NS); 3]),
            Col::I64("end_ts", vec![Some(FIRST_NS + 10); 3]),
            Col::Str("instance_id", vec![Some(INSTANCE_B.into()); 3]),
            Col::I64("process_id", vec![Some(978); 3]),
        ],
    );
    let profile = system::read_all(std::slice::from_ref(&dir)).unwrap();
    let ids: Vec<Option<u64>> = profile.events.iter().map(|e| e.id).collect();
    assert_eq!(ids, [Some(0), Some(1)]);
    assert_eq!(
        profile.notes,
        [format!(
            "`{}`: 1 of its 3 events appear twice in it (a table part written twice?): each \
             counted once.",
            dir.display()
        )]
    );
}

#[test]
fn a_fifo_table_is_left_out_with_a_note_instead_of_blocking_the_report() {
    let tmp = tempfile::tempdir().unwrap();
    let shared = tmp.path().join("shared");
    let dirs = training_run(&shared, Some(3), true);
    let fifo = dirs[0].join("SystemProfileMetadata.parquet");
    std::fs::remove_file(&fifo).unwrap();
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
    let ended = within(Duration::from_secs(60), {
        let (dir, shared) = (tmp.path().to_path_buf(), shared.clone());
        move || run("report", &dir, &[shared])
    });
    let Some(ended) = ended else {
        // Unblock the reader stuck opening the FIFO, so that it does not outlive the test.
        use std::os::unix::fs::OpenOptionsExt;
        let _ = std::fs::OpenOptions::new()
            .write(true)
            .custom_flags(nix::fcntl::OFlag::O_NONBLOCK.bits())
            .open(&fifo);
        panic!("report blocked opening the FIFO table {}", fifo.display());
    };
    let out = ended.unwrap();
    let report = report_json(&out);
    assert_eq!(report["scopes"].as_array().unwrap().len(), 4);
    let notes = notes(&report);
    let note = format!("`{}` is left out: it is a FIFO", fifo.display());
    assert!(notes.iter().any(|n| n.starts_with(&note)), "{notes:?}");
}

#[test]
fn a_table_linked_from_outside_its_profile_directory_is_not_read() {
    let tmp = tempfile::tempdir().unwrap();
    let shared = tmp.path().join("shared");
    let dirs = training_run(&shared, Some(3), true);
    // worker 3's events linked from worker 0's directory: read, they would be worker 3's twice
    let outside = dirs[3].join("SystemProfileEvents.parquet");
    let link = dirs[0].join("SystemProfileEvents_1.parquet");
    std::os::unix::fs::symlink(&outside, &link).unwrap();
    let out = run("report", tmp.path(), &[shared]).unwrap();
    let report = report_json(&out);
    let notes = notes(&report);
    let note = format!("`{}` is left out: it is a symbolic link to", link.display());
    assert!(notes.iter().any(|n| n.starts_with(&note)), "{notes:?}");
    assert!(
        notes.iter().all(|n| !n.contains("counted once")),
        "{notes:?}"
    );
    // an events table that is only a link out: the directory is refused, naming it
    std::fs::remove_file(&link).unwrap();
    let own = dirs[0].join("SystemProfileEvents.parquet");
    std::fs::remove_file(&own).unwrap();
    std::os::unix::fs::symlink(&outside, &own).unwrap();
    let err = run("report", tmp.path(), &[shared_of(&dirs[0])]).unwrap_err();
    assert!(
        err.contains("no readable SystemProfileEvents table"),
        "{err}"
    );
    assert!(err.contains(&own.display().to_string()), "{err}");
}

/// The shared folder above a process's system-profile directory.
fn shared_of(dir: &Path) -> PathBuf {
    dir.parent().unwrap().parent().unwrap().to_path_buf()
}

/// `f`'s result, or `None` when it has not returned within `limit` (it is then left running).
pub(super) fn within<T: Send + 'static>(
    limit: Duration,
    f: impl FnOnce() -> T + Send + 'static,
) -> Option<T> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(limit).ok()
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let path = entry.unwrap().path();
        let dest = to.join(path.file_name().unwrap());
        if path.is_dir() {
            copy_dir(&path, &dest);
        } else {
            std::fs::copy(&path, &dest).unwrap();
        }
    }
}
