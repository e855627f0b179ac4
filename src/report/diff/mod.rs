//! Comparing two runs' reports: regions matched by scope (rank, or process, host and device) and path,
//! with their time and metric changes, the regions only one run has, and regression gates with a
//! verdict. Pure: it takes two parsed report.json files and returns a [`Diff`]; `commands::diff` reads
//! the files and prints.
//!
//! Floor: report (see `crate::report`): imports config, region and the ground floor only.

mod checks;
mod comparable;
mod gate;
pub mod input;
mod table;

use serde::Serialize;

pub use comparable::Difference;
pub use gate::{
    parse_time_limit as gate_time, Gate, GateFinding, GateResult, GateStatus, Statistic,
};
pub use input::RunReport;
pub use table::table;

/// A metric's values in both runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Change {
    pub a: f64,
    pub b: f64,
    /// `b − a`.
    pub delta: f64,
    /// `(b − a) / a` in percent; `null` when `a` is 0 and `b` is not.
    pub delta_pct: Option<f64>,
}

impl Change {
    pub fn new(a: f64, b: f64) -> Change {
        let delta_pct = if a != 0.0 {
            Some((b - a) / a.abs() * 100.0)
        } else if b == 0.0 {
            Some(0.0)
        } else {
            None
        };
        Change {
            a,
            b,
            delta: b - a,
            delta_pct,
        }
    }
}

/// Per-visit times of a region in both runs, when both reports know its instances.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PerVisit {
    /// Median visit time in each run.
    pub median: Change,
    /// 90th-percentile visit time in each run: a tail that grew while the median held.
    pub p90: Change,
    /// Visits in each run.
    pub visits: Change,
    /// The baseline's own spread of visits, run A's p90 − min: a per-visit change within it is
    /// noise. Never run B's, whose regression would widen the band that excuses it.
    pub noise: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MetricChange {
    pub name: String,
    pub unit: String,
    #[serde(flatten)]
    pub change: Change,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RegionDiff {
    pub path: String,
    pub kernel_count: Change,
    /// Inclusive time (the time metric), `null` without one.
    pub time: Option<Change>,
    pub per_visit: Option<PerVisit>,
    /// Every metric both runs have a value for (the time metric included), in run A's report order.
    pub metrics: Vec<MetricChange>,
}

/// A region only one run has: new in B, or gone from A, with its share of its scope there.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OneSided {
    pub path: String,
    /// `new` (only in B) or `gone` (only in A).
    pub side: Side,
    /// Whether its parent is in both runs (or it is at the top): the region a rename shows as.
    pub outermost: bool,
    /// Its share of the scope's total in the run that has it, in percent, per metric it has a
    /// value of.
    pub share_pct: std::collections::BTreeMap<String, f64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Side {
    New,
    Gone,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ScopeDiff {
    /// `rank 0`, `python3 on host, device 0`, or `aggregate`.
    pub key: String,
    pub label_a: String,
    pub label_b: String,
    pub regions: Vec<RegionDiff>,
    /// Region paths only run B has.
    pub added: Vec<String>,
    /// Region paths only run A has.
    pub removed: Vec<String>,
    /// The regions of `added` and `removed` with their shares of the scope, what a gate judges.
    pub one_sided: Vec<OneSided>,
}

/// `pass` or `fail` when a gate was given; `not_gated` when none was: a diff without a gate has
/// judged nothing, so it never says it passed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Pass,
    Fail,
    NotGated,
}

/// The comparison of run B against run A (the baseline).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Diff {
    pub verdict: Verdict,
    /// One sentence saying why.
    pub summary: String,
    pub a: String,
    pub b: String,
    pub time_metric: Option<String>,
    pub time_unit: String,
    /// Recorded differences that change numbers (refused unless `--allow-incomparable`).
    pub incomparable: Vec<Difference>,
    /// Reasons the numbers may not mean the same in both runs although they were recorded alike
    /// (another GPU model, a different workload): reported, not refused.
    pub warnings: Vec<String>,
    pub notes: Vec<String>,
    pub gates: Vec<GateResult>,
    pub scopes: Vec<ScopeDiff>,
    /// Scope keys only run B has.
    pub scopes_added: Vec<String>,
    /// Scope keys only run A has.
    pub scopes_removed: Vec<String>,
}

