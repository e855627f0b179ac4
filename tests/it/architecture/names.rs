//! Type names: every `struct`, `enum`, `type`, `trait` and `union` of src/ that another file can
//! see is defined once, so a name read anywhere means one thing (two `Region`s, one the report's and one a profiler's, make
//! every `use` line a guess).

use std::collections::BTreeMap;

use super::{display, krate};
use crate::architecture::imports::code_of;

/// The type names a source defines for other files to see (`pub`, `pub(crate)`, `pub(super)`), at
/// any nesting; a private helper type is its file's own word.
fn defined_types(code: &str) -> Vec<String> {
    let words: Vec<&str> = code
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .collect();
    let shown = |at: usize| match at {
        0 => false,
        1 => words[0] == "pub",
        _ => {
            words[at - 1] == "pub"
                || (words[at - 2] == "pub" && ["crate", "super"].contains(&words[at - 1]))
        }
    };
    (0..words.len().saturating_sub(1))
        .filter(|&i| ["struct", "enum", "type", "trait", "union"].contains(&words[i]) && shown(i))
        .map(|i| words[i + 1].to_string())
        .filter(|name| name.starts_with(|c: char| c.is_ascii_uppercase()))
        .collect()
}

#[test]
fn no_type_name_is_defined_twice() {
    let krate = krate();
    let mut places: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (module, file) in &krate.files {
        let code = code_of(&std::fs::read_to_string(file).unwrap());
        for name in defined_types(&code) {
            places
                .entry(name)
                .or_default()
                .push(display(&krate, module));
        }
    }
    let twice: Vec<String> = places
        .iter()
        .filter(|(_, files)| files.len() > 1)
        .map(|(name, files)| format!("{name}: {}", files.join(", ")))
        .collect();
    assert!(
        twice.is_empty(),
        "type names defined more than once in src/ (rename the less central one to say what it is):\n{}",
        twice.join("\n")
    );
}

#[test]
fn type_definitions_are_found_in_code_only() {
    let code = code_of(
        "pub(crate) struct Shape { a: u8 }\npub enum Cell<'a> { X }\npub(super) type Rows = Vec<u8>;\n\
         pub trait Output {}\n// pub struct Commented;\nlet s = \"pub enum Quoted\";\n\
         impl Iterator for X { type Item = u8; }\nstruct Private;\n",
    );
    assert_eq!(defined_types(&code), ["Shape", "Cell", "Rows", "Output"]);
}
