//! Damaged, cut and hostile report files: the reader answers with an error naming the file and a byte
//! offset inside it (or with the results it could read when a cut falls between two blocks), and
//! never panics. Cases per property: `PROPTEST_CASES` (default 128).

use std::io::Read;
use std::path::Path;

use profile_run::profiler::ncu::readers::report_file::{ReportFile, ReportFileError};
use proptest::prelude::*;

use super::report_path;

fn plain_bytes(name: &str) -> Vec<u8> {
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(std::fs::File::open(report_path(name)).unwrap())
        .read_to_end(&mut out)
        .unwrap();
    out
}

/// Reads everything the reader can give, touching every lazily decoded part of every result.
fn read_all(bytes: Vec<u8>) -> Result<u64, ReportFileError> {
    let mut report =
        ReportFile::from_reader(Path::new("damaged.ncu-rep"), std::io::Cursor::new(bytes))?;
    let summary = report.for_each_result(|r| {
        for m in r.metrics() {
            m.map_err(|e| r.err(e))?;
        }
        r.nvtx()?;
        r.rule_results()?;
        r.python_stack()?;
        r.cpu_stack()?;
        r.device_id()?;
        Ok::<_, ReportFileError>(())
    })?;
    Ok(summary.results)
}

/// An error must name the file and, when it is a decode error, point inside the bytes it was given.
fn assert_sane(result: &Result<u64, ReportFileError>, len: usize) {
    if let Err(e) = result {
        let msg = e.to_string();
        assert!(msg.contains("damaged.ncu-rep"), "{msg}");
        if let Some(offset) = e.offset() {
            assert!(
                offset <= len as u64,
                "offset {offset} outside {len} bytes: {msg}"
            );
        }
    }
}

#[test]
fn cuts_inside_headers_and_payloads_are_errors_at_an_offset() {
    let bytes = plain_bytes("rep_range");
    // 2: inside the magic; 6: inside the file header's length; 9: inside the file header; 12: inside
    // the first block length; 60: inside the first block header; then inside the big block's string
    // table, inside its payload, and one byte short of the end.
    for cut in [6usize, 9, 12, 60, 1_000, 40_000, 120_000, bytes.len() - 1] {
        let r = read_all(bytes[..cut].to_vec());
        let e = r
            .as_ref()
            .expect_err(&format!("a cut at {cut} must be an error"));
        let offset = e
            .offset()
            .unwrap_or_else(|| panic!("cut at {cut}: no offset in {e}"));
        assert!(offset < cut as u64, "cut at {cut}: offset {offset}");
        assert!(e.to_string().contains("ends"), "cut at {cut}: {e}");
    }
    let e = read_all(bytes[..2].to_vec()).unwrap_err();
    assert!(matches!(e, ReportFileError::NotAReport { .. }), "{e}");
}

/// ncu's files have no trailer: a cut between two blocks leaves a shorter, valid report.
#[test]
fn a_cut_between_blocks_reads_the_blocks_before_it() {
    let bytes = plain_bytes("rep_range");
    // The second range result's block starts at 98462 (see docs/ncu-report-format.md).
    assert_eq!(read_all(bytes.clone()).unwrap(), 2);
    assert_eq!(read_all(bytes[..98_462].to_vec()).unwrap(), 1);
}

#[test]
fn a_cut_gzip_stream_is_a_decode_error() {
    let gz = std::fs::read(report_path("rep_range")).unwrap();
    let e = read_all(gz[..gz.len() / 2].to_vec()).unwrap_err();
    assert!(e.offset().is_some(), "{e}");
}

#[test]
fn a_wrong_magic_says_what_the_file_starts_with() {
    let mut bytes = plain_bytes("rep_apprange");
    bytes[..4].copy_from_slice(b"ID,\"");
    let e = read_all(bytes).unwrap_err();
    assert!(matches!(e, ReportFileError::NotAReport { .. }), "{e}");
    assert!(e.to_string().contains("ID,"), "{e}");
    let e = read_all(Vec::new()).unwrap_err();
    assert!(e.to_string().contains("empty file"), "{e}");
}

