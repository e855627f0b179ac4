//! report.html's opening for one scope: where the time goes and what would save the most (the scope's
//! `summary`), as text ready for the template, linked to the region sections.

use std::collections::HashMap;

use serde::Serialize;

use crate::report::format;
use crate::report::model::{Idle, ScopeSummary};

#[derive(Serialize)]
pub struct Glance {
    /// How busy the device was and its longest gap, where the profile has a device timeline.
    pub busy: Option<String>,
    pub total: String,
    pub regions: Vec<GlanceRow>,
    pub kernels: Vec<GlanceRow>,
    pub insights: Vec<GlanceInsight>,
    /// Findings whose kernels all count under a better one: `rule (source) in region: …`.
    pub overlapping: Vec<String>,
    /// Findings with no estimate, and why.
    pub not_quantified: Vec<String>,
    /// Start/end ranges left out of the region list because they overlap it.
    pub overlapping_regions: Option<String>,
}

#[derive(Serialize)]
pub struct GlanceRow {
    pub name: String,
    /// The full path or kernel name, for the tooltip.
    pub title: String,
    pub anchor: Option<String>,
    /// For a kernel: the region that runs most of it, and that region's section.
    pub home: Option<String>,
    pub home_anchor: Option<String>,
    pub count: String,
    pub time: String,
    pub share: String,
}

#[derive(Serialize)]
pub struct GlanceInsight {
    pub rule: String,
    pub source: String,
    pub region: String,
    pub anchor: Option<String>,
    pub saves: String,
    /// `of 89.02 µs; the rest counts under …` when some of its kernels count under another finding.
    pub overlap: Option<String>,
    pub share: String,
    /// `train_step/backward (90 µs)`: the nested region holding most of the saving.
    pub mostly_in: Option<String>,
    pub mostly_in_anchor: Option<String>,
    pub speedup: String,
    pub message: String,
}

/// `anchors`: each shown region's section anchor, by path; `unit`: the time metric's unit.
pub fn glance(
    summary: &ScopeSummary,
    idle: Option<&Idle>,
    anchors: &HashMap<&str, String>,
    unit: &str,
) -> Option<Glance> {
    let total = summary.time?;
    Some(Glance {
        busy: idle.and_then(Idle::headline),
        total: format::value(Some(total), unit),
        regions: summary
            .top_regions
            .iter()
            .map(|r| GlanceRow {
                name: format::shorten(&r.path, 100),
                title: r.path.clone(),
                anchor: anchors.get(r.path.as_str()).cloned(),
                home: None,
                home_anchor: None,
                count: String::new(),
                time: format::value(Some(r.self_time), unit),
                share: format::share(r.self_time_share),
            })
            .collect(),
        kernels: summary
            .top_kernels
            .iter()
            .map(|k| GlanceRow {
                name: if k.variants > 1 {
                    format!(
                        "{} ({} variants)",
                        format::shorten(&k.function, 80),
                        format::count(k.variants as f64)
                    )
                } else {
                    format::shorten(&k.function, 80)
                },
                title: k.name.clone(),
                anchor: None,
                home: k.mostly_in.as_deref().map(|p| format::shorten(p, 100)),
                home_anchor: k.mostly_in.as_deref().and_then(|p| anchors.get(p).cloned()),
                count: format::count(k.count as f64),
                time: format::value(Some(k.time), unit),
                share: format::share(k.time_share),
            })
            .collect(),
        insights: summary
            .top_insights
            .iter()
            .map(|i| GlanceInsight {
                rule: i.rule.clone(),
                source: i.source.clone(),
                region: format::shorten(&i.region, 100),
                anchor: anchors.get(i.region.as_str()).cloned(),
                saves: format::value(Some(i.estimated_saving_ns), "ns"),
                overlap: (!i.overlaps.is_empty()).then(|| {
                    format!(
                        "of {}; the rest counts under {}",
                        format::value(Some(i.own_saving_ns), "ns"),
                        i.overlaps.join(", ")
                    )
                }),
                share: format::share(i.saving_share),
                mostly_in: i.mostly_in.as_ref().map(|p| {
                    format!(
                        "{} ({})",
                        format::shorten(p, 100),
                        format::value(i.mostly_in_saving_ns, "ns")
                    )
                }),
                mostly_in_anchor: i.mostly_in.as_deref().and_then(|p| anchors.get(p).cloned()),
                speedup: format::value(i.estimated_speedup, "%"),
                message: format::shorten(&i.message, 240),
            })
            .collect(),
        overlapping: overlapping(summary),
        not_quantified: not_quantified(summary),
        overlapping_regions: overlapping_regions(summary, unit),
    })
}

/// `rule (source) in region: 245.88 µs, counted under …` for each overlapping finding.
fn overlapping(summary: &ScopeSummary) -> Vec<String> {
    summary
        .overlapping
        .iter()
        .map(|i| {
            format!(
                "{} ({}) in {}: {}, counted under {}",
                i.rule,
                i.source,
                format::shorten(&i.region, 100),
                format::value(Some(i.own_saving_ns), "ns"),
                i.overlaps.join(", ")
            )
        })
        .collect()
}

/// `rule (source) in region: reason` for each finding without an estimate.
fn not_quantified(summary: &ScopeSummary) -> Vec<String> {
    summary
        .not_quantified
        .iter()
        .map(|n| {
            let region = format::shorten(&n.region, 100);
            format!("{} ({}) in {region}: {}", n.rule, n.source, n.reason)
        })
        .collect()
}

/// The sentence naming the start/end ranges the region list leaves out, if any.
fn overlapping_regions(summary: &ScopeSummary, unit: &str) -> Option<String> {
    if summary.overlapping_regions.is_empty() {
        return None;
    }
    let listed: Vec<String> = summary
        .overlapping_regions
        .iter()
        .map(|r| {
            format!(
                "{} ({}, {} of the scope)",
                format::shorten(&r.path, 100),
                format::value(Some(r.self_time), unit),
                format::share(r.self_time_share)
            )
        })
        .collect();
    Some(format!(
        "Start/end ranges overlap the ranges above in time, so they are not in that list and their \
         shares do not add up with them: {}.",
        listed.join(", ")
    ))
}
