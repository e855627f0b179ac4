//! Many scopes: more than report.md shows side by side ([`SIDE_BY_SIDE`]), whether ranks or
//! processes of a GPU run or the subgraphs of a Neuron profile. Past it, each scope is cut down to
//! its region totals unless `report.scope_trees` asks for whole trees (the aggregate keeps its
//! tree), report.md links one file per scope and its region × scope table shows how the scopes
//! spread, and a Neuron profile's further subgraphs are rows of a table ([`super::ScopeTable`]).

use super::{Report, Scope};

/// Scopes report.md shows side by side, each a section and a column of its own; templates read it
/// as `report.side_by_side`.
pub const SIDE_BY_SIDE: usize = 8;

/// Whether `count` scopes (or a profile's subgraphs) are more than report.md shows side by side.
pub fn past_side_by_side(count: usize) -> bool {
    count > SIDE_BY_SIDE
}

impl Report {
    /// With more scopes than [`SIDE_BY_SIDE`] and `trees` not asked for, cuts every scope to its
    /// region totals ([`Scope::keep_totals`]) and says so in a note; `scope_trees` records which.
    pub fn keep_scope_totals(&mut self, trees: bool) {
        if trees || !past_side_by_side(self.scopes.len()) {
            return;
        }
        for scope in &mut self.scopes {
            scope.keep_totals();
        }
        self.scope_trees = false;
        self.notes.push(format!(
            "With {} scopes each keeps its region totals only (each region's time, counts, metrics and instances, and the scope's summary); the kernels per region, per-result statistics and findings per region are the aggregate's alone. Set report.scope_trees=true to keep every scope's whole tree.",
            self.scopes.len()
        ));
    }
}

impl Scope {
    /// Leaves out what only a whole tree needs: each region's kernels, per-result statistics and
    /// findings, and the kernels run outside every region. The summary, made before, stays.
    pub fn keep_totals(&mut self) {
        for region in &mut self.regions {
            region.kernels = Vec::new();
            region.per_result = Default::default();
            region.insights = Vec::new();
        }
        self.outside_regions.kernels = Vec::new();
        self.total.kernels = Vec::new();
    }
}
