//! Which file imports which, read from the sources of src/ with the standard library only.
//!
//! Every `use` form counts (`pub use`, brace groups nested to any depth, `crate::`, `super::`,
//! `self::`, a child module or an imported name as the first segment), and so does a path written
//! in code (`crate::report::format::ms(…)`, `tree::build(…)`). A name is followed through the
//! modules that re-export it, private `use` items included (a child sees them through `super::`),
//! to the file that defines it: `use crate::region::Tree` is an arrow to `region/tree.rs`, not to
//! `region/mod.rs`. Inline modules (`mod tests { … }`) belong to their file. Declaring a child
//! module (`mod x;`) is not an import; everything else is.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// One `use` binding: the name it brings into its module, and the path it names (as written,
/// relative to that module); `None` for a glob (`use x::*`).
#[derive(Debug, Clone)]
struct Binding {
    name: Option<String>,
    path: Vec<String>,
}

/// What one module (a file or an inline `mod x { … }`) holds.
#[derive(Debug, Default)]
struct Module {
    /// The module path of the file it lives in (itself for a file module).
    file: String,
    uses: Vec<Binding>,
    defines: BTreeSet<String>,
    /// Paths written in code (outside `use` items), as written.
    code_paths: Vec<Vec<String>>,
}

/// The sources of one crate: module path (`report::render::svg`) → what it holds, and file → path.
pub struct Crate {
    modules: BTreeMap<String, Module>,
    pub files: BTreeMap<String, PathBuf>,
}

impl Crate {
    /// Reads every `.rs` file under `src` (`lib.rs` is the root, `main.rs` is left out).
    pub fn read(src: &Path) -> Crate {
        let mut paths = Vec::new();
        collect(src, &mut paths);
        let mut modules = BTreeMap::new();
        let mut files = BTreeMap::new();
        for file in paths {
            let rel = file
                .strip_prefix(src)
                .expect("under src")
                .with_extension("");
            let mut parts: Vec<String> = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            if parts.last().is_some_and(|p| p == "mod" || p == "lib") {
                parts.pop();
            }
            if parts == ["main"] {
                continue;
            }
            let name = parts.join("::");
            let text = std::fs::read_to_string(&file).expect("readable source");
            parse(&name, &tokens(&code_of(&text)), &mut modules);
            files.insert(name, file);
        }
        Crate { modules, files }
    }

    /// File → the files it imports (never itself) → the names it imports from each (the last
    /// segment of each path that lands there).
    pub fn imports(&self) -> BTreeMap<String, BTreeMap<String, BTreeSet<String>>> {
        let mut graph: BTreeMap<String, BTreeMap<String, BTreeSet<String>>> = self
            .files
            .keys()
            .map(|f| (f.clone(), BTreeMap::new()))
            .collect();
        for (name, module) in &self.modules {
            let written = module
                .uses
                .iter()
                .map(|b| &b.path)
                .chain(module.code_paths.iter());
            for path in written {
                let Some(target) = self.resolve_from(name, path, 0) else {
                    continue;
                };
                if target != module.file {
                    graph
                        .get_mut(&module.file)
                        .expect("file module")
                        .entry(target)
                        .or_default()
                        .insert(path.last().cloned().unwrap_or_default());
                }
            }
        }
        graph
    }

    /// The file a path written in module `scope` lands in; `None` for another crate's path.
    fn resolve_from(&self, scope: &str, path: &[String], depth: usize) -> Option<String> {
        let (start, rest) = self.anchor(scope, path)?;
        self.walk(start, rest, depth)
    }