#[test]
fn an_unknown_version_names_it_and_the_csv_route() {
    let mut bytes = plain_bytes("rep_apprange");
    // `NVR\0`, u32 length 2, then the header `08 07`: field 1 (Version) = 7.
    assert_eq!(&bytes[8..10], &[0x08, 0x07]);
    bytes[9] = 0x09;
    let e = read_all(bytes).unwrap_err();
    let msg = e.to_string();
    assert!(
        matches!(e, ReportFileError::UnknownVersion { version: 9, .. }),
        "{msg}"
    );
    assert!(
        msg.contains("version 9") && msg.contains("pipeline.ncu.executable"),
        "{msg}"
    );
}

#[test]
fn a_huge_length_is_refused_before_anything_is_reserved() {
    let mut bytes = plain_bytes("rep_apprange");
    // The first block's length (offset 10) claims 4 GiB.
    bytes[10..14].copy_from_slice(&u32::MAX.to_le_bytes());
    let e = read_all(bytes).unwrap_err();
    assert_eq!(e.offset(), Some(14), "{e}");
}

/// Opened by path, a plain file's lengths are checked against its size before anything is read.
#[test]
fn a_file_on_disk_is_checked_against_its_size() {
    let mut bytes = plain_bytes("rep_apprange");
    bytes[10..14].copy_from_slice(&u32::MAX.to_le_bytes());
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("damaged.ncu-rep");
    std::fs::write(&path, &bytes).unwrap();
    let mut report = ReportFile::open(&path).unwrap();
    let e = report
        .for_each_result(|_| Ok::<_, ReportFileError>(()))
        .unwrap_err();
    assert_eq!(e.offset(), Some(14), "{e}");
    let msg = e.to_string();
    assert!(
        msg.contains("damaged.ncu-rep") && msg.contains("runs past the end of the file"),
        "{msg}"
    );
    // The reader can move to another thread (reports are read in parallel).
    fn is_send<T: Send>(_: &T) {}
    let report = ReportFile::open(&report_path("rep_range")).unwrap();
    is_send(&report);
}

fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// One damage: overwrite a byte, smash a varint into a huge length, or cut the file.
#[derive(Debug, Clone)]
enum Damage {
    Byte(usize, u8),
    HugeVarint(usize),
    Cut(usize),
}

fn damage() -> impl Strategy<Value = Damage> {
    // Positions are fractions of the file so one strategy fits every fixture; half of them aim at the
    // first 100 KB where the headers, the string table and the first results are.
    let pos = prop_oneof![0usize..100_000, any::<usize>()];
    prop_oneof![
        (pos.clone(), any::<u8>()).prop_map(|(p, b)| Damage::Byte(p, b)),
        pos.clone().prop_map(Damage::HugeVarint),
        pos.prop_map(Damage::Cut),
    ]
}

fn apply(bytes: &mut Vec<u8>, d: &Damage) {
    let len = bytes.len();
    match *d {
        Damage::Byte(p, b) => bytes[p % len] = b,
        // A file cut below 5 bytes by an earlier damage has no room for the varint: it stays cut.
        Damage::HugeVarint(_) if len < 5 => {}
        Damage::HugeVarint(p) => {
            let p = p % (len - 4);
            bytes[p..p + 5].copy_from_slice(&[0xff, 0xff, 0xff, 0xff, 0x0f]);
        }
        Damage::Cut(p) => bytes.truncate(p % len),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(128), max_shrink_iters: 256, ..ProptestConfig::default() })]

    #[test]
    fn damaged_files_give_results_or_an_error_at_an_offset(
        fixture in prop::sample::select(vec!["rep_range", "rep_apprange", "rep_start_end"]),
        damages in prop::collection::vec(damage(), 1..6),
    ) {
        let mut bytes = plain_bytes(fixture);
        for d in &damages {
            if !bytes.is_empty() {
                apply(&mut bytes, d);
            }
        }
        let len = bytes.len();
        let result = read_all(bytes);
        assert_sane(&result, len);
    }
}
