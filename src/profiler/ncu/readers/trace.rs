//! Reading one process's trace file (`cupti.<pid>.trace[.gz]`, written by the injection library in
//! `crates/cupti-trace`; its `trace.rs` documents the format). Every malformed line is an error naming
//! the file, the line and the field.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use thiserror::Error;

use crate::fast_map::FastMap;

/// The first line of every trace file.
pub const MAGIC: &str = "profile-run-cupti-trace";

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

/// Whether a range was pushed (a stack level of its thread) or started (a flat range, `nvtxRangeStart`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RangeKind {
    PushPop,
    StartEnd,
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

/// Reads a trace file, plain or gzip (`.gz`).
pub fn read(path: &Path) -> Result<ProcessTrace, TraceError> {
    let io = |source| TraceError::Io {
        path: path.to_path_buf(),
        source,
    };
    let file = std::fs::File::open(path).map_err(io)?;
    let input: Box<dyn Read> = if path.extension().is_some_and(|e| e == "gz") {
        Box::new(flate2::read::GzDecoder::new(file))
    } else {
        Box::new(file)
    };
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
        let mut fields = Fields {
            parts: line.split('\t').collect(),
            path,
            line: at + 1,
        };
        if at == 0 {
            if fields.parts.first() != Some(&MAGIC) || fields.parts.get(1) != Some(&"1") {
                return Err(fields.err(format!("expected `{MAGIC}<TAB>1` as the first line")));
            }
            continue;
        }
        trace.add(&mut fields)?;
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

/// The fields of one line, read by position.
struct Fields<'a> {
    parts: Vec<&'a str>,
    path: &'a Path,
    line: usize,
}

impl Fields<'_> {
    fn err(&self, what: String) -> TraceError {
        TraceError::Malformed {
            path: self.path.to_path_buf(),
            line: self.line,
            what,
        }
    }

    fn raw(&self, at: usize, name: &str) -> Result<&str, TraceError> {
        self.parts.get(at).copied().ok_or_else(|| {
            self.err(format!(
                "`{}` line has no field {at} ({name})",
                self.parts[0]
            ))
        })
    }

    fn num<T: std::str::FromStr>(&self, at: usize, name: &str) -> Result<T, TraceError> {
        let raw = self.raw(at, name)?;
        raw.parse()
            .map_err(|_| self.err(format!("field {at} ({name}) is {raw:?}, not a number")))
    }

    /// A number that a C `int` field holds (grid, block, shared memory), never negative.
    fn count(&self, at: usize, name: &str) -> Result<u32, TraceError> {
        let value: i64 = self.num(at, name)?;
        u32::try_from(value).map_err(|_| self.err(format!("field {at} ({name}) is {value}")))
    }

    fn text(&self, at: usize, name: &str) -> Result<Option<String>, TraceError> {
        let raw = self.raw(at, name)?;
        Ok((raw != "-").then(|| unescape(raw)))
    }
}

impl ProcessTrace {
    fn add(&mut self, f: &mut Fields<'_>) -> Result<(), TraceError> {
        match f.parts[0] {
            "process" => {
                self.pid = f.num(1, "pid")?;
                self.host = f.text(2, "host")?.unwrap_or_default();
                self.process_name = f.text(3, "process name")?.unwrap_or_default();
                self.libcupti = f.text(4, "libcupti")?.unwrap_or_default();
            }
            "name" => {
                let index: usize = f.num(1, "index")?;
                if index != self.names.len() {
                    return Err(f.err(format!(
                        "name index {index} out of order (expected {})",
                        self.names.len()
                    )));
                }
                self.names.push(f.text(2, "name")?.unwrap_or_default());
            }
            "kernel" => self.kernels.push(kernel(f, self.names.len())?),
            "api" => {
                let correlation = f.num(1, "correlation id")?;
                let launch = Launch {
                    thread: f.num(2, "thread")?,
                    start: f.num(3, "start")?,
                };
                self.launches.insert(correlation, launch);
            }
            "range" => self.ranges.push(range(f)?),
            other => return Err(f.err(format!("unknown record `{other}`"))),
        }
        Ok(())
    }
}

fn kernel(f: &Fields<'_>, names: usize) -> Result<Kernel, TraceError> {
    let name: usize = f.num(16, "name index")?;
    if name >= names {
        return Err(f.err(format!(
            "kernel names name {name}, but only {names} names precede it"
        )));
    }
    let kernel = Kernel {
        correlation: f.num(1, "correlation id")?,
        start: f.num(2, "start")?,
        end: f.num(3, "end")?,
        device: f.num(4, "device")?,
        stream: f.num(6, "stream")?,
        grid: [
            f.count(7, "grid x")?,
            f.count(8, "grid y")?,
            f.count(9, "grid z")?,
        ],
        block: [
            f.count(10, "block x")?,
            f.count(11, "block y")?,
            f.count(12, "block z")?,
        ],
        registers: f.num(13, "registers per thread")?,
        static_shared: u64::from(f.count(14, "static shared memory")?),
        dynamic_shared: u64::from(f.count(15, "dynamic shared memory")?),
        name,
    };
    if kernel.end < kernel.start {
        return Err(f.err(format!(
            "the kernel ends ({}) before it starts ({})",
            kernel.end, kernel.start
        )));
    }
    Ok(kernel)
}

fn range(f: &Fields<'_>) -> Result<Range, TraceError> {
    let kind = match f.raw(2, "kind")? {
        "push-pop" => RangeKind::PushPop,
        "start-end" => RangeKind::StartEnd,
        other => {
            return Err(f.err(format!(
                "range kind {other:?} is neither push-pop nor start-end"
            )))
        }
    };
    let end = match f.raw(5, "end")? {
        "-" => None,
        _ => Some(f.num(5, "end")?),
    };
    Ok(Range {
        id: f.num(1, "id")?,
        kind,
        thread: f.num(3, "thread")?,
        start: f.num(4, "start")?,
        end,
        domain: f.text(6, "domain")?,
        name: f.text(7, "name")?,
    })
}

/// Undoes the library's escaping (`\\` `\t` `\n` `\r` `\-`).
fn unescape(raw: &str) -> String {
    if !raw.contains('\\') {
        return raw.to_string();
    }
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('t') => out.push('\t'),
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some(other) => out.push(other),
            None => out.push('\\'),
        }
    }
    out
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
            (&format!("{HEAD}api\tx\t1\t2\n"), 3, "field 1 (correlation id) is \"x\""),
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
