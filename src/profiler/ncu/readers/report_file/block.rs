//! Blocks: each `BlockHeader` says how many sources and results of each kind its payload holds, may
//! extend the string table, names the process, and may carry session details (devices, versions); the payload
//! holds the length-prefixed `SourceData` messages (skipped) and then the results, kernels first, then
//! ranges, command lists and graphs.

use std::path::Path;

use super::error::ReportFileError;
use super::framing::Framed;
use super::record::{ProcessInfo, ResultKind, ResultRecord};
use super::result::{self, Context};
use super::strings::StringTable;
use super::wire::{Cursor, WireError};
use super::ReadSummary;

/// The file header is one small message (its version); anything larger is not a header.
const MAX_FILE_HEADER: u32 = 1 << 16;

/// The largest block header or payload read unless the caller sets another
/// (`pipeline.ncu.max_block_mib`). ncu writes blocks of a few tens of KB; a length far past that is a
/// damaged or hostile file, refused before a byte of it is reserved or decompressed.
pub const DEFAULT_MAX_BLOCK_BYTES: u64 = 256 << 20;

/// A device as the session details list it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct DeviceInfo {
    pub id: u32,
    pub name: Option<String>,
}

/// What the session details say about where the report was made, merged over every block.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SessionInfo {
    /// One entry per device id, in the order first listed.
    pub devices: Vec<DeviceInfo>,
    /// The `(component, version)` pairs ncu records (`CUDA Version` → `13.0`, `Nsight Compute
    /// Target` → `2025.3.1.0 (build …)`, `PerfWorks`), in file order, one per component.
    pub versions: Vec<(String, String)>,
}

impl SessionInfo {
    /// The version ncu recorded for `component`.
    pub fn version(&self, component: &str) -> Option<&str> {
        self.versions
            .iter()
            .find(|(c, _)| c == component)
            .map(|(_, v)| v.as_str())
    }
}

/// Reads the length-prefixed `FileHeader` and returns its version.
pub(crate) fn read_file_header(framed: &mut Framed) -> Result<u32, ReportFileError> {
    let at = framed.pos();
    let len = framed
        .read_len("the file header")?
        .ok_or_else(|| framed.malformed(at, "the file ends after the magic bytes"))?;
    if len > MAX_FILE_HEADER {
        return Err(framed.malformed(
            at,
            format!("a file header of {len} bytes (at most {MAX_FILE_HEADER} expected)"),
        ));
    }
    let mut buf = Vec::new();
    framed.read_exact_into(u64::from(len), "the file header", &mut buf)?;
    let mut version = None;
    Cursor::new(&buf, at + 4)
        .for_each(|f| {
            if f.number == 1 {
                version = Some(f.as_u32()?);
            }
            Ok(())
        })
        .map_err(|e| ReportFileError::malformed(framed.path(), e))?;
    version.ok_or_else(|| framed.malformed(at + 4, "the file header has no version"))
}

/// The counts of one block's header.
#[derive(Debug, Default, Clone, Copy)]
struct Counts {
    sources: u32,
    kernels: u32,
    ranges: u32,
    cmdlists: u32,
    graphs: u32,
    payload: u32,
}

pub(crate) struct BlockReader {
    framed: Framed,
    /// The largest block header or payload read, in bytes.
    max_block: u64,
    header: Vec<u8>,
    payload: Vec<u8>,
    payload_at: u64,
    counts: Counts,
    strings: StringTable,
    process: ProcessInfo,
    session: SessionInfo,
    next_index: u64,
}

impl BlockReader {
    pub fn new(framed: Framed, max_block: u64) -> BlockReader {
        BlockReader {
            framed,
            max_block,
            header: Vec::new(),
            payload: Vec::new(),
            payload_at: 0,
            counts: Counts::default(),
            strings: StringTable::default(),
            process: ProcessInfo::default(),
            session: SessionInfo::default(),
            next_index: 0,
        }
    }

    pub fn path(&self) -> &Path {
        self.framed.path()
    }

    pub fn session(&self) -> &SessionInfo {
        &self.session
    }

