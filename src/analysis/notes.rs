//! Report-wide notes: what a reader must know to read the numbers right, most important first.

use crate::region::KernelFilter;

use super::{AnalysisPlan, MetricsFound, Reading};

pub(super) fn report_notes(
    plan: &AnalysisPlan,
    found: &MetricsFound,
    reading: &Reading,
    filter: &KernelFilter,
    selected: u64,
) -> Vec<String> {
    let mut notes = Vec::new();
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
        notes.push(format!(
            "Not in the inputs, so not shown: {}. Collect them with the profiler (sections, metrics), or drop them from report.sections / report.metrics.",
            found
                .missing
                .iter()
                .map(|m| format!("`{m}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    if !found.has_time {
        notes.push(format!(
            "The time metric `{}` is not in the inputs: means are per-result averages and regions have no time share. Collect it or set report.time_metric.",
            plan.time_metric
        ));
    }
    for (list, pattern) in filter.unmatched() {
        notes.push(format!(
            "report.kernels.{list} pattern `{pattern}` matched no kernel name."
        ));
    }
    if reading.results > 0 && selected == 0 && !filter.is_all() {
        notes.push(
            "The kernel selection (report.kernels) left no result: every region shows zeroed metrics.".to_string(),
        );
    }
    notes
}
