//! A trace's records filed into a [`ProcessTrace`], checking what one line alone cannot: names in
//! order, kernels naming a name already read, times that run forward and stay plausible, nothing
//! after the `end` line and the line count it gives. What repeats is kept once (launch keys, range
//! texts); API calls are joined to their kernels at the end, then dropped. In-process counter
//! records go to [`super::counters`].

use std::path::Path;

use trace_format::{LineError, Record};

use super::counters::CounterLines;
use super::{Launch, LaunchShape, ProcessTrace, Range, TracedKernel, MAX_DURATION_NS};
use crate::fast_map::FastMap;

/// A trace being read.
pub(super) struct Builder {
    trace: ProcessTrace,
    version: u32,
    shapes: FastMap<LaunchShape, u32>,
    texts: FastMap<String, u32>,
    /// API calls that launched kernels: correlation id, thread, start; in file order.
    calls: Vec<(u32, u32, u64)>,
    /// The line of the `end` record, once read.
    ended: Option<usize>,
    /// The line cut in the middle, if the file ends in one.
    cut: Option<usize>,
    counters: CounterLines,
}

impl Builder {
    pub(super) fn new(path: &Path, version: u32) -> Builder {
        Builder {
            trace: ProcessTrace {
                path: path.to_path_buf(),
                ..ProcessTrace::default()
            },
            version,
            shapes: FastMap::default(),
            texts: FastMap::default(),
            calls: Vec::new(),
            ended: None,
            cut: None,
            counters: CounterLines::default(),
        }
    }

    /// The file ends in the middle of line `at`.
    pub(super) fn cut(&mut self, at: usize) {
        self.cut = Some(at);
    }

    /// Files line `at` (without its newline).
    pub(super) fn add(&mut self, line: &str, at: usize) -> Result<(), LineError> {
        if let Some(end) = self.ended {
            return Err(LineError(format!(
                "a record after the `end` line (line {end}), which is the writer's last"
            )));
        }
        let record = Record::parse(line)?;
        if self.counters.add(&record, self.version)? {
            return Ok(());
        }
        match record {
            Record::Process(p) => {
                let trace = &mut self.trace;
                trace.pid = p.pid;
                trace.host = p.host.into_owned();
                trace.process_name = p.name.into_owned();
                trace.libcupti = p.libcupti.into_owned();
                trace.rank = p.rank;
                trace.world_size = p.world_size;
            }
            Record::Name(n) => {
                let names = &mut self.trace.names;
                if n.index as usize != names.len() {
                    return Err(LineError(format!(
                        "name index {} out of order (expected {})",
                        n.index,
                        names.len()
                    )));
                }
                names.push(n.name.into_owned());
            }
            Record::Kernel(k) => self.kernel(k)?,
            Record::Api(a) => self.calls.push((a.correlation, a.thread, a.start)),
            Record::Range(r) => self.range(r)?,
            Record::End(end) => {
                // The end line counts the lines before it, the first included.
                let before = at as u64 - 1;
                if end.lines != before {
                    return Err(LineError(format!(
                        "field 1 (lines before it) is {}, but {before} lines precede it: lines were lost or added",
                        end.lines
                    )));
                }
                self.ended = Some(at);
            }
            // Filed by `counters.add` above.
            Record::DeepSet(_)
            | Record::Metric(_)
            | Record::Profiled(_)
            | Record::Value(_)
            | Record::DeepError(_) => {}
        }
        Ok(())
    }

    fn kernel(&mut self, k: trace_format::Kernel) -> Result<(), LineError> {
        let names = self.trace.names.len();
        let name = k.name as usize;
        if name >= names {
            return Err(LineError(format!(
                "kernel names name {name}, but only {names} names precede it"
            )));
        }
        if k.end < k.start {
            // CUPTI's forced flush at exit hands over kernels still running, with no end time yet
            // (see crates/cupti-trace: `at_exit`): a kernel with no duration to count.
            self.trace.unfinished += 1;
            return Ok(());
        }
        plausible("kernel", 3, k.start, k.end)?;
        // The format keeps sizes never negative, so `unsigned_abs` is the value itself.
        let size = |v: i32| v.unsigned_abs();
        let shape = LaunchShape {
            name,
            grid: k.grid.map(size),
            block: k.block.map(size),
            registers: u32::from(k.registers),
            static_shared: u64::from(size(k.static_shared)),
            dynamic_shared: u64::from(size(k.dynamic_shared)),
        };
        let shapes = &mut self.trace.shapes;
        let shape = *self.shapes.entry(shape).or_insert_with_key(|shape| {
            shapes.push(shape.clone());
            shapes.len() as u32 - 1
        });
        self.trace.kernels.push(TracedKernel {
            correlation: k.correlation,
            start: k.start,
            end: k.end,
            device: k.device,
            stream: k.stream,
            shape,
            launch: None,
        });
        Ok(())
    }

