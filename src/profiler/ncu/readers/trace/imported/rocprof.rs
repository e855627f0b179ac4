//! AMD `rocprofv3` CSV output (`--kernel-trace --marker-trace --hip-runtime-trace --output-format
//! csv`): the kernel trace given (`<pid>_kernel_trace.csv`), with the marker trace and the HIP API
//! trace beside it where they exist (the same name with `marker_api_trace`, and `hip_api_trace` or
//! `hip_runtime_api_trace`, in place of `kernel_trace`). Columns are found by name in each header, since they vary by release;
//! a column profile-run needs and the header lacks is refused naming the file and the column.
//!
//! A kernel's launch is its HIP API call (same `Correlation_Id`) on that call's thread; without the
//! HIP API trace it is placed at its own start on its dispatching `Thread_Id`. ROCTx ranges (the
//! marker trace's rows that last, `Function` their message) are ranges of the thread that opened
//! them; ROCTx marks (start equal to end) are not regions.

use std::path::{Path, PathBuf};

use super::super::{ProcessTrace, RangeKind, TraceError, TraceInput};
use super::collect::{Collect, KernelRow};
use super::refused;
use crate::file_kind::{self, Checks};

/// Whether a header line is a rocprofv3 kernel trace's.
pub(super) fn is_kernel_trace_header(line: &str) -> bool {
    [
        "Kernel_Name",
        "Correlation_Id",
        "Start_Timestamp",
        "End_Timestamp",
    ]
    .iter()
    .all(|c| line.contains(c))
}

/// A CSV file read whole, its columns by name.
struct Table {
    path: PathBuf,
    header: csv::StringRecord,
    rows: csv::Reader<Box<dyn std::io::Read + Send>>,
}

impl Table {
    fn open(path: &Path, checks: &Checks) -> Result<Table, TraceError> {
        let text = file_kind::open_text(path, checks).map_err(|e| TraceError::Io {
            path: path.to_path_buf(),
            source: e.into(),
        })?;
        let mut rows = csv::ReaderBuilder::new().flexible(false).from_reader(text);
        let header = rows
            .headers()
            .map_err(|e| refused(path, format!("has no CSV header line: {e}")))?
            .clone();
        Ok(Table {
            path: path.to_path_buf(),
            header,
            rows,
        })
    }

    /// The index of the first of `names` the header has; refused naming them when it has none.
    fn column(&self, names: &[&str]) -> Result<usize, TraceError> {
        self.optional(names).ok_or_else(|| {
            refused(&self.path, format!("has no column `{}` in its header line, which profile-run reads: this rocprofv3 output's layout is not one profile-run knows", names.join("` or `")))
        })
    }

    fn optional(&self, names: &[&str]) -> Option<usize> {
        names
            .iter()
            .find_map(|n| self.header.iter().position(|h| h == *n))
    }

    /// Hands each row to `each`; an error names the file, the line and the column.
    fn each(
        &mut self,
        mut each: impl FnMut(&Row<'_>) -> Result<(), String>,
    ) -> Result<(), TraceError> {
        let mut record = csv::StringRecord::new();
        loop {
            let read = self.rows.read_record(&mut record);
            let line = record.position().map_or(0, |p| p.line());
            match read {
                Ok(false) => return Ok(()),
                Ok(true) => {}
                Err(e) => return Err(refused(&self.path, format!("line {line}: {e}"))),
            }
            let row = Row {
                record: &record,
                header: &self.header,
            };
            each(&row).map_err(|what| refused(&self.path, format!("line {line}: {what}")))?;
        }
    }
}

struct Row<'r> {
    record: &'r csv::StringRecord,
    header: &'r csv::StringRecord,
}

impl Row<'_> {
    fn text(&self, at: usize) -> &str {
        self.record.get(at).unwrap_or("")
    }

    /// A whole number ≥ 0 in column `at`.
    fn whole(&self, at: usize) -> Result<u64, String> {
        let text = self.text(at).trim();
        text.parse().map_err(|_| {
            let column = self.header.get(at).unwrap_or("?");
            format!("column `{column}` is `{text}`, not a whole number ≥ 0")
        })
    }

    fn small(&self, at: Option<usize>) -> Result<u32, String> {
        match at {
            None => Ok(0),
            Some(at) => u32::try_from(self.whole(at)?).map_err(|_| {
                let column = self.header.get(at).unwrap_or("?");
                format!("column `{column}` is past 2^32")
            }),
        }
    }
}

/// The trace beside `kernels` whose name says `kind` in place of `kernel_trace`, if it exists.
fn sibling(kernels: &Path, kind: &str) -> Option<PathBuf> {
    let name = kernels.file_name()?.to_str()?;
    let at = name.rfind("kernel_trace")?;
    let other = format!(
        "{}{kind}{}",
        &name[..at],
        &name[at + "kernel_trace".len()..]
    );
    Some(kernels.with_file_name(other)).filter(|p| p.is_file())
}

