//! System-profile tables (`SystemProfileEvents`, `DeviceProfileList`, `SystemProfileMetadata`, as the
//! SDK's profile-schema-reference documents them for schema 7.4.0), and the output directories of
//! several instances on shared storage (`<instance-id>_pid_<pid>/`) read as one run.
//!
//! Strict where the device reader is lenient: every table in the directory must be one the schema
//! documents, and every column of the three tables read must be one the schema documents for that
//! table. Anything else is refused with the table and the column named: what an undocumented column
//! holds is not guessed. docs/neuron.md lists the columns read.
//!
//! Bounded and read once: a table is opened only as a regular file inside its directory (a FIFO or
//! a link out of it is left out, with a note); names are cut as range names are
//! (`crate::region::NAME_LIMIT`); an event lasting past 2^53 ns is refused as the trace reader
//! refuses one; a directory reached twice (a link, a parent and its child) is read once.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::list_tables;
use super::table::{refusal, RowView, Table};
use crate::analysis::MAX_DURATION_NS;
use crate::profiler::neuron::error::{NeuronError, NeuronResult as Result};
use crate::profiler::neuron::readers::model::system::{
    DeviceProfileEntry, SystemEvent, SystemMetadata, SystemProfile,
};

/// Every table of profile schema 7.4.0.
pub const SCHEMA_TABLES: &[&str] = &[
    "ActiveTime",
    "AssemblyInstruction",
    "BirInstruction",
    "CcInstruction",
    "CcOp",
    "CcStream",
    "CoreBarriers",
    "CpuUsage",
    "DeviceProfileList",
    "DmaPacket",
    "DmaPacketAggregated",
    "DmaQueuesInfo",
    "DmaUsage",
    "DmaUsageSummary",
    "Error",
    "ExecutionInfo",
    "Flow",
    "FrameworkInstruction",
    "FrameworkNode",
    "HbmUsage",
    "HbmUsageSummaryByType",
    "HloInstruction",
    "HostMemUsage",
    "Instruction",
    "KernelInstructions",
    "KernelIterationVariables",
    "KernelStackFrames",
    "MemoryBandwidthPoint",
    "MemoryBandwidthResponse",
    "MemoryBandwidthSeries",
    "Metadata",
    "NeffHeader",
    "OpcodeSummary",
    "PendingDma",
    "PenguinInstruction",
    "PsumUsage",
    "SbufAllocation",
    "SbufUsage",
    "SchemaFields",
    "SemaphoreUpdate",
    "StackFrame",
    "StackFrameFileLocation",
    "StackFrameFileName",
    "StackFrameFunctionName",
    "Summary",
    "SystemProfileEvents",
    "SystemProfileHbmUsage",
    "SystemProfileMetadata",
    "TensorInfo",
    "Throttle",
    "ThrottleSummary",
    "Warning",
];

/// The table that makes a directory a system profile.
pub const EVENTS: &str = "SystemProfileEvents";

/// The documented columns of each table read, and those a row cannot do without (`a|b`: either).
const EVENT_COLUMNS: &[&str] = &[
    "id",
    "name",
    "start_ts",
    "end_ts",
    "duration_ns",
    "trace_event_source",
    "instance_id",
    "process_id",
    "thread_id",
    "nc_idx",
    "pcore_idx",
    "worker_gid",
    "flow_id",
    "framework_stream_id",
    "extra_attributes_json",
];
const EVENT_NEEDS: &[&str] = &[
    "name",
    "start_ts",
    "end_ts|duration_ns",
    "instance_id",
    "process_id",
];
const DEVICE_COLUMNS: &[&str] = &[
    "device_profile_name",
    "instance_id",
    "process_id",
    "nc_id",
    "session_id",
    "model_id",
];
const DEVICE_NEEDS: &[&str] = &["device_profile_name", "instance_id", "process_id", "nc_id"];
const METADATA_COLUMNS: &[&str] = &[
    "first_ts",
    "last_ts",
    "first_ts_ns",
    "last_ts_ns",
    "ntff_version",
    "hbm_capacity_bytes",
];

