//! Writes Neuron system profiles (`SystemProfileEvents`, `DeviceProfileList`,
//! `SystemProfileMetadata`, with the columns profile schema 7.4.0 documents) as the runtime leaves
//! them on shared storage: one `<instance-id>_pid_<pid>/system@latest/` per process. Part of the
//! project's Parquet generator ([`super::parquet_gen`]); used by the tests and by
//! `cargo run --example gen-neuron-parquet -- --system OUT_DIR`.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

use super::parquet_gen::{write_table, Col};

/// The schema reference's own example instance, a second one, and its first timestamp.
pub const INSTANCE_A: &str = "i-0b1ea78ca2865fd32";
pub const INSTANCE_B: &str = "i-07c4d2e9a1b3f5680";
pub const FIRST_NS: i64 = 1_766_072_156_592_459_482;

/// One event: its name, `trace_event_source`, worker (`worker_gid`, `nc_idx`; `None` for the
/// process's own events), and start and end from [`FIRST_NS`] in ns.
#[derive(Debug, Clone)]
pub struct Event {
    pub name: &'static str,
    pub source: &'static str,
    pub worker: Option<(i64, i64)>,
    pub start: i64,
    pub end: i64,
}

/// One process of one instance and its events.
#[derive(Debug, Clone)]
pub struct Process {
    pub instance: &'static str,
    pub pid: i64,
    pub events: Vec<Event>,
}

/// Writes `<root>/<instance>_pid_<pid>/system@latest/` with the three system tables; the process's
/// workers each captured one device profile. The directory written.
pub fn write_process(root: &Path, p: &Process) -> PathBuf {
    let dir = root
        .join(format!("{}_pid_{}", p.instance, p.pid))
        .join("system@latest");
    std::fs::create_dir_all(&dir).unwrap();
    let ev = &p.events;
    let n = ev.len();
    let ts = |f: &dyn Fn(&Event) -> i64| ev.iter().map(|e| Some(FIRST_NS + f(e))).collect();
    write_table(
        &dir.join("SystemProfileEvents.parquet"),
        "SystemProfileEvents",
        &[
            Col::I64("id", (0..n as i64).map(Some).collect()),
            Col::Str("name", ev.iter().map(|e| Some(e.name.into())).collect()),
            Col::I64("start_ts", ts(&|e| e.start)),
            Col::I64("end_ts", ts(&|e| e.end)),
            Col::I64(
                "duration_ns",
                ev.iter().map(|e| Some(e.end - e.start)).collect(),
            ),
            Col::Str(
                "trace_event_source",
                ev.iter().map(|e| Some(e.source.into())).collect(),
            ),
            Col::Str("instance_id", vec![Some(p.instance.into()); n]),
            Col::I64("process_id", vec![Some(p.pid); n]),
            Col::I64("thread_id", vec![Some(p.pid + 1); n]),
            Col::I64("nc_idx", ev.iter().map(|e| e.worker.map(|w| w.1)).collect()),
            Col::I64(
                "worker_gid",
                ev.iter().map(|e| e.worker.map(|w| w.0)).collect(),
            ),
        ],
    );
    let mut workers: Vec<(i64, i64)> = ev.iter().filter_map(|e| e.worker).collect();
    workers.sort_unstable();
    workers.dedup();
    let m = workers.len();
    write_table(
        &dir.join("DeviceProfileList.parquet"),
        "DeviceProfileList",
        &[
            Col::Str(
                "device_profile_name",
                workers
                    .iter()
                    .map(|w| Some(format!("neuron_profile_{:03}", w.0)))
                    .collect(),
            ),
            Col::Str("instance_id", vec![Some(p.instance.into()); m]),
            Col::I64("process_id", vec![Some(p.pid); m]),
            Col::I64("nc_id", workers.iter().map(|w| Some(w.1)).collect()),
        ],
    );
    let last = ev.iter().map(|e| e.end).max().unwrap_or(0);
    write_table(
        &dir.join("SystemProfileMetadata.parquet"),
        "SystemProfileMetadata",
        &[
            Col::Str(
                "first_ts",
                vec![Some("2025-12-18 15:35:56.592459482 +0000 UTC".into())],
            ),
            Col::Str("first_ts_ns", vec![Some(FIRST_NS.to_string())]),
            Col::Str("last_ts_ns", vec![Some((FIRST_NS + last).to_string())]),
            Col::I64("ntff_version", vec![Some(5)]),
            Col::I64("hbm_capacity_bytes", vec![Some(17_179_869_184)]),
        ],
    );
    dir
}

/// How much longer the late worker's host-to-device copy takes before each collective (ns).
pub const LATE_BY: i64 = 35_000;

/// One training step of one worker from `t0`: the framework's `train_step` holding a
/// host-to-device copy, the execution (runtime call and device), then an all-reduce (`cc_running`)
/// that every worker leaves together. `late` stretches the copy by [`LATE_BY`].
fn step(worker: (i64, i64), t0: i64, late: bool, collectives: bool) -> Vec<Event> {
    let d = if late { LATE_BY } else { 0 };
    let on = |name, source, start, end| Event {
        name,
        source,
        worker: Some(worker),
        start: t0 + start,
        end: t0 + end,
    };
    let mut out = vec![
        Event {
            name: "train_step",
            source: "framework",
            worker: None,
            start: t0,
            end: t0 + 90_000,
        },
        on("nrt_tensor_write", "neuron_rt", 1_000, 6_000 + d),
        on("nrt_execute", "neuron_rt", 7_000 + d, 30_000 + d),
        on("nc_exec_running", "neuron_hw", 8_000 + d, 29_000 + d),
    ];
    if collectives {
        out.push(on("cc_running", "neuron_hw", 31_000 + d, 70_000));
    }
    out
}

