//! What a reading of in-process counters says of itself: report.json's `sampling` and the notes on
//! its samples, on profiled launches' times, on what the library could not measure and on CUDA
//! graphs.

use crate::profiler::ncu::observe::{adaptive, strata};
use crate::region::percentile;
use crate::report::model::Sampling;

use super::{InProcessIndex, ShortSamples, Tally, ENGINE};

/// The library's errors shown one by one up to this many; the rest are counted.
const ERRORS_SHOWN: usize = 10;

/// The report's account of the join (`coverage`: results measured, estimated, unmatched, not
/// measured).
pub(crate) fn sampling(index: &InProcessIndex, coverage: [u64; 4], tally: &Tally) -> Sampling {
    Sampling {
        adaptive: adaptive::sampling(None, index.groups.len() as u64),
        // The counters lie in the traces themselves, which the report's sources already name.
        deep_sources: Vec::new(),
        join_key: [
            "mangled kernel name",
            "grid",
            "block",
            "registers per thread",
            "static shared memory per block",
            "dynamic shared memory per block",
            "NVTX regions of the launch (runs of digits folded)",
        ]
        .map(String::from)
        .to_vec(),
        launch_count: None,
        deep_metrics: deep_metrics(index),
        deep_results: index.samples,
        measured_results: coverage[0],
        estimated_results: coverage[1],
        unmatched_results: coverage[2],
        not_measured_results: coverage[3],
        stratified_keys: index.stratified,
        other_stratum_results: tally.borrowed,
        ranks: Vec::new(),
        deep_workers: Vec::new(),
        engine: ENGINE.to_string(),
        estimated_time_results: tally.timed_by_twins + tally.timed_by_replay,
        in_process_cost_s: Some(index.cost_ns.iter().sum::<u64>() as f64 * 1e-9),
    }
}

/// What ncu's deep pass beside the counters adds to the account (it measured the CUDA graph
/// kernels they could not, `sampling.graph_kernels: ncu`): its report files (`paths`) and
/// `results`, the engine named, and its note.
pub(crate) fn ncu_beside(
    sampling: &mut Sampling,
    (paths, results): (&[std::path::PathBuf], u64),
    tally: &Tally,
) -> Vec<String> {
    sampling.engine = format!("{ENGINE}; CUDA graph kernels: ncu");
    sampling.deep_sources = paths.iter().map(|p| p.display().to_string()).collect();
    sampling.deep_results += results;
    vec![format!(
        "{} result(s) the in-process counters could not measure (kernels inside CUDA graphs) took the deep values of ncu's deep pass ({}, {results} result(s), a second launch of the workload profiling only those kernels' names: pipeline.ncu.sampling.graph_kernels=ncu), joined by launch key as a run with deep_engine=ncu joins them.",
        tally.from_ncu,
        sampling.deep_sources.join(", ")
    )]
}

/// Every spec but the time metric, which holds the trace's own in-place times.
fn deep_metrics(index: &InProcessIndex) -> Vec<String> {
    specs_but(index, &[index.time.in_place])
}

/// The report's deep metrics the counters hold, the replayed duration left out too: it rides
/// along in every replay pass, so it adds none.
fn counters(index: &InProcessIndex) -> Vec<String> {
    specs_but(index, &[index.time.in_place, index.time.serialized])
}

/// The names of the specs at none of `left_out`.
fn specs_but(index: &InProcessIndex, left_out: &[Option<usize>]) -> Vec<String> {
    let specs = index.found.specs.iter().enumerate();
    specs
        .filter(|(at, _)| !left_out.contains(&Some(*at)))
        .map(|(_, s)| s.name.clone())
        .collect()
}

