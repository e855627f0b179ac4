//! An Nsight Systems SQLite export (`nsys export --type sqlite`), read through SQLite itself
//! (`rusqlite`, the library compiled in), opened read-only. Its export schema version
//! (`META_DATA_EXPORT`'s `EXPORT_SCHEMA_VERSION`) is checked first; every table and column read is
//! looked up before the query, and one missing is refused naming both.
//!
//! One process per part, in `globalPid` order of the processes that ran kernels: its kernels
//! (`CUPTI_ACTIVITY_KIND_KERNEL`, names through `StringIds`), the runtime and driver calls that
//! launched them (`CUPTI_ACTIVITY_KIND_RUNTIME` / `_DRIVER`, by `correlationId`, on their
//! `globalTid`), and its NVTX push/pop and start/end ranges (`NVTX_EVENTS` types 59 and 60, text
//! inline or through `textId`, domains named by their `NvtxDomainCreate` events).

use std::path::Path;

use super::super::{ProcessTrace, RangeKind, TraceError, TraceInput};
use super::collect::{Collect, KernelRow};
use super::sqlite::Sqlite;
use super::{check_open, chosen_process, refused};

/// The export schema's major versions read: 3 is every nsys since 2021.
pub const KNOWN_SCHEMA_MAJOR: &[u32] = &[3];

const KERNELS: &str = "CUPTI_ACTIVITY_KIND_KERNEL";
const STRINGS: &str = "StringIds";
const NVTX: &str = "NVTX_EVENTS";
/// `NVTX_EVENTS.eventType` of a push/pop range, a start/end range and a domain's creation.
const PUSH_POP: i64 = 59;
const START_END: i64 = 60;
const DOMAIN_CREATE: i64 = 75;

/// A globalTid or globalPid holds the pid in bits 24–47 and the thread id in bits 0–23.
const PID_SHIFT: u32 = 24;
const ID_MASK: i64 = 0xFF_FFFF;

/// An open export and the columns each table has.
struct Export<'p>(Sqlite<'p>);

impl<'p> std::ops::Deref for Export<'p> {
    type Target = Sqlite<'p>;

    fn deref(&self) -> &Sqlite<'p> {
        &self.0
    }
}

