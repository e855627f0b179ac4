//! Neuron Explorer's `view --output-format parquet` writes its tables, then serves a UI and never
//! exits: profile-run ends it once the tables are whole and settled, never in the middle of one.

use std::time::{Duration, Instant};

use super::cli::{report_json, Env, MLP};
use crate::common::fixture;

#[test]
fn a_view_that_serves_forever_is_ended_once_its_tables_are_written_and_never_mid_write() {
    let env = Env::new();
    let neff = env.path("model.neff");
    std::fs::write(&neff, "fake neff").unwrap();
    let started = Instant::now();
    // The last table is written in two parts 3 s apart, longer than the 2 s the tables must settle:
    // ended on stable sizes alone, the tool would be cut off with half a table written.
    env.cmd("neuron/neff")
        .env("FAKE_NEURON_SERVE", "3")
        .args(MLP)
        .arg(format!("pipeline.neuron.neff={}", neff.display()))
        .timeout(Duration::from_secs(120))
        .assert()
        .success();
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "{:?}",
        started.elapsed()
    );
    let run = env.run_dir();
    let tables = run.join("views/profile_exec_2");
    let source = fixture("neuron/pyarrow_profile@latest");
    for entry in std::fs::read_dir(&source).unwrap() {
        let name = entry.unwrap().file_name();
        assert_eq!(
            std::fs::read(tables.join(&name)).unwrap(),
            std::fs::read(source.join(&name)).unwrap(),
            "{name:?} cut off"
        );
    }
    let log = std::fs::read_to_string(run.join("views/profile_exec_2.log")).unwrap();
    assert!(log.contains("Neuron Explorer UI at"), "{log}");
    let report = report_json(&run);
    let names: Vec<&str> = report["scopes"][0]["regions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["path"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["MLP[0]", "MLP[1]", "MLP[2]", "MLP[3]"]);
}