/// The notes of a reading of in-process counters.
pub(crate) fn notes(index: &InProcessIndex, coverage: [u64; 4], tally: &Tally) -> Vec<String> {
    let [measured, estimated, unmatched, _] = coverage;
    let total: u64 = coverage.iter().sum();
    let metrics = deep_metrics(index);
    let chips = match index.chips.is_empty() {
        true => String::new(),
        false => format!(" ({})", index.chips.join(", ")),
    };
    let mut notes = vec![format!(
        "Sampled run in one launch: every kernel's time comes from the trace; its deep metrics ({}) were collected in the traced process itself by CUPTI's Range Profiler{chips}, kernel replay with the caches not flushed between passes (as ncu's --cache-control none), on {} launches: a few of each launch key (mangled kernel name, grid, block, registers, shared memory) in each set of NVTX regions it ran in. Of {total} results, {measured} were measured on their own launch, {estimated} took the deep metrics of the profiled launches of their stratum (estimated: marked ≈ in the tables) and {unmatched} had none (no deep values) (docs/attribution.md, \"In-process deep samples\").",
        match metrics.is_empty() {
            true => "none".to_string(),
            false => metrics.join(", "),
        },
        index.samples,
    )];
    notes.extend(dram_note(&counters(index)));
    notes.extend(short_note(&index.short_samples, index.samples));
    notes.extend(cost_note(&index.cost_ns, &index.chips));
    let timed = tally.timed_by_twins + tally.timed_by_replay;
    if timed > 0 {
        let replay = match tally.timed_by_replay {
            0 => String::new(),
            n => {
                format!("; {n} of them had no unprofiled twin and take their own replayed duration")
            }
        };
        notes.push(format!(
            "{timed} profiled launch(es) have no in-place duration (kernel replay leaves their kernel record with start = end = 0): each counts the mean in-place duration of the unprofiled launches of its stratum (estimated time, measured deep values){replay}."
        ));
    }
    if tally.untimed > 0 {
        notes.push(format!(
            "{} profiled launch(es) have no time: CUPTI measured nothing in them and their stratum has no unprofiled launch to take a duration from, so they count 0 ns.",
            tally.untimed
        ));
    }
    if tally.graph_unmatched > 0 {
        notes.push(format!(
            "{} result(s) ran inside CUDA graphs and their launch keys were never profiled: the in-process engine does not measure graph node kernels, so they have no deep values (unmatched); ncu's deep pass measures them: pipeline.ncu.sampling.graph_kernels=ncu (the default) runs it for them after the trace pass of a run of one process, and deep_engine=ncu for every kernel.",
            tally.graph_unmatched
        ));
    }
    if !index.quiet_ranks.is_empty() {
        let mut ranks = index.quiet_ranks.clone();
        ranks.sort_unstable();
        let ranks: Vec<String> = ranks.iter().map(u32::to_string).collect();
        notes.push(format!(
            "Rank(s) {} profiled no launch of their own (not among pipeline.ncu.sampling.deep_ranks): their kernels take the deep values of their peers' profiled launches with the same launch key and regions (estimated); `merge` the ranks' run directories to give them their peers' samples when each rank ran its own profile-run.",
            ranks.join(", ")
        ));
    }
    notes.extend(error_notes(&index.errors));
    if index.samples == 0 && !index.errors.is_empty() {
        notes.push("No launch was profiled in process, so no result has deep values: pipeline.ncu.sampling.deep_engine=ncu measures them with ncu's deep pass (auto does so by itself after the trace pass where every traced process says its counters cannot run).".to_string());
    }
    notes.extend(strata::note(index.stratified, tally.borrowed));
    notes
}

/// The DRAM counters among `metrics`, with what they do not tell: every counter beside them adds
/// replay passes, and the passes add DRAM traffic the workload does not make, more in process than
/// under ncu (docs/ncu-notes.md, "DRAM counters move with the metric set").
fn dram_note(metrics: &[String]) -> Option<String> {
    let dram: Vec<&str> = metrics
        .iter()
        .map(String::as_str)
        .filter(|m| m.starts_with("dram__") || m.starts_with("gpu__dram_"))
        .collect();
    let others = metrics.len() - dram.len();
    (!dram.is_empty() && others > 0).then(|| {
        format!(
            "DRAM figures ({}) were collected beside {others} other counter(s), whose replay passes add DRAM traffic the workload does not make, more in process than under ncu: on GPT-2 DRAM throughput came out 12% above ncu's full replay beside the SpeedOfLight counters, and within 5.2% of it in every region with the DRAM counters alone in both. For DRAM figures that compare with ncu's, collect them alone: report.sections=[time] report.metrics=[{}].",
            dram.join(", "),
            dram.join(",")
        )
    })
}

