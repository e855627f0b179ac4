//! The summary's findings, with savings that add up: a kernel's time is saved once, under the best
//! finding for it; a finding whose kernels all count under better ones is listed as overlapping, and
//! one with no estimate as not quantified, with the reason.

use std::collections::{BTreeSet, HashMap};

use crate::region::RegionKind;
use crate::report::model::{Insight, NotQuantified, Region, Scope, SummaryInsight};

use super::TOP;

/// The label a finding's saving formula carries when it removes launches: on the kernels it covers,
/// it goes before every other finding (a larger grid cannot make a launch-bound kernel shorter than
/// its launch).
const LAUNCH_FORMULA: (&str, &str) = ("saving_formula", "launch_overhead");

/// The summary's findings with a saving: counted (some kernel's time is theirs) and overlapping
/// (every kernel counted under a better one).
pub struct Findings {
    pub counted: Vec<SummaryInsight>,
    pub overlapping: Vec<SummaryInsight>,
}

/// One finding listed once for its rule (the regions around and inside it hold the same time).
struct Candidate<'a> {
    region: &'a Region,
    insight: &'a Insight,
    saving: f64,
    counted: f64,
    overlaps: BTreeSet<String>,
}

/// A share of a candidate's saving: the time it saves on one kernel (`None`: on the region as a
/// whole, for a finding without a breakdown).
struct Claim<'a> {
    candidate: usize,
    kernel: Option<&'a str>,
    saving: f64,
    launch: bool,
}

/// Counts each kernel under its best finding, scope-wide; see [`Findings`].
pub fn allocate(scope: &Scope, share: &dyn Fn(f64) -> Option<f64>) -> Findings {
    let mut candidates = candidates(scope);
    let claims = claims(&candidates);
    count_claims(&mut candidates, &claims);
    let mut counted: Vec<SummaryInsight> = Vec::new();
    let mut overlapping: Vec<SummaryInsight> = Vec::new();
    for c in &candidates {
        let entry = entry(scope, c, share);
        if c.counted > 0.0 {
            counted.push(entry);
        } else {
            overlapping.push(entry);
        }
    }
    counted.sort_by(|a, b| b.estimated_saving_ns.total_cmp(&a.estimated_saving_ns));
    counted.truncate(TOP);
    overlapping.sort_by(|a, b| b.own_saving_ns.total_cmp(&a.own_saving_ns));
    overlapping.truncate(TOP);
    Findings {
        counted,
        overlapping,
    }
}

/// Every candidate's claims (one per kernel of its breakdown, else one on its whole region), in
/// the order they are counted: launch savings first, then the largest saving.
fn claims<'a>(candidates: &[Candidate<'a>]) -> Vec<Claim<'a>> {
    let mut claims: Vec<Claim> = Vec::new();
    for (n, c) in candidates.iter().enumerate() {
        let labels = &c.insight.evidence.labels;
        let launch = labels.get(LAUNCH_FORMULA.0).map(String::as_str) == Some(LAUNCH_FORMULA.1);
        if c.insight.saving_by_kernel.is_empty() {
            claims.push(Claim {
                candidate: n,
                kernel: None,
                saving: c.saving,
                launch,
            });
        }
        for (kernel, saving) in &c.insight.saving_by_kernel {
            claims.push(Claim {
                candidate: n,
                kernel: Some(kernel),
                saving: *saving,
                launch,
            });
        }
    }
    claims.sort_by(|a, b| {
        b.launch
            .cmp(&a.launch)
            .then(b.saving.total_cmp(&a.saving))
            .then(a.candidate.cmp(&b.candidate))
    });
    claims
}

/// Counts each claim to its candidate unless an earlier claim on the same time (the same kernel,
/// or a whole region, in an overlapping region) holds it; then the holder is named as an overlap.
fn count_claims(candidates: &mut [Candidate<'_>], claims: &[Claim<'_>]) {
    // Claims already counted, by kernel (`None`: a whole region's), so each claim is checked only
    // against those that could hold the same time.
    let mut taken: HashMap<Option<&str>, Vec<&Claim>> = HashMap::new();
    for claim in claims {
        let region = candidates[claim.candidate].region;
        let rivals = match claim.kernel {
            Some(_) => [claim.kernel, None]
                .iter()
                .filter_map(|k| taken.get(k))
                .flatten()
                .copied()
                .collect::<Vec<&Claim>>(),
            None => taken.values().flatten().copied().collect(),
        };
        let holder = rivals
            .into_iter()
            .find(|t| overlap(candidates[t.candidate].region, region));
        match holder {
            None => {
                candidates[claim.candidate].counted += claim.saving;
                taken.entry(claim.kernel).or_default().push(claim);
            }
            Some(t) if t.candidate != claim.candidate => {
                let by = candidates[t.candidate].insight;
                let label = format!("{}:{}", by.source, by.rule);
                candidates[claim.candidate].overlaps.insert(label);
            }
            Some(_) => {}
        }
    }
}

