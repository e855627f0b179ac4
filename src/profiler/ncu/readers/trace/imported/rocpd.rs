//! rocprofv3's SQLite output (`--output-format rocpd`, a `.db`), read through SQLite itself, opened
//! read-only. Its schema version (`rocpd_metadata`'s `schema_version`) is checked first; then only
//! the views rocpd defines over its tables are read (`kernels`, `regions`), since those keep their
//! columns when the tables beneath them change; every view and column read is looked up before the
//! query, and one missing is refused naming both.
//!
//! One process per part, in `pid` order of the processes that ran kernels: its kernels (the
//! `kernels` view, GPU agent `agent_abs_index` as the device), the HIP and HSA calls that launched
//! them (the `regions` view's rows of the same correlation id, on their thread), and its ROCTx
//! ranges (the `regions` rows of a `MARKER_…` category, the name being the message; a mark, start
//! equal to end, is no range).

use std::path::Path;

use super::super::{ProcessTrace, RangeKind, TraceError, TraceInput};
use super::collect::{Collect, KernelRow};
use super::sqlite::Sqlite;
use super::{check_open, chosen_process, refused};

/// The rocpd schema versions read: 3, the one rocprofv3 has written since ROCm 7.0.
pub const KNOWN_SCHEMA_VERSIONS: &[&str] = &["3"];

const METADATA: &str = "rocpd_metadata";
const KERNELS: &str = "kernels";
const REGIONS: &str = "regions";

/// Whether an open SQLite database is a rocpd one: it has rocpd's metadata table or view.
pub(super) fn is_rocpd(path: &Path) -> bool {
    let Ok(db) = Db::open(path) else { return false };
    matches!(db.columns(METADATA), Ok(Some(_)))
}

/// An open rocpd database.
struct Db<'p>(Sqlite<'p>);

impl<'p> std::ops::Deref for Db<'p> {
    type Target = Sqlite<'p>;

    fn deref(&self) -> &Sqlite<'p> {
        &self.0
    }
}

/// A view's columns, each the first of its names the view has (rocpd renamed a few across
/// releases: `corr_id` was `correlation_id`).
struct Columns(Vec<String>);

