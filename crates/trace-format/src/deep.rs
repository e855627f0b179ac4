//! The records of counters collected inside the traced process (format version 3): the metric set
//! and its pass count per device, the metric names, one `profiled` line per launch the library
//! profiled and one `value` line per metric value it read back.

use std::borrow::Cow;

use crate::fields::{Fields, Line, LineError};
use crate::text::escape;

/// The metric set as one device's chip runs it: how many replay passes each profiled launch took.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeepSet<'a> {
    pub device: u32,
    /// CUPTI's chip name (`GH100`).
    pub chip: Cow<'a, str>,
    pub passes: u32,
}

/// A metric's ncu name; `value` lines name it by `index`, which counts up from 0 in file order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Metric<'a> {
    pub index: u32,
    pub name: Cow<'a, str>,
}

/// One launch the library profiled (kernel replay around the launch call).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Profiled {
    /// The correlation id of the launch call, the one its kernel records carry.
    pub correlation: u32,
    /// How many kernels CUPTI measured in the launch: 1 for a kernel, the kernel nodes of a CUDA
    /// graph launch.
    pub ranges: u32,
    /// Host time the profiling added to the launch call, in ns (replay passes, decoding and
    /// evaluation).
    pub cost_ns: u64,
}

/// One metric's value for one kernel of a profiled launch, as CUPTI's host API evaluated it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Value {
    pub correlation: u32,
    /// The kernel within the launch, from 0 (always 0 for a kernel launch).
    pub range: u32,
    /// Index of a `metric` line.
    pub metric: u32,
    /// Finite, in the metric's base unit (as `ncu --print-units base` shows it).
    pub value: f64,
}

/// Why the library collected fewer counters than asked for (a metric the chip lacks, a profiler
/// error): the run still has its trace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeepError<'a> {
    pub text: Cow<'a, str>,
}

pub(crate) const DEEP_SET: &[&str] = &["device", "chip", "passes"];
pub(crate) const METRIC: &[&str] = &["index", "name"];
pub(crate) const PROFILED: &[&str] = &["correlation id", "ranges", "cost ns"];
pub(crate) const VALUE: &[&str] = &["correlation id", "range", "metric index", "value"];
pub(crate) const DEEP_ERROR: &[&str] = &["text"];

impl<'a> DeepSet<'a> {
    pub(crate) fn write(&self, out: &mut String) {
        Line::start(out, "deep-set")
            .field(self.device)
            .field(escape(&self.chip))
            .field(self.passes)
            .end();
    }

    pub(crate) fn read(mut f: Fields<'a>) -> Result<Self, LineError> {
        Ok(DeepSet {
            device: f.num()?,
            chip: f.text()?,
            passes: f.num()?,
        })
    }
}

impl<'a> Metric<'a> {
    pub(crate) fn write(&self, out: &mut String) {
        Line::start(out, "metric")
            .field(self.index)
            .field(escape(&self.name))
            .end();
    }

    pub(crate) fn read(mut f: Fields<'a>) -> Result<Self, LineError> {
        Ok(Metric {
            index: f.num()?,
            name: f.text()?,
        })
    }
}

impl Profiled {
    pub(crate) fn write(&self, out: &mut String) {
        Line::start(out, "profiled")
            .field(self.correlation)
            .field(self.ranges)
            .field(self.cost_ns)
            .end();
    }

    pub(crate) fn read(mut f: Fields<'_>) -> Result<Self, LineError> {
        Ok(Profiled {
            correlation: f.num()?,
            ranges: f.num()?,
            cost_ns: f.num()?,
        })
    }
}

impl Value {
    /// Rust's shortest text that reads back as the same `f64`.
    pub(crate) fn write(&self, out: &mut String) {
        Line::start(out, "value")
            .field(self.correlation)
            .field(self.range)
            .field(self.metric)
            .field(self.value)
            .end();
    }

    pub(crate) fn read(mut f: Fields<'_>) -> Result<Self, LineError> {
        let correlation = f.num()?;
        let range = f.num()?;
        let metric = f.num()?;
        let value: f64 = f.num()?;
        if !value.is_finite() {
            return Err(LineError(format!(
                "field 4 (value) is {value}, and a counter value is a finite number"
            )));
        }
        Ok(Value {
            correlation,
            range,
            metric,
            value,
        })
    }
}

impl<'a> DeepError<'a> {
    pub(crate) fn write(&self, out: &mut String) {
        Line::start(out, "deep-error")
            .field(escape(&self.text))
            .end();
    }

    pub(crate) fn read(mut f: Fields<'a>) -> Result<Self, LineError> {
        Ok(DeepError { text: f.text()? })
    }
}
