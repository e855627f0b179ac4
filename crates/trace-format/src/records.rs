//! The records of a trace (the in-process counters' own are in [`crate::deep`]), each with its field list, its writer and its reader side by side: the
//! list names the fields in file order, and writing and reading follow it.

use std::borrow::Cow;

use crate::deep::{self, DeepError, DeepSet, Metric, Profiled, Value};
use crate::fields::{Fields, Line, LineError};
use crate::text::{self, escape};

/// The process that wrote the trace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Process<'a> {
    pub pid: u32,
    pub host: Cow<'a, str>,
    /// The process's name (`/proc/self/comm`).
    pub name: Cow<'a, str>,
    /// The libcupti the process loaded.
    pub libcupti: Cow<'a, str>,
    /// The process's rank in its job and the job's size, as its launcher set them in the
    /// environment (`RANK`/`WORLD_SIZE` from torchrun, Open MPI's, PMI's or Slurm's); `None` outside
    /// a launcher, and in traces written before these fields existed.
    pub rank: Option<u32>,
    pub world_size: Option<u32>,
}

/// A mangled kernel name; kernels name it by `index`, which counts up from 0 in file order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Name<'a> {
    pub index: u32,
    pub name: Cow<'a, str>,
}

/// A kernel as CUPTI's activity record gives it; `name` indexes the trace's names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Kernel {
    pub correlation: u32,
    /// CUPTI timestamps in ns, one clock for kernels, API calls and markers.
    pub start: u64,
    pub end: u64,
    pub device: u32,
    pub context: u32,
    pub stream: u32,
    /// C `int`s in CUPTI's record; the format keeps them never negative.
    pub grid: [i32; 3],
    pub block: [i32; 3],
    pub registers: u16,
    pub static_shared: i32,
    pub dynamic_shared: i32,
    pub name: u32,
}

/// Which API a launch went through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApiKind {
    Runtime,
    Driver,
}

/// A runtime or driver API call that launched kernels (joined to them by correlation id).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Api {
    pub correlation: u32,
    pub thread: u32,
    pub start: u64,
    pub end: u64,
    pub kind: ApiKind,
    /// CUPTI's callback id: which function of the API.
    pub cbid: u32,
}

/// Whether a range was pushed (a stack level of its thread) or started (a flat range,
/// `nvtxRangeStart`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RangeKind {
    PushPop,
    StartEnd,
}

/// An NVTX range; `end` is `None` when it never ended, `domain` `None` for the default domain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Range<'a> {
    pub id: u32,
    pub kind: RangeKind,
    pub thread: u32,
    pub start: u64,
    pub end: Option<u64>,
    pub domain: Option<Cow<'a, str>>,
    pub name: Option<Cow<'a, str>>,
}

/// The writer's last line: how many lines precede it, the first line included.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct End {
    pub lines: u64,
}

const PROCESS: &[&str] = &["pid", "host", "process name", "libcupti"];
const NAME: &[&str] = &["index", "name"];
const KERNEL: &[&str] = &[
    "correlation id",
    "start",
    "end",
    "device",
    "context",
    "stream",
    "grid x",
    "grid y",
    "grid z",
    "block x",
    "block y",
    "block z",
    "registers per thread",
    "static shared memory",
    "dynamic shared memory",
    "name index",
];
const API: &[&str] = &["correlation id", "thread", "start", "end", "kind", "cbid"];
const RANGE: &[&str] = &["id", "kind", "thread", "start", "end", "domain", "name"];
const END: &[&str] = &["lines before it"];