/// Two instances of two workers each, one process per worker (workers 0 and 1 on
/// [`INSTANCE_A`], 2 and 3 on [`INSTANCE_B`]), two steps each; worker `late` (if any) copies its
/// inputs [`LATE_BY`] longer before every collective. The system-profile directories written.
pub fn training_run(root: &Path, late: Option<i64>, collectives: bool) -> Vec<PathBuf> {
    let workers = [
        (INSTANCE_A, 4242, 0),
        (INSTANCE_A, 4243, 1),
        (INSTANCE_B, 977, 2),
        (INSTANCE_B, 978, 3),
    ];
    workers
        .iter()
        .map(|&(instance, pid, gid)| {
            let events = (0..2)
                .flat_map(|k| step((gid, 0), k * 100_000, late == Some(gid), collectives))
                .collect();
            write_process(
                root,
                &Process {
                    instance,
                    pid,
                    events,
                },
            )
        })
        .collect()
}

/// One row of a scale scenario: name, process, worker (`worker_gid`, with `nc_idx` 0), start and
/// end from [`FIRST_NS`] in ns.
pub type Row = (String, i64, Option<i64>, i64, i64);

/// Writes `dir/SystemProfileEvents.parquet` from `rows` (all on [`INSTANCE_A`], the runtime's
/// events), for the scale scenarios of `benches/neuron_system.sh` and the tests of their bounds.
pub fn write_rows(dir: &Path, rows: &[Row]) {
    std::fs::create_dir_all(dir).unwrap();
    let n = rows.len();
    let ints = |f: &dyn Fn(&Row) -> Option<i64>| rows.iter().map(f).collect();
    write_table(
        &dir.join("SystemProfileEvents.parquet"),
        "SystemProfileEvents",
        &[
            Col::I64("id", (0..n as i64).map(Some).collect()),
            Col::Str("name", rows.iter().map(|r| Some(r.0.clone())).collect()),
            Col::I64("start_ts", ints(&|r| Some(FIRST_NS + r.3))),
            Col::I64("end_ts", ints(&|r| Some(FIRST_NS + r.4))),
            Col::Str("trace_event_source", vec![Some("neuron_rt".into()); n]),
            Col::Str("instance_id", vec![Some(INSTANCE_A.into()); n]),
            Col::I64("process_id", ints(&|r| Some(r.1))),
            Col::I64("nc_idx", ints(&|r| r.2.map(|_| 0))),
            Col::I64("worker_gid", ints(&|r| r.2)),
        ],
    );
}

/// The system-profile directory of a scale scenario under `root`.
pub fn scale_dir(root: &Path) -> PathBuf {
    root.join(format!("{INSTANCE_A}_pid_1"))
        .join("system@latest")
}

/// `n` events one after another on one worker, each with a name of its own (`op_0000001`, …).
pub fn many_names(root: &Path, n: usize) -> PathBuf {
    let rows: Vec<Row> = (0..n as i64)
        .map(|i| (format!("op_{i:07}"), 1, Some(0), i * 10, i * 10 + 5))
        .collect();
    let dir = scale_dir(root);
    write_rows(&dir, &rows);
    dir
}

/// `n` processes of one worker each, every one a framework step holding one execution.
pub fn many_processes(root: &Path, n: usize) -> PathBuf {
    let rows: Vec<Row> = (0..n as i64)
        .flat_map(|p| {
            [
                ("train_step".to_string(), p + 1, None, 0, 100),
                ("nrt_execute".to_string(), p + 1, Some(p), 10, 60),
            ]
        })
        .collect();
    let dir = scale_dir(root);
    write_rows(&dir, &rows);
    dir
}

/// One step holding one execution whose name is `bytes` bytes long.
pub fn long_name(root: &Path, bytes: usize) -> PathBuf {
    let rows = [
        ("train_step".to_string(), 1, None, 0, 100),
        ("x".repeat(bytes), 1, Some(0), 10, 60),
    ];
    let dir = scale_dir(root);
    write_rows(&dir, &rows);
    dir
}

/// A copy of the Parquet file `from` at `to` whose footer claims `claimed` bytes of metadata, the
/// file grown (sparse: holes, not data) to `size` bytes so that the claim fits inside it.
pub fn forge_footer(from: &Path, to: &Path, claimed: u32, size: u64) {
    use std::io::{Seek, SeekFrom, Write};
    let bytes = std::fs::read(from).unwrap();
    let mut file = std::fs::File::create(to).unwrap();
    file.write_all(&bytes[..bytes.len() - 8]).unwrap();
    file.set_len(size - 8).unwrap();
    file.seek(SeekFrom::Start(size - 8)).unwrap();
    file.write_all(&claimed.to_le_bytes()).unwrap();
    file.write_all(b"PAR1").unwrap();
}
