//! `hierarchy`: the stack tree cut at a depth; deeper levels fold into their ancestor. Without a depth,
//! the layer level: the first depth where siblings repeat (`model/DecoderLayer[0]` … `[3]` rather than
//! the single `model`), so a default report shows the repeated blocks a model is made of.

use std::collections::{BTreeMap, BTreeSet};

use super::{base_name, number, Item, Members, Span, Spans};

/// One level of the stack tree: (parent path, sibling base name) → the distinct sibling names.
type Siblings<'a> = BTreeMap<(Vec<&'a str>, String), BTreeSet<&'a str>>;

/// The depth used when none is given and no level repeats (the former fixed default).
pub const FALLBACK_DEPTH: usize = 2;

/// A stack cut at `depth` levels (all of it when shallower): the GPU reader's per-result cut.
pub fn cut(stack: &[String], depth: usize) -> &[String] {
    &stack[..stack.len().min(depth)]
}

/// The first depth (1-based) at which two siblings under one parent share a base name
/// (`Layer[0]`, `Layer[1]`); [`FALLBACK_DEPTH`] when no level repeats.
pub fn layer_depth<'a>(stacks: impl IntoIterator<Item = &'a [String]>) -> usize {
    // Per depth: (parent path, sibling base) → distinct sibling names.
    let mut levels: Vec<Siblings> = Vec::new();
    for stack in stacks {
        for (d, name) in stack.iter().enumerate() {
            if levels.len() <= d {
                levels.resize_with(d + 1, BTreeMap::new);
            }
            let parent: Vec<&str> = stack[..d].iter().map(String::as_str).collect();
            levels[d]
                .entry((parent, base_name(name)))
                .or_default()
                .insert(name.as_str());
        }
    }
    levels
        .iter()
        .position(|level| level.values().any(|names| names.len() > 1))
        .map_or(FALLBACK_DEPTH, |d| d + 1)
}

/// Flat regions of one level for a timeline: every item whose stack reaches `depth` belongs to the
/// region of its first `depth` levels; shallower items belong to none. `depth: None` is the layer level.
pub fn regions(items: &[Item], depth: Option<usize>) -> (Spans, usize) {
    let depth = depth.unwrap_or_else(|| layer_depth(items.iter().map(|i| i.stack.as_slice())));
    let mut groups: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (n, item) in items.iter().enumerate() {
        if depth > 0 && item.stack.len() >= depth {
            groups
                .entry(item.stack[..depth].join("/"))
                .or_default()
                .push(n);
        }
    }
    let mut spans: Vec<Span> = groups
        .into_iter()
        .map(|(path, members)| Span {
            base: base_name(&path),
            name: path,
            index: 0,
            start_ns: members
                .iter()
                .map(|&n| items[n].start_ns)
                .min()
                .unwrap_or(0),
            end_ns: members.iter().map(|&n| items[n].end_ns).max().unwrap_or(0),
            members: Members::Items(members),
        })
        .collect();
    number(&mut spans);
    let mut notes = Vec::new();
    if spans.is_empty() && !items.is_empty() {
        notes.push(format!(
            "no stack reaches depth {depth}; lower `regions.auto.depth`"
        ));
    }
    (Spans { spans, notes }, depth)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(p: &str) -> Vec<String> {
        p.split('/').map(str::to_string).collect()
    }

    #[test]
    fn the_layer_level_is_the_first_with_repeated_siblings() {
        let stacks = [
            path("model/Model[0]/Layer[0]/mlp"),
            path("model/Model[0]/Layer[1]/mlp"),
            path("model/Model[0]/norm"),
        ];
        assert_eq!(layer_depth(stacks.iter().map(Vec::as_slice)), 3);
        let single = [path("a/b/c")];
        assert_eq!(
            layer_depth(single.iter().map(Vec::as_slice)),
            FALLBACK_DEPTH
        );
    }
}
