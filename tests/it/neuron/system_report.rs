//! `profile-run report` and `merge` on system profiles (issue 33, item 4): several instances'
//! `<instance-id>_pid_<pid>/` directories as one run, one scope per worker with its summary
//! metrics and phases, and the cross-rank diagnosis naming the late worker and the phase that made
//! it late; a run without collectives says so. The profiles come from the project's generator
//! (`system_gen.rs`).

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use serde_json::Value;

use super::cli::report_json;
use super::system_gen::{
    training_run, write_process, Event, Process, INSTANCE_A, INSTANCE_B, LATE_BY,
};

/// `profile-run COMMAND INPUTS…`; the report directory, or the failed run's stderr.
pub(super) fn run(command: &str, dir: &Path, inputs: &[PathBuf]) -> Result<PathBuf, String> {
    run_with(command, dir, inputs, &[])
}

/// [`run`] with overrides.
pub(super) fn run_with(
    command: &str,
    dir: &Path,
    inputs: &[PathBuf],
    overrides: &[&str],
) -> Result<PathBuf, String> {
    let out = dir.join(format!("report-{command}"));
    let output = Command::cargo_bin("profile-run")
        .unwrap()
        .current_dir(dir)
        .env("HOME", dir)
        .args([command, "--force"])
        .args(inputs)
        .arg("--out")
        .arg(&out)
        .args(overrides)
        .output()
        .unwrap();
    if output.status.success() {
        Ok(out)
    } else {
        Err(String::from_utf8_lossy(&output.stderr).into_owned())
    }
}

