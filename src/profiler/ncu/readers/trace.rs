//! Reading one process's trace file (`cupti.<pid>.trace[.gz]`, written by the injection library in
//! `crates/cupti-trace`). Lines are read by the `trace-format` crate, the format's one definition;
//! this file adds what spans lines (name order, the names a kernel points at, the `end` line) and
//! profile-run's own types ([`assemble`]), and the in-process counters of format 3 ([`counters`]).
//! Every malformed line is an error naming the file, the line and the field.
//!
//! Memory stays proportional to the file: a line is read into one reused buffer and refused past
//! [`MAX_LINE_BYTES`]; range names and domains are interned ([`ProcessTrace::texts`]); the kernels of
//! one launch key share its [`LaunchShape`]; API calls are joined to their kernels through a sorted
//! list and dropped.
//!
//! Floor: profiler (see `crate::profiler`): imports run, process, analysis, insights, report,
//! config, region and the ground floor, and its own profiler's rooms.

mod assemble;
mod counters;
pub mod imported;
#[cfg(test)]
mod tests;

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use thiserror::Error;

use trace_format::LineError;

use crate::file_kind::{self, Checks};

pub use counters::{ChipPasses, InProcessCounters, ProfiledLaunch};

/// Whether a range was pushed (a stack level of its thread) or started (a flat range, `nvtxRangeStart`).
pub use trace_format::RangeKind;

/// The longest line read: a mangled kernel name or a range name fits many times over, and a file
/// that is one endless line (zeros, a device) is refused after this much instead of held whole.
pub const MAX_LINE_BYTES: usize = 64 << 20;

/// The longest a kernel or a range may last (every profiler's bound, in the observations' contract).
pub use crate::analysis::MAX_DURATION_NS;

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
    #[error("{path}: kernels run inside up to {count} open {what} (the first past the limit was launched at {at} ns), past regions.max_depth ({limit}); that many is usually a range started in a loop and never ended: fix the program's ranges, or raise the limit with regions.max_depth={count}")]
    TooMany {
        path: PathBuf,
        at: u64,
        count: usize,
        /// What is open: start/end ranges, or NVTX domains with a push/pop range open.
        what: &'static str,
        limit: usize,
    },
    /// A trace another tool wrote (`imported`) that cannot be read as its format says.
    #[error("{path}: {what}")]
    Imported { path: PathBuf, what: String },
}

/// One trace file and the launcher rank whose run made it.
#[derive(Debug, Clone)]
pub struct TraceInput {
    pub path: PathBuf,
    pub rank: Option<u32>,
    /// How the file is opened (`crate::run::trace_checks`): the run directory a link must stay in,
    /// and the bytes its text may reach.
    pub checks: Checks,
    /// Which process of a file that holds several (an nsys export), by its place in the file;
    /// `None` for a file of one process.
    pub part: Option<u32>,
}

/// A kernel launch as traced.
#[derive(Debug, Clone, PartialEq)]
pub struct TracedKernel {
    pub correlation: u32,
    pub start: u64,
    pub end: u64,
    pub device: u32,
    pub stream: u32,
    /// Index into [`ProcessTrace::shapes`]: its mangled name and launch configuration.
    pub shape: u32,
    /// The API call that launched it, when the trace holds it.
    pub launch: Option<Launch>,
}

impl TracedKernel {
    pub fn duration_ns(&self) -> f64 {
        self.end.saturating_sub(self.start) as f64
    }

    /// Where the kernel stands in launch order: when the call that launched it started, else (no
    /// such call in the trace) when it started on the GPU.
    pub fn launched_at(&self) -> u64 {
        self.launch.map_or(self.start, |l| l.start)
    }
}

/// What a kernel launch is besides its times, shared by every kernel launched alike: the launch
/// key of a sampled run's join.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct LaunchShape {
    /// Index into [`ProcessTrace::names`].
    pub name: usize,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub registers: u32,
    pub static_shared: u64,
    pub dynamic_shared: u64,
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
    /// Index into [`ProcessTrace::texts`]; `None` for the default domain.
    pub domain: Option<u32>,
    /// Index into [`ProcessTrace::texts`]; `None` for a range with no name.
    pub name: Option<u32>,
}

