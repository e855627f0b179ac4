//! A deep pass's report file read whole before it is joined: one that cannot be read (cut short by a
//! full disk or a killed ncu, empty, overwritten) is left out with a note naming the file and where
//! reading failed, so that the timing pass's report still stands, as it does when the deep pass
//! wrote no file at all.

use std::path::{Path, PathBuf};

use crate::profiler::ncu::readers::report_file::{ReportFile, ReportFileError};

/// Why the report file at `path` cannot be read to its end (every result and every metric cell of
/// it), `None` when it can. The error names the file and, for a damaged one, the byte offset.
pub(crate) fn unreadable(path: &Path, max_block: u64) -> Option<ReportFileError> {
    let mut report = match ReportFile::open_limited(path, max_block) {
        Ok(report) => report,
        Err(e) => return Some(e),
    };
    report
        .for_each_result(|r| {
            for metric in r.metrics() {
                metric.map_err(|e| r.err(e))?;
            }
            Ok::<(), ReportFileError>(())
        })
        .err()
}

/// The note on a deep pass's report file left out because it cannot be read (`error`): the file,
/// the byte offset where reading failed (where the error knows it) and what was found there.
pub(crate) fn note(path: &Path, error: &ReportFileError) -> String {
    let why = match error {
        ReportFileError::Malformed { offset, what, .. } => format!("at byte {offset}, {what}"),
        ReportFileError::NotAReport { found, .. } => {
            format!("at byte 0, it starts with {found}, not a report file's `NVR\\0`")
        }
        ReportFileError::UnknownVersion { version, .. } => {
            format!("its version {version} is not one this reader knows")
        }
        ReportFileError::Io { source, .. } => source.to_string(),
    };
    format!(
        "The deep pass's report file {} cannot be read ({why}): it is left out, so every result keeps its time and none takes deep metrics from it. A deep pass cut short (a full disk, a killed ncu) leaves such a file; profile again for the deep metrics.",
        path.display()
    )
}

/// The note on a deep pass's report file left out (see [`note`]), said on stderr too: a CI log
/// shows it without anyone opening the report.
pub(crate) fn leave_out(path: &Path, error: &ReportFileError) -> String {
    let note = note(path, error);
    crate::console::err_line(&format!("note: {note}"));
    note
}

/// The deep passes' report files among `paths` that can be read (each with its rank), and a note on
/// each one that cannot; files that are missing are kept (their reader says so).
pub(crate) fn split_readable(
    paths: &[(PathBuf, Option<u32>)],
    max_block: u64,
) -> (Vec<(PathBuf, Option<u32>)>, Vec<String>) {
    let mut readable = Vec::with_capacity(paths.len());
    let mut notes = Vec::new();
    for (path, rank) in paths {
        match path
            .is_file()
            .then(|| unreadable(path, max_block))
            .flatten()
        {
            Some(error) => notes.push(leave_out(path, &error)),
            None => readable.push((path.clone(), *rank)),
        }
    }
    (readable, notes)
}
