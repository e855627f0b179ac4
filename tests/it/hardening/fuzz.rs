//! Fuzzing the export reader and the NVTX-cell parser with proptest: random bytes, mutations of a
//! real export (truncation, byte flips, inserted quotes, commas and newlines) and arbitrary cells.
//! Nothing may panic; every accepted input must give consistent counts, and every refused one an
//! error that names the file.
//!
//! Cases per property: `PROPTEST_CASES` (default 256; the whole-pipeline property runs a quarter).
//! A longer run for CI: `PROPTEST_CASES=20000 cargo test --release --test it hardening::fuzz`.

use std::collections::BTreeMap;
use std::path::Path;

use proptest::prelude::*;
use proptest::sample::Index;

use crate::common::analyze;
use profile_run::analysis::RunContext;
use profile_run::config::{load, ConfigSources};
use profile_run::profiler::ncu::readers::export::nvtx_cell::{
    parse_cell, CellLayout, DEFAULT_DOMAIN,
};
use profile_run::profiler::ncu::readers::export::raw::{
    MetricRequest, RawExport, RawPlan, RawSummary,
};
use profile_run::profiler::ncu::readers::export::ExportError;
use profile_run::region::RegionKind;
use profile_run::report::model::Report;
use profile_run::report::render::markdown::render;
use profile_run::report::render::RenderOptions;

use super::fixture_bytes;

fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        // Shrinking a 54 KB input can take long; a failure is reported with its seed either way.
        max_shrink_iters: 256,
        ..ProptestConfig::default()
    }
}

const METRICS: [&str; 3] = [
    "gpu__time_duration.sum",
    "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    "launch__grid_size",
];

/// Reads `bytes` as a raw export; returns the summary and how many results reached the sink.
fn read(bytes: &[u8]) -> Result<(RawSummary, u64), ExportError> {
    let requests: Vec<MetricRequest> = METRICS
        .iter()
        .map(|m| MetricRequest {
            name: m.to_string(),
            group: "fuzz".into(),
        })
        .collect();
    let rollups = BTreeMap::new();
    let renames = profile_run::region::Renames::default();
    let plan = RawPlan {
        metrics: &requests,
        time_metric: METRICS[0],
        rollups: &rollups,
        renames: &renames,
    };
    let export = RawExport::open(bytes, Path::new("fuzz.csv"), &plan)?;
    let specs = export.summary().specs.len();
    let mut seen = 0u64;
    let summary = export.stream(&mut |obs| {
        seen += 1;
        assert_eq!(obs.values.len(), specs, "one cell per metric");
    })?;
    Ok((summary, seen))
}

fn check_reader(bytes: &[u8]) -> Result<(), TestCaseError> {
    match read(bytes) {
        Ok((summary, seen)) => {
            prop_assert_eq!(summary.results, seen);
            prop_assert!(summary.results_in_ranges <= summary.results);
            prop_assert!(summary.range_results <= summary.results);
            prop_assert_eq!(summary.specs.len() + summary.missing.len(), METRICS.len());
        }
        Err(err) => {
            let message = err.to_string();
            prop_assert!(message.starts_with("fuzz.csv"), "{}", message);
        }
    }
    Ok(())
}

/// Region counts add up: a push/pop region's count is its self count plus its children's, its
/// kernels' counts sum to it, and every scope's results are accounted for.
fn check_counts(report: &Report) -> Result<(), TestCaseError> {
    let mut selected = 0;
    for scope in report.scopes.iter().chain(report.aggregate.iter()) {
        let outside = &scope.outside_regions;
        let listed: u64 = outside.kernels.iter().map(|k| k.count).sum();
        prop_assert_eq!(listed, outside.kernel_count);
        prop_assert!(scope.outside_regions.kernel_count <= scope.total.kernel_count);
        let mut default_domain_top_level = 0;
        for region in &scope.regions {
            let listed: u64 = region.kernels.iter().map(|k| k.count).sum();
            prop_assert_eq!(listed, region.kernel_count, "{}", region.path);
            if region.kind != RegionKind::Stack {
                continue;
            }
            let children: u64 = scope
                .regions
                .iter()
                .filter(|c| c.kind == region.kind && c.parent.as_deref() == Some(&region.path))
                .map(|c| c.kernel_count)
                .sum();
            prop_assert_eq!(
                region.kernel_count,
                region.self_kernel_count + children,
                "{}",
                region.path
            );
            if region.depth == 0 {
                prop_assert!(
                    region.kernel_count + outside.kernel_count <= scope.total.kernel_count,
                    "{}",
                    region.path
                );
                // Each NVTX domain forms its own tree, so a result may sit in one top-level region
                // per domain: only the default domain's (segments without `domain@`) must be disjoint.
                if !region.segments[0].contains('@') {
                    default_domain_top_level += region.kernel_count;
                }
            }
        }
        prop_assert!(default_domain_top_level + outside.kernel_count <= scope.total.kernel_count);
    }
    for scope in &report.scopes {
        selected += scope.total.kernel_count;
    }
    prop_assert_eq!(selected, report.kernel_selection.results_selected);
    Ok(())
}

