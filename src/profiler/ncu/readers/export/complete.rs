//! Telling a complete export from one cut off inside its last field.
//!
//! The CSV reader accepts a final quoted field that never closes, so an export cut off at
//! `…,"16.000` (from `"16.000000"`) would read as a row whose last value is wrong. ncu quotes every
//! field and starts every result row with `"<ID>","`; inside a quoted field a quote is always doubled,
//! so a line starting that way always starts a row. This finds the last such row near the end of the
//! file and follows the quoting to its end: a file that ends inside quotes was cut off.

use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use super::ExportError;

/// How far from the end to look for the start of the last row; ncu rows are a few KiB.
const TAIL: u64 = 1 << 20;

/// The tail read first: it holds the last row of almost every export, so a merge of 10,000 small
/// exports does not read each one whole an extra time; the whole [`TAIL`] is read only when no row
/// starts in it. The reverse search finds the same row in either.
const SHORT_TAIL: u64 = 64 << 10;

/// Fails when `path`'s last row ends inside a quoted field, naming the row's line, or when the file
/// ends in zero bytes.
pub fn check_last_row(path: &Path) -> Result<(), ExportError> {
    let io_error = |source| ExportError::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut file = std::fs::File::open(path).map_err(io_error)?;
    let len = file.metadata().map_err(io_error)?.len();
    let mut tail = Vec::new();
    let mut found = None;
    for size in [SHORT_TAIL, TAIL] {
        // One byte before the tail tells whether the tail starts a line.
        let start = len.saturating_sub(size + 1);
        file.seek(SeekFrom::Start(start)).map_err(io_error)?;
        tail.clear();
        file.read_to_end(&mut tail).map_err(io_error)?;
        // CSV text never holds a NUL byte: a file ending in one is pre-allocated, sparse or partly
        // written, and reading it row by row would scan gigabytes of zeros.
        if tail.last() == Some(&0) {
            return Err(ExportError::ZeroFilled {
                path: path.to_path_buf(),
            });
        }
        found = last_row_start(&tail, start == 0).map(|row| (start, row));
        if found.is_some() || start == 0 {
            break;
        }
    }
    let Some((start, row)) = found else {
        return Ok(());
    };
    if !ends_inside_quotes(&tail[row..]) {
        return Ok(());
    }
    let row_offset = start + row as u64;
    let mut before = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(row_offset).read_to_end(&mut before))
        .map_err(io_error)?;
    let line = before.iter().filter(|&&b| b == b'\n').count() as u64 + 1;
    Err(ExportError::Row {
        path: path.to_path_buf(),
        line,
        message: "the last row ends inside a quoted field: the export was cut off (truncated); \
                  re-export it with `ncu --import … --csv --page raw`"
            .into(),
    })
}

/// Offset of the last line in `tail` that starts a result row (`"<digits>","`). The first line of
/// `tail` counts only when `at_file_start`; otherwise byte 0 is the one before it.
fn last_row_start(tail: &[u8], at_file_start: bool) -> Option<usize> {
    let starts_row = |at: usize| {
        let rest = &tail[at..];
        let digits = rest
            .iter()
            .skip(1)
            .take_while(|b| b.is_ascii_digit())
            .count();
        rest.first() == Some(&b'"') && digits > 0 && rest[1 + digits..].starts_with(b"\",\"")
    };
    let line_starts = tail
        .iter()
        .enumerate()
        .filter(|&(_, &b)| b == b'\n')
        .map(|(i, _)| i + 1);
    let first = at_file_start.then_some(0);
    first
        .into_iter()
        .chain(line_starts)
        .rev()
        .find(|&at| at < tail.len() && starts_row(at))
}

/// Follows CSV quoting (doubled quotes inside quoted fields) from the start of a row to the end.
fn ends_inside_quotes(bytes: &[u8]) -> bool {
    #[derive(PartialEq)]
    enum State {
        FieldStart,
        Unquoted,
        Quoted,
        QuoteInQuoted,
    }
    let mut state = State::FieldStart;
    for &b in bytes {
        state = match (state, b) {
            (State::Quoted, b'"') => State::QuoteInQuoted,
            (State::Quoted, _) => State::Quoted,
            (State::QuoteInQuoted, b'"') => State::Quoted,
            (State::FieldStart, b'"') => State::Quoted,
            (_, b',' | b'\n' | b'\r') => State::FieldStart,
            _ => State::Unquoted,
        };
    }
    state == State::Quoted
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting_state_at_the_end() {
        assert!(!ends_inside_quotes(b"\"0\",\"a\"\"b\",\"16.0\"\n"));
        assert!(!ends_inside_quotes(b"\"0\",\"16.0\""));
        assert!(ends_inside_quotes(b"\"0\",\"16.0"));
        assert!(ends_inside_quotes(b"\"0\",\""));
        assert!(ends_inside_quotes(b"\"0\",\"a\"\""));
        assert!(ends_inside_quotes(b"\"0\",\"line\nbreak"));
    }

    #[test]
    fn last_row_is_found_after_multiline_fields() {
        let text = b"\"ID\",\"x\"\n\"\",\"\"\n\"0\",\"a\n\"\"1\"\",\"\"b\"\n\"1\",\"c";
        let at = last_row_start(text, true).unwrap();
        assert_eq!(&text[at..], b"\"1\",\"c");
        assert_eq!(last_row_start(b"\"0\",\"a\"\n", false), None);
    }
}
