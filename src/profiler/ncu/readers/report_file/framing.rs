//! The file's framing: `NVR\0`, then a length-prefixed `FileHeader`, then blocks, each a
//! length-prefixed `BlockHeader` followed by `PayloadSize` bytes of length-prefixed messages. All
//! lengths are little-endian u32. Gzip-compressed files are decompressed on the fly.
//!
//! Lengths are never trusted: for a plain file each is checked against the bytes left in the file
//! before anything is reserved, and for a compressed one the buffer grows only as bytes actually
//! arrive, so a hostile length cannot make the reader allocate more than the file holds.

use std::io::{BufRead, BufReader, ErrorKind, Read};
use std::path::{Path, PathBuf};

use flate2::bufread::MultiGzDecoder;

use crate::file_kind::{open_checked, Checks};

use super::error::ReportFileError;
use super::wire::WireError;

pub const MAGIC: &[u8; 4] = b"NVR\0";
const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];
/// What is reserved up front when the stream length is unknown; beyond that the buffer grows with
/// the data actually read.
const STREAM_RESERVE: u64 = 1 << 20;

/// A byte stream over the decompressed file that knows its position (for error offsets) and, for a
/// plain file, how many bytes are left (to check lengths before reserving).
pub(crate) struct Framed {
    path: PathBuf,
    inner: Box<dyn Read + Send>,
    pos: u64,
    /// Total length of a plain file; `None` when compressed or unknown.
    len: Option<u64>,
    gz: bool,
}

impl Framed {
    pub fn open(path: &Path) -> Result<Framed, ReportFileError> {
        let io = |source| ReportFileError::Io {
            path: path.to_path_buf(),
            source,
        };
        // Through the checked open: a FIFO in the report's place (a deep pass's file the workload
        // swapped) would block `open()` past any signal, and a device would never end.
        let file = open_checked(path, &Checks::unbounded()).map_err(|e| io(e.into()))?;
        let file_len = file.metadata().map_err(io)?.len();
        Framed::new(path, file, Some(file_len))
    }

    /// A stream of a report's bytes, plain or gzip-compressed; `len` is the plain length when known.
    pub fn new(
        path: &Path,
        reader: impl Read + Send + 'static,
        len: Option<u64>,
    ) -> Result<Framed, ReportFileError> {
        let mut buf = BufReader::with_capacity(256 * 1024, reader);
        let gz = buf
            .fill_buf()
            .map_err(|source| ReportFileError::Io {
                path: path.to_path_buf(),
                source,
            })?
            .starts_with(&GZIP_MAGIC);
        let (inner, len): (Box<dyn Read + Send>, _) = if gz {
            (Box::new(MultiGzDecoder::new(buf)), None)
        } else {
            (Box::new(buf), len)
        };
        Ok(Framed {
            path: path.to_path_buf(),
            inner,
            pos: 0,
            len,
            gz,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn pos(&self) -> u64 {
        self.pos
    }

    /// Bytes left in a plain file; `None` when the length is unknown (compressed or streamed).
    pub fn left(&self) -> Option<u64> {
        self.len.map(|len| len.saturating_sub(self.pos))
    }

    pub fn malformed(&self, offset: u64, what: impl Into<String>) -> ReportFileError {
        ReportFileError::malformed(&self.path, WireError::new(offset, what))
    }

    fn io(&self, source: std::io::Error) -> ReportFileError {
        ReportFileError::Io {
            path: self.path.clone(),
            source,
        }
    }

    /// Reads up to `n` bytes into `out` (cleared first); returns how many arrived before the end.
    fn read_up_to(&mut self, n: u64, out: &mut Vec<u8>) -> Result<u64, ReportFileError> {
        out.clear();
        let reserve = match self.len {
            Some(len) => n.min(len.saturating_sub(self.pos)),
            None => n.min(STREAM_RESERVE),
        };
        out.reserve(reserve as usize);
        let result = (&mut self.inner).take(n).read_to_end(out);
        self.pos += out.len() as u64;
        match result {
            Ok(got) => Ok(got as u64),
            // A damaged or cut compressed stream is a damaged report, not an I/O failure.
            Err(e) if self.gz && is_data_error(&e) => Err(self.malformed(
                self.pos,
                format!("the gzip stream is damaged or cut short: {e}"),
            )),
            Err(e) => Err(self.io(e)),
        }
    }

    /// Exactly `n` bytes of `what`, or a truncation error at the offset where `what` started.
    pub fn read_exact_into(
        &mut self,
        n: u64,
        what: &str,
        out: &mut Vec<u8>,
    ) -> Result<(), ReportFileError> {
        let start = self.pos;
        if let Some(len) = self.len {
            let left = len.saturating_sub(start);
            if n > left {
                return Err(self.malformed(
                    start,
                    format!(
                        "{what} of {n} bytes runs past the end of the file ({left} bytes left)"
                    ),
                ));
            }
        }
        let got = self.read_up_to(n, out)?;
        if got < n {
            return Err(self.malformed(
                start,
                format!("the file ends {got} bytes into {what} of {n} bytes"),
            ));
        }
        Ok(())
    }

    /// A little-endian u32 length; `Ok(None)` on a clean end of file before its first byte.
    pub fn read_len(&mut self, what: &str) -> Result<Option<u32>, ReportFileError> {
        let start = self.pos;
        let mut b = Vec::with_capacity(4);
        let got = self.read_up_to(4, &mut b)?;
        match got {
            0 => Ok(None),
            4 => Ok(Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))),
            _ => Err(self.malformed(
                start,
                format!("the file ends {got} bytes into the length of {what}"),
            )),
        }
    }

    /// Checks the magic bytes; a wrong start is `NotAReport`, not a decode error.
    pub fn read_magic(&mut self) -> Result<(), ReportFileError> {
        let mut b = Vec::with_capacity(4);
        self.read_up_to(4, &mut b)?;
        if b != MAGIC {
            let found = if b.is_empty() {
                "nothing (an empty file)".to_owned()
            } else {
                // Escaped byte by byte: the start of a foreign file is rarely text, and an error
                // must print as plain ASCII (never replacement characters).
                format!("`{}`", b.escape_ascii())
            };
            return Err(ReportFileError::NotAReport {
                path: self.path.clone(),
                found,
            });
        }
        Ok(())
    }
}

fn is_data_error(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        ErrorKind::InvalidInput | ErrorKind::InvalidData | ErrorKind::UnexpectedEof
    )
}
