//! Traces other tools wrote, read into the same [`ProcessTrace`] as profile-run's own CUPTI trace, so
//! that attribution, the region tree, the cross-rank diagnosis, trace.json and `diff` treat them
//! alike: PyTorch profiler (Kineto) JSON traces ([`kineto`]), Nsight Systems SQLite exports
//! ([`nsys`]), rocprofv3 CSV kernel traces ([`rocprof`]) and rocprofv3 rocpd databases
//! ([`rocpd`]). Each format is told by its content, never by its name alone; its schema version is
//! read and checked, an unknown shape is refused naming the key, table, view or column, and every
//! read is bounded by the same `pipeline.ncu.trace.max_mib` as the CUPTI trace.
//!
//! Floor: profiler (see `crate::profiler`): imports run, process, analysis, insights, report,
//! config, region and the ground floor, and its own profiler's rooms.

mod collect;
pub mod kineto;
pub mod nsys;
mod nsys_rep;
pub mod rocpd;
pub mod rocprof;
mod sqlite;

use std::io::Read;
use std::path::Path;

use super::{ProcessTrace, TraceError, TraceInput};
use crate::file_kind::{self, Checks};

/// A trace format profile-run reads besides its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImportedFormat {
    /// A PyTorch profiler trace (`torch.profiler`, Kineto): Chrome trace JSON, plain or gzip.
    Kineto,
    /// `nsys export --type sqlite`.
    NsysSqlite,
    /// rocprofv3's CSV kernel trace, with its marker and HIP API traces beside it.
    RocprofCsv,
    /// rocprofv3's SQLite output (`--output-format rocpd`).
    RocpdDb,
}

/// The first bytes of every SQLite database.
const SQLITE_MAGIC: &[u8] = b"SQLite format 3\0";

/// The format of the file at `path`, told by its first bytes (inflated first for a gzip file);
/// `None` for anything else, a CUPTI trace included. Opened with `checks`, read no further than
/// its head.
pub fn sniff(path: &Path, checks: &Checks) -> Option<ImportedFormat> {
    let mut head = [0u8; 1024];
    let read = |mut text: Box<dyn Read + Send>, head: &mut [u8]| {
        let mut filled = 0;
        while filled < head.len() {
            match text.read(&mut head[filled..]) {
                Ok(0) | Err(_) => break,
                Ok(n) => filled += n,
            }
        }
        filled
    };
    let raw = file_kind::open_checked(path, checks).ok()?;
    let filled = read(Box::new(raw), &mut head);
    // An SQLite file with rocpd's metadata is a rocpd database; every other one is read as an
    // nsys export, and reading it names the table it lacks.
    if head[..filled].starts_with(SQLITE_MAGIC) {
        return Some(match rocpd::is_rocpd(path) {
            true => ImportedFormat::RocpdDb,
            false => ImportedFormat::NsysSqlite,
        });
    }
    let filled = match head[..filled].starts_with(&[0x1f, 0x8b]) {
        true => {
            let raw = file_kind::open_checked(path, checks).ok()?;
            let inflated = flate2::read::MultiGzDecoder::new(std::io::BufReader::new(raw));
            read(Box::new(inflated), &mut head)
        }
        false => filled,
    };
    let text = String::from_utf8_lossy(&head[..filled]);
    let text = text.trim_start_matches('\u{feff}').trim_start();
    // A Kineto trace is one JSON object; a CUPTI trace's first line is its own header.
    if text.starts_with('{') {
        return Some(ImportedFormat::Kineto);
    }
    let first = text.lines().next().unwrap_or("");
    rocprof::is_kernel_trace_header(first).then_some(ImportedFormat::RocprofCsv)
}

/// The processes in a trace of `format`, each read as one [`TraceInput`] with its `part`: one for a
/// Kineto trace (one process wrote it), one per process that ran kernels for an nsys export or a
/// rocpd database.
pub fn parts(format: ImportedFormat, path: &Path) -> Result<Vec<Option<u32>>, TraceError> {
    match format {
        ImportedFormat::Kineto | ImportedFormat::RocprofCsv => Ok(vec![None]),
        ImportedFormat::NsysSqlite => {
            let count = nsys::process_count(path)?;
            Ok((0..count).map(Some).collect())
        }
        ImportedFormat::RocpdDb => {
            let count = rocpd::process_count(path)?;
            Ok((0..count).map(Some).collect())
        }
    }
}

/// Reads one process of an imported trace, checked and bounded as `input` says.
pub fn read(format: ImportedFormat, input: &TraceInput) -> Result<ProcessTrace, TraceError> {
    match format {
        ImportedFormat::Kineto => kineto::read(input),
        ImportedFormat::NsysSqlite => nsys::read(input),
        ImportedFormat::RocprofCsv => rocprof::read(input),
        ImportedFormat::RocpdDb => rocpd::read(input),
    }
}

/// The error of an imported trace: `what` names the key, table or column and the fix.
fn refused(path: &Path, what: impl Into<String>) -> TraceError {
    TraceError::Imported {
        path: path.to_path_buf(),
        what: what.into(),
    }
}

/// The process of a database that `input.part` names among `processes` (the first when none),
/// once the file passed `input.checks` (a regular file within its bound) before SQLite opens it.
fn chosen_process<P: Copy>(input: &TraceInput, processes: &[P]) -> Result<P, TraceError> {
    let part = input.part.unwrap_or(0) as usize;
    processes.get(part).copied().ok_or_else(|| {
        refused(
            &input.path,
            format!(
                "holds {} processes with kernels, not a process {part}",
                processes.len()
            ),
        )
    })
}

/// `input` opened through its checks, before SQLite reads it.
fn check_open(input: &TraceInput) -> Result<(), TraceError> {
    file_kind::open_checked(&input.path, &input.checks)
        .map(drop)
        .map_err(|e| TraceError::Io {
            path: input.path.clone(),
            source: e.into(),
        })
}

/// The trace inputs one `report` / `merge` / `diff` argument makes when it is a trace another tool
/// wrote: one per process it holds (an nsys export of several processes splits by process), each
/// bounded by `max_mib`. A `.nsys-rep` is exported to SQLite first, into `export_dir()` (the report's
/// own directory, never beside the user's file). `None`: not such a trace.
pub fn trace_inputs(
    argument: &Path,
    max_mib: u64,
    export_dir: &mut dyn FnMut() -> crate::error::Result<std::path::PathBuf>,
) -> crate::error::Result<Option<Vec<TraceInput>>> {
    if !argument.is_file() {
        return Ok(None);
    }
    let checks = crate::run::trace_checks(None, max_mib);
    let path = match nsys_rep::is_nsys_rep(argument) {
        true => nsys_rep::export(argument, &export_dir()?)?,
        false => argument.to_path_buf(),
    };
    let Some(format) = sniff(&path, &checks) else {
        return Ok(None);
    };
    let inputs = parts(format, &path)?
        .into_iter()
        .map(|part| TraceInput {
            path: path.clone(),
            rank: None,
            checks: checks.clone(),
            part,
        })
        .collect();
    Ok(Some(inputs))
}
