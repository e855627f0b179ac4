//! What the terminal says after a run, beside the report's path: where the time went (the top three
//! regions by self time), the finding that would save the most, and the cross-rank diagnosis, so that
//! a user who opens nothing still learns the answer.
//!
//! Floor: report (see `crate::report`): imports config, region and the ground floor only.

use super::format;
use super::model::{Report, Scope};

/// Regions named.
const TOP_REGIONS: usize = 3;

/// A few lines for the terminal, read off the finished report; empty without a time metric.
pub fn lines(report: &Report) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(x) = &report.cross_rank {
        out.push(format!("across ranks: {}", x.finding));
    }
    let scope: Option<&Scope> = match (&report.aggregate, report.scopes.as_slice()) {
        (Some(aggregate), scopes) if scopes.len() > 1 => Some(aggregate),
        (_, [first, ..]) => Some(first),
        _ => None,
    };
    let Some(scope) = scope else {
        return out;
    };
    let summary = &scope.summary;
    if summary.top_regions.is_empty() {
        return out;
    }
    let regions: Vec<String> = summary
        .top_regions
        .iter()
        .take(TOP_REGIONS)
        .map(|r| {
            format!(
                "{} {} ({})",
                format::plain_name(&r.path),
                format::value(Some(r.self_time), "ns"),
                format::share(r.self_time_share)
            )
        })
        .collect();
    out.push(format!("most self time: {}", regions.join(", ")));
    out.push(match summary.top_insights.first() {
        Some(f) => format!(
            "top finding: {} in {} would save about {} ({} of the time): {}",
            f.rule,
            format::plain_name(&f.region),
            format::value(Some(f.estimated_saving_ns), "ns"),
            format::share(f.saving_share),
            format::shorten(&f.message, 160)
        ),
        None => "top finding: none with an estimated saving (the report lists the others)".into(),
    });
    out
}
