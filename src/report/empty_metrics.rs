//! Metrics with no value anywhere in a report (no scope, no region has one) are left out of its
//! metric list and every table, and one report note names them, instead of columns of `—`.

use super::model::{MetricInfo, MetricMap, Scope};

fn has_value(map: &MetricMap, name: &str) -> bool {
    map.get(name)
        .is_some_and(|v| v.value.is_some() || v.values.is_some())
}

fn scope_has(scope: &Scope, name: &str) -> bool {
    has_value(&scope.total.metrics, name)
        || has_value(&scope.outside_regions.metrics, name)
        || scope
            .regions
            .iter()
            .any(|r| has_value(&r.inclusive, name) || has_value(&r.exclusive, name))
}

/// Drops the metrics no scope or region has a value of; the note naming them, if any was dropped.
pub fn leave_out_empty(metrics: &mut Vec<MetricInfo>, scopes: &mut [Scope]) -> Option<String> {
    let empty: Vec<String> = metrics
        .iter()
        .filter(|m| !scopes.iter().any(|s| scope_has(s, &m.name)))
        .map(|m| m.name.clone())
        .collect();
    if empty.is_empty() {
        return None;
    }
    let keep = |map: &mut MetricMap| map.0.retain(|(n, _)| !empty.iter().any(|e| **e == **n));
    metrics.retain(|m| !empty.contains(&m.name));
    for s in scopes.iter_mut() {
        keep(&mut s.total.metrics);
        keep(&mut s.outside_regions.metrics);
        for r in &mut s.regions {
            keep(&mut r.inclusive);
            keep(&mut r.exclusive);
        }
    }
    Some(format!(
        "Left out of every table, no value anywhere in this report: {}.",
        empty
            .iter()
            .map(|n| format!("`{n}`"))
            .collect::<Vec<_>>()
            .join(", ")
    ))
}