    /// Reads the next block's header and payload; `false` at a clean end of file.
    pub fn next_block(&mut self) -> Result<bool, ReportFileError> {
        let Some(len) = self.framed.read_len("a block header")? else {
            return Ok(false);
        };
        let at = self.framed.pos();
        // ncu never writes an empty block header; zeros where a block should start are a
        // pre-allocated or zero-filled file, which must not read as a report with no results.
        if len == 0 {
            return Err(self.framed.malformed(
                at,
                "a block header of 0 bytes (zeros where a block should start: a damaged, \
                 pre-allocated or zero-filled file); capture again or copy the report anew",
            ));
        }
        self.check_size(u64::from(len), "a block header", at)?;
        self.framed
            .read_exact_into(u64::from(len), "a block header", &mut self.header)?;
        let header = std::mem::take(&mut self.header);
        let decoded = self.decode_header(Cursor::new(&header, at));
        self.header = header;
        self.counts = decoded.map_err(|e| ReportFileError::malformed(self.framed.path(), e))?;
        self.payload_at = self.framed.pos();
        self.check_size(u64::from(self.counts.payload), "a block payload", at)?;
        self.framed.read_exact_into(
            u64::from(self.counts.payload),
            "a block payload",
            &mut self.payload,
        )?;
        Ok(true)
    }

    /// Refuses a length past the block limit before anything is reserved or decompressed.
    /// A length past the end of a plain file is left to the read, whose message says so.
    fn check_size(&self, n: u64, what: &str, at: u64) -> Result<(), ReportFileError> {
        if n <= self.max_block || self.framed.left().is_some_and(|left| n > left) {
            return Ok(());
        }
        Err(self.framed.malformed(
            at,
            format!(
                "{what} of {n} bytes is past the limit of {} MiB (ncu writes blocks of a few tens of KB): \
                 the file is damaged; if it is a genuine report, raise pipeline.ncu.max_block_mib",
                self.max_block >> 20
            ),
        ))
    }

    fn decode_header(&mut self, msg: Cursor<'_>) -> Result<Counts, WireError> {
        let mut c = Counts::default();
        msg.for_each(|f| {
            match f.number {
                1 => c.sources = f.as_u32()?,
                2 => c.kernels = f.as_u32()?,
                3 => read_session(f.as_message()?, &mut self.session)?,
                4 => self.strings.extend(f.as_message()?)?,
                5 => c.payload = f.as_u32()?,
                6 => self.process = decode_process(f.as_message()?)?,
                7 => c.ranges = f.as_u32()?,
                8 => c.cmdlists = f.as_u32()?,
                9 => c.graphs = f.as_u32()?,
                _ => {}
            }
            Ok(())
        })?;
        Ok(c)
    }

    /// Hands every result of the current block to `visit`, in payload order.
    pub fn for_each_in_block<E, F>(
        &mut self,
        summary: &mut ReadSummary,
        visit: &mut F,
    ) -> Result<(), E>
    where
        E: From<ReportFileError>,
        F: FnMut(&ResultRecord<'_>) -> Result<(), E>,
    {
        let path = self.framed.path();
        let cx = Context {
            path,
            process: &self.process,
            strings: &self.strings,
        };
        let malformed = |e: WireError| E::from(ReportFileError::malformed(path, e));
        let mut messages = Messages {
            buf: &self.payload,
            pos: 0,
            base: self.payload_at,
        };
        for _ in 0..self.counts.sources {
            messages.next("a source").map_err(malformed)?;
        }
        let c = self.counts;
        let kinds = [
            (ResultKind::Kernel, c.kernels),
            (ResultKind::Range, c.ranges),
            (ResultKind::Cmdlist, c.cmdlists),
            (ResultKind::Graph, c.graphs),
        ];
        for (kind, n) in kinds {
            for _ in 0..n {
                let (bytes, at) = messages.next("a result").map_err(malformed)?;
                let record =
                    result::decode(kind, self.next_index, bytes, at, &cx).map_err(malformed)?;
                self.next_index += 1;
                summary.results += 1;
                match kind {
                    ResultKind::Kernel => summary.kernel_results += 1,
                    ResultKind::Range => summary.range_results += 1,
                    _ => {}
                }
                visit(&record)?;
            }
        }
        messages.finish().map_err(malformed)
    }
}

/// The length-prefixed messages of one payload.
struct Messages<'a> {
    buf: &'a [u8],
    pos: usize,
    base: u64,
}