impl<'p> Db<'p> {
    fn open(path: &'p Path) -> Result<Db<'p>, TraceError> {
        Sqlite::open(path).map(Db)
    }

    /// The columns of `view` named by `needed` (each a list of accepted names) and `optional`,
    /// in that order, quoted for a query (`NULL` for an optional one it lacks); refuses a view that
    /// lacks one needed, naming both.
    fn select(
        &self,
        view: &str,
        needed: &[&[&str]],
        optional: &[&str],
    ) -> Result<Columns, TraceError> {
        let Some(have) = self.columns(view)? else {
            return Err(refused(self.path, format!("has no `{view}` view, which a rocpd database (rocprofv3 `--output-format rocpd`, schema 3) holds: this database's layout is not one profile-run knows")));
        };
        let has = |c: &&&str| have.iter().any(|h| h == **c);
        let mut out = Vec::new();
        for names in needed {
            let Some(found) = names.iter().find(has) else {
                return Err(refused(self.path, format!("view `{view}` has no column `{}`, which profile-run reads: this rocpd database's layout is not one profile-run knows (schema 3)", names.join("` or `"))));
            };
            out.push(format!("\"{found}\""));
        }
        for name in optional {
            out.push(match has(&name) {
                true => format!("\"{name}\""),
                false => "NULL".into(),
            });
        }
        Ok(Columns(out))
    }

    /// The schema version, checked: `3`.
    fn schema_version(&self) -> Result<String, TraceError> {
        self.select(METADATA, &[&["tag"], &["value"]], &[])?;
        let query = format!("SELECT value FROM {METADATA} WHERE tag = 'schema_version'");
        let version: String = self
            .db
            .query_row(&query, [], |row| row.get::<_, rusqlite::types::Value>(0))
            .map(|v| match v {
                rusqlite::types::Value::Integer(i) => i.to_string(),
                rusqlite::types::Value::Text(t) => t,
                other => format!("{other:?}"),
            })
            .map_err(|_| {
                refused(
                    self.path,
                    format!("table `{METADATA}` names no `schema_version`"),
                )
            })?;
        match KNOWN_SCHEMA_VERSIONS.contains(&version.trim()) {
            true => Ok(version),
            false => Err(refused(self.path, format!("`{METADATA}`'s `schema_version` is `{version}`, a rocpd schema profile-run does not know (it reads {KNOWN_SCHEMA_VERSIONS:?})"))),
        }
    }

    /// The `pid`s of the processes that ran kernels, in order.
    fn processes(&self) -> Result<Vec<i64>, TraceError> {
        self.schema_version()?;
        let pid = self.select(KERNELS, &[&["pid"]], &[])?;
        let query = format!("SELECT DISTINCT {} FROM {KERNELS} ORDER BY 1", pid.0[0]);
        let mut query = self.db.prepare(&query).map_err(|e| self.sql(e))?;
        let pids = query
            .query_map([], |row| row.get::<_, Option<i64>>(0))
            .and_then(|rows| rows.collect::<Result<Vec<_>, _>>())
            .map_err(|e| self.sql(e))?;
        Ok(pids.into_iter().flatten().collect())
    }
}

/// How many processes of the database ran kernels.
pub(super) fn process_count(path: &Path) -> Result<u32, TraceError> {
    Ok(Db::open(path)?.processes()?.len() as u32)
}

/// Reads the process `input.part` names (the first when none), checked by `input.checks` first.
pub fn read(input: &TraceInput) -> Result<ProcessTrace, TraceError> {
    let path = &input.path;
    check_open(input)?;
    let db = Db::open(path)?;
    let version = db.schema_version()?;
    let processes = db.processes()?;
    let pid = chosen_process(input, &processes)?;
    let mut collect = Collect::new(path);
    kernels(&db, pid, &mut collect)?;
    regions(&db, pid, &mut collect)?;
    let trace = collect.trace();
    trace.pid = u32::try_from(pid).unwrap_or(0);
    let text = |query: &str| {
        db.db
            .query_row(query, [pid], |row| row.get::<_, Option<String>>(0))
            .ok()
            .flatten()
            .unwrap_or_default()
    };
    trace.process_name = text("SELECT command FROM rocpd_info_process WHERE pid = ?1 LIMIT 1");
    trace.host = text("SELECT n.hostname FROM rocpd_info_node n JOIN rocpd_info_process p ON p.nid = n.id WHERE p.pid = ?1 LIMIT 1");
    trace.libcupti = format!("rocpd database (schema {version})");
    trace.recorder = Some("rocprofv3");
    Ok(collect.finish())
}

/// A whole number ≥ 0 in column `at` of `view`, or the refusal naming both.
fn whole(row: &rusqlite::Row<'_>, at: usize, view: &str, column: &str) -> Result<u64, String> {
    row.get::<_, Option<i64>>(at)
        .ok()
        .flatten()
        .and_then(|v| u64::try_from(v).ok())
        .ok_or_else(|| {
            format!("view `{view}` column `{column}` holds a value that is not a whole number ≥ 0")
        })
}

/// The process's kernels, named by their display name.
fn kernels(db: &Db<'_>, pid: i64, collect: &mut Collect) -> Result<(), TraceError> {
    let needed: &[&[&str]] = &[
        &["start"],
        &["end"],
        &["corr_id", "correlation_id"],
        &["agent_abs_index", "agent_absolute_index"],
        &["name"],
        &["pid"],
    ];
    let optional = [
        "stream_id",
        "queue_id",
        "grid_x",
        "grid_y",
        "grid_z",
        "workgroup_x",
        "workgroup_y",
        "workgroup_z",
        "arch_vgpr_count",
        "lds_size",
        "tid",
    ];
    let c = db.select(KERNELS, needed, &optional)?.0;
    let query = format!("SELECT {} FROM {KERNELS} WHERE {} = ?1", c.join(", "), c[5]);
    let mut query = db.db.prepare(&query).map_err(|e| db.sql(e))?;
    let mut rows = query.query([pid]).map_err(|e| db.sql(e))?;
    let fail = |what: String| refused(db.path, what);
    while let Some(row) = rows.next().map_err(|e| db.sql(e))? {
        let int = |at: usize| row.get::<_, Option<i64>>(at).ok().flatten();
        let small = |at: usize| int(at).and_then(|v| u32::try_from(v).ok()).unwrap_or(0);
        let one = |at: usize| small(at).max(1);
        let name: Option<String> = row.get(4).ok().flatten();
        // A kernel's stream is its HIP stream where rocpd records one, else its queue.
        let stream = int(6).or(int(7)).and_then(|v| u32::try_from(v).ok());
        let (id, start) = (
            whole(row, 2, KERNELS, "corr_id").map_err(fail)?,
            whole(row, 0, KERNELS, "start").map_err(fail)?,
        );
        // Without the API call that launched it, a kernel is placed at its own start on its
        // dispatching thread; the call, read later with the same id, takes its place.
        if let Some(tid) = int(16).and_then(|t| u64::try_from(t).ok()) {
            let thread = collect.thread(0, tid);
            collect.call(id, thread, start);
        }
        let kernel = KernelRow {
            correlation: Some(id),
            start,
            end: whole(row, 1, KERNELS, "end").map_err(fail)?,
            device: u32::try_from(whole(row, 3, KERNELS, "agent_abs_index").map_err(fail)?)
                .unwrap_or(u32::MAX),
            stream: stream.unwrap_or(0),
            name: name.as_deref().unwrap_or("(unnamed kernel)"),
            grid: [one(8), one(9), one(10)],
            block: [one(11), one(12), one(13)],
            registers: small(14),
            shared: u64::from(small(15)),
        };
        collect
            .kernel(kernel)
            .map_err(|what| refused(db.path, format!("view `{KERNELS}`: {what}")))?;
    }
    Ok(())
}

/// The process's ROCTx ranges and the API calls that may have launched its kernels.
fn regions(db: &Db<'_>, pid: i64, collect: &mut Collect) -> Result<(), TraceError> {
    if db.columns(REGIONS)?.is_none() {
        return Ok(());
    }
    let needed: &[&[&str]] = &[
        &["start"],
        &["end"],
        &["category"],
        &["name"],
        &["tid"],
        &["corr_id", "correlation_id"],
        &["pid"],
    ];
    let c = db.select(REGIONS, needed, &[])?.0;
    let query = format!("SELECT {} FROM {REGIONS} WHERE {} = ?1", c.join(", "), c[6]);
    let mut query = db.db.prepare(&query).map_err(|e| db.sql(e))?;
    let mut rows = query.query([pid]).map_err(|e| db.sql(e))?;
    let fail = |what: String| refused(db.path, what);
    while let Some(row) = rows.next().map_err(|e| db.sql(e))? {
        let start = whole(row, 0, REGIONS, "start").map_err(fail)?;
        let end = whole(row, 1, REGIONS, "end").map_err(fail)?;
        let category: Option<String> = row.get(2).ok().flatten();
        let thread = collect.thread(0, whole(row, 4, REGIONS, "tid").map_err(fail)?);
        if !category.as_deref().unwrap_or("").starts_with("MARKER_") {
            if let Ok(Some(id)) = row.get::<_, Option<i64>>(5) {
                if let Ok(id) = u64::try_from(id) {
                    collect.call(id, thread, start);
                }
            }
            continue;
        }
        if start == end {
            continue;
        }
        let name: Option<String> = row.get(3).ok().flatten();
        collect
            .range(
                (RangeKind::PushPop, thread),
                (start, Some(end)),
                None,
                name.as_deref(),
            )
            .map_err(|what| refused(db.path, format!("view `{REGIONS}`: {what}")))?;
    }
    Ok(())
}
