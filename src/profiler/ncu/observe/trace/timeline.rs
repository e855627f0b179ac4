//! A run's traces as a real timeline for trace.json: each process's trace read once more and kept as
//! data (its ranges and kernels, each word once), the trace itself dropped after. Kernels carry the
//! region path and the demangled name the report gives them.
//!
//! Floor: profiler (see `crate::profiler`): imports run, process, analysis, insights, report,
//! config, region and the ground floor, and its own profiler's rooms.

use super::attribute::{attribute, Attributed, PerRegions, PushPopScope};
use super::demangle::demangle;
use crate::config::{Config, Format};
use crate::error::Result;
use crate::profiler::ncu::readers::trace::{self as file, RangeKind, TraceError, TraceInput};
use crate::region::{display_of, Renames};
use crate::report::model::{ProcessTimeline, Report, TimelineEvent, TimelineProcess};
use crate::report::render::trace::attach;

/// A range with no name, as trace.json shows it.
const UNNAMED: &str = "(unnamed range)";

/// One process's trace as its timeline: its ranges, then its kernels with the region path and
/// the demangled name the report gives them.
fn timeline_of(
    input: &TraceInput,
    (scope, renames, max_depth): (PushPopScope, &Renames, usize),
) -> Result<ProcessTimeline> {
    let trace = file::read_input(input)?;
    let mut timeline = ProcessTimeline::new(TimelineProcess {
        rank: input.rank.or(trace.rank),
        host: trace.host.clone(),
        pid: trace.pid,
    });
    for range in &trace.ranges {
        timeline.push(&TimelineEvent::Range {
            thread: range.thread,
            domain: range.domain.map_or("", |d| trace.text(d)),
            start: range.start,
            end: range.end,
            name: range.name.map_or(UNNAMED, |n| trace.text(n)),
            nested: range.kind == RangeKind::PushPop,
        });
    }
    let names: Vec<String> = trace.names.iter().map(|n| demangle(n)).collect();
    let mut region = PerRegions::<String>::default();
    attribute(&trace, scope, renames, max_depth, |a| {
        // The first domain with a range, as report.md names the region.
        let path = |a: &Attributed<'_>| {
            let stack = a.stacks.iter().find(|s| !s.is_empty());
            stack.map_or_else(String::new, |s| display_of(s))
        };
        let region = region.of(a, path);
        // A launch profiled in process keeps its record with no time (start = end = 0): it has no
        // place on the timeline.
        if a.kernel.start == 0 && a.kernel.end == 0 {
            return;
        }
        let shape = trace.shape(a.kernel);
        timeline.push(&TimelineEvent::Kernel {
            device: a.kernel.device,
            stream: a.kernel.stream,
            launched: a.kernel.launched_at(),
            start: a.kernel.start,
            end: a.kernel.end,
            name: &names[shape.name],
            region,
            grid: shape.grid,
            block: shape.block,
        });
    })
    .map_err(|refused| TraceError::Io {
        path: trace.path.clone(),
        source: std::io::Error::other(format!(
            "its ranges could not be given to its kernels for trace.json ({refused:?})"
        )),
    })?;
    Ok(timeline)
}

/// Hands the report the traces' real timeline when trace.json is among `report.outputs`, planned
/// within `report.trace_events`.
pub fn attach_timeline(
    report: &mut Report,
    config: &Config,
    inputs: &[TraceInput],
    replay: (PushPopScope, &Renames, usize),
) -> Result<()> {
    if !config.report.outputs.contains(&Format::Trace) {
        return Ok(());
    }
    let timelines = inputs
        .iter()
        .map(|input| timeline_of(input, replay))
        .collect::<Result<Vec<_>>>()?;
    attach(report, timelines, config.report.trace_events);
    Ok(())
}
