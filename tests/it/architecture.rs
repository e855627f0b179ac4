//! The shape of src/, checked over the sources (docs/architecture.md): the floors of the house,
//! data flowing one way down them, no loops between files, no neutral file naming a profiler, and
//! small files and functions (tests included).
//!
//! Imports are read by [`imports`]: every `use` form and every path in code, followed through
//! re-exports to the file that defines the name. Every arrow between two files counts, a module's
//! `pub use` of its own child included; declaring a child (`mod x;`) is not an arrow.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::common::repo;

mod adapters;
mod imports;
mod names;
mod planner;
mod rooms;

use imports::Crate;

/// The floors of src/, top to bottom: a file may import its own floor and the floors below it,
/// never one above, with no exception by name.
const FLOORS: [(&str, &[&str]); 11] = [
    ("entry", &["", "cli", "commands"]),
    ("plan", &["plan"]),
    ("profiler", &["profiler"]),
    ("run", &["run"]),
    ("process", &["process"]),
    ("analysis", &["analysis"]),
    ("insights", &["insights"]),
    ("report", &["report"]),
    ("config", &["config"]),
    ("region", &["region"]),
    (
        "ground",
        &[
            "error",
            "exit",
            "console",
            "fast_map",
            "file_kind",
            "parallel",
        ],
    ),
];

/// The profilers' own modules, which only `src/profiler/` may name.
const PROFILER_MODULES: [&str; 2] = ["profiler::ncu", "profiler::neuron"];

const MAX_FILE_LINES: usize = 600;
const MAX_FN_LINES: usize = 100;

fn krate() -> Crate {
    Crate::read(&repo().join("src"))
}

fn floor_of(module: &str) -> usize {
    let top = module.split("::").next().unwrap_or("");
    FLOORS
        .iter()
        .position(|(_, tops)| tops.contains(&top))
        .unwrap_or_else(|| {
            panic!("src/{top} is on no floor: add it to FLOORS and docs/architecture.md")
        })
}

fn display(krate: &Crate, module: &str) -> String {
    krate.files[module]
        .strip_prefix(repo())
        .unwrap()
        .display()
        .to_string()
}

fn within(module: &str, prefix: &str) -> bool {
    module == prefix || module.starts_with(&format!("{prefix}::"))
}

