//! Many scopes: more than report.md shows side by side ([`SIDE_BY_SIDE`]), whether ranks or
//! processes of a GPU run or the subgraphs of a Neuron profile. Past it, each scope is cut down to
//! its region totals unless `report.scope_trees` asks for whole trees (the aggregate keeps its
//! tree), report.md links one file per scope and its region × scope table shows how the scopes
//! spread, and a Neuron profile's further subgraphs are rows of a table ([`super::ScopeTable`]).

use super::{MetricMap, Report, Scope};

/// Scopes report.md shows side by side, each a section and a column of its own; templates read it
/// as `report.side_by_side`.
pub const SIDE_BY_SIDE: usize = 8;

/// Whether `count` scopes (or a profile's subgraphs) are more than report.md shows side by side.
pub fn past_side_by_side(count: usize) -> bool {
    count > SIDE_BY_SIDE
}

/// Whether a report of `scopes` scopes keeps each one's region totals only.
pub fn keeps_totals_only(scopes: usize, trees: bool) -> bool {
    !trees && past_side_by_side(scopes)
}

impl Report {
    /// With more scopes than [`SIDE_BY_SIDE`] and `trees` not asked for, cuts every scope to its
    /// region totals ([`Scope::keep_totals`]) and says so in a note; `scope_trees` records which.
    pub fn keep_scope_totals(&mut self, trees: bool) {
        if !keeps_totals_only(self.scopes.len(), trees) {
            return;
        }
        let time = self.time_metric.clone();
        for scope in &mut self.scopes {
            scope.keep_totals(time.as_deref());
        }
        self.scope_trees = false;
        self.notes.push(format!(
            "With {} scopes each keeps its region totals only (each region's time, counts and instances, the scope's own totals of every metric, and its summary of findings); the other metrics per region, the kernels, per-result statistics and findings per region are the aggregate's alone. Set report.scope_trees=true to keep every scope's whole tree.",
            self.scopes.len()
        ));
    }
}

impl Scope {
    /// Leaves out what only a whole tree needs ([`Scope::cut_to_totals`]) and each region's
    /// per-result statistics.
    pub fn keep_totals(&mut self, time_metric: Option<&str>) {
        self.cut_to_totals(time_metric);
        for region in &mut self.regions {
            region.per_result = Default::default();
        }
    }

    /// Leaves out the kernels of each region and of the scope, each region's metrics but the time
    /// (`time_metric`) and its findings, and the summary's kernels: most of a scope's memory. A
    /// report of 10,000 ranks does this to each scope as soon as it is finished (`Report::finish`'s
    /// `finish_scope`), so that they never all hold their trees at once; the per-result statistics
    /// stay until the report's notes have read them, and the scope's total keeps every metric.
    pub fn cut_to_totals(&mut self, time_metric: Option<&str>) {
        let only_time =
            |map: &mut MetricMap| map.0.retain(|(name, _)| Some(&**name) == time_metric);
        for region in &mut self.regions {
            region.kernels = Vec::new();
            region.insights = Vec::new();
            only_time(&mut region.inclusive);
            only_time(&mut region.exclusive);
        }
        self.outside_regions.kernels = Vec::new();
        only_time(&mut self.outside_regions.metrics);
        self.total.kernels = Vec::new();
        self.summary.top_kernels = Vec::new();
    }
}
