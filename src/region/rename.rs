//! Range-name rewriting (`regions.rename`): ordered regex replacements applied to every range name
//! before attribution, so names that differ per call (PyTorch's `aten::linear, seq = 6, op_id = 1`)
//! merge into one region per operator.

use std::borrow::Cow;

use regex::Regex;
use serde::{Deserialize, Serialize};

/// One `regions.rename` entry as written in a preset.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RenameRule {
    /// A regular expression (Rust `regex` syntax) searched in the range name.
    pub pattern: String,
    /// The replacement for every match; `$1` or `${name}` refer to capture groups.
    pub replace: String,
}

/// The compiled rules, applied in order, each to the previous one's output.
#[derive(Debug, Clone, Default)]
pub struct Renames {
    rules: Vec<(Regex, String)>,
}

/// A `regions.rename` pattern that does not compile.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("regions.rename[{index}].pattern {pattern:?} is not a valid regular expression: {reason}")]
pub struct RenameError {
    pub index: usize,
    pub pattern: String,
    pub reason: String,
}

impl Renames {
    pub fn new(rules: &[RenameRule]) -> Result<Renames, RenameError> {
        let rules = rules
            .iter()
            .enumerate()
            .map(|(index, rule)| {
                let regex = Regex::new(&rule.pattern).map_err(|e| RenameError {
                    index,
                    pattern: rule.pattern.clone(),
                    reason: e.to_string(),
                })?;
                Ok((regex, rule.replace.clone()))
            })
            .collect::<Result<_, _>>()?;
        Ok(Renames { rules })
    }

    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// The name after every rule, cut at [`NAME_LIMIT`] bytes ([`cut_name`]); borrowed when no rule
    /// matched and the name is short enough.
    pub fn apply<'a>(&self, name: &'a str) -> Cow<'a, str> {
        let mut out = Cow::Borrowed(name);
        for (regex, replace) in &self.rules {
            if let Cow::Owned(changed) = regex.replace_all(&out, replace.as_str()) {
                out = Cow::Owned(changed);
            }
        }
        match out.len() > NAME_LIMIT {
            true => Cow::Owned(cut_name(&out)),
            false => out,
        }
    }
}

/// The longest range name kept, in bytes. A report lists a region's name several times (its path,
/// segments, name, summaries, in its scope and in the aggregate), so one 50 MB name used to make a
/// report.json of hundreds of MB; past this a name is cut, and the report says so in a note.
pub const NAME_LIMIT: usize = 4096;

/// How a cut name ends: `… (N more bytes)`, after its first [`NAME_LIMIT`] bytes at most.
const CUT_END: &str = " more bytes)";

/// `name`'s first [`NAME_LIMIT`] bytes (to a character boundary), an ellipsis and how many bytes
/// were left out. Two names that differ only past the limit become one region.
pub fn cut_name(name: &str) -> String {
    let mut at = NAME_LIMIT.min(name.len());
    while !name.is_char_boundary(at) {
        at -= 1;
    }
    format!("{}… ({}{CUT_END}", &name[..at], name.len() - at)
}

/// Whether `name` is one [`cut_name`] cut.
pub fn was_cut(name: &str) -> bool {
    name.len() > NAME_LIMIT && name.ends_with(CUT_END) && name.contains("… (")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pytorch() -> Renames {
        // The rule the PyTorch preset ships.
        Renames::new(&[RenameRule {
            pattern: r", (seq|op_id) = \d+.*$".into(),
            replace: String::new(),
        }])
        .unwrap()
    }

    #[test]
    fn per_call_names_from_emit_nvtx_lose_their_call_numbers() {
        let r = pytorch();
        assert_eq!(r.apply("aten::linear, seq = 7, op_id = 1"), "aten::linear");
        assert_eq!(r.apply("aten::sum, op_id = 174"), "aten::sum");
        assert_eq!(
            r.apply("autograd::engine::evaluate_function: AddmmBackward0, op_id = 165"),
            "autograd::engine::evaluate_function: AddmmBackward0"
        );
        assert!(matches!(r.apply("step"), Cow::Borrowed("step")));
    }

    #[test]
    fn rules_apply_in_order_with_capture_groups() {
        let r = Renames::new(&[
            RenameRule {
                pattern: r"^layer(\d+)$".into(),
                replace: "block$1".into(),
            },
            RenameRule {
                pattern: r"^block0$".into(),
                replace: "first".into(),
            },
        ])
        .unwrap();
        assert_eq!(r.apply("layer0"), "first");
        assert_eq!(r.apply("layer3"), "block3");
    }

    #[test]
    fn a_bad_pattern_names_its_index() {
        let bad = RenameRule {
            pattern: "(".into(),
            replace: String::new(),
        };
        let err = Renames::new(&[bad.clone(), bad]).unwrap_err();
        assert_eq!(err.index, 0);
        assert!(err.to_string().contains("regions.rename[0].pattern"));
    }

    #[test]
    fn a_name_past_the_limit_is_cut_at_a_character_boundary_saying_how_much() {
        let none = Renames::new(&[]).unwrap();
        let long = format!("a{}", "é".repeat(NAME_LIMIT));
        let cut = none.apply(&long);
        assert!(cut.len() <= NAME_LIMIT + 40, "{}", cut.len());
        assert!(cut.ends_with(&format!("… ({} more bytes)", long.len() - 4095)));
        assert!(was_cut(&cut));
        assert!(!was_cut("step… (3 more bytes)"));
        assert!(matches!(none.apply("step"), Cow::Borrowed("step")));
    }
}
