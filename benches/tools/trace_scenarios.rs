//! Synthetic CUPTI traces at any size, written through the format's own writer (`trace-format`):
//! the shapes of a real job (kernels under nested ranges) and of the programs that break readers
//! (ranges pushed or started in a loop and never ended, a domain or a thread per range, stacks 256
//! deep). Shared by the trace benchmark (`benches/trace.sh`, through the `gen-cupti-trace` example)
//! and the tests that read the same shapes small (`tests/it/hardening/traces.rs`).

use std::borrow::Cow;
use std::io::{self, Write};

use trace_format::{Api, ApiKind, End, Kernel, Name, Process, Range, RangeKind, Record};

/// The shapes, by name: what `n` counts in each.
pub const SCENARIOS: &[(&str, &str)] = &[
    (
        "kernels",
        "kernels, under step/fwd|bwd push/pop ranges and an epoch start/end range",
    ),
    (
        "never-popped",
        "push/pop ranges never popped, a kernel after each",
    ),
    ("marks", "start/end ranges never ended, a kernel after each"),
    (
        "marks-ended",
        "start/end ranges each open over four kernels",
    ),
    (
        "domains",
        "NVTX domains, each with a push/pop range never popped, a kernel after each",
    ),
    (
        "domains-popped",
        "NVTX domains, each with one push/pop range around one kernel",
    ),
    (
        "threads",
        "threads, each with one push/pop range around one kernel it launches",
    ),
    (
        "deep",
        "kernels, each under 255 open levels and a leaf range of its own (256 deep)",
    ),
];

/// One trace being written: its records, then the `end` line counting them.
struct Writer<W: Write> {
    out: W,
    buf: String,
    lines: u64,
}

impl<W: Write> Writer<W> {
    fn record(&mut self, record: Record<'_>) -> io::Result<()> {
        record.write(&mut self.buf);
        self.lines += 1;
        if self.buf.len() > 1 << 20 {
            self.out.write_all(self.buf.as_bytes())?;
            self.buf.clear();
        }
        Ok(())
    }

    fn finish(mut self) -> io::Result<()> {
        let lines = self.lines;
        self.record(Record::End(End { lines }))?;
        self.out.write_all(self.buf.as_bytes())?;
        self.out.flush()
    }
}

fn kernel(correlation: u32, start: u64, name: u32) -> Record<'static> {
    Record::Kernel(Kernel {
        correlation,
        start,
        end: start + 400,
        device: 0,
        context: 1,
        stream: 7,
        grid: [128, 1, 1],
        block: [256, 1, 1],
        registers: 32,
        static_shared: 0,
        dynamic_shared: 0,
        name,
    })
}

fn api(correlation: u32, thread: u32, start: u64) -> Record<'static> {
    Record::Api(Api {
        correlation,
        thread,
        start,
        end: start + 5,
        kind: ApiKind::Runtime,
        cbid: 211,
    })
}

fn range<'a>(
    id: u32,
    kind: RangeKind,
    thread: u32,
    (start, end): (u64, Option<u64>),
    domain: Option<Cow<'a, str>>,
    name: &'a str,
) -> Record<'a> {
    Record::Range(Range {
        id,
        kind,
        thread,
        start,
        end,
        domain,
        name: Some(Cow::Borrowed(name)),
    })
}

/// Writes scenario `name` at size `n`; `false` for an unknown name.
pub fn write(name: &str, n: u32, out: impl Write) -> io::Result<bool> {
    if !SCENARIOS.iter().any(|(known, _)| *known == name) {
        return Ok(false);
    }
    let mut w = Writer {
        out,
        buf: String::new(),
        lines: 0,
    };
    w.buf.push_str(trace_format::MAGIC);
    w.buf.push_str(&format!("\t{}\n", trace_format::VERSION));
    w.lines = 1;
    w.record(Record::Process(Process {
        pid: 4242,
        host: "node".into(),
        name: "python3".into(),
        libcupti: "libcupti.so.13".into(),
        rank: None,
        world_size: None,
    }))?;
    for index in 0..8 {
        let name = format!("_Z6kernelILi{index}EEvPf");
        w.record(Record::Name(Name {
            index,
            name: name.into(),
        }))?;
    }
    // Kernel i is launched at 1000·i + 100 on thread 1 (or its own thread) and runs 400 ns.
    let at = |i: u32| 1000 * u64::from(i);
    let thread_of = |i: u32| if name == "threads" { 100 + i } else { 1 };
    for i in 0..n {
        w.record(kernel(i, at(i) + 200, i % 8))?;
    }
    for i in 0..n {
        w.record(api(i, thread_of(i), at(i) + 100))?;
    }
    ranges(&mut w, name, n, at)?;
    w.finish()?;
    Ok(true)
}

/// The ranges of each scenario, around kernel i's launch at `at(i) + 100`.
fn ranges<W: Write>(
    w: &mut Writer<W>,
    name: &str,
    n: u32,
    at: impl Fn(u32) -> u64,
) -> io::Result<()> {
    use RangeKind::{PushPop, StartEnd};
    let around = |i: u32| (at(i), Some(at(i) + 900));
    let domain = |i: u32| Some(Cow::Owned(format!("d{i}")));
    match name {
        "kernels" => {
            let steps = n.div_ceil(1000);
            for s in 0..steps {
                let (start, end) = (at(s * 1000), at((s + 1) * 1000));
                let half = (start + end) / 2;
                w.record(range(3 * s, PushPop, 1, (start, Some(end)), None, "step"))?;
                w.record(range(
                    3 * s + 1,
                    PushPop,
                    1,
                    (start + 1, Some(half)),
                    None,
                    "fwd",
                ))?;
                w.record(range(
                    3 * s + 2,
                    PushPop,
                    1,
                    (half, Some(end - 1)),
                    None,
                    "bwd",
                ))?;
            }
            for e in 0..n.div_ceil(100_000) {
                let span = (at(e * 100_000), Some(at((e + 1) * 100_000)));
                w.record(range(3 * steps + e, StartEnd, 1, span, None, "epoch"))?;
            }
        }
        "never-popped" => {
            for i in 0..n {
                w.record(range(i, PushPop, 1, (at(i), None), None, "loop"))?;
            }
        }
        "marks" => {
            for i in 0..n {
                w.record(range(i, StartEnd, 1, (at(i), None), None, "mark"))?;
            }
        }
        "marks-ended" => {
            for i in 0..n {
                w.record(range(
                    i,
                    StartEnd,
                    1,
                    (at(i), Some(at(i + 4))),
                    None,
                    "mark",
                ))?;
            }
        }
        "domains" => {
            for i in 0..n {
                w.record(range(i, PushPop, 1, (at(i), None), domain(i), "r"))?;
            }
        }
        "domains-popped" => {
            for i in 0..n {
                w.record(range(i, PushPop, 1, around(i), domain(i), "r"))?;
            }
        }
        "threads" => {
            for i in 0..n {
                w.record(range(i, PushPop, 100 + i, around(i), None, "work"))?;
            }
        }
        _ => {
            // deep: 255 levels open from the start, then a leaf around each kernel.
            for level in 0..255u32 {
                let name = format!("level{level}");
                w.record(range(
                    level,
                    PushPop,
                    1,
                    (u64::from(level), None),
                    None,
                    &name,
                ))?;
            }
            for i in 0..n {
                w.record(range(255 + i, PushPop, 1, around(i), None, "leaf"))?;
            }
        }
    }
    Ok(())
}