impl<'a> Messages<'a> {
    fn next(&mut self, what: &str) -> Result<(&'a [u8], u64), WireError> {
        let at = self.base + self.pos as u64;
        let left = self.buf.len() - self.pos;
        let Some(len) = self.buf.get(self.pos..self.pos + 4) else {
            return Err(WireError::new(
                at,
                format!(
                    "the block payload ends ({left} bytes left) where the header announced {what}"
                ),
            ));
        };
        let len = u32::from_le_bytes(len.try_into().expect("4 bytes")) as usize;
        if len > left - 4 {
            return Err(WireError::new(
                at,
                format!(
                    "{what} of {len} bytes runs past the end of its block payload ({} bytes left)",
                    left - 4
                ),
            ));
        }
        let start = self.pos + 4;
        self.pos = start + len;
        Ok((&self.buf[start..start + len], self.base + start as u64))
    }

    /// Bytes after the announced messages mean the header and payload disagree: report, do not guess.
    fn finish(&self) -> Result<(), WireError> {
        let left = self.buf.len() - self.pos;
        if left > 0 {
            return Err(WireError::new(
                self.base + self.pos as u64,
                format!("{left} bytes after the last message the block header announced"),
            ));
        }
        Ok(())
    }
}

fn decode_process(msg: Cursor<'_>) -> Result<ProcessInfo, WireError> {
    let mut p = ProcessInfo::default();
    msg.for_each(|f| {
        match f.number {
            1 => p.id = f.as_u32()?,
            2 => p.host = Some(f.as_str()?.to_owned()),
            3 => p.executable = Some(f.as_str()?.to_owned()),
            _ => {}
        }
        Ok(())
    })?;
    Ok(p)
}

/// The devices (field 6: id and name) and the versions (field 8: component and version) of a
/// `ReportSessionDetails`; the rest of the session (host, settings, command line) is skipped.
fn read_session(msg: Cursor<'_>, session: &mut SessionInfo) -> Result<(), WireError> {
    msg.for_each(|f| {
        if f.number == 8 {
            let (mut component, mut version) = (None, None);
            f.as_message()?.for_each(|g| {
                match g.number {
                    1 => component = Some(g.as_str()?.to_owned()),
                    2 => version = Some(g.as_str()?.to_owned()),
                    _ => {}
                }
                Ok(())
            })?;
            if let (Some(c), Some(v)) = (component, version) {
                if session.version(&c).is_none() {
                    session.versions.push((c, v));
                }
            }
        }
        if f.number == 6 {
            let out = &mut session.devices;
            let mut d = DeviceInfo { id: 0, name: None };
            f.as_message()?.for_each(|g| {
                match g.number {
                    1 => d.id = g.as_u32()?,
                    2 => d.name = Some(g.as_str()?.to_owned()),
                    _ => {}
                }
                Ok(())
            })?;
            // Session details arrive in several blocks that ncu merges; keep one entry per device.
            match out.iter_mut().find(|e| e.id == d.id) {
                Some(e) => e.name = d.name.or(e.name.take()),
                None => out.push(d),
            }
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::Messages;

    #[test]
    fn payload_messages_are_length_checked_and_leftovers_are_errors() {
        let buf = [2, 0, 0, 0, 0xaa, 0xbb, 9, 0, 0, 0, 1];
        let mut m = Messages {
            buf: &buf,
            pos: 0,
            base: 100,
        };
        assert_eq!(m.next("a result").unwrap(), (&buf[4..6], 104));
        let e = m.next("a result").unwrap_err();
        assert_eq!(e.offset, 106, "{e:?}");
        let m = Messages {
            buf: &buf[..7],
            pos: 6,
            base: 0,
        };
        assert!(m.finish().unwrap_err().what.contains("1 bytes after"));
    }
}
