//! A region's section of report.html below its table row (its path, idle time, instances, findings
//! and notes), and how a finding reads there and in a scope's findings: its estimated saving as a
//! share of the region or scope.

use serde::Serialize;

use super::idle::{self, IdleView};
use super::ratio;
use crate::report::format;
use crate::report::model::{Insight, Region};

#[derive(Serialize)]
pub(super) struct Detail<'a> {
    pub(super) anchor: String,
    path: String,
    idle: Option<IdleView>,
    instances: Option<String>,
    insights: Vec<InsightView<'a>>,
    notes: &'a [String],
}

#[derive(Serialize)]
pub(super) struct InsightView<'a> {
    pub(super) severity: String,
    pub(super) rule: &'a str,
    pub(super) source: &'a str,
    pub(super) message: &'a str,
    pub(super) cause: Option<&'a str>,
    pub(super) action: Option<&'a str>,
    /// Kernel-local, of the shown result.
    pub(super) speedup: Option<String>,
    /// Estimated time saved in the region, with its share of the region.
    pub(super) saves: Option<String>,
    pub(super) kernel: Option<&'a str>,
    pub(super) evidence: String,
}

/// A region's section below the table, when it has insights, notes or instances to show.
pub(super) fn detail<'a>(
    region: &'a Region,
    anchor: String,
    time: Option<&str>,
    unit: &str,
) -> Option<Detail<'a>> {
    let instances = region
        .instances
        .as_ref()
        .filter(|_| time.is_some())
        .map(|i| {
            let v = |x: f64| format::value(Some(x), unit);
            format!(
                "{} visit(s); time per visit min {}, median {}, p90 {}, max {}",
                format::count(i.count as f64),
                v(i.min),
                v(i.median),
                v(i.p90),
                v(i.max)
            )
        });
    if region.insights.is_empty() && region.notes.is_empty() && instances.is_none() {
        return None;
    }
    Some(Detail {
        anchor,
        path: region.segments.join(" / "),
        idle: region.idle.as_ref().map(idle::view),
        instances,
        insights: region
            .insights
            .iter()
            .map(|a| insight(a, time.and_then(|t| region.inclusive.get(t)?.value)))
            .collect(),
        notes: &region.notes,
    })
}

/// `region_time`: the region's time in ns, which the saving is a share of.
pub(super) fn insight(a: &Insight, region_time: Option<f64>) -> InsightView<'_> {
    InsightView {
        severity: format!("{:?}", a.severity).to_lowercase(),
        rule: &a.rule,
        source: &a.source,
        message: &a.message,
        cause: a.cause.as_deref(),
        action: a.action.as_deref(),
        speedup: a.estimated_speedup.map(|s| format::value(Some(s), "%")),
        saves: a.estimated_saving_ns.map(|s| {
            format!(
                "{} ({} of the region)",
                format::value(Some(s), "ns"),
                format::share(ratio(Some(s), region_time))
            )
        }),
        kernel: a.evidence.kernel.as_deref(),
        // A rule judging a region's figures fired on no result of its own: no `0 result(s)`.
        evidence: std::iter::once(a.evidence.results)
            .filter(|&n| n > 0)
            .map(|n| format!("{} result(s), ", format::count(n as f64)))
            .chain([format::value(Some(a.evidence.time), "ns")])
            .collect(),
    }
}
