//! When `view`'s Parquet output is complete though the tool keeps running: Neuron Explorer's `view
//! --output-format parquet` writes its tables, then serves a UI and never exits. The output counts
//! as complete once every table is a whole Parquet file (it starts and ends with the `PAR1` magic,
//! and the footer is written last) and no table was added, grown or rewritten for [`SETTLE`]; the
//! tool is then ended. The tool prints no line that says it is done, so the files are the only sign;
//! a table cut mid-write never ends in `PAR1`, so the tool is never ended in the middle of one. Tables
//! a former run left behind do not count until the tool writes one of its own.

use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use crate::process::Flow;
use crate::profiler::neuron::capture::cli::view_output;

/// How long the tables must stay unchanged: longer than the pause between two tables the tool writes.
pub const SETTLE: Duration = Duration::from_secs(2);
/// How often the tables are looked at.
const LOOK_EVERY: Duration = Duration::from_millis(250);
const MAGIC: &[u8; 4] = b"PAR1";

/// Each table's path, size and modification time.
type Tables = Vec<(PathBuf, u64, Option<SystemTime>)>;

/// Watches the output of one `view` run.
pub struct Completion {
    out: PathBuf,
    settle: Duration,
    looked_at: Option<Instant>,
    /// The tables as last seen whole, and since when they have not changed.
    stable: Option<(Tables, Instant)>,
    /// Tables older than this are a former run's: at least one table must be newer (less a margin
    /// for file systems that keep coarse modification times).
    fresh_after: SystemTime,
}

impl Completion {
    /// For `view --output-file OUT` (the tables land in `OUT` or `OUT@latest`).
    pub fn new(out: &Path, settle: Duration) -> Completion {
        Completion {
            out: out.to_path_buf(),
            settle,
            looked_at: None,
            stable: None,
            fresh_after: SystemTime::now() - Duration::from_secs(2),
        }
    }

    /// `EndProgram` once the output has been complete and unchanged for the settle time.
    pub fn check(&mut self) -> Flow {
        if self.looked_at.is_some_and(|t| t.elapsed() < LOOK_EVERY) {
            return Flow::Continue;
        }
        self.looked_at = Some(Instant::now());
        let fresh = |tables: &Tables| tables.iter().any(|t| t.2 >= Some(self.fresh_after));
        let found = view_output(&self.out).and_then(|dir| whole_tables(&dir));
        let Some(tables) = found.filter(fresh) else {
            self.stable = None;
            return Flow::Continue;
        };
        match &self.stable {
            Some((seen, since)) if *seen == tables => {
                if since.elapsed() >= self.settle {
                    return Flow::EndProgram;
                }
            }
            _ => self.stable = Some((tables, Instant::now())),
        }
        Flow::Continue
    }
}

/// The tables of a Parquet output directory when there is at least one and every one is whole.
fn whole_tables(dir: &Path) -> Option<Tables> {
    let mut tables = Vec::new();
    for entry in std::fs::read_dir(dir).ok()? {
        let path = entry.ok()?.path();
        if path.extension().is_none_or(|e| e != "parquet") {
            continue;
        }
        let meta = std::fs::metadata(&path).ok()?;
        if !is_whole(&path, meta.len()) {
            return None;
        }
        tables.push((path, meta.len(), meta.modified().ok()));
    }
    tables.sort();
    (!tables.is_empty()).then_some(tables)
}

/// Whether a Parquet file starts and ends with its magic: a writer still busy has not written the
/// footer yet.
fn is_whole(path: &Path, len: u64) -> bool {
    let read = || -> std::io::Result<bool> {
        if len < 12 {
            return Ok(false);
        }
        // Through the checked open: a FIFO among the profile's files must not block the wait.
        let mut file =
            crate::file_kind::open_checked(path, &crate::file_kind::Checks::unbounded())?;
        let (mut head, mut tail) = ([0u8; 4], [0u8; 4]);
        file.read_exact(&mut head)?;
        file.seek(SeekFrom::End(-4))?;
        file.read_exact(&mut tail)?;
        Ok(&head == MAGIC && &tail == MAGIC)
    };
    read().unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_table_without_its_footer_is_not_whole() {
        let dir = tempfile::tempdir().unwrap();
        let table = dir.path().join("Instruction.parquet");
        std::fs::write(&table, b"PAR1 row groups, no footer yet").unwrap();
        let mut watch = Completion::new(dir.path(), Duration::ZERO);
        assert_eq!(watch.check(), Flow::Continue);
        std::fs::write(&table, b"PAR1 row groups, footer PAR1").unwrap();
        watch.looked_at = None;
        assert_eq!(
            watch.check(),
            Flow::Continue,
            "first seen whole: not settled yet"
        );
        watch.looked_at = None;
        assert_eq!(watch.check(), Flow::EndProgram);
        // Whole tables of an earlier run are not this run's output.
        let mut later = Completion::new(dir.path(), Duration::ZERO);
        later.fresh_after = SystemTime::now() + Duration::from_secs(60);
        assert_eq!(later.check(), Flow::Continue);
        later.looked_at = None;
        assert_eq!(later.check(), Flow::Continue);
    }
}
