//! What can go wrong reading a report file. Every variant names the file; decode errors name the byte
//! offset in the decompressed file, so a damaged file can be inspected with `xxd -s OFFSET`.

use std::path::{Path, PathBuf};

use thiserror::Error;

use super::wire::WireError;

/// The file versions this reader was written against (`FileHeader.Version`).
pub const KNOWN_VERSIONS: &[u32] = &[7];

#[derive(Debug, Error)]
pub enum ReportFileError {
    #[error("could not read {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: not an Nsight Compute report (the file starts with {found}, expected `NVR\\0`); pass a `.ncu-rep` file written by `ncu -o`, or a CSV export")]
    NotAReport { path: PathBuf, found: String },
    #[error("{path}: report file version {version} is not one this reader knows ({known}); read it through ncu instead: set `pipeline.ncu.reader=csv` and `pipeline.ncu.export.pages=[raw,details]` with an ncu that can open it (`pipeline.ncu.executable`, or one on PATH), so profile-run exports CSV pages with `ncu --import`")]
    UnknownVersion {
        path: PathBuf,
        version: u32,
        known: String,
    },
    #[error("{path}: damaged report file at byte {offset}: {what}; re-capture it, or export it with `ncu --import {path} --csv --page raw` to see whether ncu can read it")]
    Malformed {
        path: PathBuf,
        offset: u64,
        what: String,
    },
}

impl ReportFileError {
    pub(crate) fn malformed(path: &Path, e: WireError) -> ReportFileError {
        ReportFileError::Malformed {
            path: path.to_path_buf(),
            offset: e.offset,
            what: e.what,
        }
    }

    pub(crate) fn unknown_version(path: &Path, version: u32) -> ReportFileError {
        let known = KNOWN_VERSIONS
            .iter()
            .map(|v| v.to_string())
            .collect::<Vec<_>>()
            .join(", ");
        ReportFileError::UnknownVersion {
            path: path.to_path_buf(),
            version,
            known,
        }
    }

    /// The byte offset a decode error points at, if it is one.
    pub fn offset(&self) -> Option<u64> {
        match self {
            ReportFileError::Malformed { offset, .. } => Some(*offset),
            _ => None,
        }
    }
}
