//! Reading a byte range of a raw export with the row scanner ([`super::scan`]).
//!
//! The range is read in blocks of [`BLOCK_BYTES`] into one reused buffer (a row cut by the end of a
//! block moves to the front and the block is refilled behind it), rows are cut at `\n` with
//! `memchr`, and only the columns the plan uses are taken out of each row. Memory therefore stays at
//! one buffer per reading thread whatever the size of the export.
//!
//! Anything the scanner refuses, and any error while turning a row into an observation, makes the
//! whole range fail with `Err(())`; the caller then reads it with the CSV reader, which either
//! accepts it or reports the error with its file and line as it always did.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use crate::region::Observation;

use super::scan::{field_body, has_escapes, scan_row, unescape_into, FieldSpan};
use super::{Columns, Fields, RowReader};

/// Size of the read buffer (grown only for a row longer than this).
const BLOCK_BYTES: usize = 4 << 20;

/// Which columns a row must yield, found once per export.
pub(super) struct ColumnLayout {
    width: usize,
    /// Columns to take out of each row, ascending.
    wanted: Vec<usize>,
    /// Slot in `wanted` of every column, `u32::MAX` for the ones not taken.
    slot_of: Vec<u32>,
}

impl ColumnLayout {
    pub(super) fn new(columns: &Columns) -> ColumnLayout {
        let width = columns.headers.len();
        let mut wanted: Vec<usize> = [
            Some(columns.result.kernel),
            columns.result.process_id,
            columns.result.process_name,
            columns.result.host,
            columns.result.device,
            columns.result.device_model,
            columns.result.push_pop.map(|(c, _)| c),
            columns.result.start_end.map(|(c, _)| c),
            columns.time.map(|(c, _)| c),
        ]
        .into_iter()
        .flatten()
        .chain(columns.metrics.iter().map(|&(c, _)| c))
        .filter(|&c| c < width)
        .collect();
        wanted.sort_unstable();
        wanted.dedup();
        let mut slot_of = vec![u32::MAX; width];
        for (slot, &col) in wanted.iter().enumerate() {
            slot_of[col] = slot as u32;
        }
        ColumnLayout {
            width,
            wanted,
            slot_of,
        }
    }
}

/// One row's wanted cells: spans in the row, or in `scratch` for cells that held doubled quotes.
struct Row<'r> {
    row: &'r [u8],
    cells: &'r [(bool, FieldSpan)],
    scratch: &'r [u8],
    slot_of: &'r [u32],
}

impl Fields for Row<'_> {
    fn field(&self, col: usize) -> Option<&[u8]> {
        let slot = *self.slot_of.get(col)?;
        let &(unescaped, span) = self.cells.get(slot as usize)?;
        Some(if unescaped {
            &self.scratch[span.start as usize..span.end as usize]
        } else {
            field_body(self.row, span)
        })
    }

    fn line(&self) -> u64 {
        0
    }
}

/// Reads the rows in `start..end` of the export at `path` into `rows`, calling `sink` per result.
pub(super) fn read_range(
    path: &Path,
    start: u64,
    end: u64,
    layout: &ColumnLayout,
    rows: &mut RowReader<'_>,
    sink: &mut dyn FnMut(&Observation<'_>),
) -> Result<(), ()> {
    let mut file = File::open(path).map_err(drop)?;
    file.seek(SeekFrom::Start(start)).map_err(drop)?;
    let mut remaining = end.saturating_sub(start);
    let mut buf = vec![0u8; BLOCK_BYTES.min(remaining as usize + 1).max(1)];
    let mut filled = 0usize;
    let mut row_cells = RowCells::new(layout);
    loop {
        if filled == buf.len() {
            buf.resize(buf.len() * 2, 0);
        }
        let room = (buf.len() - filled).min(usize::try_from(remaining).unwrap_or(usize::MAX));
        let n = if room == 0 {
            0
        } else {
            file.read(&mut buf[filled..filled + room]).map_err(drop)?
        };
        if n == 0 && remaining > 0 {
            // The file shrank while being read.
            return Err(());
        }
        filled += n;
        remaining -= n as u64;
        let mut pos = 0;
        while let Some(at) = memchr::memchr(b'\n', &buf[pos..filled]) {
            row_cells.read(&buf[pos..pos + at], layout, rows, sink)?;
            pos += at + 1;
        }
        if remaining == 0 {
            if pos < filled {
                row_cells.read(&buf[pos..filled], layout, rows, sink)?;
            }
            return Ok(());
        }
        buf.copy_within(pos..filled, 0);
        filled -= pos;
    }
}

/// Buffers reused from row to row.
struct RowCells {
    spans: Vec<FieldSpan>,
    cells: Vec<(bool, FieldSpan)>,
    scratch: Vec<u8>,
}

impl RowCells {
    fn new(layout: &ColumnLayout) -> RowCells {
        RowCells {
            spans: vec![FieldSpan::default(); layout.wanted.len()],
            cells: Vec::with_capacity(layout.wanted.len()),
            scratch: Vec::new(),
        }
    }

    fn read(
        &mut self,
        row: &[u8],
        layout: &ColumnLayout,
        rows: &mut RowReader<'_>,
        sink: &mut dyn FnMut(&Observation<'_>),
    ) -> Result<(), ()> {
        if !scan_row(row, layout.width, &layout.wanted, &mut self.spans) {
            return Err(());
        }
        self.cells.clear();
        self.scratch.clear();
        for &span in &self.spans {
            let body = field_body(row, span);
            if has_escapes(body) {
                let from = self.scratch.len() as u32;
                unescape_into(body, &mut self.scratch);
                let to = self.scratch.len() as u32;
                self.cells.push((
                    true,
                    FieldSpan {
                        start: from,
                        end: to,
                    },
                ));
            } else {
                self.cells.push((false, span));
            }
        }
        let fields = Row {
            row,
            cells: &self.cells,
            scratch: &self.scratch,
            slot_of: &layout.slot_of,
        };
        rows.read(&fields, sink).map_err(drop)
    }
}