fn labels(report: &Value) -> Vec<String> {
    report["scopes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["label"].as_str().unwrap().to_string())
        .collect()
}

fn total(scope: &Value, metric: &str) -> f64 {
    scope["total"]["metrics"][metric]["value"]
        .as_f64()
        .unwrap_or_else(|| panic!("{metric} in {}", scope["total"]))
}

#[test]
fn every_worker_of_every_instance_is_a_scope_with_its_summary_and_phases() {
    let tmp = tempfile::tempdir().unwrap();
    training_run(&tmp.path().join("shared"), Some(3), true);
    let out = run("report", tmp.path(), &[tmp.path().join("shared")]).unwrap();
    let report = report_json(&out);
    assert_eq!(
        labels(&report),
        [
            format!("worker 2 (pid 977) on {INSTANCE_B}"),
            format!("worker 3 (pid 978) on {INSTANCE_B}"),
            format!("worker 0 (pid 4242) on {INSTANCE_A}"),
            format!("worker 1 (pid 4243) on {INSTANCE_A}"),
        ]
    );
    assert_eq!(report["run"]["sources"].as_array().unwrap().len(), 4);
    let worker0 = &report["scopes"][2];
    assert_eq!(worker0["host"], INSTANCE_A);
    assert_eq!(worker0["rank"], 0);
    assert_eq!(worker0["total"]["kernel_count"], 10);
    // two steps: 190 µs from the first step's start to the second's end
    assert_eq!(total(worker0, "total_time"), 190_000.0);
    assert_eq!(total(worker0, "device_time"), 2.0 * 21_000.0);
    assert_eq!(total(worker0, "collective_time"), 2.0 * 39_000.0);
    assert_eq!(total(worker0, "runtime_time"), 2.0 * 28_000.0);
    assert_eq!(total(worker0, "framework_time"), 2.0 * 90_000.0);
    let paths: Vec<&str> = worker0["regions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["path"].as_str().unwrap())
        .collect();
    assert_eq!(
        paths,
        [
            "train_step",
            "train_step/nrt_tensor_write",
            "train_step/nrt_execute",
            "train_step/nrt_execute/nc_exec_running",
            "train_step/cc_running",
        ]
    );
    let step = &worker0["regions"][0];
    assert_eq!(step["kernel_count"], 10);
    assert_eq!(step["self_kernel_count"], 2);
    // the step's own time: what no copy, execution or collective covers
    let own = step["exclusive"]["total_time"]["value"].as_f64().unwrap();
    assert_eq!(own, 2.0 * (90_000.0 - 5_000.0 - 23_000.0 - 39_000.0));
    // its collectives' wait for worker 3, on the phase that holds them
    let cc = &step["collectives"];
    assert_eq!(cc["wait_ns"], 2.0 * LATE_BY as f64, "{cc}");
}

#[test]
fn the_late_worker_and_the_phase_before_its_collectives_are_named() {
    let tmp = tempfile::tempdir().unwrap();
    training_run(&tmp.path().join("shared"), Some(3), true);
    let out = run("report", tmp.path(), &[tmp.path().join("shared")]).unwrap();
    let report = report_json(&out);
    let x = &report["cross_rank"];
    let late = format!("worker 3 (pid 978) on {INSTANCE_B}");
    let s = &x["straggler"];
    assert_eq!(s["scope"], late.as_str(), "{x}");
    assert_eq!(s["last"], 2);
    assert_eq!(s["collective"], "cc_running");
    assert_eq!(s["region"], "train_step");
    // each other worker waits for it in both steps
    assert_eq!(s["wait_ns"], 2.0 * LATE_BY as f64);
    assert_eq!(s["cause"]["region"], "train_step/nrt_tensor_write");
    assert_eq!(s["cause"]["time_ns"], 2.0 * (5_000 + LATE_BY) as f64);
    assert_eq!(s["cause"]["median_ns"], 2.0 * 5_000.0);
    assert_eq!(x["collectives"], 2);
    assert_eq!(x["ranks"].as_array().unwrap().len(), 4);
    // the instances' clocks agree: no shift
    assert!(x["ranks"]
        .as_array()
        .unwrap()
        .iter()
        .all(|r| r["clock_offset_ns"] == 0));
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    let finding = x["finding"].as_str().unwrap();
    assert!(
        finding.starts_with(&format!("{late} is late to the collectives")),
        "{finding}"
    );
    assert!(
        finding.contains("`train_step/nrt_tensor_write`"),
        "{finding}"
    );
    assert!(md.contains(&late), "{md}");
    assert!(md.contains("train_step/nrt_tensor_write"), "{md}");
}

#[test]
fn merge_takes_each_instance_directory_as_part_of_one_run() {
    let tmp = tempfile::tempdir().unwrap();
    let dirs = training_run(&tmp.path().join("shared"), Some(1), true);
    // each `<instance-id>_pid_<pid>/` named on its own
    let inputs: Vec<PathBuf> = dirs
        .iter()
        .map(|d| d.parent().unwrap().to_path_buf())
        .collect();
    let report = report_json(&run("merge", tmp.path(), &inputs).unwrap());
    assert_eq!(labels(&report).len(), 4);
    assert_eq!(
        report["cross_rank"]["straggler"]["scope"],
        format!("worker 1 (pid 4243) on {INSTANCE_A}")
    );
}

#[test]
fn a_run_without_collectives_says_so_and_makes_no_diagnosis() {
    let tmp = tempfile::tempdir().unwrap();
    training_run(&tmp.path().join("shared"), Some(3), false);
    let out = run("report", tmp.path(), &[tmp.path().join("shared")]).unwrap();
    let report = report_json(&out);
    assert!(report["cross_rank"].is_null());
    assert_eq!(labels(&report).len(), 4);
    let notes: Vec<&str> = report["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect();
    assert!(
        notes
            .iter()
            .any(|n| n.starts_with("No collective in the system profile")),
        "{notes:?}"
    );
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.contains("No collective in the system profile"), "{md}");
}

#[test]
fn a_system_profile_beside_a_device_profile_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    training_run(&tmp.path().join("shared"), None, true);
    let err = run(
        "report",
        tmp.path(),
        &[tmp.path().join("shared"), super::decoder_json()],
    )
    .unwrap_err();
    assert!(
        err.contains("a system profile and device profiles"),
        "{err}"
    );
}

#[test]
fn an_undocumented_column_in_one_instance_refuses_the_report_naming_table_and_column() {
    let tmp = tempfile::tempdir().unwrap();
    let dirs = training_run(&tmp.path().join("shared"), None, true);
    super::parquet_gen::write_table(
        &dirs[2].join("DeviceProfileList.parquet"),
        "DeviceProfileList",
        &[
            super::parquet_gen::Col::Str("device_profile_name", vec![Some("p".into())]),
            super::parquet_gen::Col::I64("core_group", vec![Some(0)]),
        ],
    );
    let err = run("report", tmp.path(), &[tmp.path().join("shared")]).unwrap_err();
    assert!(
        err.contains("table DeviceProfileList, column `core_group`"),
        "{err}"
    );
}

#[test]
fn events_nested_past_regions_max_depth_stop_the_report_naming_the_limit() {
    let tmp = tempfile::tempdir().unwrap();
    // a range entered in a loop and never left: each event inside the last
    let events = (0..12)
        .map(|i| Event {
            name: "forward",
            source: "framework",
            worker: Some((0, 0)),
            start: i * 10,
            end: 10_000 - i * 10,
        })
        .collect();
    write_process(
        tmp.path(),
        &Process {
            instance: INSTANCE_A,
            pid: 7,
            events,
        },
    );
    let err = run_with(
        "report",
        tmp.path(),
        &[tmp.path().to_path_buf()],
        &["regions.max_depth=8"],
    )
    .unwrap_err();
    assert!(
        err.contains("is 12 levels deep, past regions.max_depth (8)"),
        "{err}"
    );
    // within the limit, one phase per level
    let out = run("report", tmp.path(), &[tmp.path().to_path_buf()]).unwrap();
    let report = report_json(&out);
    assert_eq!(report["scopes"][0]["regions"].as_array().unwrap().len(), 12);
}

#[test]
fn a_system_profile_without_events_is_a_report_that_says_so() {
    let tmp = tempfile::tempdir().unwrap();
    write_process(
        tmp.path(),
        &Process {
            instance: INSTANCE_A,
            pid: 7,
            events: Vec::new(),
        },
    );
    let out = run("report", tmp.path(), &[tmp.path().to_path_buf()]).unwrap();
    let report = report_json(&out);
    assert!(report["scopes"].as_array().unwrap().is_empty());
    let notes = report["notes"].to_string();
    assert!(notes.contains("holds no event"), "{notes}");
}

#[test]
fn regions_include_and_exclude_pick_among_the_phases_with_the_one_grammar() {
    let tmp = tempfile::tempdir().unwrap();
    training_run(&tmp.path().join("shared"), Some(3), true);
    let paths = |report: &Value| -> Vec<String> {
        report["scopes"][2]["regions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["path"].as_str().unwrap().to_string())
            .collect()
    };
    let out = run_with(
        "report",
        tmp.path(),
        &[tmp.path().join("shared")],
        &[
            "--config",
            "neuron/default",
            "regions.exclude=[train_step/nrt_execute]",
        ],
    )
    .unwrap();
    assert_eq!(
        paths(&report_json(&out)),
        [
            "train_step",
            "train_step/nrt_tensor_write",
            "train_step/cc_running"
        ]
    );
    let out = run_with(
        "report",
        tmp.path(),
        &[tmp.path().join("shared")],
        &[
            "--config",
            "neuron/default",
            "regions.include=[train_step/cc_*]",
        ],
    )
    .unwrap();
    assert_eq!(
        paths(&report_json(&out)),
        ["train_step", "train_step/cc_running"]
    );
}

#[test]
fn a_stack_made_deep_by_duplicated_events_is_refused_naming_that_cause_too() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("shared");
    // Every event of a step written four times over (ids of their own): each copy nests inside its
    // twin, so the step's stack is 4 × 2 levels deep though the program popped every range.
    let step = [("train_step", "framework", None, 0, 90_000)]
        .into_iter()
        .chain([("nrt_execute", "neuron_rt", Some((0, 0)), 7_000, 30_000)]);
    let events: Vec<Event> = step
        .flat_map(|(name, source, worker, start, end)| {
            std::iter::repeat_n(
                Event {
                    name,
                    source,
                    worker,
                    start,
                    end,
                },
                4,
            )
        })
        .collect();
    let process = Process {
        instance: INSTANCE_A,
        pid: 4242,
        events,
    };
    write_process(&root, &process);
    let stderr = run_with("report", tmp.path(), &[root], &["regions.max_depth=4"]).unwrap_err();
    assert!(stderr.contains("past regions.max_depth (4)"), "{stderr}");
    assert!(
        stderr.contains("never popped")
            && stderr.contains("the same events read more than once")
            && stderr.contains("events duplicated in it"),
        "{stderr}"
    );
}
