//! A capture's real timeline, for trace.json: what each traced process did and when (kernels at their
//! start and end on their stream, ranges at their push and pop on their thread), as data the
//! adapter that read the capture fills ([`ProcessTimeline`]), each word held once. Not part of
//! report.json.

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

/// One traced process's timeline as data: its ranges by start, then its kernels in launch order,
/// their words held once each. The adapter that read the capture fills it; trace.json is written
/// from it.
#[derive(Debug, Clone, Default)]
pub struct ProcessTimeline {
    pub process: TimelineProcess,
    words: Vec<Box<str>>,
    word_at: std::collections::HashMap<Box<str>, u32>,
    ranges: Vec<RangeRow>,
    kernels: Vec<KernelRow>,
}

#[derive(Debug, Clone, Copy)]
struct RangeRow {
    thread: u32,
    domain: u32,
    name: u32,
    start: u64,
    end: Option<u64>,
    nested: bool,
}

#[derive(Debug, Clone, Copy)]
struct KernelRow {
    device: u32,
    stream: u32,
    name: u32,
    region: u32,
    launched: u64,
    start: u64,
    end: u64,
    grid: [u32; 3],
    block: [u32; 3],
}

impl ProcessTimeline {
    pub fn new(process: TimelineProcess) -> ProcessTimeline {
        ProcessTimeline {
            process,
            ..ProcessTimeline::default()
        }
    }

    /// Adds one event (ranges before kernels, as a replay hands them over).
    pub fn push(&mut self, event: &TimelineEvent<'_>) {
        match *event {
            TimelineEvent::Range {
                thread,
                domain,
                start,
                end,
                name,
                nested,
            } => {
                let (domain, name) = (self.word(domain), self.word(name));
                self.ranges.push(RangeRow {
                    thread,
                    domain,
                    name,
                    start,
                    end,
                    nested,
                });
            }
            TimelineEvent::Kernel {
                device,
                stream,
                launched,
                start,
                end,
                name,
                region,
                grid,
                block,
            } => {
                let (name, region) = (self.word(name), self.word(region));
                self.kernels.push(KernelRow {
                    device,
                    stream,
                    name,
                    region,
                    launched,
                    start,
                    end,
                    grid,
                    block,
                });
            }
        }
    }

    /// Hands every range, by start, then every kernel, in launch order, to `visit`.
    pub fn replay(&self, visit: &mut dyn FnMut(&TimelineEvent<'_>)) {
        let word = |at: u32| &*self.words[at as usize];
        for r in &self.ranges {
            visit(&TimelineEvent::Range {
                thread: r.thread,
                domain: word(r.domain),
                start: r.start,
                end: r.end,
                name: word(r.name),
                nested: r.nested,
            });
        }
        for k in &self.kernels {
            visit(&TimelineEvent::Kernel {
                device: k.device,
                stream: k.stream,
                launched: k.launched,
                start: k.start,
                end: k.end,
                name: word(k.name),
                region: word(k.region),
                grid: k.grid,
                block: k.block,
            });
        }
    }

    fn word(&mut self, text: &str) -> u32 {
        if let Some(&at) = self.word_at.get(text) {
            return at;
        }
        let at = self.words.len() as u32;
        self.words.push(text.into());
        self.word_at.insert(text.into(), at);
        at
    }
}

/// A real timeline planned for trace.json: each process's events, and what was decided from them
/// (each process's name, clock offset and the cut that keeps the file within `report.trace_events`).
#[derive(Debug, Clone)]
pub struct RealTimeline {
    pub source: Arc<Vec<ProcessTimeline>>,
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