/// Whether a directory of Parquet tables holds a system profile.
pub fn is_system_profile(dir: &Path) -> bool {
    list_tables(dir).is_ok_and(|t| t.contains_key(EVENTS))
}

/// Read one system-profile directory.
pub fn read(dir: &Path) -> Result<SystemProfile> {
    let (tables, notes) = readable_tables(dir)?;
    if let Some(t) = tables
        .values()
        .find(|t| !SCHEMA_TABLES.contains(&t.name.as_str()))
    {
        return Err(NeuronError::parse(
            &t.files[0],
            format!("table {}", t.name),
            "profile schema 7.4.0 documents no such table, and profile-run does not guess what \
             it holds: remove the file, or report the Neuron release that wrote it",
        ));
    }
    let events = tables
        .get(EVENTS)
        .ok_or_else(|| NeuronError::Unrecognised {
            path: dir.into(),
            message: match notes.is_empty() {
                true => format!(
                "no {EVENTS}.parquet: not a system profile (set `neuron.inspect.system_profile` \
                 when capturing)"
            ),
                false => format!("no readable {EVENTS} table: {}", notes.join(" ")),
            },
        })?;
    let mut out = SystemProfile {
        sources: vec![dir.to_path_buf()],
        events: read_events(events)?,
        notes,
        ..SystemProfile::default()
    };
    if let Some(t) = tables.get("DeviceProfileList") {
        out.devices = read_devices(t)?;
    }
    if let Some(t) = tables.get("SystemProfileMetadata") {
        out.metadata.push(read_metadata(t)?);
    }
    Ok(out)
}

/// The directory's tables, each file checked before it is read: one that is not a regular file
/// inside `dir` (a FIFO, which would block the read, a device, a link out of the directory) is left
/// out, with a note naming it.
fn readable_tables(dir: &Path) -> Result<(BTreeMap<String, Table>, Vec<String>)> {
    let mut tables = list_tables(dir)?;
    let mut notes = Vec::new();
    for t in tables.values_mut() {
        t.files.retain(|f| match refusal(f, dir) {
            None => true,
            Some(reason) => {
                notes.push(format!(
                    "`{}` is left out: it {reason}; a table is read only as a regular file inside \
                     its profile directory.",
                    f.display()
                ));
                false
            }
        });
    }
    tables.retain(|_, t| !t.files.is_empty());
    Ok((tables, notes))
}

/// The system profiles of every `<instance-id>_pid_<pid>/` under `root` (each the Parquet directory
/// itself, or holding one, or a timestamped directory holding one), merged as one run.
pub fn read_instances(root: &Path) -> Result<SystemProfile> {
    let dirs = instance_dirs(root)?;
    if dirs.is_empty() {
        return Err(NeuronError::Unrecognised {
            path: root.into(),
            message: "no `<instance-id>_pid_<pid>/` directory holding a system profile \
                      (`SystemProfileEvents.parquet`)"
                .into(),
        });
    }
    read_all(&dirs)
}

/// Several system-profile directories (instances, or processes of one) read as one run, each
/// once: a directory reached again by another path (a link, a parent and its child given together)
/// is not read again, and events read twice from different directories (a copy) count once
/// ([`SystemProfile::merge`]); the notes say what was left out.
pub fn read_all(dirs: &[PathBuf]) -> Result<SystemProfile> {
    let mut seen: BTreeMap<PathBuf, &Path> = BTreeMap::new();
    let mut notes = Vec::new();
    let mut parts = Vec::new();
    for dir in dirs {
        let resolved = std::fs::canonicalize(dir).map_err(|e| NeuronError::io(dir, e))?;
        if let Some(first) = seen.get(&resolved) {
            notes.push(format!(
                "`{}` is `{}` again (the same directory, by its resolved path): read once.",
                dir.display(),
                first.display()
            ));
            continue;
        }
        seen.insert(resolved, dir);
        parts.push(read(dir)?);
    }
    let mut out = SystemProfile::merge(parts);
    notes.append(&mut out.notes);
    out.notes = notes;
    Ok(out)
}

