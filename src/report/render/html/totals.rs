//! report.html's Totals table of a scope: the same rows as report.md's, with each metric's
//! description as the row's tooltip.

use serde::Serialize;

use super::metric;
use crate::report::model::{Report, Scope};

#[derive(Serialize)]
pub(super) struct TotalRow<'a> {
    pub label: &'a str,
    pub name: &'a str,
    /// The profiler's description of the metric, else its name (the row's tooltip).
    pub title: &'a str,
    pub value: String,
}

/// The scope's totals, as report.md's Totals table has them.
pub(super) fn totals<'a>(report: &'a Report, scope: &'a Scope) -> Vec<TotalRow<'a>> {
    let own = report.item_noun.own_totals;
    if !scope.regions.is_empty() && !own {
        return Vec::new();
    }
    report
        .metrics
        .iter()
        .filter(|m| !own || scope.total.metrics.get(&m.name).is_some())
        .map(|m| TotalRow {
            label: m.label.as_deref().unwrap_or(&m.name),
            name: &m.name,
            title: m.description.as_deref().unwrap_or(&m.name),
            value: metric(&scope.total.metrics, Some(&m.name), &m.unit),
        })
        .collect()
}