#[test]
fn no_file_outside_the_profilers_names_one() {
    let krate = krate();
    let mut wrong = Vec::new();
    for (module, targets) in krate.imports() {
        if within(&module, "profiler") {
            continue;
        }
        for (target, names) in &targets {
            if PROFILER_MODULES.iter().any(|p| within(target, p)) {
                wrong.push(format!(
                    "{} -> {} ({})",
                    display(&krate, &module),
                    display(&krate, target),
                    names.iter().cloned().collect::<Vec<_>>().join(", ")
                ));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "files outside src/profiler/ name a profiler's module (go through `enum Profiler`):\n{}",
        wrong.join("\n")
    );
}

#[test]
fn no_arrow_runs_up_a_floor() {
    let krate = krate();
    let mut wrong = Vec::new();
    for (module, targets) in krate.imports() {
        for (target, names) in &targets {
            if floor_of(target) >= floor_of(&module) {
                continue;
            }
            wrong.push(format!(
                "{} ({}) -> {} ({}): {}",
                display(&krate, &module),
                FLOORS[floor_of(&module)].0,
                display(&krate, target),
                FLOORS[floor_of(target)].0,
                names
                    .iter()
                    .map(|n| n.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "imports running up a floor:\n{}",
        wrong.join("\n")
    );
}

/// The neutral folders speak of no profiler, in code or comments: `grep -rliw ncu` over them finds
/// nothing (docs/architecture.md says so).
#[test]
fn neutral_folders_never_say_ncu() {
    let mut files = Vec::new();
    for folder in ["analysis", "region", "report", "insights"] {
        rust_files(&repo().join("src").join(folder), &mut files);
    }
    let says_ncu = |text: &str| {
        text.to_lowercase()
            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .any(|word| word == "ncu")
    };
    let wrong: Vec<String> = files
        .iter()
        .filter(|f| says_ncu(&std::fs::read_to_string(f).unwrap()))
        .map(|f| f.strip_prefix(repo()).unwrap().display().to_string())
        .collect();
    assert!(
        wrong.is_empty(),
        "neutral files naming ncu:\n{}",
        wrong.join("\n")
    );
}

/// Every folder's `//!` header names its floor (`Floor: report`), so a reader of any folder knows
/// what it may import without opening docs/architecture.md.
#[test]
fn every_folder_names_its_floor() {
    let krate = krate();
    let mut silent = Vec::new();
    for (module, file) in &krate.files {
        let is_folder = file.ends_with("mod.rs") || file.with_extension("").is_dir();
        if module.is_empty() || !is_folder {
            continue;
        }
        let text = std::fs::read_to_string(file).unwrap();
        let header: String = text
            .lines()
            .take_while(|l| l.starts_with("//!"))
            .collect::<Vec<_>>()
            .join(" ");
        let floor = FLOORS[floor_of(module)].0;
        if !header.contains(&format!("Floor: {floor}")) {
            silent.push(format!("{} (floor: {floor})", display(&krate, module)));
        }
    }
    assert!(
        silent.is_empty(),
        "folders whose //! header does not name their floor (`Floor: NAME`):\n{}",
        silent.join("\n")
    );
}

/// Whether one module declares the other (`mod.rs` re-exporting a child's items while the child
/// uses the types its parent defines is how one Rust module is put together, not a loop between two
/// rooms). A loop through a third file, or through a re-export to a sibling, still counts.
fn parent_and_child(a: &str, b: &str) -> bool {
    (!b.is_empty() && imports::parent(b) == a) || (!a.is_empty() && imports::parent(a) == b)
}

#[test]
fn no_two_files_import_each_other_in_a_loop() {
    let krate = krate();
    let graph = krate.imports();
    let names: Vec<&String> = graph.keys().collect();
    let index_of: BTreeMap<&str, usize> = names
        .iter()
        .enumerate()
        .map(|(i, n)| (n.as_str(), i))
        .collect();
    let edges: Vec<Vec<usize>> = names
        .iter()
        .map(|n| {
            graph[*n]
                .keys()
                .filter(|t| !parent_and_child(n, t))
                .filter_map(|t| index_of.get(t.as_str()).copied())
                .collect()
        })
        .collect();
    // Strongly connected components (Tarjan); any of more than one file is a loop.
    let loops = components(&edges)
        .into_iter()
        .filter(|c| c.len() > 1)
        .map(|c| {
            let files: Vec<String> = c.iter().map(|&i| display(&krate, names[i])).collect();
            files.join(" <-> ")
        })
        .collect::<Vec<_>>();
    assert!(
        loops.is_empty(),
        "files that import each other:\n{}",
        loops.join("\n")
    );
}

fn components(edges: &[Vec<usize>]) -> Vec<Vec<usize>> {
    struct State<'a> {
        edges: &'a [Vec<usize>],
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        on_stack: Vec<bool>,
        stack: Vec<usize>,
        next: usize,
        out: Vec<Vec<usize>>,
    }
    fn visit(s: &mut State, v: usize) {
        s.index[v] = Some(s.next);
        s.low[v] = s.next;
        s.next += 1;
        s.stack.push(v);
        s.on_stack[v] = true;
        for &w in &s.edges[v].clone() {
            match s.index[w] {
                None => {
                    visit(s, w);
                    s.low[v] = s.low[v].min(s.low[w]);
                }
                Some(i) if s.on_stack[w] => s.low[v] = s.low[v].min(i),
                Some(_) => {}
            }
        }
        if Some(s.low[v]) == s.index[v] {
            let mut component = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack[w] = false;
                component.push(w);
                if w == v {
                    break;
                }
            }
            s.out.push(component);
        }
    }
    let n = edges.len();
    let mut s = State {
        edges,
        index: vec![None; n],
        low: vec![0; n],
        on_stack: vec![false; n],
        stack: Vec::new(),
        next: 0,
        out: Vec::new(),
    };
    for v in 0..n {
        if s.index[v].is_none() {
            visit(&mut s, v);
        }
    }
    s.out
}

/// The reader sees what the old one missed: a `use super::{…}` group, a loop closed through a
/// re-export, nested groups, `self::` and a child module named without a root.
#[test]
fn the_import_reader_follows_groups_and_re_exports() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path();
    let write = |rel: &str, text: &str| {
        let path = src.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write("lib.rs", "pub mod a;\npub mod b;\n");
    write(
        "a/mod.rs",
        "mod x;\nmod y;\npub use x::Shown;\npub struct Model;\n",
    );
    write(
        "a/x.rs",
        "use super::{y::{self, Deep}, Model};\npub fn Shown() {}\n",
    );
    write("a/y.rs", "// use crate::b::Nothing;\npub struct Deep;\nfn f() { let _ = \"crate::b::Nope\"; crate::b::call(); }\n");
    write(
        "b/mod.rs",
        "use crate::a::Shown;\npub fn call() {}\nmod tests { use super::*; }\n",
    );
    let graph = Crate::read(src).imports();
    let targets = |m: &str| graph[m].keys().cloned().collect::<Vec<_>>();
    // `use super::{y::{self, Deep}, Model}` names a/y.rs and a/mod.rs.
    assert_eq!(targets("a::x"), ["a", "a::y"]);
    // A comment and a string are no import; a path in code is.
    assert_eq!(targets("a::y"), ["b"]);
    // `crate::a::Shown` lands where it is defined, through the re-export; `super::*` of an inline
    // module is its own file.
    assert_eq!(targets("b"), ["a::x"]);
    assert_eq!(targets("a"), ["a::x"]);
}

#[test]
fn files_and_functions_stay_small() {
    let mut large = Vec::new();
    // Not failures: the next splits to plan, printed with `--nocapture`.
    let mut next = Vec::new();
    let mut files: Vec<PathBuf> = krate().files.into_values().collect();
    files.push(repo().join("src/main.rs"));
    rust_files(&repo().join("tests"), &mut files);
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        let name = file.strip_prefix(repo()).unwrap().display().to_string();
        let lines = text.lines().count();
        if lines > MAX_FILE_LINES {
            large.push(format!("{name}: {lines} lines (at most {MAX_FILE_LINES})"));
        } else if lines > PLAN_FILE_LINES {
            next.push(format!("{name}: {lines} lines"));
        }
        for (function, length) in functions(&imports::code_of(&text)) {
            if length > MAX_FN_LINES {
                large.push(format!(
                    "{name}: fn {function} is {length} lines (at most {MAX_FN_LINES})"
                ));
            } else if length > PLAN_FN_LINES {
                next.push(format!("{name}: fn {function} is {length} lines"));
            }
        }
    }
    next.sort();
    println!(
        "next to split (files over {PLAN_FILE_LINES} lines, functions over {PLAN_FN_LINES}):\n{}",
        next.join("\n")
    );
    assert!(large.is_empty(), "too large:\n{}", large.join("\n"));
}

/// Files and functions past these sizes are listed (never failed) as the next to split.
const PLAN_FILE_LINES: usize = 450;
const PLAN_FN_LINES: usize = 80;

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// (name, lines from `fn` to its closing brace) for every function with a body.
fn functions(code: &str) -> Vec<(String, usize)> {
    let lines: Vec<&str> = code.lines().collect();
    let mut found = Vec::new();
    for (start, line) in lines.iter().enumerate() {
        let trimmed = line.trim_start();
        let Some(at) = trimmed.find("fn ") else {
            continue;
        };
        let before = &trimmed[..at];
        if !before.split_whitespace().all(|w| {
            [
                "pub",
                "pub(crate)",
                "pub(super)",
                "const",
                "async",
                "unsafe",
                "extern",
            ]
            .contains(&w)
                || w.starts_with("pub(")
        }) {
            continue;
        }
        let name: String = trimmed[at + 3..]
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        // The body: from the first `{` after the signature to its matching `}`; a `;` first means a
        // declaration without a body.
        let mut depth = 0usize;
        let mut opened = false;
        'scan: for (offset, l) in lines[start..].iter().enumerate() {
            let from = if offset == 0 { at } else { 0 };
            for c in l.chars().skip(from) {
                match c {
                    ';' if !opened => break 'scan,
                    '{' => {
                        depth += 1;
                        opened = true;
                    }
                    '}' => {
                        depth -= 1;
                        if opened && depth == 0 {
                            found.push((name.clone(), offset + 1));
                            break 'scan;
                        }
                    }
                    _ => {}
                }
            }
        }
    }
    found
}
