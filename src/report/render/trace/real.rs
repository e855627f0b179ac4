//! trace.json on real times: one process (track group) per traced process, sorted by rank, holding one
//! track per GPU stream with its kernels at their start and end, and one track per CPU thread with
//! its push/pop ranges nested as they were pushed and popped (start/end ranges as async slices).
//! Written while each process is replayed, one event per line; nothing is held but the ranges open
//! on each thread and the names of the tracks.

use std::collections::BTreeMap;
use std::io::{self, BufWriter, Write};

use serde_json::{json, Value};

use super::plan::{cut_note, Domains};
use crate::region;
use crate::report::model::{PlannedProcess, RealTimeline, Report, TimelineEvent};

/// What a reader of a real trace must know about its timeline.
pub const REAL_NOTE: &str = "Real timeline: every kernel at its start and end on its GPU stream \
    and every NVTX range at its push and pop on its CPU thread, as the trace recorded them; time 0 \
    is the earliest event of any process, and hosts are put on one clock as `clock` says.";

/// The whole trace into `out`.
pub fn write(report: &Report, timeline: &RealTimeline, out: &mut dyn Write) -> io::Result<()> {
    let mut out = BufWriter::with_capacity(1 << 16, out);
    out.write_all(b"{\"traceEvents\": [\n")?;
    let mut events = Events {
        out: &mut out,
        first: true,
        next_tid: 1,
    };
    let mut order: Vec<usize> = (0..timeline.processes.len()).collect();
    order.sort_by_key(|&at| {
        let p = &timeline.processes[at].process;
        (p.rank.is_none(), p.rank, p.host.clone(), p.pid)
    });
    let mut slices = 0;
    let mut shown = Vec::new();
    for at in order {
        let planned = &timeline.processes[at];
        // A process that ran no kernel and pushed no range (a launcher's own) gets no group.
        if planned.devices.is_empty() && planned.last_ns == 0 {
            continue;
        }
        let pid = shown.len() as u64 + 1;
        let mut process = ProcessWriter::new(pid, planned, timeline);
        let mut failed = None;
        timeline.source[at].replay(&mut |event| {
            if failed.is_none() {
                failed = process.event(event, &mut events).err();
            }
        });
        if let Some(err) = failed {
            return Err(err);
        }
        process.metadata(&mut events)?;
        slices += process.slices;
        shown.push(json!({
            "pid": pid,
            "label": planned.label,
            "process_id": planned.process.pid,
            "host": planned.process.host,
            "rank": planned.process.rank,
            "clock_offset_ns": planned.offset_ns,
            "slices": process.slices,
        }));
    }
    let other = json!({
        "generator": report.generator,
        "schema_version": report.schema_version,
        "layout": "real",
        "timeline": REAL_NOTE,
        "clock": timeline.clock,
        "origin_ns": timeline.origin_ns,
        "processes": shown,
        "slices": slices,
        "left_out": timeline.cut.as_ref().map(|cut| json!({
            "bound": cut.bound,
            "slices": cut.total.saturating_sub(slices),
            "before_ns": cut.before_ns.map(|t| t.saturating_sub(timeline.origin_ns)),
            "steps_kept": cut.steps_kept,
            "steps": cut.steps,
            "note": cut_note(cut, timeline.origin_ns),
        })),
    });
    out.write_all(b"],\n\"displayTimeUnit\": \"ns\",\n\"otherData\": ")?;
    serde_json::to_writer(&mut out, &other)?;
    out.write_all(b"}\n")?;
    out.flush()
}

/// Where the events go, comma-separated.
struct Events<'w> {
    out: &'w mut dyn Write,
    first: bool,
    /// Track ids are numbered through the whole file: Perfetto reads them as 32-bit numbers and
    /// may join two processes' tracks of one id.
    next_tid: u64,
}

impl Events<'_> {
    fn push(&mut self, event: &Value) -> io::Result<()> {
        if !self.first {
            self.out.write_all(b",\n")?;
        }
        self.first = false;
        serde_json::to_writer(&mut *self.out, event)?;
        Ok(())
    }
}

/// One process's events, as its replay hands them over.
struct ProcessWriter<'t> {
    pid: u64,
    planned: &'t PlannedProcess,
    origin_ns: i64,
    /// Per thread and domain, the push/pop ranges open there: their end and region path.
    open: BTreeMap<(u32, usize), Vec<(u64, String)>>,
    domains: Domains,
    /// Each track's id and name: streams (`(0, device, stream)`) before threads (`(1, thread,
    /// domain)`), in the order they are shown.
    tracks: BTreeMap<(u8, u32, u32), (u64, String)>,
    slices: u64,
    marks: u64,
}

impl<'t> ProcessWriter<'t> {
    fn new(pid: u64, planned: &'t PlannedProcess, timeline: &RealTimeline) -> Self {
        ProcessWriter {
            pid,
            planned,
            origin_ns: timeline.origin_ns,
            open: BTreeMap::new(),
            domains: Domains::default(),
            tracks: BTreeMap::new(),
            slices: 0,
            marks: 0,
        }
    }