/// One line of a trace after the first.
#[derive(Debug, Clone, PartialEq)]
pub enum Record<'a> {
    Process(Process<'a>),
    Name(Name<'a>),
    Kernel(Kernel),
    Api(Api),
    Range(Range<'a>),
    DeepSet(DeepSet<'a>),
    Metric(Metric<'a>),
    Profiled(Profiled),
    Value(Value),
    DeepError(DeepError<'a>),
    End(End),
}

impl<'a> Record<'a> {
    /// Reads one line (without its newline).
    pub fn parse(line: &'a str) -> Result<Self, LineError> {
        let (tag, parts) = Fields::split(line);
        Ok(match tag {
            "process" => Record::Process(Process::read(Fields::new(tag, parts, PROCESS)?)?),
            "name" => Record::Name(Name::read(Fields::new(tag, parts, NAME)?)?),
            "kernel" => Record::Kernel(Kernel::read(Fields::new(tag, parts, KERNEL)?)?),
            "api" => Record::Api(Api::read(Fields::new(tag, parts, API)?)?),
            "range" => Record::Range(Range::read(Fields::new(tag, parts, RANGE)?)?),
            "deep-set" => Record::DeepSet(DeepSet::read(Fields::new(tag, parts, deep::DEEP_SET)?)?),
            "metric" => Record::Metric(Metric::read(Fields::new(tag, parts, deep::METRIC)?)?),
            "profiled" => {
                Record::Profiled(Profiled::read(Fields::new(tag, parts, deep::PROFILED)?)?)
            }
            "value" => Record::Value(Value::read(Fields::new(tag, parts, deep::VALUE)?)?),
            "deep-error" => {
                Record::DeepError(DeepError::read(Fields::new(tag, parts, deep::DEEP_ERROR)?)?)
            }
            "end" => Record::End(End {
                lines: Fields::new(tag, parts, END)?.num()?,
            }),
            other => return Err(LineError(format!("unknown record `{other}`"))),
        })
    }

    /// Appends the record's line, newline included.
    pub fn write(&self, out: &mut String) {
        match self {
            Record::Process(p) => p.write(out),
            Record::Name(n) => Line::start(out, "name")
                .field(n.index)
                .field(escape(&n.name))
                .end(),
            Record::Kernel(k) => k.write(out),
            Record::Api(a) => a.write(out),
            Record::Range(r) => r.write(out),
            Record::DeepSet(d) => d.write(out),
            Record::Metric(m) => m.write(out),
            Record::Profiled(p) => p.write(out),
            Record::Value(v) => v.write(out),
            Record::DeepError(e) => e.write(out),
            Record::End(e) => Line::start(out, "end").field(e.lines).end(),
        }
    }
}

impl<'a> Process<'a> {
    /// The line stops before the rank fields when neither is known, as a trace written before they
    /// existed does, so such a line reads back byte for byte.
    fn write(&self, out: &mut String) {
        let mut line = Line::start(out, "process");
        line.field(self.pid)
            .field(escape(&self.host))
            .field(escape(&self.name))
            .field(escape(&self.libcupti));
        if self.rank.is_some() || self.world_size.is_some() {
            let rank = self.rank.map(|r| r.to_string());
            let world = self.world_size.map(|w| w.to_string());
            line.field(text::optional(rank.as_deref()))
                .field(text::optional(world.as_deref()));
        }
        line.end();
    }

    fn read(mut f: Fields<'a>) -> Result<Self, LineError> {
        Ok(Process {
            pid: f.num()?,
            host: f.text()?,
            name: f.text()?,
            libcupti: f.text()?,
            rank: f.later_optional_num("rank")?,
            world_size: f.later_optional_num("world size")?,
        })
    }
}

impl<'a> Name<'a> {
    fn read(mut f: Fields<'a>) -> Result<Self, LineError> {
        Ok(Name {
            index: f.num()?,
            name: f.text()?,
        })
    }
}

impl Kernel {
    fn write(&self, out: &mut String) {
        let mut line = Line::start(out, "kernel");
        line.field(self.correlation)
            .field(self.start)
            .field(self.end)
            .field(self.device)
            .field(self.context)
            .field(self.stream);
        for value in self.grid.iter().chain(&self.block) {
            line.field(value);
        }
        line.field(self.registers)
            .field(self.static_shared)
            .field(self.dynamic_shared)
            .field(self.name)
            .end();
    }

    fn read(mut f: Fields<'_>) -> Result<Self, LineError> {
        Ok(Kernel {
            correlation: f.num()?,
            start: f.num()?,
            end: f.num()?,
            device: f.num()?,
            context: f.num()?,
            stream: f.num()?,
            grid: [f.count()?, f.count()?, f.count()?],
            block: [f.count()?, f.count()?, f.count()?],
            registers: f.num()?,
            static_shared: f.count()?,
            dynamic_shared: f.count()?,
            name: f.num()?,
        })
    }
}

impl ApiKind {
    fn as_str(self) -> &'static str {
        match self {
            ApiKind::Runtime => "runtime",
            ApiKind::Driver => "driver",
        }
    }
}

impl Api {
    fn write(&self, out: &mut String) {
        Line::start(out, "api")
            .field(self.correlation)
            .field(self.thread)
            .field(self.start)
            .field(self.end)
            .field(self.kind.as_str())
            .field(self.cbid)
            .end();
    }

    fn read(mut f: Fields<'_>) -> Result<Self, LineError> {
        let correlation = f.num()?;
        let thread = f.num()?;
        let start = f.num()?;
        let end = f.num()?;
        let kind = match f.word()? {
            ("runtime", ..) => ApiKind::Runtime,
            ("driver", ..) => ApiKind::Driver,
            (other, at, name) => {
                return Err(LineError(format!(
                    "field {at} ({name}) is {other:?}, neither runtime nor driver"
                )))
            }
        };
        Ok(Api {
            correlation,
            thread,
            start,
            end,
            kind,
            cbid: f.num()?,
        })
    }
}

impl RangeKind {
    fn as_str(self) -> &'static str {
        match self {
            RangeKind::PushPop => "push-pop",
            RangeKind::StartEnd => "start-end",
        }
    }
}

impl<'a> Range<'a> {
    fn write(&self, out: &mut String) {
        let end = self.end.map(|e| e.to_string());
        Line::start(out, "range")
            .field(self.id)
            .field(self.kind.as_str())
            .field(self.thread)
            .field(self.start)
            .field(end.as_deref().unwrap_or(text::MISSING))
            .field(text::optional(self.domain.as_deref()))
            .field(text::optional(self.name.as_deref()))
            .end();
    }

    fn read(mut f: Fields<'a>) -> Result<Self, LineError> {
        let id = f.num()?;
        let kind = match f.word()? {
            ("push-pop", ..) => RangeKind::PushPop,
            ("start-end", ..) => RangeKind::StartEnd,
            (other, at, name) => {
                return Err(LineError(format!(
                    "field {at} ({name}) is {other:?}, neither push-pop nor start-end"
                )))
            }
        };
        Ok(Range {
            id,
            kind,
            thread: f.num()?,
            start: f.num()?,
            end: f.optional_num()?,
            domain: f.optional_text()?,
            name: f.optional_text()?,
        })
    }
}
