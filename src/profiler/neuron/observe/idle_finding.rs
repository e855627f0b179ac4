//! The finding a mostly idle region or scope opens with: how much of its time nothing ran, and what
//! its longest gap waits on where the profile says (semaphore waits by engine, DMA queues moving
//! data, collectives), with what comes before and after it.

use std::collections::BTreeMap;

use crate::report::format::value;
use crate::report::model::{Evidence, Idle, Insight, Severity};

/// The rule's name in report.json and the tables.
pub const RULE: &str = "device_idle";

/// The idle finding for `idle` (the caller checks that it is mostly idle).
pub fn finding(idle: &Idle) -> Insight {
    let idle_share = idle.busy_share.map(|b| (1.0 - b) * 100.0);
    let mut message = format!(
        "Idle {} of the time ({} of {})",
        value(idle_share, "%"),
        value(Some(idle.idle_ns), "ns"),
        value(Some(idle.window_ns), "ns"),
    );
    if let Some(gap) = idle.gaps.first() {
        message.push_str(&format!(
            "; longest gap {} at {}",
            value(Some(gap.length_ns as f64), "ns"),
            value(Some(gap.start_ns as f64), "ns"),
        ));
        let mut on = Vec::new();
        if !gap.waiting.is_empty() {
            on.push(format!("waiting: {}", gap.waiting.join(", ")));
        }
        if !gap.dma_queues.is_empty() {
            on.push(format!(
                "DMA queues {} move data {} of it",
                gap.dma_queues.join(", "),
                value(Some(gap.dma_active_ns as f64), "ns")
            ));
        }
        if !gap.collectives.is_empty() {
            on.push(format!(
                "collectives running: {}",
                gap.collectives.join(", ")
            ));
        }
        if on.is_empty() {
            on.push(
                "nothing the profile records waits in it (the host, or the end of the run)"
                    .to_string(),
            );
        }
        message.push_str(&format!(": {}", on.join("; ")));
        if let Some(before) = &gap.before {
            message.push_str(&format!("; before it: {before}"));
        }
        if let Some(after) = &gap.after {
            message.push_str(&format!("; after it: {after}"));
        }
    }
    let mut metrics = BTreeMap::new();
    if let Some(share) = idle.busy_share {
        metrics.insert("active_time_percent".to_string(), share * 100.0);
    }
    Insight {
        source: "profile-run".to_string(),
        rule: RULE.to_string(),
        severity: Severity::Warning,
        message,
        cause: Some(
            "No engine runs a busy instruction in the gaps: the engines wait (semaphore waits are \
             waiting, not work) for data, another engine, a collective or the host."
                .to_string(),
        ),
        action: Some(
            "Find what the gap waits for and give the device work meanwhile: overlap the DMA or \
             collective it waits on with compute, batch more work per launch, or profile a later \
             execution (--profile-nth-exec) if this one carries start-up."
                .to_string(),
        ),
        estimated_speedup: None,
        estimated_saving_ns: None,
        saving_by_kernel: BTreeMap::new(),
        not_quantified: Some("what would fill the gap lies outside the profile".to_string()),
        evidence: Evidence {
            results: 0,
            time: idle.idle_ns,
            kernel: None,
            labels: BTreeMap::new(),
            metrics,
        },
    }
}