/// Compares run B against run A and applies `gates`. Refused, naming the region, when a report
/// cannot be gated on: a region listed twice, a negative time, a value in another unit in the other
/// run, or a gated value missing where the region ran work.
pub fn compare(
    a: (&str, &RunReport),
    b: (&str, &RunReport),
    gates: &[Gate],
) -> Result<Diff, String> {
    let (name_a, ra) = a;
    let (name_b, rb) = b;
    checks::each_report(a)?;
    checks::each_report(b)?;
    let (incomparable, mut notes) = comparable::check(ra, rb);
    let (warnings, checked) = comparable::warnings(ra, rb);
    notes.extend(checked);
    let (pairs, scopes_added, scopes_removed, pair_note) = match_scopes(ra, rb);
    notes.extend(pair_note);
    let mut scopes = Vec::new();
    for (key, sa, sb) in pairs {
        if key != "aggregate" {
            notes.extend(comparable::device_note(
                &key,
                (ra, sa.device.as_deref()),
                (rb, sb.device.as_deref()),
            ));
        }
        checks::pair(&key, (ra, sa), (rb, sb), gates)?;
        scopes.push(scope_diff(ra, &key, sa, sb));
    }
    let gates: Vec<GateResult> = gates
        .iter()
        .map(|g| g.apply(&scopes, ra.time_metric.as_deref(), &ra.item_noun))
        .collect();
    let (verdict, summary) = gate::verdict(&gates, &incomparable, &scopes);
    Ok(Diff {
        verdict,
        summary,
        a: name_a.to_string(),
        b: name_b.to_string(),
        time_metric: ra.time_metric.clone(),
        time_unit: ra
            .time_metric
            .as_deref()
            .map_or("", |t| ra.unit(t))
            .to_string(),
        incomparable,
        warnings,
        notes,
        gates,
        scopes,
        scopes_added,
        scopes_removed,
    })
}

type Pairs<'a> = Vec<(String, &'a input::ScopeSide, &'a input::ScopeSide)>;

/// Each scope's key in `report`; where two scopes of one side would share a key (two profiles of
/// one file name from different folders), those take their whole label, so none pairs by mistake.
fn scope_keys(report: &RunReport) -> Vec<String> {
    let keys: Vec<String> = report
        .scopes
        .iter()
        .map(|s| s.key(&report.item_noun))
        .collect();
    keys.iter()
        .zip(&report.scopes)
        .map(
            |(key, scope)| match keys.iter().filter(|k| *k == key).count() {
                1 => key.clone(),
                _ => scope.label.clone(),
            },
        )
        .collect()
}

/// Scopes matched by key (the aggregate last, when a side has several scopes); a single scope on each side is paired even when its key
/// changed (another host, an unnamed process), with a note.
fn match_scopes<'a>(
    a: &'a RunReport,
    b: &'a RunReport,
) -> (Pairs<'a>, Vec<String>, Vec<String>, Option<String>) {
    let mut pairs: Pairs<'a> = Vec::new();
    let mut note = None;
    let (keys_a, keys_b) = (scope_keys(a), scope_keys(b));
    let sides_a: Vec<(&String, &input::ScopeSide)> = keys_a.iter().zip(&a.scopes).collect();
    let sides_b: Vec<(&String, &input::ScopeSide)> = keys_b.iter().zip(&b.scopes).collect();
    if sides_a.len() == 1 && sides_b.len() == 1 && sides_a[0].0 != sides_b[0].0 {
        let ((ka, sa), (kb, sb)) = (sides_a[0], sides_b[0]);
        note = Some(format!(
            "Each run has one scope; `{ka}` and `{kb}` were compared with each other."
        ));
        pairs.push((ka.clone(), sa, sb));
    } else {
        for (ka, sa) in &sides_a {
            if let Some((_, sb)) = sides_b.iter().find(|(kb, _)| kb == ka) {
                pairs.push(((*ka).clone(), sa, sb));
            }
        }
    }
    let paired_a: Vec<&str> = pairs.iter().map(|(_, s, _)| s.label.as_str()).collect();
    let paired_b: Vec<&str> = pairs.iter().map(|(_, _, s)| s.label.as_str()).collect();
    let removed = sides_a
        .iter()
        .filter(|(_, s)| !paired_a.contains(&s.label.as_str()))
        .map(|(k, _)| (*k).clone())
        .collect();
    let added = sides_b
        .iter()
        .filter(|(_, s)| !paired_b.contains(&s.label.as_str()))
        .map(|(k, _)| (*k).clone())
        .collect();
    // With one scope on each side the aggregate is that scope again: gating it twice would count
    // every change twice.
    let single = a.scopes.len() == 1 && b.scopes.len() == 1;
    if let (Some(sa), Some(sb), false) = (&a.aggregate, &b.aggregate, single) {
        pairs.push(("aggregate".into(), sa, sb));
    }
    (pairs, added, removed, note)
}