    fn range(&mut self, r: trace_format::Range<'_>) -> Result<(), LineError> {
        if let Some(end) = r.end {
            if end < r.start {
                return Err(LineError(format!(
                    "field 5 (end) is {end}, before the range's start (field 4, {}); a range ends after it starts",
                    r.start
                )));
            }
            plausible("range", 5, r.start, end)?;
        }
        let range = Range {
            id: r.id,
            kind: r.kind,
            thread: r.thread,
            start: r.start,
            end: r.end,
            domain: r.domain.map(|d| self.intern(&d)),
            name: r.name.map(|n| self.intern(&n)),
        };
        self.trace.ranges.push(range);
        Ok(())
    }

    fn intern(&mut self, text: &str) -> u32 {
        if let Some(&at) = self.texts.get(text) {
            return at;
        }
        let at = self.trace.texts.len() as u32;
        self.trace.texts.push(text.to_string());
        self.texts.insert(text.to_string(), at);
        at
    }

    /// The trace, kernels joined to their launches and in launch order, ranges by start; whether it
    /// was cut short.
    pub(super) fn finish(self) -> Result<ProcessTrace, LineError> {
        let Builder {
            mut trace,
            version,
            calls,
            ended,
            cut,
            counters,
            ..
        } = self;
        if trace.pid == 0 {
            return Err(LineError("no `process` line".into()));
        }
        // Version 1 writers wrote no end line; from version 2 on, a trace without one was cut.
        if ended.is_none() && (version >= 2 || cut.is_some()) {
            let last = cut.map_or(String::new(), |line| {
                format!(" in the middle of line {line}")
            });
            trace.partial = Some(format!(
                "the trace {} does not end with the writer's `end` line: it was cut short{last}, and holds only the part of the process's run before the cut",
                trace.path.display()
            ));
        }
        join_launches(&mut trace, calls);
        counters.finish(&mut trace);
        Ok(trace)
    }
}

/// Refuses a kernel or range lasting longer than [`MAX_DURATION_NS`]; `field` is its end's.
fn plausible(what: &str, field: usize, start: u64, end: u64) -> Result<(), LineError> {
    let lasts = end - start;
    if lasts > MAX_DURATION_NS {
        return Err(LineError(format!(
            "field {field} (end) is {end}: the {what} would last {lasts} ns, more than 2^53 ns (104 days), which no CUPTI clock gives"
        )));
    }
    Ok(())
}

/// Joins each kernel to the API call that launched it (`calls`: correlation id, thread, start), then
/// puts the kernels in launch order and the ranges by start: the order attribution sweeps in. Every
/// trace source ends here, the CUPTI trace and the traces other tools wrote alike.
pub(in crate::profiler::ncu::readers) fn join_launches(
    trace: &mut ProcessTrace,
    mut calls: Vec<(u32, u32, u64)>,
) {
    // A correlation id given twice keeps its last call, as a map filled in file order would.
    calls.sort_by_key(|&(correlation, ..)| correlation);
    for kernel in &mut trace.kernels {
        let after = calls.partition_point(|&(c, ..)| c <= kernel.correlation);
        kernel.launch = after
            .checked_sub(1)
            .map(|at| calls[at])
            .filter(|&(c, ..)| c == kernel.correlation)
            .map(|(_, thread, start)| Launch { thread, start });
    }
    drop(calls);
    // Every field in the key, so that equal keys are equal kernels and the order is the same
    // on every run.
    trace.kernels.sort_unstable_by_key(|k| {
        let launch = k.launch.map(|l| l.thread);
        (
            k.launched_at(),
            k.correlation,
            k.start,
            k.end,
            k.device,
            k.stream,
            k.shape,
            launch,
        )
    });
    trace.ranges.sort_by_key(|r| (r.start, r.id));
}
