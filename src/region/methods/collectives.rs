//! `collectives`: a timeline cut at collectives into segments named `name[0]`, `name[1]`, … as Neuron
//! Explorer's Region Highlighter cuts them. On a timeline with times (Neuron), a segment opens at the end
//! of an `op_type_1` collective (the first at the timeline start) and closes at the cut (trigger, else
//! start) of the next `op_type_2` collective; `offset` candidates are skipped, then every `stride`-th is
//! kept, at most `count`. The GPU reader sees results one at a time in launch order and counts cuts
//! instead ([`Position`]): `stride` cuts make one segment there.

use super::{Item, Members, Span, Spans};

/// The checked `regions.auto.collectives` settings a timeline is cut with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cuts {
    pub name: String,
    /// Collectives that open a segment (`None`, `any` or `*`: every one).
    pub op_type_1: Option<String>,
    /// Collectives that close a segment.
    pub op_type_2: Option<String>,
    pub offset: usize,
    pub stride: usize,
    pub count: Option<usize>,
}

fn matches(op: &Option<String>, operation: &str) -> bool {
    match op.as_deref() {
        None | Some("") | Some("any") | Some("*") => true,
        Some(want) => want.eq_ignore_ascii_case(operation),
    }
}

/// `[start, end)` of every candidate segment, in time order; `start_ns` is the timeline's start.
pub fn candidates(items: &[Item], cuts: &Cuts, start_ns: u64) -> Vec<(u64, u64)> {
    let mut open = Some(start_ns);
    // Overlapping (asynchronous) collectives: a segment never starts while an earlier opener still
    // runs, so segments stay in time order and disjoint.
    let mut latest_end = start_ns;
    let mut out = Vec::new();
    for (item, c) in items
        .iter()
        .filter_map(|i| i.collective.as_ref().map(|c| (i, c)))
    {
        if matches(&cuts.op_type_2, &c.operation) {
            if let Some(s) = open.take() {
                // A trigger before the opening gives an empty segment, kept so that numbering still
                // follows the collectives.
                out.push((s, c.cut_ns.max(s)));
            }
        }
        if matches(&cuts.op_type_1, &c.operation) {
            latest_end = latest_end.max(item.end_ns);
            open = Some(latest_end);
        }
    }
    out
}

/// The named segments of a timeline, each owning its time window.
pub fn regions(items: &[Item], cuts: &Cuts, start_ns: u64) -> Spans {
    let collectives = items.iter().filter(|i| i.collective.is_some()).count();
    if collectives == 0 {
        return Spans::default();
    }
    let all = candidates(items, cuts, start_ns);
    let stride = cuts.stride.max(1);
    let spans: Vec<Span> = all
        .iter()
        .skip(cuts.offset)
        .step_by(stride)
        .take(cuts.count.unwrap_or(usize::MAX))
        .enumerate()
        .map(|(i, &(s, e))| Span {
            name: format!("{}[{i}]", cuts.name),
            base: cuts.name.clone(),
            index: i,
            start_ns: s,
            end_ns: e,
            members: Members::Time(vec![(s, e)]),
        })
        .collect();
    let mut notes = Vec::new();
    if spans.is_empty() {
        notes.push(format!(
            "{collectives} collective(s) gave {} segment(s) between `{}` and `{}`, none left after \
             offset {} and stride {stride}",
            all.len(),
            cuts.op_type_1.as_deref().unwrap_or("any"),
            cuts.op_type_2.as_deref().unwrap_or("any"),
            cuts.offset,
        ));
    }
    Spans { spans, notes }
}

/// Launch-order cutting for a reader that sees one result at a time: the segment of a result after
/// `cuts_seen` collectives, or `None` before `offset` or after `count` segments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Position {
    pub offset: usize,
    pub stride: usize,
    pub count: Option<usize>,
}

impl Position {
    pub fn segment(&self, cuts_seen: usize) -> Option<usize> {
        let index = cuts_seen.checked_sub(self.offset)? / self.stride.max(1);
        self.count
            .is_none_or(|count| index < count)
            .then_some(index)
    }
}
