//! What one process's trace keeps, and the text file it becomes at exit. Kernels, the API calls that
//! launched them (joined later by correlation id) and NVTX ranges (a marker's start and end records
//! paired by id) are kept as read; nothing is attributed here, so the file is the raw evidence
//! profile-run's reader (`src/profiler/ncu/trace/`) attributes and tests from.
//!
//! Format, version 1: UTF-8 lines, fields separated by one tab (shown as two spaces below); text
//! fields escape backslash, tab, newline and carriage return as `\\` `\t` `\n` `\r`; `-` stands for a
//! missing value (a text that is `-` itself is written `\-`).
//!
//! ```text
//! profile-run-cupti-trace  1
//! process  PID  HOST  NAME  LIBCUPTI
//! name  INDEX  MANGLED-KERNEL-NAME
//! kernel  CORRELATION  START  END  DEVICE  CONTEXT  STREAM  GX  GY  GZ  BX  BY  BZ  REGISTERS  STATIC-SMEM  DYNAMIC-SMEM  NAME-INDEX
//! api  CORRELATION  THREAD  START  END  runtime|driver  CBID
//! range  ID  push-pop|start-end  THREAD  START  END|-  DOMAIN|-  NAME|-
//! ```
//!
//! Times are CUPTI timestamps in ns (one clock for kernels, API calls and markers). Only the API calls
//! some kernel names by correlation id are written: a CUDA graph's node kernels all carry the graph
//! launch's id.

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;

/// A kernel as the activity record gives it; `name` indexes the trace's kernel names.
#[derive(Debug, Clone, PartialEq)]
pub struct Kernel {
    pub correlation: u32,
    pub start: u64,
    pub end: u64,
    pub device: u32,
    pub context: u32,
    pub stream: u32,
    pub grid: [i32; 3],
    pub block: [i32; 3],
    pub registers: u16,
    pub static_shared: i32,
    pub dynamic_shared: i32,
    pub name: u32,
}

/// A runtime or driver API call.
#[derive(Debug, Clone, PartialEq)]
pub struct ApiCall {
    pub correlation: u32,
    pub thread: u32,
    pub start: u64,
    pub end: u64,
    pub runtime: bool,
    pub cbid: u32,
}

/// An NVTX range: its start record, and its end once seen.
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

    /// The trace file's text.
    pub fn render(&self, pid: u32, host: &str, process: &str, libcupti: &str) -> String {
        let mut out = String::with_capacity(64 + self.kernels.len() * 96);
        out.push_str("profile-run-cupti-trace\t1\n");
        let _ = writeln!(
            out,
            "process\t{pid}\t{}\t{}\t{}",
            escape(host),
            escape(process),
            escape(libcupti)
        );
        for (at, name) in self.names.iter().enumerate() {
            let _ = writeln!(out, "name\t{at}\t{}", escape(name));
        }
        let mut launched = HashSet::new();
        for k in &self.kernels {
            launched.insert(k.correlation);
            let _ = writeln!(
                out,
                "kernel\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}",
                k.correlation,
                k.start,
                k.end,
                k.device,
                k.context,
                k.stream,
                k.grid[0],
                k.grid[1],
                k.grid[2],
                k.block[0],
                k.block[1],
                k.block[2],
                k.registers,
                k.static_shared,
                k.dynamic_shared,
                k.name
            );
        }
        let mut calls: Vec<&ApiCall> = self
            .api
            .values()
            .filter(|c| launched.contains(&c.correlation))
            .collect();
        calls.sort_by_key(|c| (c.start, c.correlation));
        for c in calls {
            let kind = if c.runtime { "runtime" } else { "driver" };
            let _ = writeln!(
                out,
                "api\t{}\t{}\t{}\t{}\t{kind}\t{}",
                c.correlation, c.thread, c.start, c.end, c.cbid
            );
        }
        for r in &self.ranges {
            let kind = if self.start_end.contains(&u64::from(r.id)) {
                "start-end"
            } else {
                "push-pop"
            };
            let _ = writeln!(
                out,
                "range\t{}\t{kind}\t{}\t{}\t{}\t{}\t{}",
                r.id,
                r.thread,
                r.start,
                r.end.map_or("-".to_string(), |e| e.to_string()),
                r.domain.as_deref().map_or("-".to_string(), escape),
                r.name.as_deref().map_or("-".to_string(), escape),
            );
        }
        out
    }
}

/// A text field with `\`, tab and newline escaped; an empty or `-` text is escaped so that it never
/// reads as a missing value.
pub fn escape(text: &str) -> String {
    if text == "-" {
        return "\\-".into();
    }
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c => out.push(c),
        }
    }
    out
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
                runtime: true,
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
        let text = t.render(42, "host", "python3", "libcupti.so.13");
        assert_eq!(
            text,
            "profile-run-cupti-trace\t1\n\
             process\t42\thost\tpython3\tlibcupti.so.13\n\
             name\t0\t_Z4gemmPf\n\
             kernel\t7\t200\t260\t0\t1\t7\t4\t1\t1\t128\t1\t1\t32\t0\t1024\t0\n\
             api\t7\t11\t100\t105\truntime\t211\n\
             range\t1\tpush-pop\t11\t50\t300\t-\tstep\\tone\n\
             range\t2\tstart-end\t11\t60\t-\tLLM\tphase\n"
        );
    }
}
