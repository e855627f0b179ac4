//! A system profile's report bounded by what a reader can use (issue 42, item 5): a worker's phases
//! past the longest `PHASES_KEPT` folded into `(other phases)` under the phase that holds them, its
//! lists of events by name cut to as many names, and the workers past `SCOPES_UP_TO` rows of one
//! table rather than scopes, every event's time still counted. The full sizes (1,000,000 names,
//! 100,000 processes) are in `benches/neuron_system.sh`.

use profile_run::profiler::neuron::observe::workers::fold::PHASES_KEPT;
use profile_run::profiler::neuron::observe::workers::rows::SCOPES_UP_TO;

use super::cli::report_json;
use super::system_gen::{many_names, many_processes};
use super::system_report::run;

#[test]
fn phases_past_the_longest_kept_fold_into_other_phases_with_their_time() {
    let tmp = tempfile::tempdir().unwrap();
    // every event 5 ns long, one after another, each a name (and a phase) of its own
    let n = PHASES_KEPT + 7;
    many_names(tmp.path(), n);
    let out = run("report", tmp.path(), &[tmp.path().to_path_buf()]).unwrap();
    let report = report_json(&out);
    let scope = &report["scopes"][0];
    let regions = scope["regions"].as_array().unwrap();
    assert_eq!(regions.len(), PHASES_KEPT + 1);
    // at equal time, the first to run are kept
    assert_eq!(regions[0]["path"], "op_0000000");
    let other = regions.last().unwrap();
    assert_eq!(other["path"], "(other phases)");
    assert_eq!(other["self_kernel_count"], 7);
    assert_eq!(other["inclusive"]["total_time"]["value"], 35.0);
    assert_eq!(other["kernels"].as_array().unwrap().len(), 7);
    let all: f64 = regions
        .iter()
        .map(|r| r["exclusive"]["total_time"]["value"].as_f64().unwrap())
        .sum();
    assert_eq!(all, 5.0 * n as f64);
    // the list of events by name keeps as many names, the rest counted in the totals
    assert_eq!(
        scope["total"]["kernels"].as_array().unwrap().len(),
        PHASES_KEPT
    );
    assert_eq!(scope["total"]["kernel_count"], n);
    let notes = scope["notes"].to_string();
    assert!(
        notes.contains(&format!(
            "7 phases past the longest {PHASES_KEPT} are folded into `(other phases)`"
        )) && notes.contains("7 names more are counted in the totals only"),
        "{notes}"
    );
}

#[test]
fn workers_past_the_scopes_kept_are_rows_of_one_table() {
    let tmp = tempfile::tempdir().unwrap();
    let n = SCOPES_UP_TO + 1;
    many_processes(tmp.path(), n);
    let out = run("report", tmp.path(), &[tmp.path().to_path_buf()]).unwrap();
    let report = report_json(&out);
    let scopes = report["scopes"].as_array().unwrap();
    assert_eq!(scopes.len(), 8);
    let table = &report["scope_tables"][0];
    assert_eq!(table["summary"]["scope"], scopes[0]["label"]);
    assert_eq!(table["summary"]["count"], n - 8);
    let rows = table["rows"].as_array().unwrap();
    assert_eq!(rows.len(), n - 8);
    // each row a worker's span and covered times, in ns
    assert_eq!(rows[0]["total"]["total_time"], 100.0);
    assert_eq!(rows[0]["total"]["runtime_time"], 100.0);
    let notes = report["notes"].to_string();
    assert!(
        notes.contains(&format!("With more than {SCOPES_UP_TO} workers, the first 8 are scopes and the other {} are rows", n - 8)),
        "{notes}"
    );
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(
        md.contains(&format!("{} more workers", n - 8)),
        "report.md lacks the table"
    );
}
