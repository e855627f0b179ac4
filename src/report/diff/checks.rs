//! What makes two reports unfit to compare, refused before anything is judged and named by scope
//! and region: a region listed twice, a negative time, one value in two units, and a gated value
//! missing where the region ran work. A gate that skipped any of these would pass what it never saw.

use std::collections::BTreeSet;

use super::input::{RegionSide, RunReport, ScopeSide};
use super::Gate;
use crate::report::format;

/// A report's own faults: every region once per scope, no negative time.
pub fn each_report(side: (&str, &RunReport)) -> Result<(), String> {
    let (name, report) = side;
    for scope in report.scopes.iter().chain(&report.aggregate) {
        let mut seen = BTreeSet::new();
        for region in &scope.regions {
            if !seen.insert(region.path.as_str()) {
                return Err(format!(
                    "{name}: scope `{}` lists region `{}` twice, so which of its values to compare is unknown; a report lists each region once: render it again with `profile-run report`",
                    scope.label,
                    format::cut_long(&region.path)
                ));
            }
        }
        let Some(time) = report.time_metric.as_deref() else {
            continue;
        };
        for region in &scope.regions {
            if let Some(v) = region.metric(time).filter(|v| *v < 0.0 || !v.is_finite()) {
                return Err(format!(
                    "{name}: region `{}` of scope `{}` has a time of {v} ({time}); a duration is a finite number of 0 or more: the report was edited or damaged, render it again with `profile-run report`",
                    format::cut_long(&region.path),
                    scope.label
                ));
            }
        }
    }
    Ok(())
}

/// Faults between two matched scopes: a value whose unit differs between the runs, and a value a
/// gate needs that is missing or `null` in a region that ran work.
pub fn pair(
    key: &str,
    a: (&RunReport, &ScopeSide),
    b: (&RunReport, &ScopeSide),
    gates: &[Gate],
) -> Result<(), String> {
    let (ra, sa) = a;
    let (rb, sb) = b;
    for x in &sa.regions {
        let Some(y) = sb.regions.iter().find(|r| r.path == x.path) else {
            continue;
        };
        for metric in x.inclusive.keys().filter(|m| y.inclusive.contains_key(*m)) {
            let (ua, ub) = (x.unit_of(ra, metric), y.unit_of(rb, metric));
            if ua != ub {
                return Err(format!(
                    "region `{}` of `{key}`: `{metric}` is in {ua} in A but in {ub} in B, so its numbers do not compare; render both runs with the same profile-run (`profile-run report RUN`) so that they share a unit",
                    format::cut_long(&x.path)
                ));
            }
        }
    }
    for gate in gates {
        let metric = match gate.metric.as_deref().or(ra.time_metric.as_deref()) {
            Some(m) => m,
            None => continue,
        };
        for (which, scope) in [("A", sa), ("B", sb)] {
            if let Some(region) = scope.regions.iter().find(|r| lacks(r, metric)) {
                return Err(format!(
                    "region `{}` of `{key}` ran {} results in {which} but has no `{metric}` value (missing or null), so gate {} cannot judge it; render {which} again with `profile-run report`, or gate on a metric both runs measured",
                    format::cut_long(&region.path),
                    region.kernel_count,
                    gate.name()
                ));
            }
        }
    }
    Ok(())
}

/// A region that ran work but has no value of `metric`.
fn lacks(region: &RegionSide, metric: &str) -> bool {
    region.kernel_count > 0 && region.metric(metric).is_none()
}
