//! A table file's column chunks and page headers checked against the file before any page is read,
//! as its footer is: a column chunk reaching past the end of the file, a page claiming more bytes
//! than its column chunk holds, or a compressed page claiming to decompress to more than its codec
//! can make of it, is refused naming the file, the row group, the column and the byte offset. The
//! `parquet` crate would otherwise allocate what a forged header claims (up to 2 GiB a page, zeroed,
//! before decompressing into it).

use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom};
use std::path::Path;

use parquet::basic::Compression;
use parquet::file::metadata::{ColumnChunkMetaData, ParquetMetaData};
use parquet::format::PageHeader;
use parquet::thrift::TSerializable;
use thrift::protocol::TCompactInputProtocol;

use crate::profiler::neuron::error::{NeuronError, NeuronResult as Result};

/// How many times its compressed size a page may claim to decompress to, and the bytes allowed
/// beyond that. Snappy (the one codec read) makes at most 64 bytes of each 3-byte copy: about 21×.
const MAX_EXPANSION: u64 = 32;
const EXPANSION_SLACK: u64 = 1 << 10;

/// Checks every column chunk of every row group of `file` (`size` bytes, at `path`).
pub fn check(path: &Path, file: &File, size: u64, metadata: &ParquetMetaData) -> Result<()> {
    for (group, row_group) in metadata.row_groups().iter().enumerate() {
        for column in row_group.columns() {
            let at = format!(
                "row group {group}, column `{}`",
                column.column_path().string()
            );
            let refuse = |byte: u64, message: String| {
                NeuronError::parse(
                    path,
                    format!("{at}, byte {byte}"),
                    format!(
                        "{message}: the file is damaged (cut short, or bytes changed); export the \
                         profile again"
                    ),
                )
            };
            let (start, end) = chunk_range(column, size).map_err(|(byte, m)| refuse(byte, m))?;
            check_chunk(file, column, start, end).map_err(|e| match e {
                Refusal::At(byte, message) => refuse(byte, message),
                Refusal::Io(source) => NeuronError::io(path, source),
            })?;
        }
    }
    Ok(())
}

/// Why a column chunk is refused: at a byte offset, for a reason; or the file could not be read.
enum Refusal {
    At(u64, String),
    Io(std::io::Error),
}

impl From<std::io::Error> for Refusal {
    fn from(e: std::io::Error) -> Self {
        Refusal::Io(e)
    }
}

/// The column chunk's bytes, `start..end`, where they lie inside a file of `size` bytes.
fn chunk_range(
    column: &ColumnChunkMetaData,
    size: u64,
) -> std::result::Result<(u64, u64), (u64, String)> {
    let start = column
        .dictionary_page_offset()
        .unwrap_or(column.data_page_offset());
    let len = column.compressed_size();
    let (Ok(start), Ok(len)) = (u64::try_from(start), u64::try_from(len)) else {
        return Err((
            0,
            format!(
                "the metadata says the column chunk starts at byte {start} and holds {len} bytes"
            ),
        ));
    };
    match start.checked_add(len) {
        Some(end) if end <= size => Ok((start, end)),
        _ => Err((
            start,
            format!(
                "the metadata says the column chunk holds {len} bytes from byte {start}, but the \
                 file holds only {size} bytes"
            ),
        )),
    }
}

/// Walks the page headers of one column chunk (`start..end` of `file`), skipping the pages.
fn check_chunk(
    file: &File,
    column: &ColumnChunkMetaData,
    start: u64,
    end: u64,
) -> std::result::Result<(), Refusal> {
    let compressed = column.compression() != Compression::UNCOMPRESSED;
    let mut reader = BufReader::new(file);
    reader.seek(SeekFrom::Start(start))?;
    let mut at = start;
    while at < end {
        // A header holds the page's statistics (a 20 MB name is its minimum and its maximum): it is
        // read up to the end of its column chunk, which lies inside the file.
        let (header_len, header) = read_header(&mut reader, end - at)
            .ok_or_else(|| Refusal::At(at, "the page header here cannot be read".to_string()))?;
        let left = end - at - header_len;
        let body = match u64::try_from(header.compressed_page_size) {
            Ok(body) if body <= left => body,
            _ => {
                return Err(Refusal::At(
                    at,
                    format!(
                        "the page header says {} bytes of page follow it, but its column chunk \
                         holds only {left} bytes more",
                        header.compressed_page_size
                    ),
                ))
            }
        };
        let unpacked = header.uncompressed_page_size;
        let most = body * MAX_EXPANSION + EXPANSION_SLACK;
        if unpacked < 0 || (compressed && unpacked as u64 > most) {
            return Err(Refusal::At(
                at,
                format!(
                    "the page header says its {body} bytes decompress to {unpacked} bytes, more \
                     than the {most} bytes {} can make of them",
                    column.compression()
                ),
            ));
        }
        reader.seek_relative(body as i64)?;
        at += header_len + body;
    }
    Ok(())
}

/// The page header at the reader's position, read from at most `room` bytes, with its length.
fn read_header(reader: &mut BufReader<&File>, room: u64) -> Option<(u64, PageHeader)> {
    let mut counted = Counted {
        inner: reader.take(room),
        read: 0,
    };
    let header = PageHeader::read_from_in_protocol(&mut TCompactInputProtocol::new(&mut counted));
    let read = counted.read;
    header.ok().map(|h| (read, h))
}

/// A reader that counts the bytes read through it.
struct Counted<R> {
    inner: R,
    read: u64,
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read += n as u64;
        Ok(n)
    }
}
