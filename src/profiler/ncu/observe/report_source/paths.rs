//! A result's NVTX state as region paths, the way the CSV reader reads the same cells
//! (`export::nvtx_cell`): names (or messages, or `<unnamed>`) renamed, other domains' segments
//! prefixed `domain@`, every listed thread's stack chained per domain, start/end ranges as marks; and
//! its rule results as advice rows.

use crate::profiler::ncu::readers::export::details::Advice;
use crate::profiler::ncu::readers::export::nvtx_cell::{path_segment, DEFAULT_DOMAIN, UNNAMED};
use crate::profiler::ncu::readers::report_file::{NvtxRange, NvtxState, RuleResult};
use crate::region::{RegionKind, Renames};

/// A range's name as the CSV cell gives it: the name, else its message, else `<unnamed>`; renamed.
fn range_name(range: &NvtxRange, renames: &Renames) -> String {
    let message = || {
        range
            .attributes
            .as_ref()
            .and_then(|a| a.message.as_ref())
            .and_then(|m| m.text.as_deref())
            .filter(|t| !t.is_empty() && *t != "none")
    };
    let name = if range.name.is_empty() || range.name == "none" {
        message().unwrap_or(UNNAMED)
    } else {
        range.name.as_str()
    };
    renames.apply(name).into_owned()
}

fn segment(domain: &str, name: String) -> String {
    path_segment(domain, &name)
}

/// One path per NVTX domain (the default domain's first, then others in order of appearance), each
/// chaining the stacks of every thread with an open range in file order, with the ranges' instance
/// ids alongside (docs/attribution.md, "Several threads in one cell"). A capture whose push/pop
/// ranges ncu tracked per thread (its default scope) records the other threads' stacks too, but a
/// result carries only those of `launching`, the thread that launched it, as ncu's own filter and
/// pages take them.
pub(super) fn stacks_of(
    state: &NvtxState,
    launching: u32,
    renames: &Renames,
) -> (Vec<Vec<String>>, Vec<Vec<u64>>) {
    let mut stacks = vec![Vec::new()];
    let mut ids = vec![Vec::new()];
    let mut domains: Vec<&str> = Vec::new();
    let threads = state
        .threads
        .iter()
        .filter(|t| t.has_ranges() && (state.process_scope || t.tid == launching));
    for thread in threads {
        for domain in &thread.domains {
            if domain.stack.is_empty() {
                continue;
            }
            let at = if domain.domain == DEFAULT_DOMAIN {
                0
            } else if let Some(i) = domains.iter().position(|d| *d == domain.domain) {
                i + 1
            } else {
                domains.push(&domain.domain);
                stacks.push(Vec::new());
                ids.push(Vec::new());
                domains.len()
            };
            for range in &domain.stack {
                stacks[at].push(segment(&domain.domain, range_name(range, renames)));
                ids[at].push(range.id);
            }
        }
    }
    (stacks, ids)
}

/// The open start/end ranges, in file order (as the start/end cell lists them), renamed.
pub(super) fn marks_of(state: &NvtxState, renames: &Renames) -> Vec<String> {
    state
        .start_end
        .iter()
        .map(|r| {
            let name = if r.name.is_empty() || r.name == "none" {
                UNNAMED
            } else {
                r.name.as_str()
            };
            segment(&r.domain, renames.apply(name).into_owned())
        })
        .collect()
}

/// Every region a result belongs to: each prefix of each stack path, and each mark once.
pub(super) fn regions_of(
    stacks: &[Vec<String>],
    marks: &[String],
) -> Vec<(RegionKind, Vec<String>)> {
    let mut regions = Vec::new();
    for path in stacks {
        for depth in 1..=path.len() {
            regions.push((RegionKind::Stack, path[..depth].to_vec()));
        }
    }
    for mark in marks {
        let region = (RegionKind::Mark, vec![mark.clone()]);
        if !regions.contains(&region) {
            regions.push(region);
        }
    }
    regions
}

/// One advice row per rule message, as the details page lists them.
pub(super) fn advice_of(rules: &[RuleResult]) -> Vec<Advice> {
    let mut out = Vec::new();
    for rule in rules {
        for message in &rule.messages {
            out.push(Advice {
                source: "ncu".into(),
                rule: rule.identifier.clone(),
                kind: message.severity.csv_label().to_string(),
                section: rule.section.clone().unwrap_or_default(),
                description: message.plain_text().trim().to_string(),
                kernel: String::new(),
                results: 1,
                time: 0.0,
                estimated_speedup: message.speedup.map(|s| s.value),
                speedup_type: message
                    .speedup
                    .map(|s| s.kind.csv_label().to_string())
                    .filter(|t| !t.is_empty()),
            });
        }
    }
    out
}
