//! A run's traces as a real timeline for trace.json: each process's trace read again when its turn
//! comes (once to plan, once to write) and dropped after, so no more than one trace per replay is
//! held, as when the report was read. Kernels carry the region path and the demangled name the
//! report gives them.
//!
//! Floor: profiler (see `crate::profiler`): imports run, process, analysis, insights, report,
//! config, region and the ground floor, and its own profiler's rooms.

use std::sync::Arc;

use super::attribute::{attribute, PushPopScope};
use super::demangle::demangle;
use crate::config::{Config, Format};
use crate::error::{Error, Result};
use crate::profiler::ncu::readers::trace::{self as file, RangeKind, TraceError, TraceInput};
use crate::region::{display_of, Renames};
use crate::report::model::{Report, TimelineEvent, TimelineProcess, TimelineSource};
use crate::report::render::trace::attach;

/// A range with no name, as trace.json shows it.
const UNNAMED: &str = "(unnamed range)";

/// The traces of one run, replayed one process at a time.
#[derive(Debug)]
pub struct TraceTimeline {
    inputs: Vec<TraceInput>,
    scope: PushPopScope,
    renames: Renames,
    max_depth: usize,
}

impl TraceTimeline {
    pub fn new(
        inputs: &[TraceInput],
        scope: PushPopScope,
        renames: &Renames,
        max_depth: usize,
    ) -> Self {
        TraceTimeline {
            inputs: inputs.to_vec(),
            scope,
            renames: renames.clone(),
            max_depth,
        }
    }
}

impl TimelineSource for TraceTimeline {
    fn len(&self) -> usize {
        self.inputs.len()
    }

    fn replay(
        &self,
        at: usize,
        visit: &mut dyn FnMut(&TimelineEvent<'_>),
    ) -> std::io::Result<TimelineProcess> {
        let input = &self.inputs[at];
        let trace = file::read_input(input).map_err(std::io::Error::other)?;
        for range in &trace.ranges {
            visit(&TimelineEvent::Range {
                thread: range.thread,
                domain: range.domain.map_or("", |d| trace.text(d)),
                start: range.start,
                end: range.end,
                name: range.name.map_or(UNNAMED, |n| trace.text(n)),
                nested: range.kind == RangeKind::PushPop,
            });
        }
        let names: Vec<String> = trace.names.iter().map(|n| demangle(n)).collect();
        let mut region = String::new();
        let mut generation = None;
        attribute(&trace, self.scope, &self.renames, self.max_depth, |a| {
            if generation != Some(a.generation) {
                generation = Some(a.generation);
                region = a
                    .stacks
                    .iter()
                    .find(|s| !s.is_empty())
                    .map_or_else(String::new, |s| display_of(s));
            }
            let shape = trace.shape(a.kernel);
            visit(&TimelineEvent::Kernel {
                device: a.kernel.device,
                stream: a.kernel.stream,
                launched: a.kernel.launched_at(),
                start: a.kernel.start,
                end: a.kernel.end,
                name: &names[shape.name],
                region: &region,
                grid: shape.grid,
                block: shape.block,
            });
        })
        .map_err(|refused| {
            std::io::Error::other(format!(
                "{}: its ranges could not be given to its kernels again ({refused:?})",
                trace.path.display()
            ))
        })?;
        Ok(TimelineProcess {
            rank: input.rank.or(trace.rank),
            host: trace.host.clone(),
            pid: trace.pid,
        })
    }
}

/// Hands the report the traces' real timeline when trace.json is among `report.outputs`, planned
/// within `report.trace_events`.
pub fn attach_timeline(
    report: &mut Report,
    config: &Config,
    inputs: &[TraceInput],
    (scope, renames, max_depth): (PushPopScope, &Renames, usize),
) -> Result<()> {
    if !config.report.outputs.contains(&Format::Trace) {
        return Ok(());
    }
    let timeline = TraceTimeline::new(inputs, scope, renames, max_depth);
    attach(report, Arc::new(timeline), config.report.trace_events).map_err(|err| {
        // A trace that no longer reads as it did a moment ago is refused in the reader's words.
        let message = err.to_string();
        match err.into_inner().map(|inner| inner.downcast::<TraceError>()) {
            Some(Ok(trace)) => Error::from(*trace),
            _ => Error::from(TraceError::Io {
                path: inputs.first().map(|i| i.path.clone()).unwrap_or_default(),
                source: std::io::Error::other(message),
            }),
        }
    })
}