/// The whole pipeline on one file: read, analyse, render both formats.
fn check_pipeline(bytes: &[u8]) -> Result<(), TestCaseError> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("fuzz.csv");
    std::fs::write(&path, bytes).unwrap();
    let config = load(&ConfigSources::default()).unwrap().config;
    match analyze(&config, &[path], &RunContext::default()) {
        Ok(report) => {
            check_counts(&report)?;
            prop_assert!(render(&report, &RenderOptions::default()).is_ok());
            let json = profile_run::report::render::json::to_json(&report);
            prop_assert!(serde_json::from_str::<serde_json::Value>(&json).is_ok());
        }
        Err(err) => {
            prop_assert_eq!(err.exit_code(), 5, "{}", err);
            prop_assert!(err.to_string().contains("fuzz.csv"), "{}", err);
        }
    }
    Ok(())
}

#[derive(Debug, Clone)]
enum Mutation {
    Truncate(Index),
    Flip(Index, u8),
    Insert(Index, &'static [u8]),
    Delete(Index, usize),
}

const INSERTS: &[&[u8]] = &[
    b"\"", b",", b"\n", b"\r\n", b"\r", b"\"\"", b"\",\"", b"\"\n\"", b"  \"", b":", b"\xff",
    b"\0", b"1.234,5", b"n/a",
];

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        1 => any::<Index>().prop_map(Mutation::Truncate),
        4 => (any::<Index>(), any::<u8>()).prop_map(|(i, b)| Mutation::Flip(i, b)),
        4 => (any::<Index>(), proptest::sample::select(INSERTS)).prop_map(|(i, s)| Mutation::Insert(i, s)),
        2 => (any::<Index>(), 1usize..64).prop_map(|(i, n)| Mutation::Delete(i, n)),
    ]
}

fn apply(mut bytes: Vec<u8>, mutations: &[Mutation]) -> Vec<u8> {
    for m in mutations {
        let len = bytes.len().max(1);
        match m {
            Mutation::Truncate(i) => bytes.truncate(i.index(len)),
            Mutation::Flip(i, b) if !bytes.is_empty() => {
                let at = i.index(len);
                bytes[at] ^= b | 1;
            }
            Mutation::Flip(..) => {}
            Mutation::Insert(i, s) => {
                let at = i.index(len + 1).min(bytes.len());
                bytes.splice(at..at, s.iter().copied());
            }
            Mutation::Delete(i, n) => {
                let at = i.index(len).min(bytes.len());
                let end = (at + n).min(bytes.len());
                bytes.drain(at..end);
            }
        }
    }
    bytes
}

fn header_line() -> Vec<u8> {
    let bytes = fixture_bytes();
    let end = bytes.iter().position(|&b| b == b'\n').unwrap() + 1;
    bytes[..end].to_vec()
}

fn layouts() -> [CellLayout; 3] {
    [
        CellLayout::from_header(
            "thread Domain:Push/Pop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg",
            "Push/Pop_Range",
        )
        .unwrap(),
        CellLayout::from_header(
            "Id:Domain:Start/Stop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg",
            "Start/Stop_Range",
        )
        .unwrap(),
        CellLayout::from_header(
            "thread Domain:Push/Pop_Range:PL_Type:PL_Value",
            "Push/Pop_Range",
        )
        .unwrap(),
    ]
}

proptest! {
    #![proptest_config(config(cases(256)))]

    #[test]
    fn random_bytes_never_panic_the_reader(bytes in proptest::collection::vec(any::<u8>(), 0..4096)) {
        check_reader(&bytes)?;
    }

    #[test]
    fn random_rows_after_a_real_header_never_panic_the_reader(
        rows in proptest::collection::vec(any::<u8>(), 0..4096)
    ) {
        let mut bytes = header_line();
        bytes.extend(rows);
        check_reader(&bytes)?;
    }

    #[test]
    fn mutated_real_exports_never_panic_the_reader(
        mutations in proptest::collection::vec(mutation(), 1..8)
    ) {
        check_reader(&apply(fixture_bytes(), &mutations))?;
    }

    #[test]
    fn arbitrary_cells_never_panic_the_nvtx_parser(
        cell in prop_oneof![any::<String>(), "[0-9 \"<>:a-z@/\\\\]{0,80}"]
    ) {
        for layout in layouts() {
            for entry in parse_cell(&cell, layout) {
                prop_assert!(!entry.name.is_empty(), "{:?}", cell);
            }
        }
    }

    #[test]
    fn nvtx_cells_round_trip_any_name(
        ranges in proptest::collection::vec(
            (
                prop_oneof![Just(DEFAULT_DOMAIN.to_string()), Just(String::new()), "[A-Za-z_ <>@]{1,12}"],
                "[^\"]{1,40}".prop_filter("`none` means unnamed", |n| n != "none"),
            ),
            0..5,
        ),
        tid in 0u32..100_000,
    ) {
        let mut cell = tid.to_string();
        for (domain, name) in &ranges {
            cell.push_str(&format!("  \"{domain}:{name}:none:none:none:none:none:none\""));
        }
        cell.push(' ');
        let parsed = parse_cell(&cell, layouts()[0]);
        let expected: Vec<String> = ranges
            .iter()
            .map(|(d, n)| if d.is_empty() || d == DEFAULT_DOMAIN { n.replace('@', r"\@") } else { format!("{d}@{n}") })
            .collect();
        let segments: Vec<String> = parsed.iter().map(|e| e.segment()).collect();
        prop_assert_eq!(segments, expected, "{:?}", cell);
    }
}

proptest! {
    #![proptest_config(config((cases(256) / 4).max(1)))]

    #[test]
    fn mutated_real_exports_give_consistent_reports_or_a_clear_error(
        mutations in proptest::collection::vec(mutation(), 1..6)
    ) {
        check_pipeline(&apply(fixture_bytes(), &mutations))?;
    }
}
