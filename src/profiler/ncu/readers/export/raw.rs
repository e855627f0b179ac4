//! The `--page raw` reader: one row per result (kernel, or range instance under range replay), one
//! column per metric, a units row under the header.
//!
//! Floor: profiler (see `crate::profiler`): imports run, process, analysis, insights, report,
//! config, region and the ground floor, and its own profiler's rooms.

use std::borrow::Cow;
use std::collections::BTreeMap;

use smallvec::SmallVec;

use std::io::{BufRead, Read};
use std::path::{Path, PathBuf};

use crate::profiler::ncu::readers::{rollup, units};
use crate::region::{Cell, MetricSpec, Observation, Renames, Rollup, ScopeKey};

use super::number::{self, Number};
use super::nvtx_cell::CellLayout;
use super::ExportError;

mod fast;
mod parallel;
mod parked;
mod scan;
mod stacks;
pub use parallel::stream_files;
pub use parked::{open_raw_file, open_raw_head, RawFile, RawHead};
use stacks::StackCache;

pub use crate::analysis::MetricRequest;
use crate::region::Coverage;

/// What to read from the export.
#[derive(Debug, Clone)]
pub struct RawPlan<'a> {
    pub metrics: &'a [MetricRequest],
    /// The duration metric (weights means, orders regions).
    pub time_metric: &'a str,
    /// Per-metric rollup overrides, already validated.
    pub rollups: &'a BTreeMap<String, Rollup>,
    /// `regions.rename`, applied to every range name before attribution.
    pub renames: &'a Renames,
}

/// What the reader learnt about the export as a whole.
#[derive(Debug, Clone, Default)]
pub struct RawSummary {
    /// The requested metrics the export has, in request order, with base units and rollups.
    pub specs: Vec<MetricSpec>,
    /// The group of each spec (same order).
    pub groups: Vec<String>,
    /// Requested metrics absent from the export.
    pub missing: Vec<String>,
    /// Whether the time metric was found.
    pub has_time: bool,
    /// Whether the export has NVTX columns at all (ncu ran with `--nvtx`).
    pub has_nvtx: bool,
    pub results: u64,
    /// Results with `Kernel Name` = `range` (range / app-range replay).
    pub range_results: u64,
    /// Results that ran inside at least one range.
    pub results_in_ranges: u64,
    /// Lines of program output or profiler log skipped before the header.
    pub preamble_lines: u64,
    /// (device id, model) of every device the results ran on, from the
    /// `device__attribute_display_name` column when the page has it.
    pub devices: Vec<(String, String)>,
}

impl RawSummary {
    /// Adds a device unless it is already listed.
    pub(crate) fn add_device(&mut self, device: (String, String)) {
        if !device.1.is_empty() && !self.devices.contains(&device) {
            self.devices.push(device);
        }
    }
}

/// Where each result's identity lives: the columns both the raw and the details page carry.
pub(crate) struct ResultColumns {
    pub id: usize,
    pub kernel: usize,
    pub process_id: Option<usize>,
    pub process_name: Option<usize>,
    pub host: Option<usize>,
    pub device: Option<usize>,
    /// The device's model (`device__attribute_display_name`).
    pub device_model: Option<usize>,
    pub push_pop: Option<(usize, CellLayout)>,
    pub start_end: Option<(usize, CellLayout)>,
}

impl ResultColumns {
    /// Finds the columns by name; `ID` and `Kernel Name` are required.
    pub(crate) fn locate(headers: &[String], path: &Path) -> Result<ResultColumns, ExportError> {
        let required = |name: &str| {
            find(headers, name).ok_or_else(|| ExportError::MissingColumn {
                path: path.to_path_buf(),
                column: name.to_string(),
            })
        };
        Ok(ResultColumns {
            id: required("ID")?,
            kernel: required("Kernel Name")?,
            process_id: find(headers, "Process ID"),
            process_name: find(headers, "Process Name"),
            host: find(headers, "Host Name"),
            device: find(headers, "Device"),
            device_model: find(headers, "device__attribute_display_name"),
            push_pop: find_layout(headers, "Push/Pop_Range"),
            start_end: find_layout(headers, "Start/Stop_Range"),
        })
    }
}

