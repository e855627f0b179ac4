//! A system profile of more workers than [`SCOPES_UP_TO`] (a job of 100,000 processes): past the
//! eighth, each worker is a row of one table beside the first scope (its span and the time its
//! events of each kind cover) instead of a scope of its own, so that memory follows the workers'
//! values, not a scope's regions, maps and report page per worker. The cross-worker diagnosis still
//! reads every worker's timeline.

use std::sync::Arc;

use crate::report::model::{Scope, ScopeTable, SIDE_BY_SIDE};

/// Up to this many workers, each is a scope of its own.
pub const SCOPES_UP_TO: usize = 1_000;

/// How many of `workers` workers are scopes; the rest are rows.
pub fn scopes_kept(workers: usize) -> usize {
    match workers > SCOPES_UP_TO {
        true => SIDE_BY_SIDE,
        false => workers,
    }
}

/// The table of the workers past the scopes, beside the first scope, over `metrics` (each in ns),
/// its rows ranked by the first.
pub fn table(scopes: &[Scope], metrics: Vec<Arc<str>>) -> ScopeTable {
    let beside = scopes.first().map(|s| s.label.clone()).unwrap_or_default();
    let time = metrics.first().map(|m| m.to_string());
    let ns: Arc<str> = Arc::from("ns");
    let metrics = metrics.into_iter().map(|m| (m, Arc::clone(&ns))).collect();
    ScopeTable::new(beside, ("worker", "workers"), metrics, time.as_deref())
}

/// What the report says of the table.
pub fn note(table: &ScopeTable) -> String {
    format!(
        "With more than {SCOPES_UP_TO} workers, the first {SIDE_BY_SIDE} are scopes and the other \
         {} are rows of report.json's `scope_tables` (each worker's span and the time its events \
         of each kind cover; their phases are not listed). Report a few instances' directories \
         at a time to see every worker's phases.",
        table.rows.len()
    )
}
