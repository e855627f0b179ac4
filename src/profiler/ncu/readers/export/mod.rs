//! Reading ncu CSV exports (`ncu --import R.ncu-rep --csv --page raw|details`).
//!
//! The reader streams: it finds the header (skipping program output and `==PROF==` lines a live log
//! may hold before it), indexes the columns it needs by name, reads the units row, and hands one
//! [`crate::region::Observation`] per result to a sink. Nothing is kept per row.
//!
//! Floor: profiler (see `crate::profiler`): imports run, process, analysis, insights, report,
//! config, region and the ground floor, and its own profiler's rooms.

pub mod complete;
pub mod details;
pub mod number;
pub mod nvtx_cell;
pub mod raw;

use std::path::PathBuf;

use thiserror::Error;

/// What can go wrong reading an export. Every variant names the file; row errors name the line.
#[derive(Debug, Error)]
pub enum ExportError {
    #[error("could not read {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: no CSV header (a line starting with \"ID\") in {lines} line(s){hint}")]
    NoHeader {
        path: PathBuf,
        lines: u64,
        hint: String,
    },
    #[error("{path}:{line}: a line of more than 16 MiB before any CSV header (a zero-filled, sparse or binary file?); is this an ncu CSV export (`ncu --import R.ncu-rep --csv --page raw`)?")]
    LineTooLong { path: PathBuf, line: u64 },
    #[error("{path}: the file ends in zero bytes, which no CSV export holds (a pre-allocated, sparse or partly written file); re-export it with `ncu --import REPORT.ncu-rep --csv --page raw --print-units base`")]
    ZeroFilled { path: PathBuf },
    #[error("{path}: the header is incomplete: the file ends inside its header line after {bytes} bytes (a truncated or partly copied export); re-export it with `ncu --import REPORT.ncu-rep --csv --page raw --print-units base`")]
    IncompleteHeader { path: PathBuf, bytes: usize },
    #[error("{path}: this is a `--page {found}` export, expected `--page {expected}`; export it with `ncu --import REPORT.ncu-rep --csv --page {expected} --print-units base`")]
    WrongPage {
        path: PathBuf,
        found: &'static str,
        expected: &'static str,
    },
    #[error("{path}: required column {column:?} is missing from the header")]
    MissingColumn { path: PathBuf, column: String },
    #[error("{path}:{line}: column `{column}` holds `{value}`, a number with a decimal comma (an export made under another locale), which cannot be read reliably: `1,234` could mean 1234 or 1.234; re-export it with `LC_ALL=C ncu --import REPORT.ncu-rep --csv --page raw --print-units base`")]
    DecimalComma {
        path: PathBuf,
        line: u64,
        column: String,
        value: String,
    },
    #[error("{path}:{line}: {message}")]
    Row {
        path: PathBuf,
        line: u64,
        message: String,
    },
}
