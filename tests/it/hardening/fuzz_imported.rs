//! Fuzzing the readers of traces other tools wrote (`readers/trace/imported/`) with proptest:
//! mutations of a PyTorch profiler (Kineto) trace (a slice of the HTA rank-0 fixture's events, and a small
//! one with nested, GPU-side and never-launched events), of rocprofv3's sample kernel trace and its
//! rocpd database (bytes, and values written into the columns read), and of a small Nsight Systems
//! SQLite export built here with the tables and columns the reader reads. Nothing may panic; an accepted trace
//! keeps its kernels' times forward and within 2^53 ns, its text within the file's bytes and its
//! attribution within `regions.max_depth`; a refused one names the file.
//!
//! Cases per property: `PROPTEST_CASES` (default 256), as for `fuzz.rs`.

use std::path::Path;
use std::sync::OnceLock;

use proptest::prelude::*;
use proptest::sample::Index;

use profile_run::file_kind::Checks;
use profile_run::profiler::ncu::observe::trace::attribute::{attribute, PushPopScope};
use profile_run::profiler::ncu::readers::trace::{imported, read_input, TraceInput};
use profile_run::region::Renames;

const MAX_DEPTH: usize = 16;

fn config() -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(256);
    ProptestConfig {
        cases,
        max_shrink_iters: 128,
        ..ProptestConfig::default()
    }
}

/// The first 300 kernels, launches and annotations of the HTA rank-0 trace, and a small hand-made
/// trace, as JSON text.
fn kineto_seeds() -> &'static [Vec<u8>] {
    static SEEDS: OnceLock<Vec<Vec<u8>>> = OnceLock::new();
    SEEDS.get_or_init(|| {
        use std::io::Read;
        let path = crate::common::fixture("kineto/hta-trace-filter/sampled_rank-0.json.gz");
        let mut text = String::new();
        flate2::read::GzDecoder::new(std::fs::File::open(path).unwrap())
            .read_to_string(&mut text)
            .unwrap();
        let mut doc: serde_json::Value = serde_json::from_str(&text).unwrap();
        let events = doc["traceEvents"].as_array_mut().unwrap();
        events.retain(|e| ["kernel", "cuda_runtime", "user_annotation"].iter().any(|c| e["cat"] == *c));
        events.truncate(300);
        let small = r#"{"schemaVersion": 1, "distributedInfo": {"rank": 3, "world_size": 4}, "traceEvents": [
{"ph": "M", "name": "process_name", "pid": 9, "args": {"name": "trainer"}},
{"ph": "X", "cat": "user_annotation", "name": "step", "pid": 9, "tid": 1, "ts": 100, "dur": 100},
{"ph": "X", "cat": "user_annotation", "name": "fwd", "pid": 9, "tid": 1, "ts": 100, "dur": 50},
{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 9, "tid": 1, "ts": 110, "dur": 5, "args": {"correlation": 1}},
{"ph": "X", "cat": "cuda_driver", "name": "cuLaunchKernel", "pid": 9, "tid": "named", "ts": 120.5, "dur": 5, "args": {"External id": 8}},
{"ph": "X", "cat": "kernel", "name": "k1", "pid": 0, "tid": 7, "ts": 300, "dur": 10, "args": {"correlation": 1, "device": 0, "stream": 7, "grid": [1, 2, 3], "block": [32, 1, 1]}},
{"ph": "X", "cat": "kernel", "name": "k2", "pid": 1, "tid": 7, "ts": 400.25, "dur": 2.5, "args": {"External id": 8}},
{"ph": "X", "cat": "kernel", "name": "k3", "pid": 1, "tid": 7, "ts": 500, "dur": 1},
{"ph": "X", "cat": "gpu_user_annotation", "name": "gpu", "pid": 1, "tid": 7, "ts": 390, "dur": 50}
]}"#;
        vec![serde_json::to_vec(&doc).unwrap(), small.as_bytes().to_vec()]
    })
}

