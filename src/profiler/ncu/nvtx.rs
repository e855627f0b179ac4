//! NVTX filter expressions for ncu: region patterns written in the user's words become `--nvtx-include` /
//! `--nvtx-exclude` expressions, and raw expressions are linted for ncu's grammar traps.
//!
//! The user-pattern grammar itself is `crate::region::pattern`, and the patterns of a run are read
//! once into `crate::region::RegionFilter`; this file builds ncu's expressions from their forms. ncu's grammar (docs/ncu-facts, seen on ncu 2025.3.1): push/pop levels are separated by `/` and a push/pop
//! expression ends in `/` (without it ncu reads a start/end range and matches nothing pushed); `Domain@`
//! picks a domain; `@ , [ ] / * +` are operators unless escaped with `\`; `regex:` turns the whole
//! expression into regexes.
//!
//! User patterns (`regions.include` / `regions.exclude`):
//! - `/` separates levels (`train_step/forward`); `\X` is a literal `X` (`a\/b` is one level named `a/b`,
//!   `\*` a literal star);
//! - `@ , [ ] + \` are literal characters and get escaped; raw ncu anchors (`[`, `]`, `+`, `*` between
//!   levels) belong in `pipeline.ncu.ncu_cli.nvtx.include`, which is passed untouched;
//! - `*` and `?` inside a level are glob wildcards: the expression becomes `regex:` and every level a regex;
//! - `regex:…` is the user's own regex, passed through with the trailing `/` added;
//! - `regions.domain` prefixes `Domain@` to every pattern; nothing is prefixed otherwise.

use thiserror::Error;

use crate::config::NvtxConfig;
use crate::region::pattern::Piece;
use crate::region::{PatternForm, RegionFilter, RegionPattern};

/// The NVTX expressions handed to ncu, in order: converted `regions.*` patterns first, then the raw ones.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NvtxPlan {
    /// `--nvtx-include` expressions (OR'ed by ncu).
    pub include: Vec<String>,
    /// `--nvtx-exclude` expressions.
    pub exclude: Vec<String>,
    /// Lint findings and caveats, each naming the config key it is about.
    pub warnings: Vec<String>,
}