impl<'p> Export<'p> {
    fn open(path: &'p Path) -> Result<Export<'p>, TraceError> {
        Sqlite::open(path).map(Export)
    }

    /// Refuses a table that lacks one of `needed`, naming both.
    fn require(&self, table: &str, needed: &[&str]) -> Result<Vec<String>, TraceError> {
        let Some(columns) = self.columns(table)? else {
            return Err(refused(self.path, format!("has no `{table}` table, which an nsys export of a CUDA trace holds: profile with `nsys profile --trace=cuda,nvtx` and export with `nsys export --type sqlite`")));
        };
        if let Some(missing) = needed
            .iter()
            .find(|c| !columns.iter().any(|have| have == *c))
        {
            return Err(refused(self.path, format!("table `{table}` has no column `{missing}`, which profile-run reads: this export's layout is not one profile-run knows (export schema 3)")));
        }
        Ok(columns)
    }

    /// The export schema version, checked: `3.25.0` and the like.
    fn schema_version(&self) -> Result<String, TraceError> {
        let table = ["META_DATA_EXPORT", "EXPORT_META_DATA"]
            .into_iter()
            .find(|t| matches!(self.columns(t), Ok(Some(_))))
            .ok_or_else(|| refused(self.path, "has no `META_DATA_EXPORT` table: not an Nsight Systems SQLite export (`nsys export --type sqlite`)"))?;
        self.require(table, &["name", "value"])?;
        let query = format!("SELECT value FROM {table} WHERE name = 'EXPORT_SCHEMA_VERSION'");
        let version: String = self
            .db
            .query_row(&query, [], |row| row.get(0))
            .map_err(|_| {
                refused(
                    self.path,
                    format!("table `{table}` names no `EXPORT_SCHEMA_VERSION`"),
                )
            })?;
        let major = version
            .split('.')
            .next()
            .and_then(|m| m.parse::<u32>().ok());
        match major {
            Some(m) if KNOWN_SCHEMA_MAJOR.contains(&m) => Ok(version),
            _ => Err(refused(self.path, format!("`EXPORT_SCHEMA_VERSION` is `{version}`, an export schema profile-run does not know (it reads major version {KNOWN_SCHEMA_MAJOR:?})"))),
        }
    }

    /// The `globalPid`s of the processes that ran kernels, in order.
    fn processes(&self) -> Result<Vec<i64>, TraceError> {
        self.schema_version()?;
        self.require(KERNELS, &["globalPid"])?;
        let query = format!("SELECT DISTINCT globalPid FROM {KERNELS} ORDER BY globalPid");
        let mut query = self.db.prepare(&query).map_err(|e| self.sql(e))?;
        let pids = query
            .query_map([], |row| row.get::<_, i64>(0))
            .and_then(|rows| rows.collect::<Result<Vec<_>, _>>())
            .map_err(|e| self.sql(e))?;
        Ok(pids)
    }
}

/// How many processes of the export ran kernels.
pub(super) fn process_count(path: &Path) -> Result<u32, TraceError> {
    Ok(Export::open(path)?.processes()?.len() as u32)
}

/// Reads the process `input.part` names (the first when none), checked by `input.checks` first.
pub fn read(input: &TraceInput) -> Result<ProcessTrace, TraceError> {
    let path = &input.path;
    check_open(input)?;
    let export = Export::open(path)?;
    let version = export.schema_version()?;
    let processes = export.processes()?;
    let global_pid = chosen_process(input, &processes)?;
    let mut collect = Collect::new(path);
    kernels(&export, global_pid, &mut collect)?;
    for table in ["CUPTI_ACTIVITY_KIND_RUNTIME", "CUPTI_ACTIVITY_KIND_DRIVER"] {
        launches(&export, table, global_pid, &mut collect)?;
    }
    ranges(&export, global_pid, &mut collect)?;
    let trace = collect.trace();
    trace.pid = u32::try_from((global_pid >> PID_SHIFT) & ID_MASK).unwrap_or(0);
    let query = "SELECT name FROM PROCESSES WHERE globalPid = ?1";
    trace.process_name = optional_text(&export, query, [global_pid]);
    let query = "SELECT value FROM TARGET_INFO_SYSTEM_ENV WHERE name = 'Hostname'";
    trace.host = optional_text(&export, query, ());
    let query = "SELECT value FROM META_DATA_EXPORT WHERE name = 'EXPORT_PRODUCT_VERSION'";
    let product = optional_text(&export, query, ());
    trace.libcupti = format!("Nsight Systems {product} SQLite export, schema {version}");
    trace.recorder = Some("nsys");
    Ok(collect.finish())
}

/// A text an export may hold (a process's name, the host); empty when it does not.
fn optional_text(export: &Export<'_>, query: &str, params: impl rusqlite::Params) -> String {
    export
        .db
        .query_row(query, params, |row| row.get::<_, String>(0))
        .unwrap_or_default()
}

/// The process's kernels, named by their demangled name (else their short name).
fn kernels(export: &Export<'_>, global_pid: i64, collect: &mut Collect) -> Result<(), TraceError> {
    let needed = [
        "start",
        "end",
        "deviceId",
        "streamId",
        "correlationId",
        "globalPid",
    ];
    let columns = export.require(KERNELS, &needed)?;
    export.require(STRINGS, &["id", "value"])?;
    let has = |c: &str| columns.iter().any(|have| have == c);
    let name = ["demangledName", "shortName"]
        .into_iter()
        .find(|c| has(c))
        .ok_or_else(|| refused(export.path, format!("table `{KERNELS}` has no column `demangledName` (nor `shortName`), which names its kernels")))?;
    let or_one = |c: &str| if has(c) { format!("k.{c}") } else { "1".into() };
    let or_zero = |c: &str| if has(c) { format!("k.{c}") } else { "0".into() };
    let query = format!(
        "SELECT k.start, k.end, k.deviceId, k.streamId, k.correlationId, s.value, {}, {}, {}, {}, {}, {}, {}, {} FROM {KERNELS} k LEFT JOIN {STRINGS} s ON s.id = k.{name} WHERE k.globalPid = ?1",
        or_one("gridX"), or_one("gridY"), or_one("gridZ"), or_one("blockX"), or_one("blockY"), or_one("blockZ"),
        or_zero("registersPerThread"), or_zero("staticSharedMemory"),
    );
    let mut query = export.db.prepare(&query).map_err(|e| export.sql(e))?;
    let mut rows = query.query([global_pid]).map_err(|e| export.sql(e))?;
    while let Some(row) = rows.next().map_err(|e| export.sql(e))? {
        let int = |at: usize| row.get::<_, Option<i64>>(at).ok().flatten();
        let whole = |at: usize, column: &str| -> Result<u64, TraceError> {
            int(at).and_then(|v| u64::try_from(v).ok()).ok_or_else(|| {
                refused(export.path, format!("table `{KERNELS}` column `{column}` holds a value that is not a whole number ≥ 0"))
            })
        };
        let small = |at: usize| int(at).and_then(|v| u32::try_from(v).ok()).unwrap_or(0);
        let kernel_name: Option<String> = row.get(5).ok().flatten();
        let row = KernelRow {
            correlation: Some(whole(4, "correlationId")?),
            start: whole(0, "start")?,
            end: whole(1, "end")?,
            device: small(2),
            stream: small(3),
            name: kernel_name.as_deref().unwrap_or("(unnamed kernel)"),
            grid: [small(6), small(7), small(8)],
            block: [small(9), small(10), small(11)],
            registers: small(12),
            shared: u64::from(small(13)),
        };
        collect
            .kernel(row)
            .map_err(|what| refused(export.path, format!("table `{KERNELS}`: {what}")))?;
    }
    Ok(())
}

/// The calls of `table` (optional) made by the process's threads.
fn launches(
    export: &Export<'_>,
    table: &str,
    global_pid: i64,
    collect: &mut Collect,
) -> Result<(), TraceError> {
    if export.columns(table)?.is_none() {
        return Ok(());
    }
    export.require(table, &["start", "correlationId", "globalTid"])?;
    let query = format!(
        "SELECT correlationId, globalTid, start FROM {table} WHERE globalTid >= ?1 AND globalTid < ?1 + {}",
        ID_MASK + 1
    );
    let mut query = export.db.prepare(&query).map_err(|e| export.sql(e))?;
    let mut rows = query.query([global_pid]).map_err(|e| export.sql(e))?;
    while let Some(row) = rows.next().map_err(|e| export.sql(e))? {
        let int = |at: usize| {
            row.get::<_, Option<i64>>(at)
                .ok()
                .flatten()
                .and_then(|v| u64::try_from(v).ok())
        };
        let (Some(correlation), Some(tid), Some(start)) = (int(0), int(1), int(2)) else {
            continue;
        };
        let thread = collect.thread(0, tid);
        collect.call(correlation, thread, start);
    }
    Ok(())
}

/// The process's NVTX push/pop and start/end ranges, with their domains' names.
fn ranges(export: &Export<'_>, global_pid: i64, collect: &mut Collect) -> Result<(), TraceError> {
    if export.columns(NVTX)?.is_none() {
        return Ok(());
    }
    let needed = [
        "start",
        "end",
        "eventType",
        "text",
        "textId",
        "globalTid",
        "domainId",
    ];
    export.require(NVTX, &needed)?;
    let in_process = format!("globalTid >= ?1 AND globalTid < ?1 + {}", ID_MASK + 1);
    let mut domains = std::collections::HashMap::new();
    let query = format!(
        "SELECT domainId, text FROM {NVTX} WHERE eventType = {DOMAIN_CREATE} AND {in_process}"
    );
    let mut query = export.db.prepare(&query).map_err(|e| export.sql(e))?;
    let mut rows = query.query([global_pid]).map_err(|e| export.sql(e))?;
    while let Some(row) = rows.next().map_err(|e| export.sql(e))? {
        if let (Ok(Some(id)), Ok(Some(name))) = (
            row.get::<_, Option<i64>>(0),
            row.get::<_, Option<String>>(1),
        ) {
            domains.insert(id, name);
        }
    }
    let query = format!(
        "SELECT n.start, n.end, n.eventType, COALESCE(n.text, s.value), n.globalTid, n.domainId FROM {NVTX} n LEFT JOIN {STRINGS} s ON s.id = n.textId WHERE n.eventType IN ({PUSH_POP}, {START_END}) AND n.{in_process}"
    );
    let mut query = export.db.prepare(&query).map_err(|e| export.sql(e))?;
    let mut rows = query.query([global_pid]).map_err(|e| export.sql(e))?;
    while let Some(row) = rows.next().map_err(|e| export.sql(e))? {
        let int = |at: usize| row.get::<_, Option<i64>>(at).ok().flatten();
        let time = |v: Option<i64>| v.and_then(|t| u64::try_from(t).ok());
        let Some(start) = time(int(0)) else { continue };
        let kind = match int(2) {
            Some(PUSH_POP) => RangeKind::PushPop,
            _ => RangeKind::StartEnd,
        };
        let thread = collect.thread(0, int(4).and_then(|t| u64::try_from(t).ok()).unwrap_or(0));
        let name: Option<String> = row.get(3).ok().flatten();
        let domain = int(5).filter(|&d| d != 0).map(|d| {
            domains
                .get(&d)
                .cloned()
                .unwrap_or_else(|| format!("domain {d}"))
        });
        collect
            .range(
                (kind, thread),
                (start, time(int(1))),
                domain.as_deref(),
                name.as_deref(),
            )
            .map_err(|what| refused(export.path, format!("table `{NVTX}`: {what}")))?;
    }
    Ok(())
}
