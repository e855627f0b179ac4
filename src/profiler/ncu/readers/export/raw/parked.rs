//! Exports that hold nothing while they wait their turn. `merge` opens every rank's export up front
//! to check that their headers agree, then reads them one after another: what it keeps of each
//! meanwhile is a [`RawHead`] (path, rank, where the results start, what the header told), a few
//! hundred bytes, never the reader, its buffers or the header's columns (about 200 KB an export,
//! 2 GB at 10,000 ranks), and no descriptor. Its turn reopens it ([`RawHead::reopen`]).

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use super::{ExportError, RawExport, RawPlan, RawSummary};
use crate::profiler::ncu::readers::export::complete::check_last_row;

pub struct ParkedFile {
    path: PathBuf,
    /// Bytes handed out so far: where a reopened file continues.
    pos: u64,
    file: Option<File>,
}

impl ParkedFile {
    pub fn new(file: File, path: PathBuf) -> ParkedFile {
        ParkedFile {
            path,
            pos: 0,
            file: Some(file),
        }
    }

    /// Closes the file; the next read reopens it at the same position.
    pub fn park(&mut self) {
        self.file = None;
    }
}

impl Read for ParkedFile {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let file = match &mut self.file {
            Some(file) => file,
            None => {
                let mut file = File::open(&self.path)?;
                file.seek(SeekFrom::Start(self.pos))?;
                self.file.insert(file)
            }
        };
        let n = file.read(buf)?;
        self.pos += n as u64;
        Ok(n)
    }
}

/// A raw export on disk whose file is closed between reads ([`ParkedFile`]).
pub type RawFile = RawExport<std::io::BufReader<ParkedFile>>;

/// What is kept of a raw export between the check of its header and its turn to be read.
#[derive(Debug, Clone)]
pub struct RawHead {
    pub path: PathBuf,
    /// The launcher rank stamped on its scopes.
    pub rank: Option<u32>,
    /// Byte offset of its first result.
    pub data_start: u64,
    pub summary: RawSummary,
}

impl RawHead {
    /// Opens the export again, header read, ready to stream its results.
    pub fn reopen(&self, plan: &RawPlan<'_>) -> Result<RawFile, ExportError> {
        Ok(open_raw_file(&self.path, plan)?.with_rank(self.rank))
    }
}

/// Opens a raw export, reads its header and units row, and keeps only its [`RawHead`].
pub fn open_raw_head(
    path: &Path,
    rank: Option<u32>,
    plan: &RawPlan<'_>,
) -> Result<RawHead, ExportError> {
    let export = open_raw_file(path, plan)?;
    Ok(RawHead {
        path: export.path,
        rank,
        data_start: export.data_start,
        summary: export.summary,
    })
}

/// Opens a raw export on disk (header and units row read); its file is closed again until the
/// results are read, so many exports waiting their turn hold no descriptor.
pub fn open_raw_file(path: &Path, plan: &RawPlan<'_>) -> Result<RawFile, ExportError> {
    let file = std::fs::File::open(path).map_err(|source| ExportError::Io {
        path: PathBuf::from(path),
        source,
    })?;
    check_last_row(path)?;
    let file = ParkedFile::new(file, path.to_path_buf());
    // 64 KiB, not more: the buffer is filled (and so resident) for each export while its header is
    // read, and a merge holds every rank's export at once.
    let input = std::io::BufReader::with_capacity(64 << 10, file);
    let mut export = RawExport::open(input, path, plan)?;
    export.reader.get_mut().get_mut().1.get_mut().park();
    Ok(export)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_parked_file_reads_on_where_it_stopped() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x");
        std::fs::write(&path, b"0123456789").unwrap();
        let mut parked = ParkedFile::new(File::open(&path).unwrap(), path);
        let mut head = [0u8; 4];
        parked.read_exact(&mut head).unwrap();
        parked.park();
        assert!(parked.file.is_none());
        let mut rest = String::new();
        parked.read_to_string(&mut rest).unwrap();
        assert_eq!((&head[..], rest.as_str()), (&b"0123"[..], "456789"));
    }
}
