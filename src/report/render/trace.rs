//! trace.json: the report as Chrome trace-event JSON (opens in ui.perfetto.dev and chrome://tracing).
//! One process per scope; region slices nested by depth with the kernels that ran directly in a region
//! inside its self time. The report holds aggregates, not per-launch timestamps, so the timeline is
//! synthetic ([`layout`](super::layout)): durations are real, positions are not. The trace says so in
//! its `otherData` and in each process's label.
//!
//! Where the capture holds real times (a CUPTI trace: `report.timeline`), trace.json lays them out
//! instead ([`real`], planned by [`plan`]): one track group per rank on one clock. `otherData.layout`
//! says which layout a file holds (`real` or `synthetic`).
//!
//! Floor: report (see `crate::report`): imports config, region and the ground floor only.

mod plan;
mod real;

pub use plan::{attach, cut_note};
pub use real::REAL_NOTE;

use std::collections::HashMap;
use std::io::Write;
use std::path::PathBuf;

use serde_json::{json, Map, Value};

use super::layout::{self, time_of, Lane};
use crate::region;
use crate::region::RegionKind;
use crate::report::format;
use crate::report::model::{MetricMap, Region, Report, Scope};
use crate::report::RenderError;

/// What a reader of the trace must know about its timeline.
pub const TIMELINE_NOTE: &str = "Synthetic timeline: the report holds per-region aggregates, not \
    per-launch timestamps. Each region is one slice as long as its inclusive time; nested regions lie \
    end to end from their parent's start in program order, then the parent's self time holds the \
    kernels that ran directly in it (one slice per kernel name, all its launches together). \
    Durations are measured; start times are not.";

/// The default domain's regions and what ran outside every region.
const REGION_TID: u64 = 1;
/// Flat start/end ranges; other domains' trees get 3, 4, … in order of appearance.
const MARK_TID: u64 = 2;

pub struct Trace;

impl super::Output for Trace {
    fn file_name(&self) -> &'static str {
        "trace.json"
    }

    fn render(
        &self,
        report: &Report,
        out: &mut dyn Write,
    ) -> Result<Vec<(PathBuf, Vec<u8>)>, RenderError> {
        let written = match &report.timeline {
            Some(timeline) => real::write(report, timeline, out),
            None => out.write_all(to_trace(report).as_bytes()),
        };
        written.map_err(|source| RenderError::Write {
            path: "trace.json".into(),
            source,
        })?;
        Ok(Vec::new())
    }
}

/// The whole synthetic trace: one event per line, so the file diffs and greps well.
pub fn to_trace(report: &Report) -> String {
    let mut events = Vec::new();
    if let Some(time) = report.time_metric.as_deref() {
        let unit = report
            .metrics
            .iter()
            .find(|m| m.name == time)
            .map_or("ns", |m| m.unit.as_str());
        let keys: Vec<(&str, &str)> = (report.key_metrics())
            .map(|m| (m.name.as_str(), m.unit.as_str()))
            .collect();
        for (pid, (_, _, scope)) in super::svg::chart_scopes(report).into_iter().enumerate() {
            let scope_events = ScopeTrace {
                pid: pid as u64 + 1,
                time,
                unit,
                keys: &keys,
            };
            scope_events.events(scope, &mut events);
        }
    }
    let mut text = String::from("{\"traceEvents\": [\n");
    for (i, event) in events.iter().enumerate() {
        text.push_str(&event.to_string());
        text.push_str(if i + 1 < events.len() { ",\n" } else { "\n" });
    }
    let other = json!({
        "generator": report.generator,
        "schema_version": report.schema_version,
        "time_metric": report.time_metric,
        "layout": "synthetic",
        "timeline": TIMELINE_NOTE,
    });
    text.push_str("],\n\"displayTimeUnit\": \"ns\",\n\"otherData\": ");
    text.push_str(&other.to_string());
    text.push_str("}\n");
    text
}

struct ScopeTrace<'a> {
    pid: u64,
    time: &'a str,
    unit: &'a str,
    keys: &'a [(&'a str, &'a str)],
}

/// Whole nanoseconds (in the time metric's unit) of a span's start and end: integers, so that a
/// child clamped into its parent stays inside it after conversion to microseconds.
type Interval = (i64, i64);

