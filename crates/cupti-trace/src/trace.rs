//! What one process's trace keeps, and the text file it becomes at exit. Kernels, the API calls that
//! launched them (joined later by correlation id) and NVTX ranges (a marker's start and end records
//! paired by id) are kept as read; nothing is attributed here, so the file is the raw evidence
//! profile-run's reader (`src/profiler/ncu/observe/trace/`) attributes and tests from.
//!
//! The file's format is the `trace-format` crate's, which profile-run reads with. Only the API calls
//! some kernel names by correlation id are written: a CUDA graph's node kernels all carry the graph
//! launch's id.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

use trace_format::{Name, Process, RangeKind, Record};

/// A kernel as the activity record gives it, and a runtime or driver API call: kept as they are
/// written.
pub use trace_format::{Api as ApiCall, ApiKind, Kernel};

/// An NVTX range: its start record, and its end once seen (whether it was a start/end range is known
/// only at the end, see [`Trace::start_end`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Range {
    pub id: u32,
    pub thread: u32,
    pub start: u64,
    pub end: Option<u64>,
    pub domain: Option<String>,
    pub name: Option<String>,
}

/// One process's trace, filled as CUPTI hands over buffers.
/// The process a trace is of: its id, host and name, and its place in its job where a launcher said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Who {
    pub pid: u32,
    pub host: String,
    pub process: String,
    pub rank: Option<u32>,
    pub world_size: Option<u32>,
}

#[derive(Debug, Default)]
pub struct Trace {
    names: Vec<String>,
    name_index: HashMap<String, u32>,
    kernels: Vec<Kernel>,
    api: HashMap<u32, ApiCall>,
    ranges: Vec<Range>,
    open: HashMap<u32, usize>,
    /// Range ids NVTX handed out for start/end ranges (`nvtxRangeStart*`): every other range is a
    /// push/pop range.
    start_end: HashSet<u64>,
    /// In-process counters ([`crate::deep`]): the metric names, each device's chip and pass count,
    /// each profiled launch (correlation id, cost in ns, values per range and metric), and why
    /// counters are missing.
    deep_metrics: Vec<String>,
    deep_sets: Vec<(u32, String, u32)>,
    deep_launches: Vec<(u32, u64, Vec<Vec<f64>>)>,
    deep_errors: Vec<String>,
}

impl Trace {
    /// The index of a kernel name, added on first sight.
    pub fn name(&mut self, name: &str) -> u32 {
        if let Some(&at) = self.name_index.get(name) {
            return at;
        }
        let at = self.names.len() as u32;
        self.names.push(name.to_string());
        self.name_index.insert(name.to_string(), at);
        at
    }

    pub fn kernel(&mut self, kernel: Kernel) {
        self.kernels.push(kernel);
    }

    pub fn api(&mut self, call: ApiCall) {
        self.api.insert(call.correlation, call);
    }

    pub fn range_start(&mut self, range: Range) {
        self.open.insert(range.id, self.ranges.len());
        self.ranges.push(range);
    }

    pub fn range_end(&mut self, id: u32, at: u64) {
        if let Some(index) = self.open.remove(&id) {
            self.ranges[index].end = Some(at);
        }
    }

    pub fn start_end(&mut self, id: u64) {
        self.start_end.insert(id);
    }

    pub fn metrics(&mut self, names: &[String]) {
        self.deep_metrics = names.to_vec();
    }

    pub fn deep_set(&mut self, device: u32, chip: &str, passes: u32) {
        self.deep_sets.push((device, chip.to_string(), passes));
    }

    /// One profiled launch: `values[range][metric]`.
    pub fn profiled(&mut self, correlation: u32, cost_ns: u64, values: Vec<Vec<f64>>) {
        self.deep_launches.push((correlation, cost_ns, values));
    }

    pub fn deep_error(&mut self, why: String) {
        self.deep_errors.push(why);
    }

    /// The in-process counters' records, after the ranges. A value that is not a finite number
    /// (CUPTI's answer for a metric with no samples) becomes an error line naming it.
    fn render_deep(&self, out: &mut String) {
        for (device, chip, passes) in &self.deep_sets {
            Record::DeepSet(trace_format::DeepSet {
                device: *device,
                chip: Cow::Borrowed(chip),
                passes: *passes,
            })
            .write(out);
        }
        for (at, name) in self.deep_metrics.iter().enumerate() {
            Record::Metric(trace_format::Metric {
                index: at as u32,
                name: Cow::Borrowed(name),
            })
            .write(out);
        }
        let mut errors: Vec<Cow<str>> = self.deep_errors.iter().map(|e| e.into()).collect();
        for (correlation, cost_ns, ranges) in &self.deep_launches {
            let correlation = *correlation;
            Record::Profiled(trace_format::Profiled {
                correlation,
                ranges: ranges.len() as u32,
                cost_ns: *cost_ns,
            })
            .write(out);
            for (range, values) in ranges.iter().enumerate() {
                for (metric, &value) in values.iter().enumerate() {
                    if !value.is_finite() {
                        let name = self.deep_metrics.get(metric).map_or("?", String::as_str);
                        errors.push(
                            format!(
                                "launch {correlation} range {range}: {name} evaluated to {value}"
                            )
                            .into(),
                        );
                        continue;
                    }
                    Record::Value(trace_format::Value {
                        correlation,
                        range: range as u32,
                        metric: metric as u32,
                        value,
                    })
                    .write(out);
                }
            }
        }
        for text in errors {
            Record::DeepError(trace_format::DeepError { text }).write(out);
        }
    }