/// One process's trace.
#[derive(Debug, Clone, Default)]
pub struct ProcessTrace {
    pub path: PathBuf,
    pub pid: u32,
    pub host: String,
    pub process_name: String,
    pub libcupti: String,
    /// The tool that recorded an imported trace (`kineto`, `nsys`, `rocprofv3`), what `libcupti`
    /// then describes; `None` for profile-run's own CUPTI trace.
    pub recorder: Option<&'static str>,
    /// The process's rank in its job, as its launcher set it (`None`: no launcher, or an older trace).
    pub rank: Option<u32>,
    /// How many ranks its launcher started, where the launcher said (`WORLD_SIZE`, …): ranks of the
    /// job on other hosts count too.
    pub world_size: Option<u32>,
    /// Mangled kernel names, by index.
    pub names: Vec<String>,
    /// Launch keys, each once.
    pub shapes: Vec<LaunchShape>,
    /// Kernels in launch order: by [`Kernel::launched_at`], then correlation id, then start.
    pub kernels: Vec<TracedKernel>,
    /// Ranges by start, then id.
    pub ranges: Vec<Range>,
    /// Range domains and names, each once.
    pub texts: Vec<String>,
    /// Why the trace holds only part of its process's run (it was cut short); `None` when whole.
    pub partial: Option<String>,
    /// Kernels left out because CUPTI handed them over unfinished, with no end time.
    pub unfinished: u64,
    /// Counters the injection library collected in the process (`PROFILE_RUN_DEEP_METRICS`); empty
    /// when none were asked for. A profiled launch's kernel record has no duration (seen on an H200:
    /// start and end 0), so its in-place time must come from its unprofiled twins.
    pub counters: InProcessCounters,
}

impl ProcessTrace {
    /// A kernel's launch key.
    pub fn shape(&self, kernel: &TracedKernel) -> &LaunchShape {
        &self.shapes[kernel.shape as usize]
    }

    /// A kernel's mangled name.
    pub fn name(&self, kernel: &TracedKernel) -> &str {
        &self.names[self.shape(kernel).name]
    }

    /// An interned text (a range's domain or name).
    pub fn text(&self, at: u32) -> &str {
        &self.texts[at as usize]
    }
}

/// Reads a trace file, plain or gzip (`.gz`), named directly (by a tool or a test), with no limit.
pub fn read(path: &Path) -> Result<ProcessTrace, TraceError> {
    read_input(&TraceInput {
        path: path.to_path_buf(),
        rank: None,
        checks: Checks::unbounded(),
        part: None,
    })
}

/// Reads a trace file, plain or gzip (`.gz`), checked before it is opened and bounded while read:
/// profile-run's own CUPTI trace, or a trace another tool wrote, told by its content.
pub fn read_input(input: &TraceInput) -> Result<ProcessTrace, TraceError> {
    let path = &input.path;
    if let Some(format) = imported::sniff(path, &input.checks) {
        return imported::read(format, input);
    }
    let io = |source| TraceError::Io {
        path: path.to_path_buf(),
        source,
    };
    let input = file_kind::open_text(path, &input.checks).map_err(|e| io(e.into()))?;
    parse(BufReader::new(input), path)
}

/// Parses a trace's text; `path` names it in errors.
pub fn parse(mut input: impl BufRead, path: &Path) -> Result<ProcessTrace, TraceError> {
    let malformed = |line: usize, LineError(what)| TraceError::Malformed {
        path: path.to_path_buf(),
        line,
        what,
    };
    let mut builder = None;
    let mut buf = Vec::new();
    let mut at = 0;
    loop {
        buf.clear();
        let limit = MAX_LINE_BYTES as u64 + 1;
        let read = Read::take(&mut input, limit)
            .read_until(b'\n', &mut buf)
            .map_err(|source| TraceError::Io {
                path: path.to_path_buf(),
                source,
            })?;
        if read == 0 {
            break;
        }
        at += 1;
        // The writer ends every line: one without its newline was cut in the middle.
        let cut = buf.pop() != Some(b'\n');
        if cut && buf.len() >= MAX_LINE_BYTES {
            let what = format!("the line is longer than {} MiB", MAX_LINE_BYTES >> 20);
            return Err(malformed(at, LineError(what)));
        }
        match builder.as_mut() {
            Some(b) if cut => {
                assemble::Builder::cut(b, at);
                break;
            }
            Some(b) => b
                .add(utf8(&buf, path, at)?, at)
                .map_err(|e| malformed(at, e))?,
            None => {
                let version = trace_format::check_header(utf8(&buf, path, at)?);
                let mut first =
                    assemble::Builder::new(path, version.map_err(|e| malformed(at, e))?);
                if cut {
                    first.cut(at);
                }
                builder = Some(first);
            }
        }
        if cut {
            break;
        }
    }
    let Some(builder) = builder else {
        let what = "the file is empty, with no first line".to_string();
        return Err(malformed(1, LineError(what)));
    };
    builder.finish().map_err(|e| malformed(1, e))
}

/// A whole line as text.
fn utf8<'b>(bytes: &'b [u8], path: &Path, line: usize) -> Result<&'b str, TraceError> {
    std::str::from_utf8(bytes).map_err(|e| TraceError::Malformed {
        path: path.to_path_buf(),
        line,
        what: format!("not UTF-8 text (byte {} of the line)", e.valid_up_to() + 1),
    })
}
