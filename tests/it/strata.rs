//! Strata of a launch key: one GEMM kernel (same mangled name, grid and block) runs two problem sizes
//! in two regions (`tests/manual/ncu/same_key_two_sizes.py 4 3 1024 4096`, H200, ncu 2025.3.1,
//! tests/fixtures/ncu/h200-2025.3.1-stratify: the trace-timed sampled run and full replay of the same
//! workload). Its in-place durations tell the two apart, so each region's deep values must come from
//! its own stratum's samples and land within 3% of full replay; one sample carried to both regions
//! put them 27.6% off.

use serde_json::Value;

use crate::common::{
    assert_deep_values_within, copy_tree, fixture, interval_coverage, report_json,
};

const FIXTURE: &str = "ncu/h200-2025.3.1-stratify";

/// `profile-run report` of `input` (copied first where it is the run directory), its report.json.
fn report(input: &str) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let source = fixture(&format!("{FIXTURE}/{input}"));
    let target = if source.is_dir() {
        let copy = dir.path().join("run");
        copy_tree(&source, &copy);
        copy
    } else {
        source
    };
    report_json(&[&target], &dir.path().join("out"))
}

#[test]
fn each_region_of_a_key_at_two_problem_sizes_comes_within_3_percent_of_full_replay() {
    let (sampled, full) = (report("run"), report("full.ncu-rep.gz"));
    let compared = assert_deep_values_within(&sampled, &full, 0.03);
    // 8 leaf regions and their parents, 8 deep metrics with a number each.
    assert!(compared >= 100, "{compared} values compared");
    let sampling = &sampled["sampling"];
    assert_eq!(sampling["stratified_keys"], 1, "the GEMM key alone");
    assert!(
        sampling.get("other_stratum_results").is_none(),
        "each stratum sampled"
    );
    let notes = sampled["notes"].to_string();
    assert!(
        notes.contains("1 launch key(s) ran different work"),
        "{notes}"
    );
    // The two regions really differ: a value carried from one to the other could not pass.
    let sm = |path: &str| {
        let regions = full["scopes"][0]["regions"].as_array().unwrap();
        let r = regions.iter().find(|r| r["path"] == path).unwrap();
        r["inclusive"]["sm__throughput.avg.pct_of_peak_sustained_elapsed"]["value"]
            .as_f64()
            .unwrap()
    };
    let (attn, mlp) = (
        sm("train_step/forward/layer0/attn"),
        sm("train_step/forward/layer0/mlp"),
    );
    assert!(mlp / attn > 1.3, "attn {attn}, mlp {mlp}");
}

#[test]
fn the_intervals_of_stratified_regions_hold_full_replay() {
    let full = report("full.ncu-rep.gz");
    for run in ["run", "ncu-timed"] {
        let (inside, compared, misses) = interval_coverage(&report(run), &full);
        assert!(compared >= 90, "{run}: {compared}");
        assert!(
            inside as f64 >= 0.9 * compared as f64,
            "{run}: {inside} of {compared}: {misses:#?}"
        );
    }
}

/// ncu's timing pass splits the key the same way: its serialized durations tell the two sizes
/// apart as the trace's in-place ones do. The default deep plan profiled the GEMM key far enough to
/// sample both strata (5 deep results in all).
#[test]
fn a_run_timed_by_ncu_splits_the_key_too() {
    let (sampled, full) = (report("ncu-timed"), report("full.ncu-rep.gz"));
    assert!(assert_deep_values_within(&sampled, &full, 0.03) >= 90);
    assert_eq!(sampled["sampling"]["stratified_keys"], 1);
    assert_eq!(sampled["sampling"]["deep_results"], 5);
}