/// A small nsys export: two processes, kernels with and without a launch, nested and start/end
/// NVTX ranges in a named domain.
fn nsys_seed() -> &'static [u8] {
    static SEED: OnceLock<Vec<u8>> = OnceLock::new();
    SEED.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("seed.sqlite");
        let db = rusqlite::Connection::open(&path).unwrap();
        let p = |pid: i64| pid << 24;
        db.execute_batch(&format!(
            "CREATE TABLE META_DATA_EXPORT (name TEXT, value TEXT);
             INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_SCHEMA_VERSION', '3.25.0');
             CREATE TABLE StringIds (id INTEGER, value TEXT);
             INSERT INTO StringIds VALUES (1, 'gemm'), (2, 'step');
             CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER, deviceId INTEGER,
               streamId INTEGER, correlationId INTEGER, globalPid INTEGER, demangledName INTEGER,
               gridX INTEGER, gridY INTEGER, gridZ INTEGER, blockX INTEGER, blockY INTEGER, blockZ INTEGER);
             INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES
               (500, 600, 0, 7, 1, {a}, 1, 1, 1, 1, 32, 1, 1), (700, 900, 0, 7, 2, {a}, 1, 1, 1, 1, 32, 1, 1),
               (800, 850, 1, 3, 1, {b}, 1, 2, 1, 1, 64, 1, 1);
             CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER, end INTEGER, correlationId INTEGER, globalTid INTEGER);
             INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (110, 120, 1, {a} + 5), (130, 140, 1, {b} + 2);
             CREATE TABLE NVTX_EVENTS (start INTEGER, end INTEGER, eventType INTEGER, text TEXT,
               textId INTEGER, globalTid INTEGER, domainId INTEGER);
             INSERT INTO NVTX_EVENTS VALUES (50, 50, 75, 'mine', NULL, {a} + 5, 3),
               (100, 400, 59, NULL, 2, {a} + 5, 0), (105, 300, 59, 'inner', NULL, {a} + 5, 3),
               (100, NULL, 60, 'open', NULL, {b} + 2, 0);",
            a = p(11),
            b = p(12),
        ))
        .unwrap();
        drop(db);
        std::fs::read(&path).unwrap()
    })
}

/// rocpd's tables under the sample's views, each with a column the reader reaches through them.
const ROCPD_CELLS: &[(&str, &str)] = &[
    ("rocpd_kernel_dispatch", "start"),
    ("rocpd_kernel_dispatch", "end"),
    ("rocpd_kernel_dispatch", "grid_size_x"),
    ("rocpd_kernel_dispatch", "stream_id"),
    ("rocpd_event", "correlation_id"),
    ("rocpd_region", "start"),
    ("rocpd_region", "end"),
    ("rocpd_info_thread", "tid"),
    ("rocpd_info_agent", "absolute_index"),
    ("rocpd_metadata", "value"),
];

const ROCPD_VALUES: &[&str] = &[
    "NULL",
    "-1",
    "0",
    "9223372036854775807",
    "4294967296",
    "'text'",
    "x'ff00'",
    "1.5",
];

/// The sample rocpd database with `(cell, value, row)` written into it.
fn rocpd_changed(changes: &[(usize, usize, u8)]) -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("seed.db");
    std::fs::copy(
        crate::common::fixture("rocprof/rocpd-schema3/sample.db"),
        &path,
    )
    .unwrap();
    let db = rusqlite::Connection::open(&path).unwrap();
    for &(cell, value, row) in changes {
        let (table, column) = ROCPD_CELLS[cell % ROCPD_CELLS.len()];
        let table = format!("{table}_00000000_0000_0000_0000_000000000000");
        let value = ROCPD_VALUES[value % ROCPD_VALUES.len()];
        let sql = format!(
            "UPDATE {table} SET \"{column}\" = {value} WHERE id = {}",
            row % 16
        );
        // A value the table refuses (NOT NULL, CHECK) leaves the cell as it was.
        let _ = db.execute_batch(&sql);
    }
    drop(db);
    std::fs::read(&path).unwrap()
}

#[derive(Debug, Clone)]
enum Mutation {
    Truncate(Index),
    Flip(Index, u8),
    Delete(Index, Index),
    Insert(Index, &'static [u8]),
}

const TOKENS: &[&[u8]] = &[
    b"{",
    b"}",
    b"[",
    b"]",
    b",",
    b":",
    b"\"",
    b"null",
    b"-1",
    b"1e308",
    b"0.5",
    b"18446744073709551616",
    b"\"kernel\"",
    b"\"user_annotation\"",
    b"\"gpu_user_annotation\"",
    b"\"ts\"",
    b"\"dur\"",
    b"\"args\"",
    b"\"correlation\"",
    b"\xff",
    b"\0",
];

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        any::<Index>().prop_map(Mutation::Truncate),
        (any::<Index>(), any::<u8>()).prop_map(|(at, b)| Mutation::Flip(at, b)),
        (any::<Index>(), any::<Index>()).prop_map(|(a, b)| Mutation::Delete(a, b)),
        (any::<Index>(), proptest::sample::select(TOKENS))
            .prop_map(|(a, t)| Mutation::Insert(a, t)),
    ]
}

fn mutate(mut bytes: Vec<u8>, mutations: &[Mutation]) -> Vec<u8> {
    for m in mutations {
        let len = bytes.len().max(1);
        match m {
            Mutation::Truncate(at) => bytes.truncate(at.index(len)),
            Mutation::Flip(at, b) if !bytes.is_empty() => bytes[at.index(len)] ^= b | 1,
            Mutation::Flip(..) => {}
            Mutation::Delete(a, span) => {
                let from = a.index(len).min(bytes.len());
                let to = (from + span.index(16)).min(bytes.len());
                bytes.drain(from..to);
            }
            Mutation::Insert(at, token) => {
                let at = at.index(len + 1).min(bytes.len());
                bytes.splice(at..at, token.iter().copied());
            }
        }
    }
    bytes
}

