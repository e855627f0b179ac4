//! The seam's doors (docs/architecture.md, "Adding a profiler"): every adapter's `mod.rs` offers the
//! same functions with the same parameters, so `enum Profiler` calls each the same way and a new
//! profiler knows what to write from the ones already there.

use std::collections::BTreeMap;

use crate::common::repo;

/// The adapters, by the folder under `src/profiler/` that holds each.
const ADAPTERS: [&str; 2] = ["ncu", "neuron"];

/// Each `pub fn` of a module file (at the top level: not inside `impl` blocks or `mod tests`), with
/// its parameters' names, a leading `_` (unused here) dropped.
fn doors(text: &str) -> BTreeMap<String, Vec<String>> {
    let mut found = BTreeMap::new();
    let mut rest = text;
    while let Some(at) = rest.find("\npub fn ") {
        let signature = &rest[at + "\npub fn ".len()..];
        let open = signature.find('(').expect("a function has parameters");
        let name = signature[..open]
            .split('<')
            .next()
            .unwrap_or_default()
            .to_string();
        found.insert(name, parameters(&signature[open + 1..]));
        rest = &signature[open..];
    }
    found
}

/// The names of the parameters in `list` (what follows a function's `(`), up to its `)`.
fn parameters(list: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut depth = 0usize;
    let mut current = String::new();
    for c in list.chars() {
        match c {
            '(' | '<' | '[' => depth += 1,
            '>' if current.ends_with('-') => {}
            ')' | '>' | ']' if depth > 0 => depth -= 1,
            ')' => break,
            ',' if depth == 0 => {
                names.push(std::mem::take(&mut current));
                continue;
            }
            _ => {}
        }
        current.push(c);
    }
    names.push(current);
    names
        .iter()
        .filter_map(|p| p.split(':').next())
        .map(|p| p.trim().trim_start_matches("mut ").trim_start_matches('_'))
        .filter(|p| !p.is_empty())
        .map(str::to_string)
        .collect()
}

#[test]
fn both_adapters_offer_the_same_doors() {
    let sets: Vec<(&str, BTreeMap<String, Vec<String>>)> = ADAPTERS
        .iter()
        .map(|adapter| {
            let path = repo().join(format!("src/profiler/{adapter}/mod.rs"));
            (*adapter, doors(&std::fs::read_to_string(path).unwrap()))
        })
        .collect();
    let (first, expected) = &sets[0];
    for door in ["plan", "capture", "find_inputs", "analyze", "failure"] {
        assert!(expected.contains_key(door), "{first} has no `{door}`");
    }
    for (adapter, found) in &sets[1..] {
        let only = |a: &BTreeMap<String, Vec<String>>, b: &BTreeMap<String, Vec<String>>| {
            a.keys()
                .filter(|k| !b.contains_key(*k))
                .cloned()
                .collect::<Vec<_>>()
        };
        assert_eq!(
            (only(expected, found), only(found, expected)),
            (Vec::new(), Vec::new()),
            "doors of {first} only, and of {adapter} only"
        );
        for (door, parameters) in expected {
            assert_eq!(
                &found[door], parameters,
                "`{door}` takes other parameters in {adapter} than in {first}"
            );
        }
    }
}

#[test]
fn the_door_reader_sees_names_and_parameters() {
    let text = "//! x\nfn private() {}\npub fn plan(config: &Config, _analysis: A) -> R {}\n\
                pub fn find(paths: &[P], dir: &mut dyn FnMut(Option<&Path>) -> Result<P>) {}\n\
                pub fn capture(_plan: &P, job: Capture<'_>) {}\n    pub fn method(&self) {}\n";
    let found = doors(text);
    assert_eq!(found.len(), 3, "{found:?}");
    assert_eq!(found["plan"], ["config", "analysis"]);
    assert_eq!(found["find"], ["paths", "dir"]);
    assert_eq!(found["capture"], ["plan", "job"]);
}
