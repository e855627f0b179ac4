//! Regions along the framework layer path at a chosen depth: every instruction whose `layer` has at least
//! `depth` module components plus the operation belongs to the region of its first `depth` components.
//! Without layer paths on instructions, the Parquet `FrameworkInstruction` intervals are used.

use std::collections::BTreeMap;

use super::{base_name, number, RegionSpan, Regions, Selection};
use crate::profiler::neuron::model::NeuronProfile;
use crate::profiler::neuron::settings::RegionMethod;

/// The module prefix of `path` at `depth`, if the path is deeper than that (the last part is the op).
fn prefix(path: &str, depth: usize) -> Option<String> {
    let parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
    (depth > 0 && parts.len() > depth).then(|| parts[..depth].join("/"))
}

pub(super) fn generate(profile: &NeuronProfile, depth: usize) -> Regions {
    let mut groups: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    let mut with_layer = 0;
    for (i, ins) in profile.instructions.iter().enumerate() {
        let Some(layer) = ins.layer.as_deref() else {
            continue;
        };
        with_layer += 1;
        if let Some(p) = prefix(layer, depth) {
            groups.entry(p).or_default().push(i);
        }
    }
    if with_layer == 0 {
        return from_layer_spans(profile, depth);
    }
    let mut spans: Vec<RegionSpan> = groups
        .into_iter()
        .map(|(path, members)| {
            let ins = &profile.instructions;
            let start = members.iter().map(|&i| ins[i].start_ns).min().unwrap_or(0);
            let end = members.iter().map(|&i| ins[i].end_ns).max().unwrap_or(0);
            span(path, start, end, Selection::Instructions(members))
        })
        .collect();
    number(&mut spans);
    let mut notes = Vec::new();
    if spans.is_empty() {
        notes.push(format!(
            "no layer path is deeper than depth {depth}; lower `neuron.regions.hierarchy.depth`"
        ));
    }
    Regions { spans, notes }
}

fn span(path: String, start: u64, end: u64, selection: Selection) -> RegionSpan {
    RegionSpan {
        base: base_name(&path),
        name: path,
        index: 0,
        method: RegionMethod::Hierarchy,
        start_ns: start,
        end_ns: end,
        selection,
    }
}

/// Parquet profiles: `FrameworkInstruction` rows (`framework_name`, `time_intervals`) by prefix.
fn from_layer_spans(profile: &NeuronProfile, depth: usize) -> Regions {
    if profile.layer_spans.is_empty() {
        return Regions {
            spans: Vec::new(),
            notes: vec![format!(
                "no layer paths in {}: instructions carry no `layer` and there is no FrameworkInstruction \
                 table. Compile with XLA_IR_DEBUG=1 XLA_HLO_DEBUG=1 to record them",
                profile.source.display()
            )],
        };
    }
    let mut groups: BTreeMap<String, Vec<(u64, u64)>> = BTreeMap::new();
    for l in &profile.layer_spans {
        if let Some(p) = prefix(&l.path, depth) {
            let ivs = if l.intervals.is_empty() {
                vec![(l.start_ns, l.end_ns)]
            } else {
                l.intervals.clone()
            };
            groups.entry(p).or_default().extend(ivs);
        }
    }
    let mut spans: Vec<RegionSpan> = groups
        .into_iter()
        .map(|(path, ivs)| {
            let merged = crate::profiler::neuron::intervals::union(ivs);
            let (s, e) = (
                merged.first().map_or(0, |i| i.0),
                merged.last().map_or(0, |i| i.1),
            );
            span(path, s, e, Selection::Time(merged))
        })
        .collect();
    number(&mut spans);
    Regions {
        spans,
        notes: Vec::new(),
    }
}
