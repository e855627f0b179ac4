//! Report-wide notes: what a reader must know to read the numbers right, most important first.

use crate::region::KernelFilter;

use super::{AnalysisPlan, MetricsFound, Reading};

/// Report-wide notes, and those of them that are also said on stderr.
#[derive(Debug, Default)]
pub(super) struct Notes {
    pub all: Vec<String>,
    pub console: Vec<String>,
}

impl Notes {
    pub fn push(&mut self, note: String) {
        self.all.push(note);
    }

    /// A note that changes how the numbers read or says a setting did nothing: on stderr too.
    pub fn push_loud(&mut self, note: String) {
        self.console.push(note.clone());
        self.all.push(note);
    }

    pub fn extend(&mut self, notes: impl IntoIterator<Item = String>) {
        self.all.extend(notes);
    }
}

pub(super) fn report_notes(
    plan: &AnalysisPlan,
    found: &MetricsFound,
    reading: &Reading,
    filter: &KernelFilter,
    selected: u64,
) -> Notes {
    let mut notes = Notes::default();
    if reading.results == 0 {
        notes.push(format!(
            "The input holds no results: {} profiled nothing, so no region-specific profiling was performed. {}",
            reading.profiler.name,
            reading.no_results_hint
        ));
    } else if !reading.has_ranges {
        notes.push(format!(
            "No region-specific profiling was performed: the inputs carry no range information. {} Totals below cover every profiled kernel.",
            reading.no_ranges_hint
        ));
    } else if reading.results_in_ranges == 0 {
        notes.push(
            "No region-specific profiling was performed: no profiled result ran inside a range. \
             Totals below cover every profiled kernel (a baseline)."
                .to_string(),
        );
    }
    notes.extend(reading.notes.iter().cloned());
    if !found.missing.is_empty() {
        let note = format!(
            "Not in the inputs, so not shown: {}. {}",
            found
                .missing
                .iter()
                .map(|m| format!("`{m}`"))
                .collect::<Vec<_>>()
                .join(", "),
            reading.missing_metrics_hint
        );
        // A time-only input never holds them: the report says so, and stderr stays for surprises.
        if reading.time_only {
            notes.push(note);
        } else {
            notes.push_loud(note);
        }
    }
    if !found.has_time {
        notes.push_loud(format!(
            "The time metric `{}` is not in the inputs: means are per-result averages and regions have no time share. Collect it or set report.time_metric.",
            plan.time_metric
        ));
    }
    for (list, pattern) in filter.unmatched() {
        notes.push_loud(format!(
            "report.kernels.{list} pattern `{pattern}` matched no kernel name."
        ));
    }
    if reading.results > 0 && selected == 0 && !filter.is_all() {
        notes.push_loud(
            "The kernel selection (report.kernels) left no result: every region shows zeroed metrics.".to_string(),
        );
    }
    notes
}
