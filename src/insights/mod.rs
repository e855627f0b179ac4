//! Insights: rules kept as data (YAML), evaluated against a map of named metrics, giving the few most
//! important findings with the values that fired them. Profiler-neutral: the caller supplies the metric
//! vocabulary a rule file may use and the metric values of each region.
//!
//! A rule file:
//!
//! ```yaml
//! rules:
//!   - id: tensor_engine_underused
//!     severity: medium            # high | medium | low | info
//!     priority: 60                # ties within a severity: higher first
//!     when: { lt: [tensor_engine_active_time_percent, 0.70] }
//!     message: "Tensor engine busy {tensor_engine_active_time_percent:%} of the time"
//!     cause: "…"
//!     action: "…"
//! ```
//!
//! Floor: insights. May import report, config, region and the ground floor. (docs/architecture.md,
//! checked by tests/it/architecture.rs)

mod condition;
pub mod region;
mod rules;
pub mod saving;

use std::collections::BTreeMap;

use serde::Serialize;

use crate::report::model::{
    Evidence as ReportEvidence, Insight as ReportInsight, Severity as ReportSeverity,
};

pub use condition::{Condition, Operand};
pub use rules::{Rule, RuleSet, RulesError};

/// The shipped GPU rules (`report.rules: null`), built in so that a default install needs no file.
pub const GPU_RULES: &str = include_str!("../../conf/rules/gpu.yaml");

/// `report.rules`: the given file, or the shipped GPU rules; every metric a rule names must be in
/// `metrics` (the configured metric names) or be one of [`region::DERIVED`].
pub fn load_region_rules(path: Option<&str>, metrics: &[&str]) -> Result<RuleSet, RulesError> {
    let mut vocabulary: Vec<&str> = metrics.to_vec();
    vocabulary.extend(region::DERIVED);
    match path {
        Some(path) => RuleSet::load(std::path::Path::new(path), &vocabulary),
        None => RuleSet::parse(
            std::path::Path::new("conf/rules/gpu.yaml"),
            GPU_RULES,
            &vocabulary,
        ),
    }
}

/// Metric name → value (`None`: unknown).
pub type Metrics = BTreeMap<String, Option<f64>>;

/// Metric name → unit its values are in (`ns`, `%`, …); a metric without one is a plain number.
pub type Units = BTreeMap<String, String>;

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum RuleSeverity {
    Info,
    Low,
    Medium,
    High,
}

/// One metric value that took part in firing a rule.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FiringValue {
    pub metric: String,
    pub value: f64,
}

/// A fired rule.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FiredRule {
    pub rule: String,
    pub severity: RuleSeverity,
    pub priority: u32,
    /// The rule's message with `{metric}` placeholders filled in.
    pub message: String,
    pub cause: String,
    pub action: String,
    pub evidence: Vec<FiringValue>,
    /// The rule's saving formula, `None` when it has none.
    #[serde(skip)]
    pub saving: Option<saving::Saving>,
}

impl FiredRule {
    /// The report's form of a fired rule: `high`, `medium` and `low` rules name something to change
    /// (an opportunity), `info` rules give context; the evidence keeps the values that fired it.
    pub fn into_report(self, source: &str) -> ReportInsight {
        let severity = match self.severity {
            RuleSeverity::Info => ReportSeverity::Info,
            RuleSeverity::Low | RuleSeverity::Medium | RuleSeverity::High => {
                ReportSeverity::Opportunity
            }
        };
        let mut labels = BTreeMap::new();
        labels.insert(
            "severity".to_string(),
            format!("{:?}", self.severity).to_lowercase(),
        );
        labels.insert("priority".to_string(), self.priority.to_string());
        if let Some(saving) = &self.saving {
            labels.insert("saving_formula".to_string(), saving.name().to_string());
        }
        let not_quantified = match (&self.saving, self.severity) {
            (_, RuleSeverity::Info) => None,
            (Some(saving::Saving::NotQuantified(reason)), _) => Some(reason.clone()),
            (None, _) => Some("the rule has no saving formula".to_string()),
            (Some(_), _) => None,
        };
        ReportInsight {
            source: source.to_string(),
            rule: self.rule,
            severity,
            message: self.message,
            cause: Some(self.cause).filter(|c| !c.is_empty()),
            action: Some(self.action).filter(|a| !a.is_empty()),
            estimated_speedup: None,
            estimated_saving_ns: None,
            saving_by_kernel: BTreeMap::new(),
            not_quantified,
            evidence: ReportEvidence {
                results: 0,
                time: 0.0,
                kernel: None,
                labels,
                metrics: self
                    .evidence
                    .into_iter()
                    .map(|e| (e.metric, e.value))
                    .collect(),
            },
        }
    }
}