impl ScopeTrace<'_> {
    fn events(&self, scope: &Scope, events: &mut Vec<Value>) {
        let pid = self.pid;
        let meta = |name: &str, tid: u64, args: Value| json!({"name": name, "ph": "M", "pid": pid, "tid": tid, "args": args});
        events.push(meta("process_name", 0, json!({"name": scope.label})));
        events.push(meta("process_sort_index", 0, json!({"sort_index": pid})));
        events.push(meta(
            "process_labels",
            0,
            json!({"labels": "synthetic timeline (aggregates laid end to end)"}),
        ));
        let tids = lanes(scope, &mut |tid, name| {
            events.push(meta("thread_name", tid, json!({ "name": name })));
        });
        let spans = layout::spans(&scope.regions, self.time);
        let own = layout::self_kernels(&scope.regions, self.time);
        let index: HashMap<(RegionKind, &str), usize> = scope
            .regions
            .iter()
            .enumerate()
            .map(|(i, r)| ((r.kind, r.path.as_str()), i))
            .collect();
        let mut intervals: Vec<Interval> = Vec::with_capacity(spans.len());
        for (i, region) in scope.regions.iter().enumerate() {
            let parent = region
                .parent
                .as_deref()
                .and_then(|p| index.get(&(region.kind, p)).copied())
                .map(|p| intervals[p]);
            let mut at = (ns(spans[i].start), ns(spans[i].end()));
            if let Some((ps, pe)) = parent {
                at = (at.0.clamp(ps, pe), at.1.clamp(ps, pe));
            }
            intervals.push(at);
            let tid = tids.get(&Lane::of(region)).copied().unwrap_or(REGION_TID);
            events.push(self.slice(&region.name, "region", at, tid, self.region_args(region)));
            let self_start = ns(spans[i].self_start).clamp(at.0, at.1);
            self.kernels(&own[i], (self_start, at.1), tid, events);
        }
        let top_end = intervals
            .iter()
            .zip(&scope.regions)
            .filter(|(_, r)| r.depth == 0 && Lane::of(r) == Lane::Stack)
            .map(|(iv, _)| iv.1)
            .max()
            .unwrap_or(0);
        self.outside(scope, top_end, events);
    }

    /// What ran outside every region: one slice after the top-level regions, its kernels inside.
    fn outside(&self, scope: &Scope, start: i64, events: &mut Vec<Value>) {
        let length = time_of(&scope.outside_regions.metrics, self.time);
        if scope.outside_regions.kernel_count == 0 || length <= 0.0 {
            return;
        }
        let at = (start, start + ns(length));
        let args = json!({
            "kernel_count": scope.outside_regions.kernel_count,
            "time": format::value(Some(length), self.unit),
        });
        events.push(self.slice("(outside regions)", "outside", at, REGION_TID, args));
        let kernels: Vec<(String, u64, f64)> = scope
            .outside_regions
            .kernels
            .iter()
            .map(|k| (k.name.clone(), k.count, time_of(&k.metrics, self.time)))
            .collect();
        self.kernels(&kernels, at, REGION_TID, events);
    }

    /// Kernel slices end to end from the start of `within`, clamped into it.
    fn kernels(
        &self,
        kernels: &[(String, u64, f64)],
        within: Interval,
        tid: u64,
        events: &mut Vec<Value>,
    ) {
        let mut cursor = within.0;
        for (name, count, t) in kernels {
            let end = (cursor + ns(*t)).min(within.1);
            if end <= cursor {
                break;
            }
            let args = json!({
                "kernel": name,
                "launches": count,
                "time": format::value(Some(*t), self.unit),
            });
            let short = region::function_name(name);
            events.push(self.slice(short, "kernel", (cursor, end), tid, args));
            cursor = end;
        }
    }

    fn slice(&self, name: &str, cat: &str, (start, end): Interval, tid: u64, args: Value) -> Value {
        json!({
            "name": name,
            "cat": cat,
            "ph": "X",
            "pid": self.pid,
            "tid": tid,
            "ts": micros(start),
            "dur": micros(end - start),
            "args": args,
        })
    }

    fn region_args(&self, region: &Region) -> Value {
        let mut args = Map::new();
        args.insert("path".into(), json!(region.path));
        args.insert("kernel_count".into(), json!(region.kernel_count));
        args.insert("self_kernel_count".into(), json!(region.self_kernel_count));
        args.insert("time_share".into(), json!(format::share(region.time_share)));
        let value = |map: &MetricMap, name: &str, unit: &str| {
            let v = map.get(name);
            match v.and_then(|v| v.values.as_ref()) {
                Some(values) => values.join(", "),
                None => format::value(v.and_then(|v| v.value), unit),
            }
        };
        args.insert(
            "time".into(),
            json!(value(&region.inclusive, self.time, self.unit)),
        );
        args.insert(
            "self_time".into(),
            json!(value(&region.exclusive, self.time, self.unit)),
        );
        for (name, unit) in self.keys {
            args.insert((*name).into(), json!(value(&region.inclusive, name, unit)));
        }
        if let Some(first) = region.insights.first() {
            args.insert("top_insight".into(), json!(first.message));
        }
        Value::Object(args)
    }
}

/// One thread per lane of the scope's regions (the default domain's on [`REGION_TID`], flat ranges
/// on [`MARK_TID`], each other domain's next, in order of appearance), each named through `name`.
fn lanes(scope: &Scope, name: &mut dyn FnMut(u64, String)) -> HashMap<Lane, u64> {
    let mut tids = HashMap::from([(Lane::Stack, REGION_TID)]);
    name(REGION_TID, "regions".to_string());
    let mut next = MARK_TID + 1;
    for region in scope.regions.iter().filter(|r| r.depth == 0) {
        let lane = Lane::of(region);
        if tids.contains_key(&lane) {
            continue;
        }
        let tid = match &lane {
            Lane::Marks => {
                name(MARK_TID, "flat ranges".to_string());
                MARK_TID
            }
            Lane::Domain(domain) => {
                next += 1;
                name(next - 1, format!("domain {domain}"));
                next - 1
            }
            Lane::Stack => REGION_TID,
        };
        tids.insert(lane, tid);
    }
    tids
}

/// A time in the metric's unit as whole nanoseconds (the trace's resolution).
fn ns(v: f64) -> i64 {
    v.round() as i64
}

/// Microseconds, the trace format's unit, exact to the nanosecond.
fn micros(ns: i64) -> f64 {
    ns as f64 / 1000.0
}
