//! Region methods written once (`regions.auto.method`: `hierarchy`, `collectives`, `stack_frames`) over a
//! neutral timeline that every profiler can give: items in time order, each with a time span, its stack
//! (range path, layer path or call-stack frames, outermost first) and, for a collective, its operation.
//!
//! A profiler adapter builds the [`Item`]s and decides what a region's members own (Neuron: the member
//! instructions, or the time windows of a `collectives` segment); the GPU reader applies the same cuts
//! one result at a time through [`super::Regioner`] ([`hierarchy::cut`], [`collectives::Position`],
//! [`stack_frames::key`]). Names follow Neuron Explorer's Region Highlighter: `segment[0]`, `MLP[3]`,
//! `model/Layer[1]`.
//!
//! Floor: region (see `crate::region`): imports the ground floor only.

pub mod collectives;
pub mod hierarchy;
pub mod stack_frames;

use std::collections::HashMap;

/// One item of a profiler's timeline (an instruction, an operation, a layer span, a collective).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Item {
    pub start_ns: u64,
    pub end_ns: u64,
    /// Outermost first: module path components for `hierarchy`, frames for `stack_frames`.
    pub stack: Vec<String>,
    /// Set on a collective: what `collectives` cuts at.
    pub collective: Option<CollectiveItem>,
}

/// What `collectives` needs of a collective item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CollectiveItem {
    /// `AllReduce`, `AllGather`, … (matched by `op_type_1` / `op_type_2`), or a kernel name.
    pub operation: String,
    /// Where a region before it ends: its trigger when the profile records one, else its start.
    pub cut_ns: u64,
}

/// What a region owns, as the method found it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Members {
    /// Items by index into the timeline, whole.
    Items(Vec<usize>),
    /// Everything in these time windows (sorted, disjoint).
    Time(Vec<(u64, u64)>),
}

/// One region a method made, before any profiler-specific metric.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Span {
    /// Unique: `MLP[3]`, `model/Layer[1]`, `fused_mlp[0]`.
    pub name: String,
    /// The name without instance indices: regions with one base form a distribution.
    pub base: String,
    /// Position among the regions of the same base, in time order.
    pub index: usize,
    pub start_ns: u64,
    pub end_ns: u64,
    pub members: Members,
}

/// The regions of one timeline, and why there are none when that is so.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Spans {
    pub spans: Vec<Span>,
    pub notes: Vec<String>,
}

/// `a[1]/b[20]/c` → `a/b/c`: the name with every trailing-bracket instance index removed.
pub fn base_name(name: &str) -> String {
    name.split('/')
        .map(|part| match part.rfind('[') {
            Some(i)
                if part.ends_with(']') && part[i + 1..part.len() - 1].parse::<u64>().is_ok() =>
            {
                &part[..i]
            }
            _ => part,
        })
        .collect::<Vec<_>>()
        .join("/")
}

/// Sort by start and number the regions of each base in time order (`index`).
pub(crate) fn number(spans: &mut [Span]) {
    spans.sort_by(|a, b| (a.start_ns, a.end_ns, &a.name).cmp(&(b.start_ns, b.end_ns, &b.name)));
    let mut seen = HashMap::<String, usize>::new();
    for s in spans {
        let n = seen.entry(s.base.clone()).or_default();
        s.index = *n;
        *n += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::base_name;

    #[test]
    fn base_names_drop_instance_indices_only() {
        assert_eq!(base_name("MLP[3]"), "MLP");
        assert_eq!(
            base_name("M/NeuronLlamaDecoderLayer[12]/Attn"),
            "M/NeuronLlamaDecoderLayer/Attn"
        );
        assert_eq!(base_name("x[a]"), "x[a]");
        assert_eq!(base_name("plain"), "plain");
    }
}
