//! Loading and evaluating a rule file. Every metric a rule names (in `when` or in its message) must be in
//! the caller's vocabulary: a misspelt metric fails at load time with the file and the rule, not
//! silently at evaluation.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use thiserror::Error;

use super::saving::Saving;
use super::{Condition, FiredRule, FiringValue, Metrics, RuleSeverity, Units};
use crate::report::format;

#[derive(Debug, Error)]
pub enum RulesError {
    #[error("could not read rules file {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: {message}")]
    Invalid { path: PathBuf, message: String },
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rule {
    pub id: String,
    pub severity: RuleSeverity,
    #[serde(default = "default_priority")]
    pub priority: u32,
    /// One-key maps (`{ lt: [a, b] }`) rather than YAML tags, at every level.
    #[serde(with = "serde_yaml::with::singleton_map_recursive")]
    pub when: Condition,
    pub message: String,
    pub cause: String,
    pub action: String,
    /// How the time acting on it would save is estimated (`null`: not at all, for a reason
    /// the report gives as "no saving formula for this rule").
    #[serde(default, with = "serde_yaml::with::singleton_map_recursive")]
    pub saving: Option<Saving>,
}

fn default_priority() -> u32 {
    50
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RuleFile {
    rules: Vec<Rule>,
}

/// A loaded, checked rule set.
#[derive(Debug, Clone, PartialEq)]
pub struct RuleSet {
    pub source: PathBuf,
    pub rules: Vec<Rule>,
}

impl RuleSet {
    pub fn load(path: &Path, vocabulary: &[&str]) -> Result<RuleSet, RulesError> {
        let text = std::fs::read_to_string(path).map_err(|source| RulesError::Io {
            path: path.into(),
            source,
        })?;
        RuleSet::parse(path, &text, vocabulary)
    }

    /// Parse and check rules text; `path` names it in errors.
    pub fn parse(path: &Path, text: &str, vocabulary: &[&str]) -> Result<RuleSet, RulesError> {
        let invalid = |message: String| RulesError::Invalid {
            path: path.into(),
            message,
        };
        use crate::config::depth::{too_deep, MAX_YAML_DEPTH};
        if let Some((line, depth)) = too_deep(text, MAX_YAML_DEPTH) {
            return Err(invalid(format!(
                "line {line}: nests {depth} levels deep; at most {MAX_YAML_DEPTH} levels are read"
            )));
        }
        let file: RuleFile = serde_yaml::from_str(text).map_err(|e| {
            let at = e.location().map_or(String::new(), |l| {
                format!("line {}, column {}: ", l.line(), l.column())
            });
            let message = e.to_string();
            // serde_yaml repeats the position at the end; it is already at the front.
            let message = message
                .rsplit_once(" at line ")
                .map_or(message.as_str(), |(m, _)| m);
            invalid(format!("{at}{message}"))
        })?;
        let mut seen = Vec::new();
        for rule in &file.rules {
            if seen.contains(&rule.id.as_str()) {
                return Err(invalid(format!("rule `{}` is defined twice", rule.id)));
            }
            seen.push(&rule.id);
            let named = rule
                .when
                .metrics()
                .into_iter()
                .chain(placeholders(&rule.message).into_iter().map(|(n, _)| n))
                .chain(rule.saving.iter().flat_map(Saving::metrics));
            for metric in named {
                if !vocabulary.contains(&metric) {
                    return Err(invalid(format!(
                        "rule `{}`: unknown metric `{metric}`{}",
                        rule.id,
                        suggest(metric, vocabulary)
                    )));
                }
            }
        }
        Ok(RuleSet {
            source: path.into(),
            rules: file.rules,
        })
    }

    /// The fired rules, most important first (severity, then priority, then file order), at most
    /// `max`; message values are shown in their `units` (a metric without one as a plain number).
    pub fn evaluate(&self, metrics: &Metrics, units: &Units, max: usize) -> Vec<FiredRule> {
        let mut fired: Vec<(usize, FiredRule)> = self
            .rules
            .iter()
            .enumerate()
            .filter(|(_, r)| r.when.eval(metrics) == Some(true))
            .map(|(n, r)| (n, insight(r, metrics, units)))
            .collect();
        fired.sort_by(|(na, a), (nb, b)| {
            (b.severity, b.priority)
                .cmp(&(a.severity, a.priority))
                .then(na.cmp(nb))
        });
        fired.into_iter().take(max).map(|(_, i)| i).collect()
    }
}

fn insight(rule: &Rule, metrics: &Metrics, units: &Units) -> FiredRule {
    let evidence = rule
        .when
        .metrics()
        .into_iter()
        .filter_map(|m| {
            Some(FiringValue {
                metric: m.to_string(),
                value: metrics.get(m).copied().flatten()?,
            })
        })
        .collect();
    FiredRule {
        rule: rule.id.clone(),
        severity: rule.severity,
        priority: rule.priority,
        message: render(&rule.message, metrics, units),
        cause: rule.cause.clone(),
        action: rule.action.clone(),
        evidence,
        saving: rule.saving.clone(),
    }
}

/// `{name}` and `{name:%}` placeholders: (metric, as percent).
fn placeholders(message: &str) -> Vec<(&str, bool)> {
    let mut out = Vec::new();
    let mut rest = message;
    while let Some(open) = rest.find('{') {
        let Some(close) = rest[open..].find('}') else {
            break;
        };
        let inner = &rest[open + 1..open + close];
        let (name, pct) = inner
            .strip_suffix(":%")
            .map_or((inner, false), |n| (n, true));
        out.push((name, pct));
        rest = &rest[open + close + 1..];
    }
    out
}

/// Fill placeholders in the report's one number format: a value in its unit (`2.74 µs`, `5.51%`),
/// `{name:%}` as a share of 0–1 (`12.3%`, `0.0733%`), `—` if unknown.
fn render(message: &str, metrics: &Metrics, units: &Units) -> String {
    let mut out = message.to_string();
    for (name, pct) in placeholders(message) {
        let v = metrics.get(name).copied().flatten();
        let unit = units.get(name).map_or("", String::as_str);
        // A share keeps three significant digits as every percentage does (`0.0733%`, not `<0.1%`).
        let text = if pct {
            format::value(v.map(|s| s * 100.0), "%")
        } else {
            format::value(v, unit)
        };
        let token = if pct {
            format!("{{{name}:%}}")
        } else {
            format!("{{{name}}}")
        };
        out = out.replace(&token, &text);
    }
    out
}

fn suggest(name: &str, vocabulary: &[&str]) -> String {
    vocabulary
        .iter()
        .map(|v| (strsim::jaro_winkler(name, v), v))
        .filter(|(s, _)| *s > 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map_or(String::new(), |(_, v)| format!(" (did you mean `{v}`?)"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_show_values_in_the_report_number_format() {
        let metrics: Metrics = [
            ("n".to_string(), Some(400.0)),
            ("d".to_string(), Some(2_741.3)),
            ("p".to_string(), Some(0.007859)),
            ("s".to_string(), Some(0.25)),
        ]
        .into_iter()
        .collect();
        let units: Units = [("d", "ns"), ("p", "%")]
            .into_iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect();
        assert_eq!(
            render(
                "{n} kernels of {d}, {p} busy, {s:%} share, {x}",
                &metrics,
                &units
            ),
            "400 kernels of 2.74 µs, 0.00786% busy, 25.0% share, —"
        );
    }
}
