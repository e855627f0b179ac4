//! Regions between collectives, as Neuron Explorer's Region Highlighter cuts them: a candidate opens at
//! the end of an `op_type_1` collective (the first one at the profile start) and closes at the trigger
//! of the next `op_type_2` collective (its start when no trigger is recorded). One collective can close
//! a candidate and open the next. Candidates are then selected by offset, stride and count.

use super::{RegionSpan, Regions, Selection};
use crate::profiler::neuron::model::{Collective, NeuronProfile};
use crate::profiler::neuron::settings::{CollectiveRegions, RegionMethod};

fn matches(op: &Option<String>, c: &Collective) -> bool {
    match op.as_deref() {
        None | Some("") | Some("any") | Some("*") => true,
        Some(want) => want.eq_ignore_ascii_case(&c.operation),
    }
}

/// `[start, end)` of every candidate segment, in time order.
pub(super) fn candidates(profile: &NeuronProfile, cfg: &CollectiveRegions) -> Vec<(u64, u64)> {
    let start = profile.bounds().map_or(0, |(s, _)| s);
    let mut open = Some(start);
    // Overlapping (asynchronous) collectives: a segment never starts while an earlier opener still
    // runs, so segments stay in time order and disjoint.
    let mut latest_end = start;
    let mut out = Vec::new();
    for c in &profile.collectives {
        if matches(&cfg.op_type_2, c) {
            if let Some(s) = open.take() {
                // A trigger before the opening gives an empty segment, kept so that numbering still
                // follows the collectives.
                out.push((s, c.cut_ns().max(s)));
            }
        }
        if matches(&cfg.op_type_1, c) {
            latest_end = latest_end.max(c.end_ns);
            open = Some(latest_end);
        }
    }
    out
}

pub(super) fn generate(profile: &NeuronProfile, cfg: &CollectiveRegions) -> Regions {
    if profile.collectives.is_empty() {
        return Regions {
            spans: Vec::new(),
            notes: vec![format!(
                "no collectives in {} (no `cc_ops` list or CcOp table): method `collectives` has nothing \
                 to cut at; use `neuron.regions.method=hierarchy` or `stack_frames`",
                profile.source.display()
            )],
        };
    }
    let all = candidates(profile, cfg);
    let stride = cfg.stride.max(1);
    let spans: Vec<RegionSpan> = all
        .iter()
        .skip(cfg.offset)
        .step_by(stride)
        .take(cfg.count.unwrap_or(usize::MAX))
        .enumerate()
        .map(|(i, &(s, e))| RegionSpan {
            name: format!("{}[{i}]", cfg.name),
            base: cfg.name.clone(),
            index: i,
            method: RegionMethod::Collectives,
            start_ns: s,
            end_ns: e,
            selection: Selection::Time(vec![(s, e)]),
        })
        .collect();
    let mut notes = Vec::new();
    if spans.is_empty() {
        notes.push(format!(
            "{} collective(s) gave {} segment(s) between `{}` and `{}`, none left after offset {} and \
             stride {}",
            profile.collectives.len(),
            all.len(),
            cfg.op_type_1.as_deref().unwrap_or("any"),
            cfg.op_type_2.as_deref().unwrap_or("any"),
            cfg.offset,
            stride
        ));
    }
    Regions { spans, notes }
}
