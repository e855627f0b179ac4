//! What report.html shows of a table of scopes held as rows (a Neuron profile's subgraphs past the
//! eighth), as report.md does: how each metric spreads over the rows, the slowest, and each finding
//! with how many rows it fired on; the rows themselves stay in report.json's `scope_tables`.

use serde::Serialize;

use crate::report::format;
use crate::report::model::TableSummary;

#[derive(Serialize)]
pub(super) struct TableView {
    title: String,
    spread: Vec<SpreadRow>,
    slowest: Vec<String>,
    findings: Vec<FindingRow>,
}

#[derive(Serialize)]
struct SpreadRow {
    metric: String,
    rows: String,
    min: String,
    median: String,
    p90: String,
    max: String,
}

#[derive(Serialize)]
struct FindingRow {
    rule: String,
    severity: String,
    rows: String,
    example: String,
}

pub(super) fn table(t: &TableSummary) -> TableView {
    let time_unit = t.time_unit.as_deref().unwrap_or("");
    TableView {
        title: format!(
            "{}: {} more {}",
            t.scope,
            format::count(t.count as f64),
            t.noun.1
        ),
        spread: t
            .spread
            .iter()
            .map(|m| SpreadRow {
                metric: m.metric.to_string(),
                rows: format::count(m.spread.count as f64),
                min: format::value(Some(m.spread.min), &m.unit),
                median: format::value(Some(m.spread.median), &m.unit),
                p90: format::value(Some(m.spread.p90), &m.unit),
                max: format::value(Some(m.spread.max), &m.unit),
            })
            .collect(),
        slowest: t
            .slowest
            .iter()
            .map(|(label, time)| format!("{label} ({})", format::value(Some(*time), time_unit)))
            .collect(),
        findings: t
            .findings
            .iter()
            .map(|f| FindingRow {
                rule: f.rule.clone(),
                severity: format!("{:?}", f.severity).to_lowercase(),
                rows: format::count(f.rows as f64),
                example: format!("{}: {}", f.example, f.message),
            })
            .collect(),
    }
}
