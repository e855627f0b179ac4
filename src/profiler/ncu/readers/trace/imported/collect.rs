//! What every imported trace is filed into, whatever its format: kernel names, launch keys and range
//! texts kept once, threads and correlation ids numbered densely (other tools' ids are 64-bit, a
//! `ProcessTrace` holds 32-bit ones), and the launches joined to their kernels as for the CUPTI
//! trace ([`join_launches`]).

use std::path::Path;

use super::super::assemble::join_launches;
use super::super::{LaunchShape, ProcessTrace, Range, RangeKind, TracedKernel, MAX_DURATION_NS};
use crate::fast_map::FastMap;

/// A kernel as another tool recorded it, its ids still the tool's own.
pub(super) struct KernelRow<'a> {
    /// The id that names the API call that launched it; `None` when the tool gives none.
    pub correlation: Option<u64>,
    pub start: u64,
    pub end: u64,
    pub device: u32,
    pub stream: u32,
    pub name: &'a str,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub registers: u32,
    pub shared: u64,
}

/// One process's trace being filled.
pub(super) struct Collect {
    trace: ProcessTrace,
    names: FastMap<String, usize>,
    shapes: FastMap<LaunchShape, u32>,
    texts: FastMap<String, u32>,
    threads: FastMap<(u64, u64), u32>,
    correlations: FastMap<u64, u32>,
    calls: Vec<(u32, u32, u64)>,
}

impl Collect {
    pub(super) fn new(path: &Path) -> Collect {
        Collect {
            trace: ProcessTrace {
                path: path.to_path_buf(),
                ..ProcessTrace::default()
            },
            names: FastMap::default(),
            shapes: FastMap::default(),
            texts: FastMap::default(),
            threads: FastMap::default(),
            correlations: FastMap::default(),
            calls: Vec::new(),
        }
    }

    /// The trace's process fields, filled by the format's reader.
    pub(super) fn trace(&mut self) -> &mut ProcessTrace {
        &mut self.trace
    }

    /// A thread's dense number, `(process, thread)` being the tool's own ids.
    pub(super) fn thread(&mut self, process: u64, thread: u64) -> u32 {
        let next = self.threads.len() as u32;
        *self.threads.entry((process, thread)).or_insert(next)
    }

    fn correlation(&mut self, id: u64) -> u32 {
        let next = self.correlations.len() as u32 + 1;
        *self.correlations.entry(id).or_insert(next)
    }

    fn text(&mut self, text: &str) -> u32 {
        if let Some(&at) = self.texts.get(text) {
            return at;
        }
        let at = self.trace.texts.len() as u32;
        self.trace.texts.push(text.to_string());
        self.texts.insert(text.to_string(), at);
        at
    }

    /// The API call with id `correlation` that launched kernels, on dense `thread`, started at `start`.
    pub(super) fn call(&mut self, correlation: u64, thread: u32, start: u64) {
        let id = self.correlation(correlation);
        self.calls.push((id, thread, start));
    }

    /// Files a kernel; `Err` names what is wrong with its times.
    pub(super) fn kernel(&mut self, k: KernelRow<'_>) -> Result<(), String> {
        plausible("kernel", k.start, k.end)?;
        let name = match self.names.get(k.name) {
            Some(&at) => at,
            None => {
                self.trace.names.push(k.name.to_string());
                self.names
                    .insert(k.name.to_string(), self.trace.names.len() - 1);
                self.trace.names.len() - 1
            }
        };
        let shape = LaunchShape {
            name,
            grid: k.grid,
            block: k.block,
            registers: k.registers,
            static_shared: k.shared,
            dynamic_shared: 0,
        };
        let shapes = &mut self.trace.shapes;
        let shape = *self.shapes.entry(shape).or_insert_with_key(|shape| {
            shapes.push(shape.clone());
            shapes.len() as u32 - 1
        });
        // A kernel with no id of its own gets one no call names: it is placed by its own start.
        let correlation = match k.correlation {
            Some(id) => self.correlation(id),
            None => 0,
        };
        self.trace.kernels.push(TracedKernel {
            correlation,
            start: k.start,
            end: k.end,
            device: k.device,
            stream: k.stream,
            shape,
            launch: None,
        });
        Ok(())
    }

    /// Files a range on dense `thread`; `end` is `None` for one that never ended.
    pub(super) fn range(
        &mut self,
        (kind, thread): (RangeKind, u32),
        (start, end): (u64, Option<u64>),
        domain: Option<&str>,
        name: Option<&str>,
    ) -> Result<(), String> {
        if let Some(end) = end {
            plausible("range", start, end)?;
        }
        let range = Range {
            id: self.trace.ranges.len() as u32 + 1,
            kind,
            thread,
            start,
            end,
            domain: domain.map(|d| self.text(d)),
            name: name.map(|n| self.text(n)),
        };
        self.trace.ranges.push(range);
        Ok(())
    }

    /// The trace, kernels joined to their launches and in launch order. Ranges that start together
    /// are put outer first (the longer one), since other tools' files give no push order: numbered
    /// in that order, they stack as they nested.
    pub(super) fn finish(self) -> ProcessTrace {
        let mut trace = self.trace;
        trace
            .ranges
            .sort_by_key(|r| (r.start, std::cmp::Reverse(r.end.unwrap_or(u64::MAX)), r.id));
        for (at, range) in trace.ranges.iter_mut().enumerate() {
            range.id = at as u32 + 1;
        }
        join_launches(&mut trace, self.calls);
        trace
    }
}

/// Refuses times that run backwards or last longer than [`MAX_DURATION_NS`].
fn plausible(what: &str, start: u64, end: u64) -> Result<(), String> {
    if end < start {
        return Err(format!(
            "a {what} ends at {end} ns, before it starts ({start} ns)"
        ));
    }
    if end - start > MAX_DURATION_NS {
        return Err(format!(
            "a {what} lasts {} ns, more than 2^53 ns (104 days), which no GPU clock gives",
            end - start
        ));
    }
    Ok(())
}