/// The system-profile directories a path given to `report` holds, told by content: the path itself,
/// the one in an `<instance-id>_pid_<pid>/` named on its own, a `<name>@latest/` in it, or every
/// `<instance-id>_pid_<pid>/`'s under it. Empty when it holds none
/// (it is then some other input); a directory that cannot be listed holds none.
pub fn system_dirs(path: &Path) -> Vec<PathBuf> {
    if !path.is_dir() {
        return Vec::new();
    }
    if is_system_profile(path) {
        return vec![path.to_path_buf()];
    }
    // One process's output, named on its own: its system profile beside any device profile.
    if is_instance_dir(path) {
        return in_instance(path).unwrap_or_default();
    }
    let latest: Vec<PathBuf> = sub_dirs(path)
        .unwrap_or_default()
        .into_iter()
        .filter(|d| d.to_string_lossy().ends_with("@latest") && is_system_profile(d))
        .collect();
    if !latest.is_empty() {
        return latest;
    }
    instance_dirs(path).unwrap_or_default()
}

/// Each instance and process directory's system-profile directory, in name order.
fn instance_dirs(root: &Path) -> Result<Vec<PathBuf>> {
    let mut found = Vec::new();
    for dir in sub_dirs(root)? {
        if is_instance_dir(&dir) {
            found.extend(in_instance(&dir)?);
        }
    }
    Ok(found)
}

/// Whether a directory is named as the runtime names its output: `<instance-id>_pid_<pid>`.
fn is_instance_dir(dir: &Path) -> bool {
    let name = dir.file_name().unwrap_or_default().to_string_lossy();
    name.rsplit_once("_pid_").is_some_and(|(i, p)| {
        !i.is_empty() && !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit())
    })
}

/// The system profiles of one instance and process directory: itself, or a `<name>@latest/` or a
/// timestamped run directory one or two levels down.
fn in_instance(dir: &Path) -> Result<Vec<PathBuf>> {
    if is_system_profile(dir) {
        return Ok(vec![dir.to_path_buf()]);
    }
    let mut found = Vec::new();
    for sub in sub_dirs(dir)? {
        if is_system_profile(&sub) {
            found.push(sub);
        } else {
            found.extend(sub_dirs(&sub)?.into_iter().filter(|d| is_system_profile(d)));
        }
    }
    Ok(found)
}

fn sub_dirs(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| NeuronError::io(dir, e))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| std::fs::symlink_metadata(p).is_ok_and(|m| m.is_dir()))
        .collect();
    out.sort();
    Ok(out)
}

/// Refuses a column the schema does not document for the table, and a missing needed one.
fn check_columns(t: &Table, documented: &[&str], needs: &[&str]) -> Result<()> {
    let cols = t.columns()?;
    if let Some(c) = cols.iter().find(|c| !documented.contains(&c.as_str())) {
        return Err(NeuronError::parse(
            &t.files[0],
            format!("table {}, column `{c}`", t.name),
            format!(
                "profile schema 7.4.0 documents no column `{c}` in table {}, and profile-run \
                 does not guess what it holds: report the Neuron release that wrote it",
                t.name
            ),
        ));
    }
    for need in needs {
        if !need.split('|').any(|n| cols.iter().any(|c| c == n)) {
            return Err(NeuronError::MissingColumn {
                path: t.files[0].clone(),
                table: t.name.clone(),
                column: need.replace('|', "` or `"),
                version: "7.4.0".into(),
            });
        }
    }
    Ok(())
}

/// A name (an event's, an instance's), cut past `NAME_LIMIT` bytes as range names are.
fn required_name(r: &RowView, column: &str) -> Result<String> {
    r.name(column)?.ok_or_else(|| {
        NeuronError::parse(
            r.file,
            format!("table {}, row {}, column `{column}`", r.table, r.row_no),
            "missing value (null)",
        )
    })
}