    /// Microseconds since the trace's time 0 of a time on this process's clock.
    fn micros(&self, ns: u64) -> f64 {
        (ns as i64 + self.planned.offset_ns - self.origin_ns) as f64 / 1000.0
    }

    /// Whether an event pushed or launched at `at` is written: before the process's cut, within
    /// its quota.
    fn kept(&self, at: u64) -> bool {
        self.planned.before_ns.is_none_or(|cut| at < cut)
            && self.planned.quota.is_none_or(|q| self.slices < q)
    }

    fn event(&mut self, event: &TimelineEvent<'_>, events: &mut Events<'_>) -> io::Result<()> {
        match *event {
            TimelineEvent::Range {
                thread,
                domain,
                start,
                end,
                name,
                nested,
            } => {
                let end = end.unwrap_or(self.planned.last_ns.max(start));
                let segment = match domain {
                    "" => region::display_of(&[name.to_string()]),
                    _ => format!("{domain}@{}", region::display_of(&[name.to_string()])),
                };
                let track = self.domains.index(domain);
                let path = match nested {
                    true => self.nest((thread, track), start, end, segment),
                    false => segment,
                };
                if !self.kept(start) {
                    return Ok(());
                }
                // Each domain's ranges on a track of their own: two domains' ranges need not nest.
                let tid = self.track((1, thread, track as u32), events, || match domain {
                    "" => format!("thread {thread}"),
                    _ => format!("thread {thread} ({domain})"),
                });
                self.slices += 1;
                match nested {
                    true => events.push(&self.slice(
                        name,
                        "range",
                        (start, end),
                        tid,
                        json!({ "path": path }),
                    )),
                    false => self.mark(name, (start, end), tid, events),
                }
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
                if !self.kept(launched) {
                    return Ok(());
                }
                let tid = self.track((0, device, stream), events, || {
                    format!("GPU {device} stream {stream}")
                });
                self.slices += 1;
                let args = json!({
                    "kernel": name,
                    "region": region,
                    "grid": grid,
                    "block": block,
                    "device": device,
                    "stream": stream,
                });
                let short = region::function_name(name);
                events.push(&self.slice(short, "kernel", (start, end), tid, args))
            }
        }
    }

    /// The id of track `key`, numbered and named when first seen.
    fn track(
        &mut self,
        key: (u8, u32, u32),
        events: &mut Events<'_>,
        name: impl FnOnce() -> String,
    ) -> u64 {
        let (tid, _) = self.tracks.entry(key).or_insert_with(|| {
            events.next_tid += 1;
            (events.next_tid - 1, name())
        });
        *tid
    }

    /// The region path of a push/pop range on `thread`: its name under the ranges still open there.
    fn nest(&mut self, track: (u32, usize), start: u64, end: u64, name: String) -> String {
        let open = self.open.entry(track).or_default();
        while open.last().is_some_and(|(e, _)| *e <= start) {
            open.pop();
        }
        let path = match open.last() {
            Some((_, parent)) => format!("{parent}/{name}"),
            None => name,
        };
        open.push((end, path.clone()));
        path
    }

    /// A start/end range: an async slice, since such ranges may overlap anything on their thread.
    fn mark(
        &mut self,
        name: &str,
        (start, end): (u64, u64),
        tid: u64,
        events: &mut Events<'_>,
    ) -> io::Result<()> {
        self.marks += 1;
        let id = format!("{}.{}", self.pid, self.marks);
        let at = |ph: &str, ns: u64| json!({"name": name, "cat": "mark", "ph": ph, "id": id, "pid": self.pid, "tid": tid, "ts": self.micros(ns)});
        events.push(&at("b", start))?;
        events.push(&at("e", end))
    }

    fn slice(
        &self,
        name: &str,
        cat: &str,
        (start, end): (u64, u64),
        tid: u64,
        args: Value,
    ) -> Value {
        json!({
            "name": name,
            "cat": cat,
            "ph": "X",
            "pid": self.pid,
            "tid": tid,
            "ts": self.micros(start),
            "dur": end.saturating_sub(start) as f64 / 1000.0,
            "args": args,
        })
    }

    /// The process's and its tracks' names and order.
    fn metadata(&self, events: &mut Events<'_>) -> io::Result<()> {
        let pid = self.pid;
        let meta = |name: &str, tid: u64, args: Value| json!({"name": name, "ph": "M", "pid": pid, "tid": tid, "args": args});
        events.push(&meta(
            "process_name",
            0,
            json!({"name": self.planned.label}),
        ))?;
        events.push(&meta("process_sort_index", 0, json!({"sort_index": pid})))?;
        let offset = match self.planned.offset_ns {
            0 => "real timeline".to_string(),
            ns => format!("real timeline, clock shifted {ns:+} ns"),
        };
        events.push(&meta("process_labels", 0, json!({"labels": offset})))?;
        for (order, (tid, name)) in self.tracks.values().enumerate() {
            events.push(&meta("thread_name", *tid, json!({"name": name})))?;
            events.push(&meta(
                "thread_sort_index",
                *tid,
                json!({"sort_index": order}),
            ))?;
        }
        Ok(())
    }
}
