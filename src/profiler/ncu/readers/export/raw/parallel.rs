//! Reading large raw exports on every core.
//!
//! The results of all exports are cut into work units: one per file, and files larger than
//! [`CHUNK_BYTES`] into chunks that start at a record boundary. Each unit is parsed on its own thread
//! into a fresh state, and the states are merged strictly in input order (file, then offset), so the
//! outcome depends only on the input, never on the number of threads or on scheduling.
//!
//! A chunk boundary is a line that starts like a result (`"<ID>",`). ncu never writes a newline
//! inside a field, but should a chunk still fail to parse, everything is read again in one pass,
//! which either succeeds or reports the error with its true line number.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;

use crate::region::Observation;

use super::fast::{read_range, ColumnLayout};
use super::{Columns, ExportError, RawFile, RawHead, RawPlan, RawSummary, RowReader};
use crate::parallel;

/// Target size of one work unit. Fixed (not derived from the core count) so that floating-point
/// sums are added in the same order on every machine.
const CHUNK_BYTES: u64 = 32 << 20;

/// Below this many bytes of results in all exports together, one pass on one thread is as fast.
const PARALLEL_MIN_BYTES: u64 = 2 * CHUNK_BYTES;

/// How far past a nominal chunk start to look for the start of a record.
const BOUNDARY_WINDOW: usize = 1 << 20;

/// One byte range of one export.
struct Unit {
    file: usize,
    start: u64,
    end: u64,
}

/// Reads every export, calling `visit` once per result on a state made by `init`, and folds the
/// states together with `merge` in input order. Returns the final state and one summary per export.
///
/// Inputs under 64 MiB are one sequential pass in input order into a single state; larger ones are
/// split into fixed units, each read into its own state on `threads` threads (0: one per available
/// core), one thread included, so the result does not depend on the thread count.
pub fn stream_files<S, I, V, M>(
    exports: &[RawHead],
    plan: &RawPlan<'_>,
    threads: usize,
    init: I,
    visit: V,
    mut merge: M,
) -> Result<(S, Vec<RawSummary>), ExportError>
where
    S: Send,
    I: Fn() -> S + Sync,
    V: Fn(&mut S, &Observation<'_>) + Sync,
    M: FnMut(&mut S, S),
{
    let units = match plan_units(exports) {
        Ok(units) => units,
        Err(_) => return stream_sequential(exports, plan, &init, &visit),
    };
    let total: u64 = units.iter().map(|u| u.end - u.start).sum();
    let threads = parallel::thread_count(threads);
    // One thread still reads large inputs unit by unit, so sums add up in the same order as on any
    // number of threads: the same input gives the same report on every machine and setting.
    if total < PARALLEL_MIN_BYTES || units.len() < 2 {
        return match scan_sequential(exports, plan, &init, &visit) {
            Some(done) => Ok(done),
            None => stream_sequential(exports, plan, &init, &visit),
        };
    }
    let mut summaries: Vec<RawSummary> = exports.iter().map(|e| e.summary.clone()).collect();
    let mut state = init();
    let failed = AtomicBool::new(false);
    let next = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        let (tx, rx) = mpsc::channel();
        for _ in 0..threads.min(units.len()) {
            let tx = tx.clone();
            let (units, next, failed) = (&units, &next, &failed);
            let (init, visit) = (&init, &visit);
            scope.spawn(move || loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= units.len() || failed.load(Ordering::Relaxed) {
                    break;
                }
                // Reopened for its unit and let go after it: no export waits holding its reader.
                let result = exports[units[i].file]
                    .reopen(plan)
                    .map_err(drop)
                    .and_then(|export| {
                        scan_unit(&export, &units[i], init, visit)
                            .or_else(|()| read_unit(&export, &units[i], init, visit))
                    });
                if result.is_err() {
                    failed.store(true, Ordering::Relaxed);
                }
                if tx.send((i, result)).is_err() {
                    break;
                }
            });
        }
        drop(tx);
        // Merge in unit order as results arrive; at most a few units wait here at any time.
        let mut waiting = BTreeMap::new();
        let mut merged = 0;
        for (i, result) in rx {
            waiting.insert(i, result);
            while let Some(result) = waiting.remove(&merged) {
                if let Ok((part, counts)) = result {
                    merge(&mut state, part);
                    counts.add_to(&mut summaries[units[merged].file]);
                }
                merged += 1;
            }
        }
    });
    if failed.into_inner() {
        return stream_sequential(exports, plan, &init, &visit);
    }
    Ok((state, summaries))
}

