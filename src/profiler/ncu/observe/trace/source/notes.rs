//! What a sampled reading of traces says of its join with the deep pass, as notes.

use super::counts::Counts;
use super::{deep, report_source, Sampled, DEEP_PASS};

/// What a sampled run's notes say of the join.
pub(super) fn sampled_notes(
    sampled: &Sampled<'_>,
    total: &Counts,
    deep_results: u64,
    time_metric: &str,
) -> Vec<String> {
    let [measured, estimated, unmatched, not_measured] = total.coverage;
    let mut notes = vec![format!(
        "Sampled run timed by the trace: every kernel's time comes from the trace; its deep metrics from the deep pass's result with the same launch key (mangled kernel name, grid, block, registers per thread, static and dynamic shared memory). Of {} results, {measured} were counted as measured (the first launches of their key), {estimated} took a twin's deep metrics (estimated) and {unmatched} had no twin. The deep pass's own duration is kept as {} (`{}{}`, ncu's serialized replay); it weighs the deep rates.",
        total.results,
        deep::SERIALIZED_LABEL,
        deep::SERIALIZED_PREFIX,
        time_metric,
    )];
    notes.extend(sampled.unread.iter().cloned());
    match &sampled.deep {
        // Every deep file was left out: their notes say why the kernels have no deep metrics.
        None if !sampled.unread.is_empty() => {}
        None if sampled.deep_ranks.as_ref().is_some_and(Vec::is_empty) => {
            notes.push("This rank was not a deep rank (`pipeline.ncu.sampling.deep_ranks`): it ran its deep-pass step unprofiled, so that its peers' collectives completed, and its kernels have their times alone here; `merge` the ranks' run directories to give them deep metrics by launch key from the deep ranks.".to_string());
        }
        None => {
            let paths: Vec<String> = sampled
                .paths
                .iter()
                .map(|p| p.display().to_string())
                .collect();
            notes.push(format!(
                "The deep pass wrote no report file ({} is missing): every kernel has its time and no deep metrics. Its log (ncu.deep.log in the run directory) says why.",
                paths.join(", ")
            ));
        }
        Some(_) if deep_results == 0 => {
            notes.push("The deep pass profiled no kernel in the regions: every kernel has its time and no deep metrics.".to_string());
        }
        Some(_) => {}
    }
    notes.extend(report_source::stopped_pass_note(
        sampled.stopped_when_covered,
        unmatched,
    ));
    notes.extend(report_source::not_measured_note(not_measured));
    notes
}

/// What the times are: in place, as CUPTI (or the tool that recorded an imported trace) traced them.
pub(super) fn times_note(total: &Counts) -> String {
    match (total.recorder, &total.libcupti) {
        (Some(_), Some(what)) => format!(
            "Times are in place, as the {what} recorded them: each kernel's end − start while the workload ran, not replayed, so kernels may overlap, caches are warm and clocks are the application's (docs/traces.md)."
        ),
        _ => "Times are in place: each kernel's end − start as CUPTI traced it while the workload ran unprofiled. They differ from ncu's gpu__time_duration, measured on its serialized replay: here kernels may overlap, caches are warm and clocks are the application's, so most run shorter (by a few percent for large kernels, by more for short ones), but not all (docs/attribution.md, \"In-place times\")."
            .to_string(),
    }
}

/// What a reading left out or could not place: no deep metric (`time_only`), kernels unfinished at
/// exit, kernels with no launch record.
pub(super) fn left_out_notes(total: &Counts, time_only: bool) -> Vec<String> {
    let mut notes = Vec::new();
    if time_only {
        notes.push(format!(
            "No deep metric was collected (a time-only run): {DEEP_PASS} adds deep metrics to the trace's times (one ncu pass over each distinct launch)."
        ));
    }
    if total.unfinished > 0 {
        notes.push(format!(
            "{} kernel(s) were left out: CUPTI handed them over unfinished when their process exited (no end time), so they have no duration to count.",
            total.unfinished
        ));
    }
    if total.unlaunched > 0 {
        notes.push(format!(
            "{} kernel(s) had no API launch record in the trace; they were placed in the ranges open when they started on the GPU.",
            total.unlaunched
        ));
    }
    notes
}