/// Reads a kernel trace and the traces beside it, checked and bounded by `input.checks`.
pub fn read(input: &TraceInput) -> Result<ProcessTrace, TraceError> {
    let path = &input.path;
    let mut collect = Collect::new(path);
    let mut pid = None;
    kernels(&mut Table::open(path, &input.checks)?, &mut collect)?;
    // `--hip-trace` writes `hip_api_trace`; some releases name `--hip-runtime-trace`'s file apart.
    let hip = ["hip_api_trace", "hip_runtime_api_trace"]
        .into_iter()
        .find_map(|kind| sibling(path, kind));
    if let Some(hip) = hip {
        calls(
            &mut Table::open(&hip, &input.checks)?,
            &mut collect,
            &mut pid,
        )?;
    }
    if let Some(markers) = sibling(path, "marker_api_trace") {
        ranges(
            &mut Table::open(&markers, &input.checks)?,
            &mut collect,
            &mut pid,
        )?;
    }
    // rocprofv3 names its files `<pid>_…` by default.
    let from_name = path
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(|n| n.split('_').next())
        .and_then(|p| p.parse().ok());
    let trace = collect.trace();
    trace.pid = pid.or(from_name).unwrap_or(0);
    trace.libcupti = "rocprofv3 CSV trace".into();
    trace.recorder = Some("rocprofv3");
    Ok(collect.finish())
}

fn kernels(table: &mut Table, collect: &mut Collect) -> Result<(), TraceError> {
    let name = table.column(&["Kernel_Name"])?;
    let correlation = table.column(&["Correlation_Id"])?;
    let (start, end) = (
        table.column(&["Start_Timestamp"])?,
        table.column(&["End_Timestamp"])?,
    );
    let device = table.column(&["Agent_Id"])?;
    let stream = table.optional(&["Stream_Id", "Queue_Id"]);
    let thread = table.optional(&["Thread_Id"]);
    let dims = |t: &Table, axis: &str| {
        ["Grid_Size", "Workgroup_Size"].map(|d| t.optional(&[&format!("{d}_{axis}")]))
    };
    let [grid_x, block_x] = dims(table, "X");
    let [grid_y, block_y] = dims(table, "Y");
    let [grid_z, block_z] = dims(table, "Z");
    let registers = table.optional(&["Arch_VGPR_Count", "VGPR_Count"]);
    let shared = table.optional(&["Group_Segment_Size", "LDS_Block_Size", "LDS_Size"]);
    let one = |row: &Row<'_>, at| row.small(at).map(|v| v.max(1));
    table.each(|row| {
        let id = row.whole(correlation)?;
        let begins = row.whole(start)?;
        // Without the HIP API trace a kernel is placed at its own start on the dispatching thread;
        // a launch call read later for the same id takes its place.
        if let Some(thread) = thread {
            let thread = collect.thread(0, row.whole(thread)?);
            collect.call(id, thread, begins);
        }
        collect.kernel(KernelRow {
            correlation: Some(id),
            start: begins,
            end: row.whole(end)?,
            device: row.small(Some(device))?,
            stream: row.small(stream)?,
            name: row.text(name),
            grid: [one(row, grid_x)?, one(row, grid_y)?, one(row, grid_z)?],
            block: [one(row, block_x)?, one(row, block_y)?, one(row, block_z)?],
            registers: row.small(registers)?,
            shared: u64::from(row.small(shared)?),
        })
    })
}

fn calls(
    table: &mut Table,
    collect: &mut Collect,
    pid: &mut Option<u32>,
) -> Result<(), TraceError> {
    let correlation = table.column(&["Correlation_Id"])?;
    let thread = table.column(&["Thread_Id"])?;
    let start = table.column(&["Start_Timestamp"])?;
    let process = table.optional(&["Process_Id"]);
    table.each(|row| {
        if pid.is_none() {
            *pid = process.map(|p| row.small(Some(p))).transpose()?;
        }
        let id = row.whole(correlation)?;
        let thread = collect.thread(0, row.whole(thread)?);
        collect.call(id, thread, row.whole(start)?);
        Ok(())
    })
}

fn ranges(
    table: &mut Table,
    collect: &mut Collect,
    pid: &mut Option<u32>,
) -> Result<(), TraceError> {
    let message = table.column(&["Function", "Message"])?;
    let thread = table.column(&["Thread_Id"])?;
    let (start, end) = (
        table.column(&["Start_Timestamp"])?,
        table.column(&["End_Timestamp"])?,
    );
    let process = table.optional(&["Process_Id"]);
    table.each(|row| {
        if pid.is_none() {
            *pid = process.map(|p| row.small(Some(p))).transpose()?;
        }
        let (begins, ends) = (row.whole(start)?, row.whole(end)?);
        if begins == ends {
            return Ok(());
        }
        let thread = collect.thread(0, row.whole(thread)?);
        let kind = (RangeKind::PushPop, thread);
        collect.range(kind, (begins, Some(ends)), None, Some(row.text(message)))
    })
}
