//! The grammar of region patterns (`regions.include` / `regions.exclude`), profiler-neutral: `/`
//! separates levels (`train_step/forward`); `\X` is a literal `X` (`a\/b` is one level named
//! `a/b`); `*` and `?` inside a level are glob wildcards; `regex:…` is the user's own regex, levels
//! split at unescaped `/`. Region paths are matched level by level ([`level_regexes`]). The patterns
//! of a run are read once, into [`super::RegionFilter`]; a profiler's own filter expressions are
//! built from its parsed levels in its adapter.

/// One character of a user pattern level.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Piece {
    Lit(char),
    /// Glob `*`: any run of characters within the level.
    AnyRun,
    /// Glob `?`: one character.
    AnyOne,
}

/// One anchored regex per level of a user pattern, matching region path segments as profile-run writes
/// them (`domain@name` outside the default domain): the same ranges the pattern's profiler expression
/// selects. A level that fails to compile is an error.
pub fn level_regexes(
    pattern: &str,
    domain: Option<&str>,
) -> Result<Vec<regex::Regex>, regex::Error> {
    let prefix = domain
        .map(|d| format!("{}@", regex::escape(d)))
        .unwrap_or_default();
    let levels: Vec<String> = match pattern.strip_prefix("regex:") {
        Some(body) => split_unescaped_slash(body.strip_suffix('/').unwrap_or(body)),
        None => split_levels(pattern)
            .iter()
            .map(|level| glob_level(level))
            .collect(),
    };
    levels
        .iter()
        .map(|level| regex::Regex::new(&format!("^{prefix}(?:{level})$")))
        .collect()
}

/// A level as a regex for the `regex` crate: literals escaped, `*` and `?` as wildcards.
fn glob_level(level: &[Piece]) -> String {
    level
        .iter()
        .map(|p| match p {
            Piece::Lit(c) => regex::escape(&c.to_string()),
            Piece::AnyRun => ".*".to_string(),
            Piece::AnyOne => ".".to_string(),
        })
        .collect()
}

/// Splits a `regex:` body into levels at each `/` not escaped with `\`.
fn split_unescaped_slash(body: &str) -> Vec<String> {
    let mut levels = vec![String::new()];
    let mut chars = body.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                let next = chars.next().unwrap_or('\\');
                let level = levels.last_mut().expect("at least one level");
                if next == '/' {
                    level.push('/');
                } else {
                    level.push('\\');
                    level.push(next);
                }
            }
            '/' => levels.push(String::new()),
            c => levels.last_mut().expect("at least one level").push(c),
        }
    }
    levels
}

/// Splits a user pattern at unescaped `/`; `\X` is a literal `X`. One trailing `/` is tolerated (the
/// user already wrote the profiler's push/pop form).
pub fn split_levels(pattern: &str) -> Vec<Vec<Piece>> {
    let mut levels = vec![Vec::new()];
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        let piece = match c {
            '\\' => Piece::Lit(chars.next().unwrap_or('\\')),
            '/' => {
                levels.push(Vec::new());
                continue;
            }
            '*' => Piece::AnyRun,
            '?' => Piece::AnyOne,
            c => Piece::Lit(c),
        };
        levels.last_mut().expect("at least one level").push(piece);
    }
    if levels.len() > 1 && levels.last().is_some_and(Vec::is_empty) {
        levels.pop();
    }
    levels
}

pub fn literal_text(level: &[Piece]) -> String {
    level
        .iter()
        .map(|p| match p {
            Piece::Lit(c) => *c,
            Piece::AnyRun => '*',
            Piece::AnyOne => '?',
        })
        .collect()
}
