//! Reading one process's trace file (`cupti.<pid>.trace[.gz]`, written by the injection library in
//! `crates/cupti-trace`). Lines are read by the `trace-format` crate, the format's one definition;
//! this file adds what spans lines (name order, the names a kernel points at) and profile-run's own
//! types. Every malformed line is an error naming the file, the line and the field.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use thiserror::Error;

use trace_format::{LineError, Record};

use crate::fast_map::FastMap;

/// Whether a range was pushed (a stack level of its thread) or started (a flat range, `nvtxRangeStart`).
pub use trace_format::RangeKind;

#[derive(Debug, Error)]
pub enum TraceError {
    #[error("could not read {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}:{line}: {what}; the file is not a trace the cupti-trace library wrote (rerun the workload, or remove the file)")]
    Malformed {
        path: PathBuf,
        line: usize,
        what: String,
    },
}

/// One trace file and the launcher rank whose run made it.
#[derive(Debug, Clone)]
pub struct TraceInput {
    pub path: PathBuf,
    pub rank: Option<u32>,
    /// How the file is opened (`crate::run::trace_checks`): the run directory a link must stay in,
    /// and the bytes its text may reach.
    pub checks: crate::file_kind::Checks,
}

/// A kernel launch as traced.
#[derive(Debug, Clone, PartialEq)]
pub struct Kernel {
    pub correlation: u32,
    pub start: u64,
    pub end: u64,
    pub device: u32,
    pub stream: u32,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub registers: u32,
    pub static_shared: u64,
    pub dynamic_shared: u64,
    /// Index into [`ProcessTrace::names`].
    pub name: usize,
}

impl Kernel {
    pub fn duration_ns(&self) -> f64 {
        self.end.saturating_sub(self.start) as f64
    }
}

/// The API call that launched kernels (a kernel or CUDA graph launch).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Launch {
    pub thread: u32,
    pub start: u64,
}

/// An NVTX range; `end` is `None` when it never ended.
#[derive(Debug, Clone, PartialEq)]
pub struct Range {
    pub id: u32,
    pub kind: RangeKind,
    pub thread: u32,
    pub start: u64,
    pub end: Option<u64>,
    pub domain: Option<String>,
    pub name: Option<String>,
}

/// One process's trace.
#[derive(Debug, Clone, Default)]
pub struct ProcessTrace {
    pub path: PathBuf,
    pub pid: u32,
    pub host: String,
    pub process_name: String,
    pub libcupti: String,
    /// Mangled kernel names, by index.
    pub names: Vec<String>,
    pub kernels: Vec<Kernel>,
    pub launches: FastMap<u32, Launch>,
    pub ranges: Vec<Range>,
}

/// Reads a trace file, plain or gzip (`.gz`), named directly (by a tool or a test), with no limit.
pub fn read(path: &Path) -> Result<ProcessTrace, TraceError> {
    read_input(&TraceInput {
        path: path.to_path_buf(),
        rank: None,
        checks: crate::file_kind::Checks::unbounded(),
    })
}

/// Reads a trace file, plain or gzip (`.gz`), checked before it is opened and bounded while read.
pub fn read_input(input: &TraceInput) -> Result<ProcessTrace, TraceError> {
    let path = &input.path;
    let io = |source| TraceError::Io {
        path: path.to_path_buf(),
        source,
    };
    let input = crate::file_kind::open_text(path, &input.checks).map_err(|e| io(e.into()))?;
    parse(BufReader::new(input), path)
}

