//! Hints that name ncu's presets, added to a finished report of ncu inputs: a capture of
//! `torch.autograd.profiler.emit_nvtx` read without the PyTorch preset, whose range names carry a
//! call counter (`aten::linear, seq = 7, op_id = 1`) so that every call is a region of its own.

use std::sync::OnceLock;

use regex::Regex;

use crate::report::model::Report;

/// The hint for `report`, when one applies: said in its notes and on stderr, once.
pub fn add_hints(report: &mut Report) {
    if let Some(hint) = emit_nvtx_hint(report) {
        report.notes.push(hint.clone());
        report.console_notes.push(hint);
    }
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