fn stream_sequential<S>(
    exports: &[RawHead],
    plan: &RawPlan<'_>,
    init: &dyn Fn() -> S,
    visit: &dyn Fn(&mut S, &Observation<'_>),
) -> Result<(S, Vec<RawSummary>), ExportError> {
    let mut state = init();
    let mut summaries = Vec::with_capacity(exports.len());
    for export in exports {
        summaries.push(
            export
                .reopen(plan)?
                .stream(&mut |obs| visit(&mut state, obs))?,
        );
    }
    Ok((state, summaries))
}

/// One pass in input order with the row scanner into a single state, as [`stream_sequential`]
/// would make it; `None` when some row needs the CSV reader (nothing has been consumed then).
fn scan_sequential<S>(
    exports: &[RawHead],
    plan: &RawPlan<'_>,
    init: &dyn Fn() -> S,
    visit: &dyn Fn(&mut S, &Observation<'_>),
) -> Option<(S, Vec<RawSummary>)> {
    let mut state = init();
    let mut summaries = Vec::with_capacity(exports.len());
    for head in exports {
        let export = head.reopen(plan).ok()?;
        let layout = ColumnLayout::new(&export.columns);
        let len = std::fs::metadata(&export.path).ok()?.len();
        let mut rows = RowReader::new(&export.columns, &export.path, 0);
        read_range(
            &export.path,
            export.data_start,
            len,
            &layout,
            &mut rows,
            &mut |obs| visit(&mut state, obs),
        )
        .ok()?;
        let mut summary = export.summary.clone();
        rows.finish(&mut summary);
        summaries.push(summary);
    }
    Some((state, summaries))
}

/// Reads one unit with the row scanner into a fresh state.
fn scan_unit<S>(
    export: &RawFile,
    unit: &Unit,
    init: &dyn Fn() -> S,
    visit: &dyn Fn(&mut S, &Observation<'_>),
) -> Result<(S, Counts), ()> {
    let layout = ColumnLayout::new(&export.columns);
    let mut rows = RowReader::new(&export.columns, &export.path, 0);
    let mut state = init();
    read_range(
        &export.path,
        unit.start,
        unit.end,
        &layout,
        &mut rows,
        &mut |obs| visit(&mut state, obs),
    )?;
    let mut counts = Counts::default();
    rows.finish(&mut counts.0);
    Ok((state, counts))
}

/// Result counts of one unit, added to its export's summary.
#[derive(Default)]
struct Counts(RawSummary);

impl Counts {
    fn add_to(&self, summary: &mut RawSummary) {
        summary.results += self.0.results;
        summary.range_results += self.0.range_results;
        summary.results_in_ranges += self.0.results_in_ranges;
        for device in &self.0.devices {
            summary.add_device(device.clone());
        }
    }
}

fn read_unit<S>(
    export: &RawFile,
    unit: &Unit,
    init: &dyn Fn() -> S,
    visit: &dyn Fn(&mut S, &Observation<'_>),
) -> Result<(S, Counts), ()> {
    let columns: &Columns = &export.columns;
    let mut file = File::open(&export.path).map_err(drop)?;
    file.seek(SeekFrom::Start(unit.start)).map_err(drop)?;
    let input = BufReader::with_capacity(1 << 20, file.take(unit.end - unit.start));
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(input);
    let width = columns.headers.len();
    let mut rows = RowReader::new(columns, &export.path, 0);
    let mut state = init();
    let mut rec = csv::ByteRecord::new();
    while reader.read_byte_record(&mut rec).map_err(drop)? {
        if rec.len() != width {
            return Err(());
        }
        rows.read(&rec, &mut |obs| visit(&mut state, obs))
            .map_err(drop)?;
    }
    let mut counts = Counts::default();
    rows.finish(&mut counts.0);
    Ok((state, counts))
}

/// The work units of all exports, in input order.
fn plan_units(exports: &[RawHead]) -> std::io::Result<Vec<Unit>> {
    let mut units = Vec::new();
    for (file, export) in exports.iter().enumerate() {
        let len = std::fs::metadata(&export.path)?.len();
        let mut start = export.data_start.min(len);
        for boundary in chunk_starts(&export.path, start, len)? {
            units.push(Unit {
                file,
                start,
                end: boundary,
            });
            start = boundary;
        }
        units.push(Unit {
            file,
            start,
            end: len,
        });
    }
    Ok(units)
}

/// Record starts roughly every [`CHUNK_BYTES`] after `from`.
fn chunk_starts(path: &Path, from: u64, len: u64) -> std::io::Result<Vec<u64>> {
    let mut starts = Vec::new();
    if len.saturating_sub(from) < 2 * CHUNK_BYTES {
        return Ok(starts);
    }
    let mut file = File::open(path)?;
    let mut window = vec![0u8; BOUNDARY_WINDOW];
    let mut target = from + CHUNK_BYTES;
    while target + CHUNK_BYTES / 2 < len {
        file.seek(SeekFrom::Start(target))?;
        let n = read_full(&mut file, &mut window)?;
        if let Some(at) = record_start_in(&window[..n]) {
            let boundary = target + at as u64;
            if starts.last().is_none_or(|&last| boundary > last) {
                starts.push(boundary);
            }
        }
        target += CHUNK_BYTES;
    }
    Ok(starts)
}

fn read_full(file: &mut File, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match file.read(&mut buf[filled..])? {
            0 => break,
            n => filled += n,
        }
    }
    Ok(filled)
}

/// Offset of the first line in `bytes` (after a newline) that starts like a result row: `"123",`
/// or `123,`.
fn record_start_in(bytes: &[u8]) -> Option<usize> {
    let mut from = 0;
    while let Some(nl) = bytes[from..].iter().position(|&b| b == b'\n') {
        let at = from + nl + 1;
        if looks_like_record(&bytes[at..]) {
            return Some(at);
        }
        from = at;
    }
    None
}

fn looks_like_record(line: &[u8]) -> bool {
    let (body, quoted) = match line.strip_prefix(b"\"") {
        Some(rest) => (rest, true),
        None => (line, false),
    };
    let digits = body.iter().take_while(|b| b.is_ascii_digit()).count();
    let rest = &body[digits..];
    digits > 0
        && if quoted {
            rest.starts_with(b"\",")
        } else {
            rest.starts_with(b",")
        }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_starts_are_lines_that_begin_with_an_id() {
        let text = b"tail of a row\"\n\"12\",\"512\"\n";
        assert_eq!(record_start_in(text), Some(15));
        assert_eq!(record_start_in(b"x\n12,3\n"), Some(2));
        // A line inside a quoted NVTX cell or a units row is not a record start.
        assert_eq!(
            record_start_in(b"x\n\"\",\"\"\n  \"<default domain>:a\"\n"),
            None
        );
        assert_eq!(record_start_in(b"x\n\"12\"\n"), None);
    }
}