/// Column positions, found by name.
struct Columns {
    result: ResultColumns,
    /// (column, unit factor) per spec.
    metrics: Vec<(usize, f64)>,
    time: Option<(usize, f64)>,
    /// Header names, for messages about a cell.
    headers: Vec<String>,
    /// The launcher rank this export belongs to (empty when unknown), stamped on every scope.
    rank: String,
    renames: Renames,
}

/// Finds the header line, skipping anything a live log printed before it; returns the header line and
/// the number of lines skipped. Shared by the raw and details readers.
pub(crate) fn find_header<R: BufRead>(
    input: &mut R,
    path: &Path,
) -> Result<(Vec<u8>, u64), ExportError> {
    find_header_at(input, path).map(|(header, skipped, _)| (header, skipped))
}

/// The longest line read while looking for the header (ncu's longest header line is a few tens of KB).
const MAX_LINE_BEFORE_DATA: u64 = 16 << 20;

/// Finds the header line, skipping anything a live log printed before it. Returns the header line,
/// the number of lines skipped and the byte offset of the header text in the input (after any
/// preamble and byte order mark), from which file offsets of later rows follow.
fn find_header_at<R: BufRead>(
    input: &mut R,
    path: &Path,
) -> Result<(Vec<u8>, u64, u64), ExportError> {
    let mut consumed = 0u64;
    let mut skipped = 0u64;
    let mut errors = Vec::new();
    let mut line = Vec::new();
    loop {
        line.clear();
        // Bounded: a zero-filled or sparse file is one endless "line", never read whole.
        let n = std::io::Read::by_ref(input)
            .take(MAX_LINE_BEFORE_DATA + 1)
            .read_until(b'\n', &mut line)
            .map_err(|source| ExportError::Io {
                path: path.to_path_buf(),
                source,
            })?;
        if n as u64 > MAX_LINE_BEFORE_DATA {
            return Err(ExportError::LineTooLong {
                path: path.to_path_buf(),
                line: skipped + 1,
            });
        }
        if n == 0 {
            let hint = if errors.is_empty() {
                "; is this an ncu CSV export (`ncu --import R.ncu-rep --csv --page raw`)?"
                    .to_string()
            } else {
                format!(
                    "; the profiler reported:\n    {}",
                    errors
                        .iter()
                        .take(5)
                        .cloned()
                        .collect::<Vec<_>>()
                        .join("\n    ")
                )
            };
            return Err(ExportError::NoHeader {
                path: path.to_path_buf(),
                lines: skipped,
                hint,
            });
        }
        let text = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&line);
        if text.starts_with(b"\"ID\",") || text.starts_with(b"ID,") {
            // ncu ends every line with a newline, and a header is always followed by at least its
            // units row (raw) or results (details): a header line cut off by the end of the file
            // is a truncated export, whose columns cannot be trusted.
            if !text.ends_with(b"\n") {
                return Err(ExportError::IncompleteHeader {
                    path: path.to_path_buf(),
                    bytes: text.len(),
                });
            }
            let at = consumed + (line.len() - text.len()) as u64;
            return Ok((text.to_vec(), skipped, at));
        }
        consumed += n as u64;
        if text.starts_with(b"==ERROR==") {
            errors.push(String::from_utf8_lossy(text).trim_end().to_string());
        }
        skipped += 1;
    }
}

/// Opens a CSV reader positioned after the header line, with the header parsed.
/// A CSV reader over the header line followed by the rest of the input.
pub(crate) type CsvAfterHeader<R> = csv::Reader<std::io::Chain<std::io::Cursor<Vec<u8>>, R>>;

/// `ragged`: rows may be shorter than the header (the details page leaves out empty trailing rule
/// columns); the raw page must be rectangular.
pub(crate) fn csv_after_header<R: Read>(
    header: Vec<u8>,
    rest: R,
    path: &Path,
    ragged: bool,
) -> Result<(CsvAfterHeader<R>, Vec<String>), ExportError> {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(true)
        .flexible(ragged)
        .from_reader(std::io::Cursor::new(header).chain(rest));
    let headers = reader
        .byte_headers()
        .map_err(|e| row_error(path, 0, &e))?
        .iter()
        .map(|h| String::from_utf8_lossy(h).trim().to_string())
        .collect();
    Ok((reader, headers))
}