fn scope_diff(
    ra: &RunReport,
    key: &str,
    sa: &input::ScopeSide,
    sb: &input::ScopeSide,
) -> ScopeDiff {
    let time = ra.time_metric.as_deref();
    let mut regions = Vec::new();
    let mut removed = Vec::new();
    for x in &sa.regions {
        let Some(y) = sb.regions.iter().find(|r| r.path == x.path) else {
            removed.push(x.path.clone());
            continue;
        };
        let both = |m: &str| Some(Change::new(x.metric(m)?, y.metric(m)?));
        let per_visit = match (
            x.instances.and_then(|i| i.visits()),
            y.instances.and_then(|i| i.visits()),
        ) {
            (Some(va), Some(vb)) => Some(PerVisit {
                median: Change::new(va.median, vb.median),
                p90: Change::new(va.p90, vb.p90),
                visits: Change::new(va.count as f64, vb.count as f64),
                noise: va.spread,
            }),
            _ => None,
        };
        regions.push(RegionDiff {
            path: x.path.clone(),
            kernel_count: Change::new(x.kernel_count as f64, y.kernel_count as f64),
            time: time.and_then(both),
            per_visit,
            metrics: ra
                .metrics
                .iter()
                .filter_map(|m| {
                    Some(MetricChange {
                        name: m.name.clone(),
                        unit: m.unit.clone(),
                        change: both(&m.name)?,
                    })
                })
                .collect(),
        });
    }
    let added: Vec<String> = sb
        .regions
        .iter()
        .filter(|y| !sa.regions.iter().any(|x| x.path == y.path))
        .map(|y| y.path.clone())
        .collect();
    let mut one_sided = one_sided_of(sb, &added, Side::New);
    one_sided.extend(one_sided_of(sa, &removed, Side::Gone));
    ScopeDiff {
        key: key.to_string(),
        label_a: sa.label.clone(),
        label_b: sb.label.clone(),
        regions,
        added,
        removed,
        one_sided,
    }
}

/// The regions `paths` of `scope` (the side that has them), each with its share of the scope per
/// metric: against the scope's total where the report gives one, else the sum of the top regions.
fn one_sided_of(scope: &input::ScopeSide, paths: &[String], side: Side) -> Vec<OneSided> {
    let listed: Vec<&input::RegionSide> = scope
        .regions
        .iter()
        .filter(|r| paths.contains(&r.path))
        .collect();
    // Each metric's scope total once, not once per region that needs it.
    let mut totals: std::collections::BTreeMap<&str, f64> = std::collections::BTreeMap::new();
    for name in listed.iter().flat_map(|r| r.inclusive.keys()) {
        totals.entry(name.as_str()).or_insert_with(|| {
            let given = scope
                .total
                .as_ref()
                .and_then(|t| t.metrics.get(name))
                .and_then(|v| v.value);
            given.unwrap_or_else(|| {
                scope
                    .regions
                    .iter()
                    .filter(|r| r.parent.is_none())
                    .filter_map(|r| r.metric(name))
                    .sum()
            })
        });
    }
    listed
        .into_iter()
        .map(|r| OneSided {
            path: r.path.clone(),
            side,
            outermost: r.parent.as_ref().is_none_or(|p| !paths.contains(p)),
            share_pct: r
                .inclusive
                .iter()
                .filter_map(|(name, v)| {
                    let total = totals[name.as_str()];
                    let value = v.value?;
                    (total > 0.0).then(|| (name.clone(), value / total * 100.0))
                })
                .collect(),
        })
        .collect()
}
