//! One way to build a report, whichever profiler read the capture: [`Report::new`] from the run, the
//! metrics and the scopes, then [`Report::finish`], the one finishing step: each scope's
//! distributions of same-named regions and its summary, metrics with no value anywhere left out
//! (with a note), and `report.compare` (its notes repeated on stderr).

use super::compare::comparisons;
use super::distribution::{across_scopes, distributions};
use super::empty_metrics::leave_out_empty;
use super::model::SCHEMA_VERSION;
use super::model::{past_side_by_side, KernelSelectionInfo, MetricInfo, Report, RunInfo, Scope};
use super::summary;
use crate::parallel;
use crate::region;
use crate::region::NAME_LIMIT;

/// What the finishing step needs of the configuration.
#[derive(Debug, Clone, Copy)]
pub struct Finishing<'a> {
    /// `report.compare`: the regions shown side by side.
    pub compare: &'a [String],
    /// How far from the median of same-named regions a region's time is an outlier.
    pub outlier_factor: f64,
    /// Threads finishing scopes (0: one per core).
    pub threads: usize,
}

impl Report {
    /// A report of `scopes` (and the `aggregate` across them), before [`Report::finish`]: no notes,
    /// comparisons, distributions or summaries yet, every result profiled in full, results called
    /// kernels.
    pub fn new(
        run: RunInfo,
        metrics: Vec<MetricInfo>,
        time_metric: Option<String>,
        kernel_selection: KernelSelectionInfo,
        scopes: Vec<Scope>,
        aggregate: Option<Scope>,
    ) -> Report {
        Report {
            schema_version: SCHEMA_VERSION,
            generator: format!("profile-run {}", env!("CARGO_PKG_VERSION")),
            run,
            metrics,
            time_metric,
            time_measured: None,
            kernel_selection,
            scopes,
            aggregate,
            scope_tables: Vec::new(),
            notes: Vec::new(),
            compare: Vec::new(),
            sampling: None,
            cross_rank: None,
            across_scopes: Vec::new(),
            scope_trees: true,
            item_noun: Default::default(),
            console_notes: Vec::new(),
            timeline: None,
        }
    }

    /// The finishing step every report goes through once its scopes hold their regions and the
    /// rules' findings: distributions and summary per scope, empty metrics left out, comparisons.
    /// Its notes follow the notes already made.
    pub fn finish(&mut self, finishing: &Finishing<'_>) {
        let time = self.time_metric.clone();
        // Scopes cut to their totals as they were built were finished then (`finish_scope`).
        let done = !self.scope_trees;
        let has_aggregate = self.aggregate.is_some();
        let finish_one = |(i, mut scope): (usize, Scope)| {
            if !done || (has_aggregate && i == 0) {
                finish_scope(&mut scope, time.as_deref(), finishing.outlier_factor);
            }
            scope
        };
        // The aggregate (the largest) first, each scope on its own thread.
        let all: Vec<(usize, Scope)> = self
            .aggregate
            .take()
            .into_iter()
            .chain(std::mem::take(&mut self.scopes))
            .enumerate()
            .collect();
        let mut all = parallel::map(all, finishing.threads, finish_one);
        let empty_note = leave_out_empty(&mut self.metrics, &mut all);
        if has_aggregate {
            self.aggregate = Some(all.remove(0));
        }
        self.scopes = all;
        if let Some(time) = time
            .as_deref()
            .filter(|_| past_side_by_side(self.scopes.len()))
        {
            self.across_scopes = across_scopes(&self.scopes, time);
        }

        let (compare, notes) =
            comparisons(finishing.compare, &self.scopes, self.aggregate.as_ref());
        self.compare = compare;
        self.console_notes.extend(notes.iter().cloned());
        self.notes.extend(notes);
        self.notes.extend(empty_note);
        self.notes.extend(cut_names_note(&self.scopes));
    }
}

/// One scope's share of [`Report::finish`]: its distributions of same-named regions and its summary.
/// A report of many scopes runs it on each scope as it is built, before cutting the scope to its
/// totals ([`Scope::cut_to_totals`]), and marks them so with `scope_trees: false`.
pub fn finish_scope(scope: &mut Scope, time_metric: Option<&str>, outlier_factor: f64) {
    if let Some(time) = time_metric {
        scope.distributions = distributions(&scope.regions, time, outlier_factor);
    }
    summary::fill(scope, time_metric);
}

/// The note of a report some of whose range names were cut at `NAME_LIMIT` bytes when read.
fn cut_names_note(scopes: &[Scope]) -> Option<String> {
    let mut cut: Vec<&str> = scopes
        .iter()
        .flat_map(|s| &s.regions)
        .flat_map(|r| &r.segments)
        .map(String::as_str)
        .filter(|name| region::was_cut(name))
        .collect();
    cut.sort_unstable();
    cut.dedup();
    (!cut.is_empty()).then(|| {
        format!(
            "{} range name(s) were longer than {} bytes and are cut there (`… (N more bytes)`): a report lists each name several times, so one very long name would make report.json huge. Names that differ only past the cut are one region.",
            cut.len(),
            NAME_LIMIT
        )
    })
}