    /// Where a written path starts: (module, the segments after it), or a name imported into the
    /// scope followed to its source first.
    fn anchor<'p>(&self, scope: &str, path: &'p [String]) -> Option<(String, &'p [String])> {
        let first = path.first()?;
        match first.as_str() {
            "crate" => Some((String::new(), &path[1..])),
            "super" | "self" => {
                let mut at = scope.to_string();
                let mut i = 0;
                while i < path.len() && (path[i] == "super" || path[i] == "self") {
                    if path[i] == "super" {
                        at = parent(&at);
                    }
                    i += 1;
                }
                Some((at, &path[i..]))
            }
            _ => {
                let child = join(scope, first);
                if self.modules.contains_key(&child) {
                    return Some((child, &path[1..]));
                }
                None
            }
        }
    }

    /// Follows `rest` from module `at` to the file that defines its first item.
    fn walk(&self, mut at: String, rest: &[String], depth: usize) -> Option<String> {
        if depth > 16 {
            return Some(self.file_of(&at));
        }
        for (i, segment) in rest.iter().enumerate() {
            let child = join(&at, segment);
            if self.modules.contains_key(&child) {
                at = child;
                continue;
            }
            let module = self.modules.get(&at)?;
            if let Some(binding) = module
                .uses
                .iter()
                .find(|b| b.name.as_deref() == Some(segment.as_str()))
            {
                return match self.anchor(&at, &binding.path) {
                    Some((start, after)) => {
                        let mut onward: Vec<String> = after.to_vec();
                        onward.extend(rest[i + 1..].iter().cloned());
                        self.walk(start, &onward, depth + 1)
                    }
                    // Another crate's item, imported here: the arrow ends in this file.
                    None => Some(self.file_of(&at)),
                };
            }
            if module.defines.contains(segment) {
                return Some(self.file_of(&at));
            }
            for glob in module.uses.iter().filter(|b| b.name.is_none()) {
                let Some((start, after)) = self.anchor(&at, &glob.path) else {
                    continue;
                };
                let mut onward: Vec<String> = after.to_vec();
                onward.extend(rest[i..].iter().cloned());
                if let Some(found) = self.walk(start.clone(), &onward, depth + 1) {
                    if found != self.file_of(&start) || self.defines(&start, segment) {
                        return Some(found);
                    }
                }
            }
            return Some(self.file_of(&at));
        }
        Some(self.file_of(&at))
    }

    fn defines(&self, module: &str, name: &str) -> bool {
        self.modules
            .get(module)
            .is_some_and(|m| m.defines.contains(name))
    }

    fn file_of(&self, module: &str) -> String {
        self.modules
            .get(module)
            .map_or_else(|| module.to_string(), |m| m.file.clone())
    }
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("readable directory") {
        let path = entry.expect("directory entry").path();
        if path.is_dir() {
            collect(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

pub fn parent(module: &str) -> String {
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

/// The text without comments, string literals (raw ones too) and character literals, so that a
/// path in a doc comment or a message is no import.
pub fn code_of(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        let next = chars.get(i + 1).copied();
        let ident_before = i > 0 && (chars[i - 1].is_alphanumeric() || chars[i - 1] == '_');
        if chars[i] == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if chars[i] == '/' && next == Some('*') {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if chars[i] == 'r' && !ident_before && matches!(next, Some('#') | Some('"')) {
            let mut hashes = 0;
            let mut j = i + 1;
            while chars.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if chars.get(j) != Some(&'"') {
                out.push('r');
                i += 1;
                continue;
            }
            j += 1;
            loop {
                if j >= chars.len() {
                    break;
                }
                if chars[j] == '"' && (1..=hashes).all(|k| chars.get(j + k) == Some(&'#')) {
                    j += 1 + hashes;
                    break;
                }
                j += 1;
            }
            out.push_str("\"\"");
            i = j;
        } else if chars[i] == '"' {
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                if chars[i] == '\\' {
                    i += 1;
                }
                i += 1;
            }
            i += 1;
            out.push_str("\"\"");
        } else if chars[i] == '\'' && next == Some('\\') {
            i += 2;
            while i < chars.len() && chars[i] != '\'' {
                i += 1;
            }
            i += 1;
        } else if chars[i] == '\'' && chars.get(i + 2) == Some(&'\'') {
            i += 3;
        } else {
            out.push(chars[i]);
            i += 1;
        }
    }
    out
}

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Ident(String),
    PathSep,
    Punct(char),
}

fn tokens(code: &str) -> Vec<Token> {
    let chars: Vec<char> = code.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_alphabetic() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            out.push(Token::Ident(chars[start..i].iter().collect()));
            continue;
        }
        if c.is_ascii_digit() {
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            out.push(Token::Punct('0'));
            continue;
        }
        if c == ':' && chars.get(i + 1) == Some(&':') {
            out.push(Token::PathSep);
            i += 2;
            continue;
        }
        if c == '\'' {
            // A lifetime or label: skip it whole.
            i += 1;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            continue;
        }
        if !c.is_whitespace() {
            out.push(Token::Punct(c));
        }
        i += 1;
    }
    out
}

const ITEM_KEYWORDS: [&str; 8] = [
    "fn", "struct", "enum", "trait", "type", "const", "static", "union",
];