/// Writes `bytes` as `name` and reads every process it holds: no panic; what is accepted keeps its
/// bounds; what is refused names the file.
fn check(bytes: &[u8], name: &str) -> Result<(), TestCaseError> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, bytes).unwrap();
    let named = |message: String| -> Result<(), TestCaseError> {
        prop_assert!(message.contains(name), "{}", message);
        Ok(())
    };
    let Some(format) = imported::sniff(&path, &Checks::unbounded()) else {
        return Ok(());
    };
    let parts = match imported::parts(format, &path) {
        Ok(parts) => parts,
        Err(e) => return named(e.to_string()),
    };
    for part in parts {
        let input = TraceInput {
            path: path.clone(),
            rank: None,
            checks: Checks::unbounded(),
            part,
        };
        match read_input(&input) {
            Ok(trace) => check_trace(&trace, bytes.len())?,
            Err(e) => named(e.to_string())?,
        }
    }
    Ok(())
}

fn check_trace(
    trace: &profile_run::profiler::ncu::readers::trace::ProcessTrace,
    bytes: usize,
) -> Result<(), TestCaseError> {
    for k in &trace.kernels {
        prop_assert!(k.end >= k.start && k.end - k.start <= 1 << 53);
        prop_assert!((k.shape as usize) < trace.shapes.len());
    }
    for r in &trace.ranges {
        prop_assert!(r.end.is_none_or(|end| end >= r.start));
    }
    let text: usize = trace
        .texts
        .iter()
        .chain(&trace.names)
        .map(String::len)
        .sum();
    prop_assert!(text <= bytes, "{} bytes of text from {} bytes", text, bytes);
    for scope in [PushPopScope::Thread, PushPopScope::Process] {
        let mut within = true;
        let _ = attribute(trace, scope, &Renames::default(), MAX_DEPTH, |a| {
            within &= a.stacks.iter().all(|s| s.len() <= MAX_DEPTH) && a.marks.len() <= MAX_DEPTH;
        });
        prop_assert!(within, "a kernel was handed more ranges than the limit");
    }
    Ok(())
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn mutated_kineto_traces_never_panic(seed in 0usize..2, mutations in proptest::collection::vec(mutation(), 1..6)) {
        let bytes = mutate(kineto_seeds()[seed].clone(), &mutations);
        check(&bytes, "fuzz.pt.trace.json")?;
    }

    #[test]
    fn mutated_rocprof_kernel_traces_never_panic(mutations in proptest::collection::vec(mutation(), 1..6)) {
        let seed = std::fs::read(crate::common::fixture("rocprof/sdk-docs-sample/kernel_trace.csv")).unwrap();
        check(&mutate(seed, &mutations), "fuzz_kernel_trace.csv")?;
    }

    #[test]
    fn mutated_rocpd_databases_never_panic(mutations in proptest::collection::vec(mutation(), 1..4)) {
        let seed = std::fs::read(crate::common::fixture("rocprof/rocpd-schema3/sample.db")).unwrap();
        check(&mutate(seed, &mutations), "fuzz.db")?;
    }

    #[test]
    fn rocpd_databases_with_odd_values_never_panic(changes in proptest::collection::vec((0usize..64, 0usize..64, any::<u8>()), 1..5)) {
        check(&rocpd_changed(&changes), "odd.db")?;
    }

    #[test]
    fn mutated_nsys_exports_never_panic(mutations in proptest::collection::vec(mutation(), 1..4)) {
        let bytes = mutate(nsys_seed().to_vec(), &mutations);
        check(&bytes, "fuzz.sqlite")?;
    }
}

#[test]
fn the_seeds_read_as_they_are() {
    for (bytes, name) in [
        (kineto_seeds()[0].clone(), "hta.json"),
        (kineto_seeds()[1].clone(), "small.json"),
        (nsys_seed().to_vec(), "seed.sqlite"),
        (rocpd_changed(&[]), "seed.db"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(name);
        std::fs::write(&path, &bytes).unwrap();
        let format = imported::sniff(&path, &Checks::unbounded()).unwrap();
        for part in imported::parts(format, &path).unwrap() {
            let input = TraceInput {
                path: path.clone(),
                rank: None,
                checks: Checks::unbounded(),
                part,
            };
            let trace = read_input(&input).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert!(!trace.kernels.is_empty(), "{name}");
            assert!(Path::new(&trace.path).ends_with(name));
        }
    }
}