pub(crate) fn row_error(path: &Path, offset: u64, err: &csv::Error) -> ExportError {
    let line = err.position().map_or(0, |p| p.line()) + offset;
    let message = match err.kind() {
        csv::ErrorKind::UnequalLengths {
            expected_len, len, ..
        } => format!(
            "row has {len} fields, the header has {expected_len} (a truncated or corrupted export? re-export it with `ncu --import … --csv --page raw`)"
        ),
        _ => err.to_string(),
    };
    ExportError::Row {
        path: path.to_path_buf(),
        line,
        message,
    }
}

pub(crate) fn find(headers: &[String], name: &str) -> Option<usize> {
    headers.iter().position(|h| h == name)
}

fn find_layout(headers: &[String], range_field: &str) -> Option<(usize, CellLayout)> {
    headers.iter().enumerate().find_map(|(i, h)| {
        h.contains(range_field)
            .then(|| CellLayout::from_header(h, range_field).map(|l| (i, l)))
            .flatten()
    })
}

/// Parses a number as ncu prints it: `9,661`, `2,601,960,784.31`, `n/a`, empty (see [`number`]).
pub fn parse_number(raw: &[u8]) -> Option<f64> {
    number::parse(raw)
}

/// A metric cell as a number, missing or text; a decimal-comma number is an error naming the cell.
fn metric_cell<F: Fields + ?Sized>(
    rec: &F,
    col: usize,
    columns: &Columns,
    path: &Path,
    offset: u64,
) -> Result<Number, ExportError> {
    let raw = rec.field(col).unwrap_or(b"");
    match number::classify(raw) {
        Number::DecimalComma => Err(ExportError::DecimalComma {
            path: path.to_path_buf(),
            line: rec.line() + offset,
            column: columns.headers.get(col).cloned().unwrap_or_default(),
            value: text(raw).into_owned(),
        }),
        cell => Ok(cell),
    }
}

/// The cells of one result row, however they were found.
trait Fields {
    /// The unquoted text of column `col`.
    fn field(&self, col: usize) -> Option<&[u8]>;
    /// The row's line in the input read so far (for messages).
    fn line(&self) -> u64;
}

impl Fields for csv::ByteRecord {
    fn field(&self, col: usize) -> Option<&[u8]> {
        self.get(col)
    }

    fn line(&self) -> u64 {
        self.position().map_or(0, |p| p.line())
    }
}

fn text(raw: &[u8]) -> Cow<'_, str> {
    // Valid UTF-8 is the rule; the plain check is several times faster than the lossy walk.
    match std::str::from_utf8(raw) {
        Ok(text) => Cow::Borrowed(text),
        Err(_) => String::from_utf8_lossy(raw),
    }
}

/// Per-reader state for turning records into observations: NVTX caches and the current scope.
struct RowReader<'c> {
    columns: &'c Columns,
    path: &'c Path,
    /// Lines before the records this reader sees (for line numbers in messages).
    offset: u64,
    stacks: StackCache,
    start_end_stacks: StackCache,
    scope: ScopeKey,
    results: u64,
    range_results: u64,
    results_in_ranges: u64,
    devices: Vec<(String, String)>,
}