/// The profiled launches of µs-scale kernels (`short` of `samples`): in process the window their
/// counters are measured over runs about half a µs longer than ncu's, so their durations read high
/// and their throughputs low (docs/ncu-notes.md, "Small kernels").
fn short_note(short: &ShortSamples, samples: u64) -> Option<String> {
    (short.count > 0).then(|| {
        let share = 100.0 * short.short_ns / short.all_ns.max(f64::MIN_POSITIVE);
        format!(
            "{} of the {samples} profiled launches ({share:.1}% of their replayed time) ran in under {} µs: in process such kernels are measured over a window about 0.5 µs longer than ncu's (KV-cache decode: its regions' durations 11–23% high, their throughputs up to 14% low), so the rates of regions made of them read low; for their figures run the deep pass under ncu (pipeline.ncu.sampling.deep_engine=ncu).",
            short.count,
            super::build::SHORT_NS / 1000.0
        )
    })
}

/// What profiling in place cost the traced processes: the measure of a deep sample's price, which
/// sets how many samples a run can afford.
fn cost_note(cost_ns: &[u64], chips: &[String]) -> Option<String> {
    if cost_ns.is_empty() {
        return None;
    }
    let mut sorted: Vec<f64> = cost_ns.iter().map(|&ns| ns as f64).collect();
    sorted.sort_by(f64::total_cmp);
    let total: f64 = sorted.iter().sum();
    let median = percentile(&sorted, 0.5).unwrap_or(0.0);
    let passes = match chips.is_empty() {
        true => String::new(),
        false => format!(" with {}", chips.join(", ")),
    };
    Some(format!(
        "Profiling in place added {:.2} s of host time to the {} profiled launch(es): median {:.0} ms a launch{passes} (replay passes, decoding and evaluation).",
        total * 1e-9,
        sorted.len(),
        median * 1e-6,
    ))
}

/// What the library could not collect, as it wrote it.
fn error_notes(errors: &[String]) -> Vec<String> {
    let mut notes: Vec<String> = errors
        .iter()
        .take(ERRORS_SHOWN)
        .map(|e| format!("The in-process engine could not collect every counter: {e}."))
        .collect();
    if errors.len() > ERRORS_SHOWN {
        notes.push(format!(
            "The in-process engine wrote {} more such error(s), not shown.",
            errors.len() - ERRORS_SHOWN
        ));
    }
    notes
}

#[cfg(test)]
mod tests {
    use super::dram_note;

    #[test]
    fn dram_counters_beside_others_get_their_caveat_and_alone_none() {
        let metrics = |names: &[&str]| names.iter().map(|n| n.to_string()).collect::<Vec<_>>();
        let note = dram_note(&metrics(&[
            "sm__throughput.avg.pct_of_peak_sustained_elapsed",
            "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
            "dram__bytes_read.sum",
        ]))
        .expect("a note");
        assert!(
            note.starts_with(
                "DRAM figures (gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed, dram__bytes_read.sum)"
            ),
            "{note}"
        );
        assert!(note.contains("beside 1 other counter(s)"), "{note}");
        assert!(
            note.ends_with("report.metrics=[gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum]."),
            "{note}"
        );
        let none = dram_note(&metrics(&[
            "sm__throughput.avg.pct_of_peak_sustained_elapsed",
            "lts__throughput.avg.pct_of_peak_sustained_elapsed",
        ]));
        assert_eq!(none, None, "no DRAM counter");
        let alone = dram_note(&metrics(&["dram__bytes_read.sum", "dram__bytes_write.sum"]));
        assert_eq!(alone, None, "the DRAM counters alone");
    }
}
