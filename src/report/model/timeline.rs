//! A capture's real timeline, for trace.json: what each traced process did and when (kernels at their
//! start and end on their stream, ranges at their push and pop on their thread). The adapter that
//! read the capture hands over a [`TimelineSource`] that replays one process at a time, so trace.json
//! is written as it is read and no copy of every kernel is held beside the one the reader holds.
//! Not part of report.json.

use std::fmt::Debug;
use std::sync::Arc;

/// One traced process, as its trace names it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TimelineProcess {
    /// The launcher rank (`None`: no launcher set one).
    pub rank: Option<u32>,
    pub host: String,
    pub pid: u32,
}

/// One event of a process's timeline. Times in ns on the process's own clock.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum TimelineEvent<'a> {
    /// A range on a CPU thread: push/pop ranges nest on their thread within their domain (`""`: the
    /// default one), start/end ranges (`nested` false) may overlap anything. `end` is `None` for a
    /// range that never ended.
    Range {
        thread: u32,
        domain: &'a str,
        start: u64,
        end: Option<u64>,
        name: &'a str,
        nested: bool,
    },
    /// A kernel on a device's stream, with the region path the report gives it (`""`: outside
    /// every range) and its name as the report shows it.
    Kernel {
        device: u32,
        stream: u32,
        /// When the API call that launched it started (its start where the trace lacks the call):
        /// the step it belongs to is the one open then.
        launched: u64,
        start: u64,
        end: u64,
        name: &'a str,
        region: &'a str,
        grid: [u32; 3],
        block: [u32; 3],
    },
}

/// Replays a capture's processes. Each replay hands over every range of the process, by start, and
/// then every kernel, in launch order.
pub trait TimelineSource: Debug + Send + Sync {
    /// How many processes the capture holds.
    fn len(&self) -> usize;

    /// Whether the capture holds no process.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Replays process `at` into `visit` and says whose it was; an error names the file that could
    /// not be read again (the adapter's own error inside).
    fn replay(
        &self,
        at: usize,
        visit: &mut dyn FnMut(&TimelineEvent<'_>),
    ) -> std::io::Result<TimelineProcess>;
}

/// A real timeline planned for trace.json: the source, and what was decided from a first replay
/// (each process's name, clock offset and the cut that keeps the file within `report.trace_events`).
#[derive(Debug, Clone)]
pub struct RealTimeline {
    pub source: Arc<dyn TimelineSource>,
    /// One per process of the source, in the source's order.
    pub processes: Vec<PlannedProcess>,
    /// The earliest aligned time of any event: trace.json's time 0, in ns.
    pub origin_ns: i64,
    /// How the clocks of several hosts were put on one time line.
    pub clock: String,
    /// What was left out to keep within the bound (`None`: everything is written).
    pub cut: Option<TimelineCut>,
}

/// A process of a planned timeline.
#[derive(Debug, Clone, PartialEq)]
pub struct PlannedProcess {
    pub process: TimelineProcess,
    /// `rank 2 (host-a, GPU 2)`, or `pid 4242 (host-a, GPU 0)` with no rank.
    pub label: String,
    /// Devices its kernels ran on, ascending.
    pub devices: Vec<u32>,
    /// Added to its times to put them on the first host's clock, in ns.
    pub offset_ns: i64,
    /// The latest time of any of its events, on its own clock: where a range that never ended ends.
    pub last_ns: u64,
    /// Only what was pushed or launched before this time on its own clock is written (`None`: no
    /// cut), in ns: the end of its last step before the cut.
    pub before_ns: Option<u64>,
    /// Slices written at most (`None`: all those before the cut). Set only when even the first step
    /// holds more slices than the bound.
    pub quota: Option<u64>,
}

/// What the bound left out of trace.json.
#[derive(Debug, Clone, PartialEq)]
pub struct TimelineCut {
    /// `report.trace_events`.
    pub bound: u64,
    /// Each process keeps its steps that end by this aligned time, in ns (`None`: not even one step
    /// fits, or there is none, and each process keeps an equal share of its first slices).
    pub before_ns: Option<i64>,
    /// Slices in the capture.
    pub total: u64,
    /// Top-level ranges (steps) that end before the cut, summed over processes, and all of them.
    pub steps_kept: u64,
    pub steps: u64,
}
