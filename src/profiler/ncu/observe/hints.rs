//! Hints added to a finished report of ncu inputs, in its notes and on stderr: a capture of
//! `torch.autograd.profiler.emit_nvtx` read without the PyTorch preset, whose range names carry a
//! call counter (`aten::linear, seq = 7, op_id = 1`) so that every call is a region of its own; and
//! a sampled run's deep pass that matches none of its timing results (another workload's capture),
//! whether the times come from ncu or from the trace.

use std::sync::OnceLock;

use regex::Regex;

use crate::report::model::Report;

/// The hint for `report`, when one applies: said in its notes and on stderr, once.
pub fn add_hints(report: &mut Report) {
    if let Some(hint) = emit_nvtx_hint(report) {
        report.notes.push(hint.clone());
        report.console_notes.push(hint);
    }
    add_deep_mismatch(report);
}

/// A sampled report whose deep pass profiled launches of which none has a twin among the timing
/// results: most likely the capture of another workload. The report is still made (exit 0: every
/// time is right, only the deep metrics are missing, as when a deep pass fails), and said loudly.
pub fn add_deep_mismatch(report: &mut Report) {
    let Some(sampling) = &report.sampling else {
        return;
    };
    let matched = sampling.measured_results + sampling.estimated_results;
    if sampling.deep_results == 0 || matched > 0 || sampling.unmatched_results == 0 {
        return;
    }
    let note = format!(
        "The deep pass ({}) matches none of the {} timing results: none of its {} launches has a twin among them, so it is most likely the capture of another workload or run. Every result has its time and no deep metrics; put the deep capture of this run beside it (NAME.deep.ncu-rep), or remove the other one.",
        sampling.deep_sources.join(", "),
        sampling.unmatched_results,
        sampling.deep_results,
    );
    report.notes.push(note.clone());
    report.console_notes.push(note);
}

fn emit_nvtx_hint(report: &Report) -> Option<String> {
    static COUNTER: OnceLock<Option<Regex>> = OnceLock::new();
    // The pattern conf/ncu/pytorch.yaml renames away: with that preset no name matches any more.
    let counter = COUNTER
        .get_or_init(|| Regex::new(r", (seq|op_id) = \d+").ok())
        .as_ref()?;
    let regions = report.scopes.iter().flat_map(|s| &s.regions);
    let counted = regions.filter(|r| counter.is_match(&r.name)).count();
    (counted > 0).then(|| {
        format!(
            "{counted} regions are emit_nvtx calls numbered by `seq`/`op_id` (one region per call): read it again with `-c ncu/pytorch` to merge each operator's calls into one region."
        )
    })
}
