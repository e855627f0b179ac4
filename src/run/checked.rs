//! Every file `report`, `merge` and `diff` read from a run directory, checked before it is read, in
//! one place: what may be followed (a link only to a file inside the run directory; a path the user
//! typed is followed), that it is a regular file (a FIFO would block, `/dev/zero` never ends), and how
//! much it may hold (a gzip file by what it inflates to). The checks themselves are
//! `crate::file_kind::open_checked`; this file holds the limits and the wording.

use std::io::Read;
use std::path::Path;

use crate::error::{Error, Result};
use crate::file_kind::{open_checked, read_small, Checks, FileError, Limit, Links};

/// The largest `run.json` read: profile-run writes a few KiB, one pass record per pass.
pub const RECORD_LIMIT: u64 = 16 << 20;

/// The largest report.json `diff` reads: the model of a report several times this size would be
/// held in memory; profile-run's own reports stay far below it (names are cut at
/// `crate::region::NAME_LIMIT`).
pub const REPORT_JSON_LIMIT: u64 = 1 << 30;

/// How a trace file is opened: a link followed only to a file inside `run_dir` (a trace found in a
/// run directory; `None`: a trace the user named), its text bounded by `max_mib` MiB.
pub fn trace_checks(run_dir: Option<&Path>, max_mib: u64) -> Checks {
    Checks {
        links: run_dir.map_or(Links::Follow, |dir| Links::Within(dir.to_path_buf())),
        limit: Limit {
            bytes: max_mib.saturating_mul(1 << 20),
            fix: "if the trace is genuine, raise pipeline.ncu.trace.max_mib (in your own --config or on the command line)",
        },
    }
}

/// The text of run directory `dir`'s `run.json`, read as data: not through a link, a regular file of
/// at most [`RECORD_LIMIT`] bytes; `None` when there is none. Anything else is refused (exit 2)
/// naming the file, never read.
pub fn read_record(dir: &Path) -> Result<Option<String>> {
    let path = dir.join(super::RECORD_FILE);
    read_small(
        &path,
        RECORD_LIMIT,
        "the run record profile-run writes",
        "remove it, or give the capture files themselves",
    )
    .map_err(|e| refused(&path, e))
}

/// The text of a report.json `diff` compares: `path` itself when the user named the file, a run
/// directory's report.json (followed only inside `run_dir`) otherwise; a regular file of at most
/// [`REPORT_JSON_LIMIT`] bytes.
pub fn read_report_json(path: &Path, run_dir: Option<&Path>) -> Result<String> {
    let checks = Checks {
        links: run_dir.map_or(Links::Follow, |dir| Links::Within(dir.to_path_buf())),
        limit: Limit {
            bytes: REPORT_JSON_LIMIT,
            fix: "profile-run writes far smaller reports: give a report.json it wrote",
        },
    };
    let mut text = String::new();
    open_checked(path, &checks)
        .map_err(|e| refused(path, e))?
        .take(REPORT_JSON_LIMIT + 1)
        .read_to_string(&mut text)
        .map_err(|e| refused(path, FileError::Io { source: e }))?;
    Ok(text)
}

/// Whether the file the user named is a report.json (damaged or not) rather than a capture: its
/// first key is `schema_version`, as profile-run writes every report.json. Anything else (a CSV
/// export, a report file, a trace, a Neuron profile) is a capture to analyse as `report` would.
pub fn starts_as_report_json(path: &Path) -> Result<bool> {
    let mut head = Vec::with_capacity(256);
    open_checked(path, &Checks::unbounded())
        .map_err(|e| refused(path, e))?
        .take(256)
        .read_to_end(&mut head)
        .map_err(|e| refused(path, FileError::Io { source: e }))?;
    let text = String::from_utf8_lossy(&head);
    let rest = text.trim_start().strip_prefix('{').map(str::trim_start);
    Ok(rest.is_some_and(|r| r.starts_with("\"schema_version\"")))
}

/// The most of a log or `command.txt` a live run reads back as text.
pub const RUN_TEXT_LIMIT: u64 = 256 << 20;

/// The text of a file a live run wrote into its run directory and reads back (the profiler's log,
/// `command.txt`, a rank's signature): opened only as a regular file and not through a link, so a
/// FIFO the workload put in its place cannot block the run past a signal, nor a device make it read
/// forever; at most [`RUN_TEXT_LIMIT`] bytes, invalid UTF-8 replaced. Empty when it is missing or
/// refused (the caller then reads nothing, as from an empty log).
pub fn read_run_text(path: &Path) -> String {
    let checks = Checks {
        links: Links::Refuse,
        limit: Limit {
            bytes: u64::MAX,
            fix: "",
        },
    };
    let mut bytes = Vec::new();
    match open_checked(path, &checks) {
        Ok(file) => match file.take(RUN_TEXT_LIMIT).read_to_end(&mut bytes) {
            Ok(_) => String::from_utf8_lossy(&bytes).into_owned(),
            Err(_) => String::new(),
        },
        Err(_) => String::new(),
    }
}

/// Refuses a capture file found in run directory `dir` (an export, a report file) that is not a
/// regular file inside it: a link out of the directory, a FIFO, a device. A missing one is left to
/// the caller. Its size is the reader's to bound (a report file's blocks, an export's lines).
pub fn check_in_run(path: &Path, dir: &Path) -> Result<()> {
    if std::fs::symlink_metadata(path).is_err() {
        return Ok(());
    }
    let checks = Checks {
        links: Links::Within(dir.to_path_buf()),
        limit: Limit {
            bytes: u64::MAX,
            fix: "",
        },
    };
    open_checked(path, &checks)
        .map(drop)
        .map_err(|e| refused(path, e))
}

/// A refusal as a usage error (exit 2) naming the file.
fn refused(path: &Path, e: FileError) -> Error {
    match e {
        FileError::Refused { reason } => Error::Usage(format!("{}: {reason}", path.display())),
        FileError::Io { source } => Error::Usage(format!(
            "cannot read {}: {source}; give a run directory, a report.json or a Neuron profile",
            path.display()
        )),
    }
}