/// An integer column's value, exactly: a fractional number (a column written as a double) is refused
/// with its row rather than cut to an integer.
fn int(r: &RowView, column: &str) -> Result<Option<u64>> {
    let value = r.u64(column)?;
    match (value, r.f64(column)?) {
        (Some(v), Some(f)) if v as f64 != f => Err(NeuronError::parse(
            r.file,
            format!("table {}, row {}, column `{column}`", r.table, r.row_no),
            format!(
                "{f} is not a whole number: profile schema 7.4.0 documents `{column}` as an \
                 integer, and profile-run does not round it"
            ),
        )),
        _ => Ok(value),
    }
}

fn required_int(r: &RowView, column: &str) -> Result<u64> {
    int(r, column)?.ok_or_else(|| {
        NeuronError::parse(
            r.file,
            format!("table {}, row {}, column `{column}`", r.table, r.row_no),
            "missing value (null)",
        )
    })
}

fn read_events(t: &Table) -> Result<Vec<SystemEvent>> {
    check_columns(t, EVENT_COLUMNS, EVENT_NEEDS)?;
    let mut out = Vec::new();
    t.for_each(|r| {
        let (start, end) = span(r)?;
        out.push(SystemEvent {
            id: int(r, "id")?,
            name: required_name(r, "name")?,
            start_ns: start,
            end_ns: end,
            source: r.name("trace_event_source")?,
            instance_id: required_name(r, "instance_id")?,
            process_id: required_int(r, "process_id")?,
            thread_id: int(r, "thread_id")?,
            nc_idx: int(r, "nc_idx")?,
            worker_gid: int(r, "worker_gid")?,
        });
        Ok(())
    })?;
    Ok(out)
}

/// An event's start and end: `end_ts`, else start + `duration_ns`; refused when it ends before it
/// starts or lasts more than 2^53 ns (104 days), as the trace reader refuses such a span: no clock
/// of a real run gives one, and past it a time in ns is no longer exact in the report's numbers.
fn span(r: &RowView) -> Result<(u64, u64)> {
    let start = required_int(r, "start_ts")?;
    let (end, column) = match int(r, "end_ts")? {
        Some(e) => (e, "end_ts"),
        None => (
            start.saturating_add(required_int(r, "duration_ns")?),
            "duration_ns",
        ),
    };
    let at = || format!("table {}, row {}, column `{column}`", r.table, r.row_no);
    if end < start {
        return Err(NeuronError::parse(
            r.file,
            at(),
            format!("the event ends ({end}) before it starts ({start})"),
        ));
    }
    if end - start > MAX_DURATION_NS {
        return Err(NeuronError::parse(
            r.file,
            at(),
            format!(
                "the event would last {} ns, more than 2^53 ns (104 days), which no clock of a \
                 real run gives: the table is damaged",
                end - start
            ),
        ));
    }
    Ok((start, end))
}

fn read_devices(t: &Table) -> Result<Vec<DeviceProfileEntry>> {
    check_columns(t, DEVICE_COLUMNS, DEVICE_NEEDS)?;
    let mut out = Vec::new();
    t.for_each(|r| {
        out.push(DeviceProfileEntry {
            name: required_name(r, "device_profile_name")?,
            instance_id: required_name(r, "instance_id")?,
            process_id: required_int(r, "process_id")?,
            nc_id: required_int(r, "nc_id")?,
            session_id: int(r, "session_id")?,
            model_id: int(r, "model_id")?,
        });
        Ok(())
    })?;
    Ok(out)
}

/// The first row (the table has one); the `*_ns` columns are Unix nanoseconds written as text.
fn read_metadata(t: &Table) -> Result<SystemMetadata> {
    check_columns(t, METADATA_COLUMNS, &[])?;
    let mut out = None;
    t.for_each(|r| {
        if out.is_none() {
            out = Some(SystemMetadata {
                first_ns: int(r, "first_ts_ns")?,
                last_ns: int(r, "last_ts_ns")?,
                ntff_version: int(r, "ntff_version")?,
                hbm_capacity_bytes: int(r, "hbm_capacity_bytes")?,
            });
        }
        Ok(())
    })?;
    Ok(out.unwrap_or_default())
}
