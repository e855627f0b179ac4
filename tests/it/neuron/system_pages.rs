//! Parquet page headers and column chunks bounded as the footer is (issue 42, item 5): a page
//! claiming more bytes than its column chunk holds, a page claiming to decompress to far more than
//! its codec can make, and a column chunk reaching past the end of the file are refused naming the
//! file, the row group and the column, before the page is allocated. The tables are forged here from
//! the generator's events table, their metadata kept true to the forged bytes.

use std::path::Path;

use parquet::format::{FileMetaData, PageHeader};
use parquet::thrift::{TCompactOutputProtocol, TSerializable};
use profile_run::profiler::neuron::readers::parquet::system;
use thrift::protocol::{TCompactInputProtocol, TOutputProtocol};

use super::system_gen::{long_name, scale_dir};

/// Where the first column chunk starts: just after the leading `PAR1`.
const FIRST_PAGE: usize = 4;

fn decode<T: TSerializable>(bytes: &[u8]) -> (T, usize) {
    let mut rest = bytes;
    let value = T::read_from_in_protocol(&mut TCompactInputProtocol::new(&mut rest)).unwrap();
    (value, bytes.len() - rest.len())
}

fn encode<T: TSerializable>(value: &T) -> Vec<u8> {
    let mut out = Vec::new();
    let mut protocol = TCompactOutputProtocol::new(&mut out);
    value.write_to_out_protocol(&mut protocol).unwrap();
    protocol.flush().unwrap();
    out
}

/// Rewrites the events table at `path`: the first page's header through `page`, the metadata through
/// `meta`, every offset past the first page moved by what the new header adds, so that the file is
/// damaged only where the test says.
fn forge(path: &Path, page: impl FnOnce(&mut PageHeader), meta: impl FnOnce(&mut FileMetaData)) {
    let bytes = std::fs::read(path).unwrap();
    let footer_len =
        u32::from_le_bytes(bytes[bytes.len() - 8..bytes.len() - 4].try_into().unwrap());
    let footer_at = bytes.len() - 8 - footer_len as usize;
    let (mut metadata, _) = decode::<FileMetaData>(&bytes[footer_at..]);
    let (mut header, header_len) = decode::<PageHeader>(&bytes[FIRST_PAGE..]);
    page(&mut header);
    let new_header = encode(&header);
    let shift = new_header.len() as i64 - header_len as i64;
    let moved = |at: &mut i64| {
        if *at > FIRST_PAGE as i64 {
            *at += shift;
        }
    };
    for group in &mut metadata.row_groups {
        for chunk in &mut group.columns {
            let indexes = [
                &mut chunk.column_index_offset,
                &mut chunk.offset_index_offset,
            ];
            indexes.into_iter().flatten().for_each(moved);
            let Some(m) = chunk.meta_data.as_mut() else {
                continue;
            };
            let start = m.dictionary_page_offset.unwrap_or(m.data_page_offset);
            if start == FIRST_PAGE as i64 {
                m.total_compressed_size += shift;
            }
            moved(&mut m.data_page_offset);
            let pages = [&mut m.dictionary_page_offset, &mut m.index_page_offset];
            pages.into_iter().flatten().for_each(moved);
        }
    }
    meta(&mut metadata);
    let footer = encode(&metadata);
    let mut out = bytes[..FIRST_PAGE].to_vec();
    out.extend(&new_header);
    out.extend(&bytes[FIRST_PAGE + header_len..footer_at]);
    out.extend(&footer);
    out.extend((footer.len() as u32).to_le_bytes());
    out.extend(b"PAR1");
    std::fs::write(path, out).unwrap();
}

/// A small events table (a step and one execution), forged; the reader's error.
fn refused(page: impl FnOnce(&mut PageHeader), meta: impl FnOnce(&mut FileMetaData)) -> String {
    let tmp = tempfile::tempdir().unwrap();
    long_name(tmp.path(), 8);
    let dir = scale_dir(tmp.path());
    let table = dir.join("SystemProfileEvents.parquet");
    forge(&table, page, meta);
    let err = system::read(&dir).unwrap_err().to_string();
    let at = format!("{}: row group 0, column `id`, byte", table.display());
    assert!(err.starts_with(&at), "{err}");
    err
}

#[test]
fn the_forger_changes_nothing_when_told_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    long_name(tmp.path(), 8);
    let dir = scale_dir(tmp.path());
    let before = system::read(&dir).unwrap().events;
    forge(&dir.join("SystemProfileEvents.parquet"), |_| {}, |_| {});
    assert_eq!(system::read(&dir).unwrap().events, before);
    // a header made longer, the offsets after it moved: still read
    forge(
        &dir.join("SystemProfileEvents.parquet"),
        |h| h.crc = Some(i32::MAX),
        |_| {},
    );
    assert_eq!(system::read(&dir).unwrap().events, before);
}

#[test]
fn a_page_header_holding_the_statistics_of_a_long_name_is_read() {
    // the name is the page's minimum and maximum: a header of 2 × 17 MB
    let tmp = tempfile::tempdir().unwrap();
    long_name(tmp.path(), 17 << 20);
    let events = system::read(&scale_dir(tmp.path())).unwrap().events;
    assert_eq!(events.len(), 2);
}

#[test]
fn a_page_claiming_to_decompress_to_gigabytes_is_refused_before_it_is_allocated() {
    let err = refused(|h| h.uncompressed_page_size = 2_000_000_000, |_| {});
    assert!(
        err.contains("byte 4: the page header says its")
            && err.contains("bytes decompress to 2000000000 bytes, more than the")
            && err.contains("SNAPPY can make of them"),
        "{err}"
    );
}

#[test]
fn a_page_claiming_more_bytes_than_its_column_chunk_holds_is_refused() {
    let err = refused(|h| h.compressed_page_size = 1_000_000_000, |_| {});
    assert!(
        err.contains("the page header says 1000000000 bytes of page follow it, but its column chunk holds only"),
        "{err}"
    );
    let err = refused(|h| h.compressed_page_size = -5, |_| {});
    assert!(err.contains("says -5 bytes of page follow it"), "{err}");
}

#[test]
fn a_column_chunk_reaching_past_the_end_of_the_file_is_refused() {
    let err = refused(
        |_| {},
        |m| {
            let chunk = m.row_groups[0].columns[0].meta_data.as_mut().unwrap();
            chunk.total_compressed_size = 3_000_000_000;
        },
    );
    assert!(
        err.contains("byte 4: the metadata says the column chunk holds 3000000000 bytes from byte 4, but the file holds only"),
        "{err}"
    );
}