    /// The trace file's text.
    pub fn render(&self, who: &Who, libcupti: &str) -> String {
        let mut out = String::with_capacity(64 + self.kernels.len() * 96);
        trace_format::write_header(&mut out);
        Record::Process(Process {
            pid: who.pid,
            host: who.host.as_str().into(),
            name: who.process.as_str().into(),
            libcupti: libcupti.into(),
            rank: who.rank,
            world_size: who.world_size,
        })
        .write(&mut out);
        for (at, name) in self.names.iter().enumerate() {
            Record::Name(Name {
                index: at as u32,
                name: Cow::Borrowed(name),
            })
            .write(&mut out);
        }
        let mut launched = HashSet::new();
        for k in &self.kernels {
            launched.insert(k.correlation);
            Record::Kernel(*k).write(&mut out);
        }
        let mut calls: Vec<&ApiCall> = self
            .api
            .values()
            .filter(|c| launched.contains(&c.correlation))
            .collect();
        calls.sort_by_key(|c| (c.start, c.correlation));
        for c in calls {
            Record::Api(*c).write(&mut out);
        }
        for r in &self.ranges {
            let kind = if self.start_end.contains(&u64::from(r.id)) {
                RangeKind::StartEnd
            } else {
                RangeKind::PushPop
            };
            Record::Range(trace_format::Range {
                id: r.id,
                kind,
                thread: r.thread,
                start: r.start,
                end: r.end,
                domain: r.domain.as_deref().map(Cow::Borrowed),
                name: r.name.as_deref().map(Cow::Borrowed),
            })
            .write(&mut out);
        }
        self.render_deep(&mut out);
        // Last, so that a reader tells a whole trace from one cut short.
        let lines = out.bytes().filter(|b| *b == b'\n').count() as u64;
        Record::End(trace_format::End { lines }).write(&mut out);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trace_keeps_only_the_launching_calls_and_pairs_ranges() {
        let mut t = Trace::default();
        let gemm = t.name("_Z4gemmPf");
        assert_eq!(t.name("_Z4gemmPf"), gemm, "names are interned");
        t.kernel(Kernel {
            correlation: 7,
            start: 200,
            end: 260,
            device: 0,
            context: 1,
            stream: 7,
            grid: [4, 1, 1],
            block: [128, 1, 1],
            registers: 32,
            static_shared: 0,
            dynamic_shared: 1024,
            name: gemm,
        });
        for (correlation, start) in [(7, 100), (8, 150)] {
            t.api(ApiCall {
                correlation,
                thread: 11,
                start,
                end: start + 5,
                kind: ApiKind::Runtime,
                cbid: 211,
            });
        }
        t.range_start(Range {
            id: 1,
            thread: 11,
            start: 50,
            end: None,
            domain: None,
            name: Some("step\tone".into()),
        });
        t.range_start(Range {
            id: 2,
            thread: 11,
            start: 60,
            end: None,
            domain: Some("LLM".into()),
            name: Some("phase".into()),
        });
        t.start_end(2);
        t.range_end(1, 300);
        let who = Who {
            pid: 42,
            host: "host".into(),
            process: "python3".into(),
            rank: Some(2),
            world_size: None,
        };
        let text = t.render(&who, "libcupti.so.13");
        assert_eq!(
            text,
            "profile-run-cupti-trace\t3\n\
             process\t42\thost\tpython3\tlibcupti.so.13\t2\t-\n\
             name\t0\t_Z4gemmPf\n\
             kernel\t7\t200\t260\t0\t1\t7\t4\t1\t1\t128\t1\t1\t32\t0\t1024\t0\n\
             api\t7\t11\t100\t105\truntime\t211\n\
             range\t1\tpush-pop\t11\t50\t300\t-\tstep\\tone\n\
             range\t2\tstart-end\t11\t60\t-\tLLM\tphase\n\
             end\t7\n"
        );
    }

    #[test]
    fn in_process_counters_follow_the_ranges_and_a_non_finite_value_becomes_an_error() {
        let mut t = Trace::default();
        let k = t.name("_Z4gemmPf");
        t.kernel(Kernel {
            correlation: 7,
            start: 0,
            end: 0,
            device: 0,
            context: 1,
            stream: 7,
            grid: [2, 66, 1],
            block: [384, 1, 1],
            registers: 168,
            static_shared: 0,
            dynamic_shared: 0,
            name: k,
        });
        t.metrics(&[
            "sm__throughput.avg.pct_of_peak_sustained_elapsed".into(),
            "dram__bytes.sum".into(),
        ]);
        t.deep_set(0, "GH100", 9);
        t.profiled(7, 236_500_000, vec![vec![77.81, f64::NAN]]);
        t.deep_error("launch 9: CUPTI measured no kernel in it".into());
        let who = Who {
            pid: 42,
            host: "host".into(),
            process: "python3".into(),
            rank: None,
            world_size: None,
        };
        let text = t.render(&who, "libcupti.so.13");
        let deep: Vec<&str> = text.lines().skip(4).collect();
        assert_eq!(
            deep,
            [
                "deep-set\t0\tGH100\t9",
                "metric\t0\tsm__throughput.avg.pct_of_peak_sustained_elapsed",
                "metric\t1\tdram__bytes.sum",
                "profiled\t7\t1\t236500000",
                "value\t7\t0\t0\t77.81",
                "deep-error\tlaunch 9: CUPTI measured no kernel in it",
                "deep-error\tlaunch 7 range 0: dram__bytes.sum evaluated to NaN",
                "end\t11",
            ]
        );
    }
}
