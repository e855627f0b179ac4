//! report.json rendering: the model serialised as it is, pretty-printed.
//!
//! Field order follows the model's declaration order and metric maps keep report order, so the same
//! report always gives the same bytes. Values stay in base units and names are never shortened.

use super::model::Report;

/// The report as pretty JSON with a trailing newline. Non-finite numbers (which JSON cannot hold)
/// come out as `null`.
pub fn to_json(report: &Report) -> String {
    let mut text =
        serde_json::to_string_pretty(report).expect("the report model always serialises to JSON");
    text.push('\n');
    text
}