impl NvtxPlan {
    /// True when no NVTX filter is passed at all (every kernel is profiled).
    pub fn is_empty(&self) -> bool {
        self.include.is_empty() && self.exclude.is_empty()
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum NvtxError {
    #[error("`{key}`: NVTX expression {pattern:?} {reason}")]
    InvalidExpression {
        key: String,
        pattern: String,
        reason: String,
    },
}

/// Builds the NVTX expressions for a run from the checked region filter and the raw expressions.
pub fn plan(regions: &RegionFilter, raw: &NvtxConfig) -> Result<NvtxPlan, NvtxError> {
    let mut plan = NvtxPlan::default();
    let domain = regions.domain.as_deref();
    for (patterns, out) in [
        (&regions.include, &mut plan.include),
        (&regions.exclude, &mut plan.exclude),
    ] {
        for pattern in patterns {
            let converted = convert(pattern, domain);
            out.push(converted.expression);
            plan.warnings.extend(converted.warnings);
        }
    }
    for (list, key, out) in [
        (
            &raw.include,
            "pipeline.ncu.ncu_cli.nvtx.include",
            &mut plan.include,
        ),
        (
            &raw.exclude,
            "pipeline.ncu.ncu_cli.nvtx.exclude",
            &mut plan.exclude,
        ),
    ] {
        for (i, expr) in list.iter().enumerate() {
            let key = format!("{key}[{i}]");
            if expr.trim().is_empty() {
                return Err(NvtxError::InvalidExpression {
                    key,
                    pattern: expr.clone(),
                    reason: "is empty; remove it or write an ncu NVTX expression".into(),
                });
            }
            plan.warnings
                .extend(lint_raw(expr).into_iter().map(|w| format!("`{key}`: {w}")));
            out.push(expr.clone());
        }
    }
    Ok(plan)
}

/// Escapes one range (or domain) name for ncu's literal grammar: `\` before `@ , [ ] / * +` and `\`.
pub fn escape_name(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 4);
    for c in name.chars() {
        if matches!(c, '\\' | '@' | ',' | '[' | ']' | '/' | '*' | '+') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// Warnings for a raw ncu NVTX expression (passed to ncu untouched).
pub fn lint_raw(expr: &str) -> Vec<String> {
    let mut warnings = Vec::new();
    if expr.trim().is_empty() {
        warnings.push("an empty expression matches nothing".to_string());
        return warnings;
    }
    let body = expr.strip_prefix("regex:").unwrap_or(expr);
    let ops = unescaped_operators(body);
    let ats: Vec<usize> = ops
        .iter()
        .filter(|(_, c)| *c == '@')
        .map(|(i, _)| *i)
        .collect();
    let has = |op: char| ops.iter().any(|(_, c)| *c == op);
    // `regex:` does not change the grammar: without a `/` it is still a start/end expression.
    if !has('/') && !has(',') {
        warnings.push(format!(
            "`{expr}` matches only start/end ranges; for a push/pop range write `{expr}/`"
        ));
    }
    match ats.as_slice() {
        [] => {}
        [at] => {
            let (domain, range) = (&body[..*at], &body[at + 1..]);
            let escaped = format!("{}\\@{}", &expr[..expr.len() - body.len() + at], range);
            if domain.contains('/') {
                warnings.push(format!(
                    "`@` in `{expr}` comes after a level, where ncu does not accept a domain; \
                     a range name containing `@` must be escaped: `{escaped}`"
                ));
            } else {
                warnings.push(format!(
                    "`@` in `{expr}` is ncu's domain separator (domain `{domain}`, range `{range}`); \
                     if `{domain}@{range}` is one range name in the default domain, write `{escaped}` \
                     (seen on ncu 2025.3.1: unescaped, it matched nothing)"
                ));
            }
        }
        _ => warnings.push(format!(
            "`{expr}` has {} unescaped `@`, but one expression may name only one domain; \
             ncu will misread it. Escape `@` inside range names as `\\@`",
            ats.len()
        )),
    }
    warnings
}

/// Byte offsets of the grammar operators `@ / ,` that are not escaped with `\`.
fn unescaped_operators(body: &str) -> Vec<(usize, char)> {
    let mut ops = Vec::new();
    let mut escaped = false;
    for (i, c) in body.char_indices() {
        if escaped {
            escaped = false;
        } else if c == '\\' {
            escaped = true;
        } else if matches!(c, '@' | '/' | ',') {
            ops.push((i, c));
        }
    }
    ops
}

struct Converted {
    expression: String,
    warnings: Vec<String>,
}

/// ncu's expression for one checked pattern (the grammar's errors were the filter's to give).
fn convert(pattern: &RegionPattern, domain: Option<&str>) -> Converted {
    let (key, text) = (&pattern.key, &pattern.text);
    let mut warnings = Vec::new();
    let names = !matches!(pattern.form, PatternForm::Regex(_));
    if names && (text.starts_with('[') || text.starts_with(']')) {
        warnings.push(format!(
            "`{key}`: `{text}` is taken as a literal range name (`[`/`]` escaped); ncu's stack \
             anchors belong in a raw expression under `pipeline.ncu.ncu_cli.nvtx.include`"
        ));
    }
    let expression = match &pattern.form {
        PatternForm::Regex(body) => {
            let mut expression = String::from("regex:");
            if let Some(d) = domain {
                expression.push_str(&regex_escape(d));
                expression.push('@');
            }
            expression.push_str(body);
            if !ends_with_unescaped_slash(body) {
                expression.push('/');
            }
            expression
        }
        PatternForm::Glob(levels) => {
            let mut e = String::from("regex:");
            if let Some(d) = domain {
                e.push_str(&regex_escape(d));
                e.push('@');
            }
            let levels: Vec<String> = levels.iter().map(|l| regex_level(l)).collect();
            e.push_str(&levels.join("/"));
            e.push('/');
            // Seen: `regex:dec.*/` matched `decode`. Not known: whether ncu matches a level's regex
            // against the whole name or searches within it. We emit the form seen to work,
            // unanchored, and say so.
            warnings.push(format!(
                "`{key}`: glob `{text}` became `{e}`; ncu may match a regex anywhere inside a range \
                 name, so this can also select ranges that merely contain the text; if it does, write an \
                 anchored `regex:^…$/` in `{key}` instead"
            ));
            e
        }
        PatternForm::Literal(names) => {
            let mut e = domain
                .map(|d| format!("{}@", escape_name(d)))
                .unwrap_or_default();
            let levels: Vec<String> = names.iter().map(|n| escape_name(n)).collect();
            e.push_str(&levels.join("/"));
            e.push('/');
            e
        }
    };
    Converted {
        expression,
        warnings,
    }
}

fn regex_level(level: &[Piece]) -> String {
    let mut out = String::new();
    for p in level {
        match p {
            Piece::Lit(c) => push_regex_literal(&mut out, *c),
            Piece::AnyRun => out.push_str(".*"),
            Piece::AnyOne => out.push('.'),
        }
    }
    out
}

fn regex_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 4);
    for c in text.chars() {
        push_regex_literal(&mut out, c);
    }
    out
}

/// Regex metacharacters and ncu's own operators (`@ , /`, which ncu still parses in `regex:` mode) get a
/// backslash; `\@`, `\,` and `\/` are plain identity escapes to a regex engine.
fn push_regex_literal(out: &mut String, c: char) {
    if matches!(
        c,
        '\\' | '.'
            | '+'
            | '*'
            | '?'
            | '('
            | ')'
            | '|'
            | '['
            | ']'
            | '{'
            | '}'
            | '^'
            | '$'
            | '@'
            | ','
            | '/'
    ) {
        out.push('\\');
    }
    out.push(c);
}

fn ends_with_unescaped_slash(body: &str) -> bool {
    let trailing_backslashes = body
        .strip_suffix('/')
        .map(|rest| rest.chars().rev().take_while(|c| *c == '\\').count());
    matches!(trailing_backslashes, Some(n) if n % 2 == 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn regions(include: &[&str], domain: Option<&str>) -> RegionFilter {
        let include: Vec<String> = include.iter().map(|s| s.to_string()).collect();
        RegionFilter::new(&include, &[], domain).unwrap()
    }

    fn raw(include: &[&str]) -> NvtxConfig {
        NvtxConfig {
            enabled: true,
            include: include.iter().map(|s| s.to_string()).collect(),
            exclude: Vec::new(),
            push_pop_scope: None,
        }
    }

    fn one(pattern: &str) -> String {
        let p = plan(&regions(&[pattern], None), &raw(&[])).unwrap();
        p.include.into_iter().next().unwrap()
    }

    #[test]
    fn names_get_the_push_pop_slash() {
        assert_eq!(one("forward"), "forward/");
        assert_eq!(one("forward/"), "forward/");
        assert_eq!(one("train_step/forward"), "train_step/forward/");
    }

    #[test]
    fn operators_inside_names_are_escaped() {
        assert_eq!(one("LLM@prefill"), r"LLM\@prefill/");
        assert_eq!(one("a,b"), r"a\,b/");
        assert_eq!(one("x[1]"), r"x\[1\]/");
        assert_eq!(one("p+q"), r"p\+q/");
        assert_eq!(one(r"a\/b/c"), r"a\/b/c/");
        assert_eq!(one(r"lit\*star"), r"lit\*star/");
        assert_eq!(escape_name(r"a\b*"), r"a\\b\*");
    }

    #[test]
    fn globs_become_regex_levels() {
        assert_eq!(one("decode*"), "regex:decode.*/");
        assert_eq!(one("layer?.fc"), r"regex:layer.\.fc/");
        assert_eq!(one("train_step/*"), "regex:train_step/.*/");
        assert_eq!(one("LLM@pre*"), r"regex:LLM\@pre.*/");
    }

    #[test]
    fn regex_patterns_pass_through() {
        assert_eq!(one("regex:dec.*"), "regex:dec.*/");
        assert_eq!(one("regex:dec.*/"), "regex:dec.*/");
        assert_eq!(one(r"regex:a\/"), r"regex:a\//");
    }

    #[test]
    fn domain_prefixes_every_pattern() {
        let p = plan(
            &regions(&["fwd", "dec*", "regex:x"], Some("My@D")),
            &raw(&[]),
        )
        .unwrap();
        assert_eq!(
            p.include,
            [r"My\@D@fwd/", r"regex:My\@D@dec.*/", r"regex:My\@D@x/"]
        );
    }

    #[test]
    fn empty_raw_expressions_are_errors_naming_the_key() {
        let mut raw = raw(&["a/"]);
        raw.exclude = vec![" ".into()];
        let err = plan(&regions(&[], None), &raw).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("`pipeline.ncu.ncu_cli.nvtx.exclude[0]`"),
            "{err}"
        );
    }

    #[test]
    fn raw_expressions_follow_converted_ones_untouched() {
        let p = plan(&regions(&["a"], None), &raw(&["B@c/"])).unwrap();
        assert_eq!(p.include, ["a/", "B@c/"]);
        assert!(p.warnings[0].starts_with("`pipeline.ncu.ncu_cli.nvtx.include[0]`"));
    }

    #[test]
    fn lint_catches_the_grammar_traps() {
        assert!(lint_raw("decode")[0].contains("write `decode/`"));
        assert!(lint_raw("regex:dec.*")[0].contains("start/end"));
        assert!(lint_raw("decode/").is_empty());
        assert!(lint_raw("a,b").is_empty());
        assert!(lint_raw(r"LLM\@prefill/").is_empty());
        let at = lint_raw("LLM@prefill/");
        assert_eq!(at.len(), 1);
        assert!(at[0].contains(r"`LLM\@prefill/`"), "{at:?}");
        assert!(lint_raw("top/a@b/")[0].contains(r"top/a\@b/"));
        assert!(lint_raw("a@b@c/")[0].contains("2 unescaped `@`"));
    }
}