/// Findings with an estimated saving, largest first. A rule fires in a region and in every region
/// around it: once it is listed for a region, the regions nested in it or around it are not listed
/// again for it (their time is the same time); among equal savings the innermost region is named.
fn candidates(scope: &Scope) -> Vec<Candidate<'_>> {
    let mut all: Vec<(&Region, &Insight, f64)> = scope
        .regions
        .iter()
        .flat_map(|r| {
            r.insights
                .iter()
                .filter_map(move |i| Some((r, i, i.estimated_saving_ns.filter(|s| *s > 0.0)?)))
        })
        .collect();
    all.sort_by(|a, b| {
        b.2.total_cmp(&a.2)
            .then(b.0.depth.cmp(&a.0.depth))
            .then(a.0.path.cmp(&b.0.path))
    });
    let mut out: Vec<Candidate> = Vec::new();
    for (region, insight, saving) in all {
        let listed = out.iter().any(|c| {
            c.insight.source == insight.source
                && c.insight.rule == insight.rule
                && overlap(region, c.region)
        });
        if !listed {
            out.push(Candidate {
                region,
                insight,
                saving,
                counted: 0.0,
                overlaps: BTreeSet::new(),
            });
        }
    }
    out
}

fn entry(scope: &Scope, c: &Candidate, share: &dyn Fn(f64) -> Option<f64>) -> SummaryInsight {
    let (source, rule) = (c.insight.source.as_str(), c.insight.rule.as_str());
    let focus = mostly_in(scope, c.region, source, rule, c.saving);
    SummaryInsight {
        mostly_in: focus.map(|(r, _)| r.path.clone()),
        mostly_in_saving_ns: focus.map(|(_, s)| s),
        region: c.region.path.clone(),
        source: source.to_string(),
        rule: rule.to_string(),
        severity: c.insight.severity,
        message: c.insight.message.clone(),
        action: c.insight.action.clone(),
        kernel: c.insight.evidence.kernel.clone(),
        estimated_speedup: c.insight.estimated_speedup,
        estimated_saving_ns: c.counted,
        own_saving_ns: c.saving,
        overlaps: c.overlaps.iter().cloned().collect(),
        saving_share: share(c.counted),
    }
}

/// Findings that fired but estimate no saving, one per (source, rule) from its outermost region,
/// the ones covering the most time first; information is left out.
pub fn not_quantified(scope: &Scope) -> Vec<NotQuantified> {
    let mut all: Vec<(&Region, &Insight)> = scope
        .regions
        .iter()
        .flat_map(|r| r.insights.iter().map(move |i| (r, i)))
        .filter(|(_, i)| i.estimated_saving_ns.is_none_or(|s| s <= 0.0))
        .filter(|(_, i)| i.not_quantified.is_some())
        .collect();
    all.sort_by(|a, b| {
        b.1.evidence
            .time
            .total_cmp(&a.1.evidence.time)
            .then(a.0.depth.cmp(&b.0.depth))
            .then(a.0.path.cmp(&b.0.path))
    });
    let mut out: Vec<NotQuantified> = Vec::new();
    for (region, insight) in all {
        if out
            .iter()
            .any(|n| n.source == insight.source && n.rule == insight.rule)
        {
            continue;
        }
        out.push(NotQuantified {
            region: region.path.clone(),
            source: insight.source.clone(),
            rule: insight.rule.clone(),
            message: insight.message.clone(),
            reason: insight.not_quantified.clone().unwrap_or_default(),
        });
    }
    out.truncate(TOP);
    out
}

/// The innermost region nested in `outer` where the same rule saves at least half of `saving`.
fn mostly_in<'a>(
    scope: &'a Scope,
    outer: &Region,
    source: &str,
    rule: &str,
    saving: f64,
) -> Option<(&'a Region, f64)> {
    scope
        .regions
        .iter()
        .filter(|r| r.depth > outer.depth && r.kind == outer.kind && nested(outer, r))
        .filter_map(|r| {
            let s = r
                .insights
                .iter()
                .find(|i| i.source == source && i.rule == rule)?
                .estimated_saving_ns?;
            (s >= saving / 2.0).then_some((r, s))
        })
        .max_by(|a, b| a.0.depth.cmp(&b.0.depth).then(a.1.total_cmp(&b.1)))
}

/// Whether the results of two regions may overlap: one holds the other, either is a start/end range
/// (those may overlap anything), or they belong to different range domains (each domain is a stack
/// of its own, so a result sits in one region of each).
fn overlap(a: &Region, b: &Region) -> bool {
    if a.kind != RegionKind::Stack || b.kind != RegionKind::Stack {
        return true;
    }
    let domain_a = a.segments.first().map_or("", |s| domain_of(s));
    let domain_b = b.segments.first().map_or("", |s| domain_of(s));
    domain_a != domain_b || nested(a, b)
}

/// One region's path is a prefix of the other's (or they are the same region).
fn nested(a: &Region, b: &Region) -> bool {
    let prefix = |outer: &Region, inner: &Region| {
        outer.segments.len() <= inner.segments.len()
            && inner.segments[..outer.segments.len()] == outer.segments[..]
    };
    prefix(a, b) || prefix(b, a)
}

/// The range domain of a top-level segment: the part before an unescaped `@` (`NCCL@init` → `NCCL`),
/// empty for the default domain (a default-domain range named `a@x` is written `a\@x`).
fn domain_of(segment: &str) -> &str {
    let bytes = segment.as_bytes();
    for (i, b) in bytes.iter().enumerate() {
        if *b == b'@' && (i == 0 || bytes[i - 1] != b'\\') {
            return &segment[..i];
        }
    }
    ""
}
