//! Scopes cut down to their region totals: what a report of many scopes (10,000 ranks) keeps of
//! each one unless `report.scope_trees` asks for whole trees. The aggregate keeps its tree.

use super::{Report, Scope};

/// Scopes up to which each one keeps its whole region tree: as many as report.md shows side by side.
pub const TREES_UP_TO: usize = 8;

impl Report {
    /// With more than [`TREES_UP_TO`] scopes and `trees` not asked for, cuts every scope to its region
    /// totals ([`Scope::keep_totals`]) and says so in a note; `scope_trees` records which.
    pub fn keep_scope_totals(&mut self, trees: bool) {
        if trees || self.scopes.len() <= TREES_UP_TO {
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
