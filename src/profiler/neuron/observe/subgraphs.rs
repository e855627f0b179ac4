//! A profile's summaries past report.md's [`crate::report::model::SIDE_BY_SIDE`] (summary-json writes one per subgraph, and a compiled
//! model may have 200,000): rows of one table beside the profile's scope instead of a scope each. Each
//! summary is judged by the rules and let go as its row is made, so memory follows the values, not a
//! scope's maps and findings per subgraph (docs/reliability.md, "Neuron profiles").

use std::collections::BTreeSet;
use std::sync::Arc;

use crate::insights::{RuleSet, Units};
use crate::profiler::neuron::observe::metrics::summary_metrics;
use crate::profiler::neuron::observe::report_region::{INSIGHT_SOURCE, TIME_METRIC};
use crate::profiler::neuron::observe::units::UnitRow;
use crate::profiler::neuron::readers::model::Summary;
use crate::report::model::{past_side_by_side, ScopeTable};

/// The summaries that become rows: all but the first, where the profile has more than
/// [`crate::report::model::SIDE_BY_SIDE`] (up to it, each is a scope of its own).
pub fn split_off(summaries: &mut Vec<Summary>) -> Vec<Summary> {
    if past_side_by_side(summaries.len()) {
        summaries.split_off(1)
    } else {
        Vec::new()
    }
}

/// Every metric name the rows will have: the summaries' own and those derived from them.
pub fn metric_names(rows: &[Summary]) -> BTreeSet<String> {
    if rows.is_empty() {
        return BTreeSet::new();
    }
    let mut names: BTreeSet<String> = summary_metrics(&Summary::default()).into_keys().collect();
    // One insert per new name: collecting every row's names first would hold them all at once.
    for name in rows.iter().flat_map(|s| s.metrics.keys()) {
        if !names.contains(&**name) {
            names.insert(name.to_string());
        }
    }
    names
}

/// What a row is judged with: the rules, their message units and how many findings a row keeps.
pub struct Judge<'a> {
    pub rules: &'a RuleSet,
    pub units: &'a Units,
    pub max: usize,
}

/// The table beside the scope labelled `scope`: one row per summary, in report units, with the
/// rules that fired on it. Each summary is dropped as its row is made.
pub fn table(scope: String, rows: Vec<Summary>, units: &[UnitRow], judge: &Judge) -> ScopeTable {
    let names: BTreeSet<String> = metric_names(&rows);
    let columns: Vec<&UnitRow> = units.iter().filter(|u| names.contains(&*u.0)).collect();
    let metrics = columns
        .iter()
        .map(|(name, unit, _)| (Arc::clone(name), Arc::clone(unit)))
        .collect();
    let mut table = ScopeTable::new(scope, ("subgraph", "subgraphs"), metrics, Some(TIME_METRIC));
    table.rows.reserve_exact(rows.len());
    for summary in rows {
        let metrics = summary_metrics(&summary);
        let fired = judge.rules.evaluate(&metrics, judge.units, judge.max);
        let values = (columns.iter())
            .map(|(name, _, factor)| metrics.get(&**name).copied().flatten().map(|v| v * factor))
            .collect();
        let fired = fired.into_iter().map(|i| {
            let i = i.into_report(INSIGHT_SOURCE);
            (i.rule, i.severity, i.message)
        });
        table.push(summary.profile_id, values, fired);
    }
    table.finish();
    table
}
