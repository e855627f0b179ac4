//! "Did you mean …?" for misspelt keys, preset names and values.

use serde_yaml::{Mapping, Value};

use super::origin::key_string;

/// The candidate closest to `word`, if it is close enough to be a plausible typo.
pub(crate) fn did_you_mean<'a>(
    word: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    let word = word.to_lowercase();
    candidates
        .into_iter()
        .map(|c| (strsim::jaro_winkler(&word, &c.to_lowercase()), c))
        .filter(|(score, _)| *score >= 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, c)| c)
}

/// Suggest a full valid key path for an unknown key.
///
/// `parent` is where the unknown key sits, `key` the unknown key, `below` what the layer set under it
/// and `expected` the keys valid at that level. `tree` is the default preset, which sets every key.
/// A misspelt level keeps the rest of the path when that rest is valid (`report.kernel.include` →
/// `report.kernels.include`); a key at the wrong level is found by its last segment
/// (`pipeline.ncu.replay_mode` → `pipeline.ncu.ncu_cli.replay_mode`).
pub(crate) fn key_path(
    parent: &[String],
    key: &str,
    below: Option<&Value>,
    expected: &[&str],
    tree: &Value,
) -> Option<Vec<String>> {
    let rest = single_chain(below);
    if let Some(fixed) = did_you_mean(key, expected.iter().copied()) {
        let mut path = parent.to_vec();
        path.push(fixed.to_string());
        let mut full = path.clone();
        full.extend(rest.iter().cloned());
        return Some(if lookup(tree, &full).is_some() {
            full
        } else {
            path
        });
    }
    let last = rest.last().map(String::as_str).unwrap_or(key);
    let mut matches = Vec::new();
    leaf_paths(tree, &mut Vec::new(), &mut matches);
    let exact: Vec<&Vec<String>> = matches
        .iter()
        .filter(|p| p.last().is_some_and(|s| s == last))
        .collect();
    if exact.len() == 1 {
        return Some(exact[0].clone());
    }
    if !exact.is_empty() {
        return None;
    }
    // A misspelt key at the wrong level (`pipeline.ncu.replay_mod`): the one leaf whose name is
    // closest, when no other is as close.
    let names: Vec<&str> = matches
        .iter()
        .filter_map(|p| p.last())
        .map(String::as_str)
        .collect();
    let closest = did_you_mean(last, names.iter().copied())?;
    let mut found = matches
        .iter()
        .filter(|p| p.last().is_some_and(|s| s == closest));
    let path = found.next()?.clone();
    found.next().is_none().then_some(path)
}

/// The path below a value when it is a chain of single-key maps ending in a leaf (`{include: [..]}`).
fn single_chain(value: Option<&Value>) -> Vec<String> {
    let mut chain = Vec::new();
    let mut current = value;
    while let Some(Value::Mapping(map)) = current {
        if map.len() != 1 {
            break;
        }
        let (k, v) = map.iter().next().expect("one entry");
        chain.push(key_string(k));
        current = Some(v);
    }
    chain
}

pub(crate) fn lookup<'a>(tree: &'a Value, path: &[String]) -> Option<&'a Value> {
    path.iter().try_fold(tree, |node, segment| {
        node.as_mapping()?.get(segment.as_str())
    })
}

fn leaf_paths(tree: &Value, path: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    if let Value::Mapping(map) = tree {
        for (k, v) in map {
            path.push(key_string(k));
            match v {
                Value::Mapping(inner) if !inner.is_empty() => leaf_paths(v, path, out),
                _ => out.push(path.clone()),
            }
            path.pop();
        }
    }
}

/// The value a mapping holds at `path`, if any.
/// A numeric segment indexes a list (serde reports list items that way).
pub(crate) fn get<'a>(data: &'a Mapping, path: &[String]) -> Option<&'a Value> {
    let (first, rest) = path.split_first()?;
    rest.iter()
        .try_fold(data.get(first.as_str())?, |node, segment| match node {
            Value::Mapping(map) => map.get(segment.as_str()),
            Value::Sequence(items) => items.get(segment.parse::<usize>().ok()?),
            _ => None,
        })
}

/// profile-run's subcommands, for a word that was meant as one (`reprot`).
const SUBCOMMANDS: &[&str] = &["report", "merge", "diff", "config"];

/// What to type instead of `text`, a command-line word with no `=` taken as an override: the
/// subcommand it is close to, the `--` a program needs before it, or the override form.
pub(crate) fn override_fix(text: &str) -> String {
    let word = !text.contains(['.', '/']);
    if let Some(command) = did_you_mean(text, SUBCOMMANDS.iter().copied()).filter(|_| word) {
        return format!("did you mean the subcommand: `profile-run {command} …`?");
    }
    let program = text.contains('/')
        || text.ends_with(".py")
        || text.ends_with(".sh")
        || std::env::var_os("PATH")
            .is_some_and(|paths| std::env::split_paths(&paths).any(|dir| dir.join(text).is_file()));
    if program {
        return format!(
            "to profile a program, put `--` before it: `profile-run [OPTIONS] [KEY=VALUE]... -- {text} …`"
        );
    }
    "write it as `dotted.key=value`, e.g. `report.max_regions=50`".into()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::DEFAULT_PRESET;

    fn path(s: &str) -> Vec<String> {
        s.split('.').map(str::to_string).collect()
    }

    #[test]
    fn close_words_are_suggested_and_far_ones_are_not() {
        assert_eq!(
            did_you_mean("kernel", ["kernels", "sections"]),
            Some("kernels")
        );
        assert_eq!(did_you_mean("zzz", ["kernels", "sections"]), None);
    }

    #[test]
    fn whole_path_typos_keep_the_valid_rest() {
        let tree: Value = serde_yaml::from_str(DEFAULT_PRESET).unwrap();
        let below: Value = serde_yaml::from_str("{include: [a]}").unwrap();
        let expected = ["kernels", "sections", "metrics"];
        let got = key_path(&path("report"), "kernel", Some(&below), &expected, &tree);
        assert_eq!(got, Some(path("report.kernels.include")));

        let got = key_path(
            &path("pipeline.ncu"),
            "replay_mode",
            None,
            &["executable", "ncu_cli"],
            &tree,
        );
        assert_eq!(got, Some(path("pipeline.ncu.ncu_cli.replay_mode")));
    }
}