/// Records the modules of one file (`file` is its module path) into `modules`.
fn parse(file: &str, toks: &[Token], modules: &mut BTreeMap<String, Module>) {
    let ident = |i: usize| match toks.get(i) {
        Some(Token::Ident(s)) => Some(s.as_str()),
        _ => None,
    };
    let new_module = || Module {
        file: file.to_string(),
        ..Module::default()
    };
    modules.insert(file.to_string(), new_module());
    // (module path, brace depth its body opened at)
    let mut scopes: Vec<(String, usize)> = vec![(file.to_string(), 0)];
    let mut depth = 0usize;
    let mut i = 0;
    while i < toks.len() {
        let scope = scopes.last().expect("file scope").0.clone();
        match &toks[i] {
            Token::Punct('{') => depth += 1,
            Token::Punct('}') => {
                depth = depth.saturating_sub(1);
                if scopes.len() > 1 && scopes.last().is_some_and(|s| s.1 == depth) {
                    scopes.pop();
                }
            }
            Token::Ident(word) if word == "mod" => {
                if let (Some(name), Some(Token::Punct('{'))) = (ident(i + 1), toks.get(i + 2)) {
                    let inner = join(&scope, name);
                    modules.insert(inner.clone(), new_module());
                    scopes.push((inner, depth));
                    depth += 1;
                    i += 3;
                    continue;
                }
            }
            Token::Ident(word)
                if word == "use" && !matches!(toks.get(i + 1), Some(Token::PathSep)) =>
            {
                let mut bindings = Vec::new();
                let end = use_tree(toks, i + 1, &[], &mut bindings);
                modules
                    .get_mut(&scope)
                    .expect("scope")
                    .uses
                    .extend(bindings);
                i = end;
                continue;
            }
            Token::Ident(word) if ITEM_KEYWORDS.contains(&word.as_str()) => {
                if let Some(name) = ident(i + 1) {
                    modules
                        .get_mut(&scope)
                        .expect("scope")
                        .defines
                        .insert(name.to_string());
                }
            }
            Token::Ident(word) if word == "macro_rules" => {
                if let Some(name) = ident(i + 2) {
                    modules
                        .get_mut(&scope)
                        .expect("scope")
                        .defines
                        .insert(name.to_string());
                }
            }
            Token::Ident(first) if matches!(toks.get(i + 1), Some(Token::PathSep)) => {
                let after_sep = i > 0 && toks[i - 1] == Token::PathSep;
                if !after_sep {
                    let mut path = vec![first.clone()];
                    let mut j = i + 1;
                    while toks.get(j) == Some(&Token::PathSep) {
                        match ident(j + 1) {
                            Some(next) => path.push(next.to_string()),
                            None => break,
                        }
                        j += 2;
                    }
                    modules
                        .get_mut(&scope)
                        .expect("scope")
                        .code_paths
                        .push(path);
                    i = j;
                    continue;
                }
            }
            _ => {}
        }
        i += 1;
    }
}

/// Reads one use tree from `i` under `prefix` into `out`; returns the index after it (after the
/// `;` at the top level).
fn use_tree(toks: &[Token], mut i: usize, prefix: &[String], out: &mut Vec<Binding>) -> usize {
    let mut path = prefix.to_vec();
    loop {
        match toks.get(i) {
            Some(Token::Ident(name)) if name == "as" => {
                let alias = match toks.get(i + 1) {
                    Some(Token::Ident(alias)) => alias.clone(),
                    _ => String::new(),
                };
                out.push(Binding {
                    name: (alias != "_").then_some(alias),
                    path: path.clone(),
                });
                return skip_to_item_end(toks, i + 2);
            }
            Some(Token::Ident(name)) => {
                path.push(name.clone());
                i += 1;
            }
            Some(Token::PathSep) => i += 1,
            Some(Token::Punct('*')) => {
                out.push(Binding { name: None, path });
                return skip_to_item_end(toks, i + 1);
            }
            Some(Token::Punct('{')) => {
                i += 1;
                loop {
                    match toks.get(i) {
                        Some(Token::Punct(',')) => i += 1,
                        Some(Token::Punct('}')) => return skip_to_item_end(toks, i + 1),
                        None => return i,
                        _ => i = use_tree(toks, i, &path, out),
                    }
                }
            }
            _ => {
                let name = match path.last().map(String::as_str) {
                    // `use a::b::{self}` binds `b`.
                    Some("self") => {
                        path.pop();
                        path.last().cloned()
                    }
                    other => other.map(str::to_string),
                };
                if !path.is_empty() {
                    out.push(Binding { name, path });
                }
                return skip_to_item_end(toks, i);
            }
        }
    }
}

/// After a use tree: past a top-level `;`, or at the `,` / `}` closing an item of a group.
fn skip_to_item_end(toks: &[Token], i: usize) -> usize {
    match toks.get(i) {
        Some(Token::Punct(';')) => i + 1,
        _ => i,
    }
}