impl<'c> RowReader<'c> {
    fn new(columns: &'c Columns, path: &'c Path, offset: u64) -> RowReader<'c> {
        RowReader {
            columns,
            path,
            offset,
            stacks: StackCache::default(),
            start_end_stacks: StackCache::default(),
            // Never equal to a real row's scope (the rank differs), so the first row builds its own.
            scope: ScopeKey {
                rank: "\0".into(),
                ..ScopeKey::default()
            },
            results: 0,
            range_results: 0,
            results_in_ranges: 0,
            devices: Vec::new(),
        }
    }

    /// Turns one record into an observation for `sink`.
    fn read<F: Fields + ?Sized>(
        &mut self,
        rec: &F,
        sink: &mut dyn FnMut(&Observation<'_>),
    ) -> Result<(), ExportError> {
        let columns = self.columns;
        self.results += 1;
        let field = |col: Option<usize>| col.and_then(|c| rec.field(c)).unwrap_or(b"");
        // Same process and device as the previous row is the common case: no allocation then.
        let scope = &mut self.scope;
        let same_scope = scope.rank == columns.rank
            && field(columns.result.process_id) == scope.process_id.as_bytes()
            && field(columns.result.device) == scope.device.as_bytes()
            && field(columns.result.host) == scope.host.as_bytes()
            && field(columns.result.process_name) == scope.process_name.as_bytes();
        if !same_scope {
            *scope = ScopeKey {
                host: text(field(columns.result.host)).trim().to_string(),
                process_id: text(field(columns.result.process_id)).trim().to_string(),
                process_name: text(field(columns.result.process_name)).trim().to_string(),
                device: text(field(columns.result.device)).trim().to_string(),
                rank: columns.rank.clone(),
            };
            // A scope change is rare: the device's model is looked at only then.
            let model = text(field(columns.result.device_model)).trim().to_string();
            let device = (scope.device.clone(), model);
            if !device.1.is_empty() && !self.devices.contains(&device) {
                self.devices.push(device);
            }
        }
        let stacks: &[Vec<String>] = match columns.result.push_pop {
            Some((col, layout)) => {
                &self
                    .stacks
                    .get(rec.field(col).unwrap_or(b""), layout, &columns.renames)
                    .stacks
            }
            None => &[],
        };
        let marks: &[String] = match columns.result.start_end {
            Some((col, layout)) => {
                &self
                    .start_end_stacks
                    .get(rec.field(col).unwrap_or(b""), layout, &columns.renames)
                    .all
            }
            None => &[],
        };
        if stacks.iter().any(|s| !s.is_empty()) || !marks.is_empty() {
            self.results_in_ranges += 1;
        }
        let kernel = text(rec.field(columns.result.kernel).unwrap_or(b""));
        if kernel == "range" {
            self.range_results += 1;
        }
        let (path, offset) = (self.path, self.offset);
        // On the stack for any usual metric list: no allocation per result.
        let mut values: SmallVec<[Cell<'_>; 32]> = SmallVec::with_capacity(columns.metrics.len());
        for &(col, factor) in &columns.metrics {
            values.push(match metric_cell(rec, col, columns, path, offset)? {
                Number::Value(v) => Cell::Num(v * factor),
                Number::Missing => Cell::Missing,
                _ => Cell::Text(std::str::from_utf8(rec.field(col).unwrap_or(b"")).unwrap_or("")),
            });
        }
        let time = match columns.time {
            Some((col, factor)) => match metric_cell(rec, col, columns, path, offset)? {
                Number::Value(v) => Some(v * factor),
                _ => None,
            },
            None => None,
        };
        sink(&Observation {
            scope: &self.scope,
            stacks,
            instances: None,
            marks,
            call_stack: None,
            kernel: &kernel,
            time,
            start: None,
            weight: None,
            values: &values,
            coverage: Coverage::Measured,
            key: None,
        });
        Ok(())
    }

    fn finish(&self, summary: &mut RawSummary) {
        summary.results += self.results;
        summary.range_results += self.range_results;
        summary.results_in_ranges += self.results_in_ranges;
        for device in &self.devices {
            summary.add_device(device.clone());
        }
    }
}

/// An export whose header and units row have been read; [`RawExport::stream`] reads the results.
pub struct RawExport<R: Read> {
    path: PathBuf,
    reader: CsvAfterHeader<R>,
    columns: Columns,
    /// A first data row read while looking for the units row.
    pending: Option<csv::ByteRecord>,
    summary: RawSummary,
    /// Byte offset of the first result in the input (used to split a file into chunks).
    data_start: u64,
}

impl<R: BufRead> RawExport<R> {
    /// Reads the header and the units row and resolves the requested metrics.
    pub fn open(
        mut input: R,
        path: &Path,
        plan: &RawPlan<'_>,
    ) -> Result<RawExport<R>, ExportError> {
        let (header, preamble, header_at) = find_header_at(&mut input, path)?;
        let (mut reader, headers) = csv_after_header(header, input, path, false)?;
        if find(&headers, "Metric Name").is_some() && find(&headers, "Metric Value").is_some() {
            return Err(ExportError::WrongPage {
                path: path.to_path_buf(),
                found: "details",
                expected: "raw",
            });
        }
        let mut columns = Columns {
            result: ResultColumns::locate(&headers, path)?,
            metrics: Vec::new(),
            time: None,
            headers: Vec::new(),
            rank: String::new(),
            renames: plan.renames.clone(),
        };

        // The units row: the first record, recognisable by its empty ID.
        let mut pending = None;
        let mut units_row = None;
        let mut first = csv::ByteRecord::new();
        match reader.read_byte_record(&mut first) {
            Ok(true) if first.get(columns.result.id).is_some_and(|v| v.is_empty()) => {
                units_row = Some(first)
            }
            Ok(true) => pending = Some(first),
            Ok(false) => {}
            Err(e) => return Err(row_error(path, preamble, &e)),
        }
        // Where the results start in the input: after the units row, or at the first result.
        let data_start = header_at
            + pending
                .as_ref()
                .and_then(|r| r.position())
                .map_or(reader.position().byte(), |p| p.byte());
        let unit_of = |col: usize| -> String {
            units_row
                .as_ref()
                .and_then(|r| r.get(col))
                .map(|u| text(u).trim().to_string())
                .unwrap_or_default()
        };

        let mut summary = RawSummary {
            has_nvtx: columns.result.push_pop.is_some() || columns.result.start_end.is_some(),
            preamble_lines: preamble,
            ..RawSummary::default()
        };
        for request in plan.metrics {
            match find(&headers, &request.name) {
                Some(col) => {
                    let norm = units::normalize(&unit_of(col));
                    let rollup = plan
                        .rollups
                        .get(&request.name)
                        .copied()
                        .unwrap_or_else(|| rollup::infer(&request.name, &norm.unit));
                    summary.specs.push(MetricSpec {
                        name: request.name.clone(),
                        unit: norm.unit,
                        rollup,
                    });
                    summary.groups.push(request.group.clone());
                    columns.metrics.push((col, norm.factor));
                }
                None => summary.missing.push(request.name.clone()),
            }
        }
        columns.time = find(&headers, plan.time_metric)
            .map(|col| (col, units::normalize(&unit_of(col)).factor));
        summary.has_time = columns.time.is_some();
        columns.headers = headers;
        Ok(RawExport {
            path: path.to_path_buf(),
            reader,
            columns,
            pending,
            summary,
            data_start,
        })
    }

    /// What the header told (specs, missing metrics, NVTX columns).
    /// Marks every scope of this export as belonging to launcher rank `rank`.
    pub fn with_rank(mut self, rank: Option<u32>) -> RawExport<R> {
        self.columns.rank = rank.map(|r| r.to_string()).unwrap_or_default();
        self
    }

    pub fn summary(&self) -> &RawSummary {
        &self.summary
    }

    /// Reads every result, calling `sink` once per result, and returns the completed summary.
    pub fn stream(self, sink: &mut dyn FnMut(&Observation<'_>)) -> Result<RawSummary, ExportError> {
        let RawExport {
            path,
            mut reader,
            columns,
            pending,
            mut summary,
            ..
        } = self;
        let offset = summary.preamble_lines;
        let mut rows = RowReader::new(&columns, &path, offset);
        if let Some(rec) = pending {
            rows.read(&rec, sink)?;
        }
        let mut rec = csv::ByteRecord::new();
        loop {
            match reader.read_byte_record(&mut rec) {
                Ok(true) => rows.read(&rec, sink)?,
                Ok(false) => break,
                Err(e) => return Err(row_error(&path, offset, &e)),
            }
        }
        rows.finish(&mut summary);
        Ok(summary)
    }
}