/// Parses a trace's text; `path` names it in errors.
pub fn parse(input: impl BufRead, path: &Path) -> Result<ProcessTrace, TraceError> {
    let mut trace = ProcessTrace {
        path: path.to_path_buf(),
        ..ProcessTrace::default()
    };
    for (at, line) in input.lines().enumerate() {
        let line = line.map_err(|source| TraceError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        let malformed = |LineError(what)| TraceError::Malformed {
            path: path.to_path_buf(),
            line: at + 1,
            what,
        };
        if at == 0 {
            trace_format::check_header(&line).map_err(malformed)?;
            continue;
        }
        let record = Record::parse(&line).map_err(malformed)?;
        trace.add(record).map_err(malformed)?;
    }
    if trace.pid == 0 {
        return Err(TraceError::Malformed {
            path: path.to_path_buf(),
            line: 1,
            what: "no `process` line".into(),
        });
    }
    Ok(trace)
}

impl ProcessTrace {
    /// Files one record, checking what the line alone cannot: names in order, kernels naming a
    /// name already read, kernels that end after they start.
    fn add(&mut self, record: Record<'_>) -> Result<(), LineError> {
        match record {
            Record::Process(p) => {
                self.pid = p.pid;
                self.host = p.host.into_owned();
                self.process_name = p.name.into_owned();
                self.libcupti = p.libcupti.into_owned();
            }
            Record::Name(n) => {
                if n.index as usize != self.names.len() {
                    return Err(LineError(format!(
                        "name index {} out of order (expected {})",
                        n.index,
                        self.names.len()
                    )));
                }
                self.names.push(n.name.into_owned());
            }
            Record::Kernel(k) => self.kernels.push(kernel(k, self.names.len())?),
            Record::Api(a) => {
                let launch = Launch {
                    thread: a.thread,
                    start: a.start,
                };
                self.launches.insert(a.correlation, launch);
            }
            Record::Range(r) => self.ranges.push(Range {
                id: r.id,
                kind: r.kind,
                thread: r.thread,
                start: r.start,
                end: r.end,
                domain: r.domain.map(|d| d.into_owned()),
                name: r.name.map(|n| n.into_owned()),
            }),
        }
        Ok(())
    }
}

fn kernel(k: trace_format::Kernel, names: usize) -> Result<Kernel, LineError> {
    let name = k.name as usize;
    if name >= names {
        return Err(LineError(format!(
            "kernel names name {name}, but only {names} names precede it"
        )));
    }
    if k.end < k.start {
        return Err(LineError(format!(
            "the kernel ends ({}) before it starts ({})",
            k.end, k.start
        )));
    }
    // The format keeps sizes never negative, so `unsigned_abs` is the value itself.
    let size = |v: i32| v.unsigned_abs();
    Ok(Kernel {
        correlation: k.correlation,
        start: k.start,
        end: k.end,
        device: k.device,
        stream: k.stream,
        grid: k.grid.map(size),
        block: k.block.map(size),
        registers: u32::from(k.registers),
        static_shared: u64::from(size(k.static_shared)),
        dynamic_shared: u64::from(size(k.dynamic_shared)),
        name,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_text(text: &str) -> Result<ProcessTrace, TraceError> {
        parse(text.as_bytes(), Path::new("t.trace"))
    }

    const HEAD: &str = "profile-run-cupti-trace\t1\nprocess\t42\th\tpython3\t/lib/libcupti.so.13\n";

    #[test]
    fn every_record_reads_back() {
        let text = format!(
            "{HEAD}name\t0\t_Z4gemmv\n\
             kernel\t7\t200\t260\t0\t1\t7\t4\t1\t1\t128\t1\t1\t32\t0\t1024\t0\n\
             api\t7\t11\t100\t105\truntime\t211\n\
             range\t1\tpush-pop\t11\t50\t300\t-\tstep\\tone\n\
             range\t2\tstart-end\t11\t60\t-\tLLM\t\\-\n"
        );
        let t = parse_text(&text).unwrap();
        assert_eq!((t.pid, t.process_name.as_str()), (42, "python3"));
        assert_eq!(t.names, ["_Z4gemmv"]);
        assert_eq!(t.kernels[0].grid, [4, 1, 1]);
        assert_eq!(t.kernels[0].dynamic_shared, 1024);
        assert_eq!(t.kernels[0].duration_ns(), 60.0);
        assert_eq!(
            t.launches[&7],
            Launch {
                thread: 11,
                start: 100
            }
        );
        assert_eq!(t.ranges[0].name.as_deref(), Some("step\tone"));
        assert_eq!(t.ranges[0].domain, None);
        assert_eq!(t.ranges[1].kind, RangeKind::StartEnd);
        assert_eq!(t.ranges[1].end, None);
        assert_eq!(
            t.ranges[1].name.as_deref(),
            Some("-"),
            "an escaped dash is a name"
        );
    }

    #[test]
    fn malformed_lines_name_the_line_and_field() {
        let cases = [
            ("garbage\n", 1, "expected `profile-run-cupti-trace"),
            (
                &format!("{HEAD}kernel\t7\t200\n") as &str,
                3,
                "has no field 16 (name index)",
            ),
            (
                &format!("{HEAD}name\t0\tk\nkernel\t7\t200\t100\t0\t1\t7\t4\t1\t1\t128\t1\t1\t32\t0\t0\t0\n"),
                4,
                "ends (100) before it starts (200)",
            ),
            (&format!("{HEAD}api\tx\t1\t2\t3\truntime\t1\n"), 3, "field 1 (correlation id) is \"x\""),
            (&format!("{HEAD}api\t1\t1\t2\n"), 3, "has no field 6 (cbid)"),
            (&format!("{HEAD}name\t1\tk\n"), 3, "name index 1 out of order (expected 0)"),
            (&format!("{HEAD}range\t1\tnested\t1\t2\t3\t-\ta\n"), 3, "neither push-pop"),
            (&format!("{HEAD}kernel\t7\t2\t3\t0\t1\t7\t4\t1\t1\t1\t1\t1\t32\t0\t0\t5\n"), 3, "only 0 names"),
            (&format!("{HEAD}memcpy\t1\n"), 3, "unknown record `memcpy`"),
            ("profile-run-cupti-trace\t1\n", 1, "no `process` line"),
        ];
        for (text, line, what) in cases {
            let e = parse_text(text).unwrap_err().to_string();
            assert!(e.starts_with(&format!("t.trace:{line}: ")), "{e}");
            assert!(e.contains(what), "{e}");
        }
    }
}
