//! A sampled reading's account of itself: report.json's `sampling` and the notes on what was
//! measured, estimated or left unmatched, and on the deep pass that measured it.

use crate::report::model::Sampling;

use super::{deep_files, not_measured_note, stopped_pass_note, Joined, ReportSource, NCU_ENGINE};
use crate::profiler::ncu::observe::{adaptive, strata};

/// The report's account of a sampled reading, and the notes that say what was estimated and how.
pub(super) fn sampling_info(
    source: &ReportSource<'_>,
    joined: &[Joined],
) -> (Sampling, Vec<String>) {
    let deep_metrics: Vec<String> = source
        .found
        .specs
        .iter()
        .zip(&source.from_deep)
        .filter(|(_, deep)| **deep)
        .map(|(s, _)| s.name.clone())
        .collect();
    let mut by_coverage = [0u64; 4];
    for j in joined {
        for (total, n) in by_coverage.iter_mut().zip(j.coverage) {
            *total += n;
        }
    }
    let deep_results = joined.iter().map(|j| j.deep_results).sum();
    let launch_count = source
        .context
        .deep_command
        .iter()
        .skip_while(|a| *a != "--launch-count")
        .nth(1)
        .and_then(|v| v.parse().ok());
    let deep_sources = deep_files(&source.inputs);
    let mut notes = vec![sampled_note(&deep_metrics, launch_count, &by_coverage)];
    notes.extend(deep_pass_note(source, deep_results));
    // A deep pass that matches no timing result is said by `hints::add_deep_mismatch`, on stderr too.
    notes.extend(not_measured_note(by_coverage[3]));
    notes.extend(stopped_pass_note(
        source.context.stopped_when_covered,
        by_coverage[2],
    ));
    let recorded = source.context.adaptive.as_ref();
    let adaptive = adaptive::sampling(recorded, joined.iter().map(|j| j.keys).sum());
    let topup_left_out = joined.iter().any(|j| j.topup_left_out);
    notes.extend(adaptive::notes(recorded, topup_left_out));
    notes.extend(strata::note(
        joined.iter().map(|j| j.stratified_keys).sum(),
        joined.iter().map(|j| j.other_stratum_results).sum(),
    ));
    let sampling = Sampling {
        adaptive,
        deep_sources,
        join_key: vec![
            "mangled kernel name".into(),
            "grid".into(),
            "block".into(),
            "registers per thread".into(),
            "static shared memory per block".into(),
            "dynamic shared memory per block".into(),
        ],
        launch_count,
        deep_metrics,
        deep_results,
        measured_results: by_coverage[0],
        estimated_results: by_coverage[1],
        unmatched_results: by_coverage[2],
        not_measured_results: by_coverage[3],
        stratified_keys: joined.iter().map(|j| j.stratified_keys).sum(),
        other_stratum_results: joined.iter().map(|j| j.other_stratum_results).sum(),
        ranks: Vec::new(),
        deep_workers: joined.iter().flat_map(|j| j.workers.clone()).collect(),
        engine: NCU_ENGINE.to_string(),
        estimated_time_results: 0,
        in_process_cost_s: None,
    };
    (sampling, notes)
}

/// What a sampled reading holds: where its times and deep metrics come from, and how many of its
/// results were measured, estimated and left without deep values.
fn sampled_note(
    deep_metrics: &[String],
    launch_count: Option<u32>,
    by_coverage: &[u64; 4],
) -> String {
    format!(
        "Sampled run: times, counts and instances come from the timing pass, which measured every result; the deep metrics ({}) come from the deep pass, which profiled {} of each distinct launch (same mangled kernel name, grid, block, registers per thread, static and dynamic shared memory). Of {} results, {} were measured on their own launch, {} took the deep metrics of their launch's twin (estimated: marked ≈ in the tables) and {} had no twin (no deep values). Each region's coverage says which share of its time is which.",
        if deep_metrics.is_empty() { "none".to_string() } else { deep_metrics.join(", ") },
        match launch_count {
            Some(1) | None => "one launch".to_string(),
            Some(k) => format!("{k} launches (averaged)"),
        },
        by_coverage.iter().sum::<u64>(),
        by_coverage[0],
        by_coverage[1],
        by_coverage[2],
    )
}

/// Why the deep pass gave nothing, where it did not: its files left out, a file never written, or
/// no kernel profiled in the regions.
fn deep_pass_note(source: &ReportSource<'_>, deep_results: u64) -> Vec<String> {
    if !source.left_out.is_empty() {
        return source
            .left_out
            .iter()
            .map(|(_, note)| note.clone())
            .collect();
    }
    let missing = source
        .inputs
        .iter()
        .filter_map(|i| i.deep.as_ref())
        .find(|d| !d.is_file());
    if let Some(missing) = missing {
        return vec![format!(
            "The deep pass wrote no report file ({} is missing): every result has its time and no deep metrics. Its log (ncu.deep.log in the run directory) says why.",
            missing.display()
        )];
    }
    match deep_results {
        0 => vec!["The deep pass profiled no kernel in the regions: every result has its time and no deep metrics. Check that the workload launches the same kernels on a second run.".to_string()],
        _ => Vec::new(),
    }
}
