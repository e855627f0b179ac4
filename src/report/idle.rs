//! Where a device sat idle: a scope's or region's active and idle time and its largest gaps, with
//! what comes before and after each gap and what waits in it. Filled by profilers whose profiles
//! hold a device timeline; `null` for the others.

use serde::Serialize;

use crate::report::format::value;

/// Active and idle time over a window, and the largest gaps in it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Idle {
    /// The window's length, in ns.
    pub window_ns: f64,
    /// Time in which an engine ran a busy instruction or a DMA queue moved data, in ns (waits on a
    /// semaphore are not busy).
    pub active_ns: f64,
    /// `window_ns - active_ns`, in ns.
    pub idle_ns: f64,
    /// `active_ns / window_ns`, 0..1 (`null` for an empty window).
    pub busy_share: Option<f64>,
    /// The spans in which no engine ran a busy instruction, longest first (at most three).
    pub gaps: Vec<Gap>,
}

/// A span in which no engine ran a busy instruction.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Gap {
    /// Where it starts, in ns from the profile start.
    pub start_ns: u64,
    /// Its length, in ns.
    pub length_ns: u64,
    /// The last thing to end at or before its start (`Tensor MATMUL`, `DMA qSyncSpillReload0`,
    /// `collective AllReduce`), `null` at the start of the profile.
    pub before: Option<String>,
    /// The next thing to start at or after its end, `null` at the end of the profile.
    pub after: Option<String>,
    /// What waits through it: the engines and opcodes of the waits that overlap it
    /// (`Vector EVENT_SEMAPHORE`).
    pub waiting: Vec<String>,
    /// The DMA queues that move data during it.
    pub dma_queues: Vec<String>,
    /// Time in it during which a DMA queue moved data, in ns.
    pub dma_active_ns: u64,
    /// The collectives that run during it.
    pub collectives: Vec<String>,
}

impl Idle {
    /// The line a scope's summary opens with: how busy the device was over the window, and the
    /// longest gap with what waits in it (`None` for an empty window).
    pub fn headline(&self) -> Option<String> {
        let share = self.busy_share?;
        let ns = |v: f64| value(Some(v), "ns");
        let mut line = format!(
            "The device was busy {} of the {} window ({} active, {} idle)",
            value(Some(share * 100.0), "%"),
            ns(self.window_ns),
            ns(self.active_ns),
            ns(self.idle_ns)
        );
        if let Some(gap) = self.gaps.first() {
            line.push_str(&format!(
                "; its longest gap, {} from {}",
                ns(gap.length_ns as f64),
                ns(gap.start_ns as f64)
            ));
            if !gap.waiting.is_empty() {
                line.push_str(&format!(", has {} waiting", gap.waiting.join(", ")));
            }
        }
        line.push('.');
        Some(line)
    }

    /// Whether most of the window is idle: the finding about the gap then comes first.
    pub fn mostly_idle(&self) -> bool {
        self.busy_share.is_some_and(|s| s < 0.5)
    }
}
