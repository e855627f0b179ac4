//! report.html's view of where the device sat idle (a scope's or region's `idle`): the active and idle
//! time, and the largest gaps with what comes before and after and what waits in them, as text.

use serde::Serialize;

use crate::report::format::value;
use crate::report::model::Idle;

#[derive(Serialize)]
pub(super) struct IdleView {
    pub line: String,
    pub gaps: Vec<GapRow>,
}

#[derive(Serialize)]
pub(super) struct GapRow {
    pub start: String,
    pub length: String,
    pub before: String,
    pub after: String,
    pub waiting: String,
    pub dma: String,
    pub collectives: String,
}

pub(super) fn view(idle: &Idle) -> IdleView {
    let ns = |v: f64| value(Some(v), "ns");
    let or_none = |list: &[String]| {
        if list.is_empty() {
            "—".to_string()
        } else {
            list.join(", ")
        }
    };
    IdleView {
        line: format!(
            "Busy {} of {}: {} active (an engine running a busy instruction or a DMA queue moving data; semaphore waits are waiting), {} idle.",
            value(idle.busy_share.map(|s| s * 100.0), "%"),
            ns(idle.window_ns),
            ns(idle.active_ns),
            ns(idle.idle_ns)
        ),
        gaps: idle
            .gaps
            .iter()
            .map(|g| GapRow {
                start: ns(g.start_ns as f64),
                length: ns(g.length_ns as f64),
                before: g.before.clone().unwrap_or_else(|| "—".into()),
                after: g.after.clone().unwrap_or_else(|| "—".into()),
                waiting: or_none(&g.waiting),
                dma: if g.dma_queues.is_empty() {
                    "—".to_string()
                } else {
                    format!("{} ({})", g.dma_queues.join(", "), ns(g.dma_active_ns as f64))
                },
                collectives: or_none(&g.collectives),
            })
            .collect(),
    }
}
