//! Exports large enough to be read in parallel chunks (64 MiB and more): every result is read exactly
//! once whatever the chunk boundaries, and the report is the same on any number of threads.

use std::io::Write;
use std::path::Path;

use crate::common::analyze;
use profile_run::analysis::RunContext;
use profile_run::config::{load, Config, ConfigSources};
use profile_run::region::Rollup;
use profile_run::report::model::{MetricMap, Report, Scope};
use profile_run::report::render::json::{to_json, write_json_on};

use crate::common::fixture;

const EXPORT: &str = "ncu/h200-2025.3.1/multiproc_raw.csv";
/// Copies of the export's results: past the 64 MiB the parallel reader needs, and several chunks.
const COPIES: usize = 100;

fn config(threads: usize) -> Config {
    load(&ConfigSources {
        files: vec![],
        overrides: vec![format!("report.threads={threads}")],
        env: vec![],
    })
    .unwrap()
    .config
}

fn report(path: &Path, threads: usize) -> Report {
    analyze(
        &config(threads),
        &[path.to_path_buf()],
        &RunContext::default(),
    )
    .unwrap()
}

/// The export with its results repeated `COPIES` times after the header and units rows.
fn replicate(to: &Path) {
    let text = std::fs::read_to_string(fixture(EXPORT)).unwrap();
    let mut lines = text.split_inclusive('\n');
    let head: String = lines.by_ref().take(2).collect();
    let results: String = lines.collect();
    assert!(
        results.starts_with("\"0\","),
        "results follow the units row"
    );
    let mut out = std::io::BufWriter::new(std::fs::File::create(to).unwrap());
    out.write_all(head.as_bytes()).unwrap();
    for _ in 0..COPIES {
        out.write_all(results.as_bytes()).unwrap();
    }
    out.flush().unwrap();
}

/// Same metrics, values equal to 1e-9 relative (sums over 100 copies add up in another order).
fn close(a: &MetricMap, b: &MetricMap, what: &str) {
    assert_eq!(a.0.len(), b.0.len(), "{what}");
    for ((name, x), (_, y)) in a.0.iter().zip(&b.0) {
        match (x.value, y.value) {
            (Some(x), Some(y)) => {
                assert!(
                    (x - y).abs() <= 1e-9 * x.abs().max(y.abs()),
                    "{what} {name}: {x} vs {y}"
                );
            }
            (x, y) => assert_eq!(x.is_some(), y.is_some(), "{what} {name}"),
        }
        assert_eq!(x.values, y.values, "{what} {name}");
    }
}

/// `big` holds `copies` times the results of `small`: same regions, counts times `copies`, sums
/// (`sums[i]`: metric i adds up) times `copies`, means and extremes unchanged.
fn same_scope(big: &Scope, small: &Scope, copies: u64, sums: &[bool]) {
    let scaled = |map: &MetricMap| {
        MetricMap(
            map.0
                .iter()
                .zip(sums)
                .map(|((name, value), &sum)| {
                    let mut value = value.clone();
                    if sum {
                        value.value = value.value.map(|v| v * copies as f64);
                    }
                    (name.clone(), value)
                })
                .collect(),
        )
    };
    assert_eq!(big.label, small.label);
    assert_eq!(big.total.kernel_count, small.total.kernel_count * copies);
    close(
        &big.total.metrics,
        &scaled(&small.total.metrics),
        &big.label,
    );
    assert_eq!(big.regions.len(), small.regions.len(), "{}", big.label);
    for (b, s) in big.regions.iter().zip(&small.regions) {
        assert_eq!(b.path, s.path);
        assert_eq!(b.kernel_count, s.kernel_count * copies, "{}", b.path);
        assert_eq!(
            b.self_kernel_count,
            s.self_kernel_count * copies,
            "{}",
            b.path
        );
        close(&b.inclusive, &scaled(&s.inclusive), &b.path);
        close(&b.exclusive, &scaled(&s.exclusive), &b.path);
    }
}

#[test]
fn a_chunked_parallel_read_counts_every_result_once_and_matches_one_thread() {
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("big_raw.csv");
    replicate(&big);
    assert!(std::fs::metadata(&big).unwrap().len() > 64 << 20);

    let small = report(&fixture(EXPORT), 1);
    let one_thread = report(&big, 1);
    let parallel = report(&big, 3);

    // Large inputs are read in the same fixed chunks on any number of threads: same sums, same bytes.
    assert_eq!(to_json(&one_thread), to_json(&parallel));
    assert!(small.scopes.len() > 1, "several processes");
    let sums: Vec<bool> = small
        .metrics
        .iter()
        .map(|m| m.rollup == Rollup::Sum)
        .collect();
    for report in [&one_thread, &parallel] {
        assert_eq!(report.scopes.len(), small.scopes.len());
        for (b, s) in report.scopes.iter().zip(&small.scopes) {
            same_scope(b, s, COPIES as u64, &sums);
        }
        same_scope(
            report.aggregate.as_ref().unwrap(),
            small.aggregate.as_ref().unwrap(),
            COPIES as u64,
            &sums,
        );
        assert_eq!(
            report.kernel_selection.results_selected,
            small.kernel_selection.results_selected * COPIES as u64
        );
    }
}

#[test]
fn scopes_finished_and_written_on_several_threads_give_the_same_bytes() {
    let one = report(&fixture(EXPORT), 1);
    let many = report(&fixture(EXPORT), 4);
    assert!(one.scopes.len() > 1);
    assert_eq!(to_json(&one), to_json(&many));
    for threads in [2, 3, 8] {
        let mut parallel = Vec::new();
        write_json_on(&many, &mut parallel, threads).unwrap();
        assert_eq!(
            String::from_utf8(parallel).unwrap(),
            to_json(&one),
            "report.json with scopes written on {threads} threads"
        );
    }
}
