//! Percent-of-peak values over 100 %: impossible as throughput, so the report says they are a
//! measurement artefact instead of letting them stand as numbers a reader might trust.

use super::format;
use super::model::{MetricInfo, Scope};

/// One note per percent metric some single result reads over 100 % of peak: how high, where, and why
/// it is not a real throughput.
pub fn notes(metrics: &[MetricInfo], scopes: &[Scope]) -> Vec<String> {
    let mut out = Vec::new();
    for metric in metrics.iter().filter(|m| m.unit == "%") {
        // The highest single result, and the innermost region showing it.
        let mut worst: Option<(f64, usize, &str)> = None;
        for region in scopes.iter().flat_map(|s| &s.regions) {
            let Some((_, stats)) = region
                .per_result
                .0
                .iter()
                .find(|(name, _)| **name == *metric.name)
            else {
                continue;
            };
            let better = worst.is_none_or(|(max, depth, _)| {
                stats.max > max || (stats.max == max && region.depth > depth)
            });
            if stats.max > 100.0 && better {
                worst = Some((stats.max, region.depth, &region.path));
            }
        }
        if let Some((max, _, path)) = worst {
            let label = metric.label.as_deref().unwrap_or(&metric.name);
            out.push(format!(
                "{label} reads up to {} of peak (in {}): over 100%, a measurement artefact rather \
                 than throughput beyond the hardware's peak (the counters of a short kernel are \
                 divided by few active cycles); read it as saturated, not as a real figure",
                format::value(Some(max), "%"),
                format::plain_name(path),
            ));
        }
    }
    out
}
