//! The shape of src/, checked over the sources (docs/architecture.md): data flows one way, files do
//! not import each other in loops, and files and functions stay small.
//!
//! An import is any `crate::…`, `super::…` or `self::…` path in a file (in `use` items, brace groups
//! expanded, and in code), resolved to the file of the longest module prefix. Two edges are not
//! counted: a module importing its own sub-modules, and a sub-module importing the module that
//! declares it (`mod.rs` re-exporting a child's items while the child uses the parent's types is how
//! a Rust module is put together, not a loop between two rooms). Every other cycle between files is.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::common::repo;

/// The neutral layers: none of them may name a profiler's module.
const NEUTRAL: [&str; 6] = ["config", "run", "region", "analysis", "insights", "report"];

const MAX_FILE_LINES: usize = 600;
const MAX_FN_LINES: usize = 100;

/// Module path (`report::render::svg`) → file, for every file under src/.
fn modules() -> BTreeMap<String, PathBuf> {
    let src = repo().join("src");
    let mut files = Vec::new();
    collect(&src, &mut files);
    files
        .into_iter()
        .filter_map(|file| {
            let rel = file.strip_prefix(&src).unwrap().with_extension("");
            let mut parts: Vec<String> = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            if parts.last().is_some_and(|p| p == "mod" || p == "lib") {
                parts.pop();
            }
            if parts == ["main"] {
                return None;
            }
            Some((parts.join("::"), file))
        })
        .collect()
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            collect(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The text without comments and string literals (so a path in a doc comment or a message is no
/// import).
fn code_of(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let bytes: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < bytes.len() {
        match (bytes[i], bytes.get(i + 1)) {
            ('/', Some('/')) => {
                while i < bytes.len() && bytes[i] != '\n' {
                    i += 1;
                }
            }
            ('/', Some('*')) => {
                while i + 1 < bytes.len() && !(bytes[i] == '*' && bytes[i + 1] == '/') {
                    i += 1;
                }
                i += 2;
            }
            ('"', _) => {
                i += 1;
                while i < bytes.len() && bytes[i] != '"' {
                    if bytes[i] == '\\' {
                        i += 1;
                    }
                    i += 1;
                }
                i += 1;
                out.push_str("\"\"");
            }
            ('\'', _) if bytes.get(i + 2) == Some(&'\'') => {
                i += 3;
            }
            ('\'', Some('\\')) => {
                while i < bytes.len() && !(bytes[i] == '\'' && bytes[i - 1] != '\\' && i > 0) {
                    i += 1;
                }
                i += 1;
            }
            (c, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    out
}

/// Every module path a file's code names from a root (`crate`, `super`, `self`), brace groups
/// expanded: `use crate::a::{b, c::{d, e}}` gives `a::b`, `a::c::d`, `a::c::e`.
fn paths_in(code: &str, module: &str) -> Vec<String> {
    let mut found = Vec::new();
    let chars: Vec<char> = code.chars().collect();
    let starts_ident = |i: usize| {
        i == 0 || !(chars[i - 1].is_alphanumeric() || chars[i - 1] == '_' || chars[i - 1] == ':')
    };
    let mut i = 0;
    while i < chars.len() {
        for root in ["crate::", "super::", "self::"] {
            let matches = chars[i..].iter().take(root.len()).copied().eq(root.chars());
            if matches && starts_ident(i) {
                let base = match root {
                    "crate::" => String::new(),
                    "super::" => parent(module),
                    _ => module.to_string(),
                };
                let (paths, end) = tree(&chars, i + root.len(), &base);
                found.extend(paths);
                i = end;
                break;
            }
        }
        i += 1;
    }
    found
}

fn parent(module: &str) -> String {
    module
        .rsplit_once("::")
        .map_or(String::new(), |(p, _)| p.to_string())
}

fn join(base: &str, part: &str) -> String {
    if base.is_empty() {
        part.to_string()
    } else {
        format!("{base}::{part}")
    }
}

/// One use-tree at `i`: `a::b::{…}` or `a::b`; returns the paths and where it ended.
fn tree(chars: &[char], mut i: usize, base: &str) -> (Vec<String>, usize) {
    let mut path = base.to_string();
    loop {
        let start = i;
        while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
            i += 1;
        }
        let ident: String = chars[start..i].iter().collect();
        if ident == "super" {
            path = parent(&path);
        } else if !ident.is_empty() && ident != "self" {
            path = join(&path, &ident);
        }
        if chars.get(i) == Some(&':') && chars.get(i + 1) == Some(&':') {
            i += 2;
            if chars.get(i) == Some(&'{') {
                let mut paths = Vec::new();
                i += 1;
                loop {
                    while i < chars.len() && (chars[i].is_whitespace() || chars[i] == ',') {
                        i += 1;
                    }
                    if i >= chars.len() || chars[i] == '}' {
                        return (paths, i + 1);
                    }
                    let (inner, end) = tree(chars, i, &path);
                    paths.extend(inner);
                    // Skip `as name` and anything up to the next item.
                    i = end;
                    while i < chars.len() && chars[i] != ',' && chars[i] != '}' {
                        i += 1;
                    }
                }
            }
            continue;
        }
        return (vec![path], i);
    }
}

/// The file of the longest module prefix of `path`.
fn file_of<'a>(
    path: &str,
    modules: &'a BTreeMap<String, PathBuf>,
) -> Option<(&'a str, &'a PathBuf)> {
    let mut prefix = path.to_string();
    loop {
        if let Some((name, file)) = modules.get_key_value(&prefix) {
            return Some((name.as_str(), file));
        }
        prefix = prefix.rsplit_once("::")?.0.to_string();
    }
}

/// Whether `a` declares `b` or `b` declares `a` (one is the other's direct parent module).
fn parent_and_child(a: &str, b: &str) -> bool {
    (!b.is_empty() && parent(b) == a) || (!a.is_empty() && parent(a) == b)
}

/// File → the files it imports (module names), parent/child edges left out.
fn imports() -> BTreeMap<String, BTreeSet<String>> {
    let modules = modules();
    let mut graph = BTreeMap::new();
    for (module, file) in &modules {
        let code = code_of(&std::fs::read_to_string(file).unwrap());
        let targets: BTreeSet<String> = paths_in(&code, module)
            .iter()
            .filter_map(|p| file_of(p, &modules))
            .map(|(name, _)| name.to_string())
            .filter(|t| t != module && !t.is_empty() && !parent_and_child(module, t))
            .collect();
        graph.insert(module.clone(), targets);
    }
    graph
}

fn display(module: &str) -> String {
    let modules = modules();
    modules[module]
        .strip_prefix(repo())
        .unwrap()
        .display()
        .to_string()
}

#[test]
fn neutral_layers_import_no_profiler() {
    let mut wrong = Vec::new();
    for (module, targets) in imports() {
        let layer = module.split("::").next().unwrap_or("");
        if !NEUTRAL.contains(&layer) {
            continue;
        }
        for target in targets.iter().filter(|t| t.starts_with("profiler")) {
            wrong.push(format!("{} -> {}", display(&module), display(target)));
        }
    }
    assert!(
        wrong.is_empty(),
        "neutral files import a profiler:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn no_two_files_import_each_other_in_a_loop() {
    let graph = imports();
    // Strongly connected components (Tarjan); any of more than one file is a loop.
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
                .iter()
                .filter_map(|t| index_of.get(t.as_str()).copied())
                .collect()
        })
        .collect();
    let loops = components(&edges)
        .into_iter()
        .filter(|c| c.len() > 1)
        .map(|c| {
            let files: Vec<String> = c.iter().map(|&i| display(names[i])).collect();
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

#[test]
fn files_and_functions_stay_small() {
    let mut large = Vec::new();
    for file in modules().values() {
        let text = std::fs::read_to_string(file).unwrap();
        let name = file.strip_prefix(repo()).unwrap().display().to_string();
        let lines = text.lines().count();
        if lines > MAX_FILE_LINES {
            large.push(format!("{name}: {lines} lines (at most {MAX_FILE_LINES})"));
        }
        for (function, length) in functions(&code_of(&text)) {
            if length > MAX_FN_LINES {
                large.push(format!(
                    "{name}: fn {function} is {length} lines (at most {MAX_FN_LINES})"
                ));
            }
        }
    }
    assert!(large.is_empty(), "too large:\n{}", large.join("\n"));
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
