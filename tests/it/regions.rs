//! Region trees and totals from real exports, checked against numbers computed independently from the
//! CSV (a plain parse in this file) and against ncu's own `--print-summary per-nvtx` figures.

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::common::analyze;
use profile_run::analysis::RunContext;
use profile_run::config::{load, Config, ConfigSources};
use profile_run::report::model::{Region, Report, Scope, Severity};

use crate::common::fixture;

const TIME: &str = "gpu__time_duration.sum";

fn config(overrides: &[&str]) -> Config {
    load(&ConfigSources {
        files: vec![],
        overrides: overrides.iter().map(|s| s.to_string()).collect(),
        env: vec![],
    })
    .unwrap()
    .config
}

fn report(export: &str, overrides: &[&str]) -> Report {
    analyze(
        &config(overrides),
        &[fixture(export)],
        &RunContext::default(),
    )
    .unwrap()
}

fn regions(scope: &Scope) -> BTreeMap<&str, &Region> {
    scope.regions.iter().map(|r| (r.path.as_str(), r)).collect()
}

fn time(region: &Region, inclusive: bool) -> f64 {
    let map = if inclusive {
        &region.inclusive
    } else {
        &region.exclusive
    };
    map.get(TIME).and_then(|v| v.value).unwrap_or(0.0)
}

/// Independent reading of a raw export: per (pid, region path) the number of results and the summed
/// duration in ns, inclusive of nested ranges. Uses the csv crate directly and a naive NVTX-cell split.
fn independent_totals(export: &str) -> BTreeMap<(String, String), (u64, f64)> {
    let mut reader = csv::Reader::from_path(fixture(export)).unwrap();
    let headers = reader.headers().unwrap().clone();
    let col = |name: &str| headers.iter().position(|h| h == name).unwrap();
    let (pid, time_col) = (col("Process ID"), col(TIME));
    let nvtx = headers
        .iter()
        .position(|h| h.contains("Push/Pop_Range"))
        .unwrap();
    let mut rows = reader.records();
    let units = rows.next().unwrap().unwrap();
    let scale = match &units[time_col] {
        "ns" | "nsecond" => 1.0,
        "us" | "usecond" => 1e3,
        "ms" | "msecond" => 1e6,
        other => panic!("unexpected time unit {other}"),
    };
    let mut totals: BTreeMap<(String, String), (u64, f64)> = BTreeMap::new();
    for row in rows {
        let row = row.unwrap();
        let duration: f64 = row[time_col].replace(',', "").parse::<f64>().unwrap() * scale;
        // `TID  "<dom>:<name>:…"  "<dom>:<name>:…" ` → names: second field of each quoted entry.
        let names: Vec<String> = row[nvtx]
            .split('"')
            .skip(1)
            .step_by(2)
            .map(|entry| {
                let mut fields = entry.split(':');
                let (domain, name) = (fields.next().unwrap(), fields.next().unwrap());
                // decisions.md: a default-domain name holding `@` is written `\@` in region paths.
                assert_eq!(
                    domain, "<default domain>",
                    "these exports use the default domain"
                );
                name.replace('@', r"\@")
            })
            .collect();
        for depth in 1..=names.len() {
            let path = names[..depth].join("/");
            let entry = totals.entry((row[pid].to_string(), path)).or_default();
            entry.0 += 1;
            entry.1 += duration;
        }
    }
    totals
}

fn assert_close(a: f64, b: f64, what: &str) {
    assert!(
        (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0),
        "{what}: {a} != {b}"
    );
}

#[test]
fn inclusive_totals_match_an_independent_parse_of_every_kernel_replay_export() {
    for export in [
        "ncu/h100-2025.3.1/kreplay_raw.csv",
        "ncu/h200-2025.3.1/manual_raw.csv",
        "ncu/h200-2025.3.1/workload_raw.csv",
        "ncu/h200-2025.3.1/train_process_raw.csv",
        "ncu/h200-2025.3.1/train_thread_raw.csv",
        "ncu/h200-2025.3.1/multiproc_raw.csv",
    ] {
        let expected = independent_totals(export);
        let report = report(export, &[]);
        let mut seen = 0;
        for scope in &report.scopes {
            let pid = scope.process_id.unwrap().to_string();
            for region in &scope.regions {
                let (count, total) = expected[&(pid.clone(), region.path.clone())];
                assert_eq!(region.kernel_count, count, "{export} {}", region.path);
                assert_close(
                    time(region, true),
                    total,
                    &format!("{export} {}", region.path),
                );
                seen += 1;
            }
        }
        assert_eq!(seen, expected.len(), "{export}: every region found");
    }
}

#[test]
fn decode_totals_match_ncus_own_per_nvtx_summary() {
    // kreplay_sum_nvtx.csv is ncu's `--print-summary per-nvtx` of the same report: per (range, kernel)
    // an invocation count and min/max/average, never sums.
    let mut reader =
        csv::Reader::from_path(fixture("ncu/h100-2025.3.1/kreplay_sum_nvtx.csv")).unwrap();
    let mut summary_time = 0.0;
    let mut summary_invocations = 0u64;
    let mut summary_max_cycles: f64 = 0.0;
    let mut summary_min_cycles = f64::INFINITY;
    let mut summary_sum_cycles = 0.0;
    for row in reader.records() {
        let row = row.unwrap();
        if !row[1].contains("decode") {
            continue;
        }
        let invocations: u64 = row[7].parse().unwrap();
        let num = |i: usize| row[i].replace(',', "").parse::<f64>().unwrap();
        match &row[8] {
            "gpu__time_duration.sum" => {
                assert_eq!(&row[9], "us");
                summary_time += num(12) * invocations as f64 * 1e3;
                summary_invocations += invocations;
            }
            "gpc__cycles_elapsed.max" => {
                summary_max_cycles = summary_max_cycles.max(num(11));
                summary_min_cycles = summary_min_cycles.min(num(10));
                summary_sum_cycles += num(12) * invocations as f64;
            }
            _ => {}
        }
    }
    let report = report("ncu/h100-2025.3.1/kreplay_raw.csv", &[]);
    let decode = regions(&report.scopes[0])["decode"];
    assert_eq!(decode.kernel_count, summary_invocations);
    // The summary prints averages with 6 decimals in µs, so allow rounding at that precision.
    assert!(
        (time(decode, true) - summary_time).abs() < 0.01,
        "{} vs {summary_time}",
        time(decode, true)
    );
    // The summary's per-kernel extremes are the region's per-result view; its total is the sum over
    // its kernels (the summary's averages are rounded, hence the tolerance).
    let spread = &decode
        .per_result
        .0
        .iter()
        .find(|(n, _)| &**n == "gpc__cycles_elapsed.max")
        .unwrap()
        .1;
    assert_eq!(
        (spread.min, spread.max),
        (summary_min_cycles, summary_max_cycles)
    );
    let total_cycles = decode
        .inclusive
        .get("gpc__cycles_elapsed.max")
        .unwrap()
        .value
        .unwrap();
    assert!(
        (total_cycles - summary_sum_cycles).abs() < 1.0,
        "{total_cycles} vs {summary_sum_cycles}"
    );
    for kernel in &decode.kernels {
        assert_eq!(kernel.count, 2, "each decode kernel ran once per step");
    }
}

#[test]
fn manual_acceptance_checks_hold_on_the_real_captures() {
    for export in [
        "ncu/h200-2025.3.1/manual_raw.csv",
        "ncu/h100-2025.3.1/manual_raw.csv",
    ] {
        manual_acceptance_checks(export);
    }
}

fn manual_acceptance_checks(export: &str) {
    let report = report(export, &["regions.include=[A, B]"]);
    assert_eq!(report.scopes.len(), 1);
    let scope = &report.scopes[0];
    let r = regions(scope);
    assert_eq!(r.keys().copied().collect::<Vec<_>>(), ["A", "A/A1", "B"]);
    assert_eq!((r["A"].kernel_count, r["A"].self_kernel_count), (50, 28));
    assert_eq!(r["A/A1"].kernel_count, 22);
    assert_eq!(r["B"].kernel_count, 50);
    assert_eq!(
        scope.outside_regions.kernel_count, 0,
        "no kernel from outside the ranges"
    );
    for region in r.values() {
        for metric in &report.metrics {
            let value = region.inclusive.get(&metric.name).unwrap();
            assert!(
                value.value.is_some() || value.values.is_some(),
                "{} {}",
                region.path,
                metric.name
            );
        }
    }
    let (a, a_self, a1) = (
        time(r["A"], true),
        time(r["A"], false),
        time(r["A/A1"], true),
    );
    assert!((a - (a_self + a1)).abs() <= 0.01 * a);
    assert_eq!(report.metrics[0].unit, "ns");
}

#[test]
fn kernel_selection_on_the_real_capture_partitions_each_region() {
    let gemms = r#"report.kernels.include=["*gemm*", "*Kernel2*"]"#;
    let not_gemms = r#"report.kernels.exclude=["*gemm*", "*Kernel2*"]"#;
    let full = report("ncu/h200-2025.3.1/manual_raw.csv", &[]);
    let only = report("ncu/h200-2025.3.1/manual_raw.csv", &[gemms]);
    let rest = report("ncu/h200-2025.3.1/manual_raw.csv", &[not_gemms]);
    let both = report(
        "ncu/h200-2025.3.1/manual_raw.csv",
        &[gemms, r#"report.kernels.exclude=["*gemm*"]"#],
    );
    let (f, o, x) = (
        regions(&full.scopes[0]),
        regions(&only.scopes[0]),
        regions(&rest.scopes[0]),
    );
    for path in ["A", "A/A1", "B"] {
        assert_eq!(
            f[path].kernel_count,
            o[path].kernel_count + x[path].kernel_count,
            "{path}"
        );
        assert_close(
            time(f[path], true),
            time(o[path], true) + time(x[path], true),
            path,
        );
    }
    assert_eq!(o["A/A1"].kernel_count, 11, "one GEMM per A1 iteration");
    assert_eq!(o["B"].kernel_count, 0);
    assert!(o["B"]
        .notes
        .iter()
        .any(|n| n.contains("left out by report.kernels")));
    // include+exclude: exclude wins, so only the non-`gemm`-named GEMM kernels remain.
    let b = regions(&both.scopes[0]);
    assert!(b["A/A1"].kernel_count <= o["A/A1"].kernel_count);
    assert!(b["A/A1"].kernels.iter().all(|k| !k.name.contains("gemm")));
}

#[test]
fn a_kernel_pattern_that_matches_nothing_is_a_note_not_a_failure() {
    let report = report(
        "ncu/h200-2025.3.1/manual_raw.csv",
        &[r#"report.kernels.include=["*no_such_kernel*"]"#],
    );
    assert!(report
        .notes
        .iter()
        .any(|n| n.contains("`*no_such_kernel*` matched no kernel name")));
    assert!(report.scopes[0]
        .regions
        .iter()
        .all(|r| r.kernel_count == 0 && !r.notes.is_empty()));
    assert_eq!(
        time(&report.scopes[0].regions[0], true),
        0.0,
        "empty regions show zeroed sums"
    );
}

#[test]
fn metric_groups_choose_exactly_the_metrics_shown_in_order() {
    let report = report(
        "ncu/h200-2025.3.1/manual_raw.csv",
        &[
            "report.sections=[launch, time]",
            "report.metrics=[sm__cycles_active.avg]",
        ],
    );
    let names: Vec<&str> = report.metrics.iter().map(|m| m.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "launch__grid_size",
            "launch__block_size",
            "launch__registers_per_thread",
            "launch__waves_per_multiprocessor",
            "gpu__time_duration.sum",
            "sm__cycles_active.avg"
        ]
    );
    let memory = self::report(
        "ncu/h200-2025.3.1/manual_raw.csv",
        &["report.sections=[time, memory]"],
    );
    assert!(
        memory
            .notes
            .iter()
            .any(|n| n.contains("`dram__bytes_read.sum`")),
        "missing metrics are named"
    );
}

#[test]
fn process_scope_keeps_pytorch_backward_kernels_in_the_training_step() {
    let process = report("ncu/h200-2025.3.1/train_process_raw.csv", &[]);
    let thread = report("ncu/h200-2025.3.1/train_thread_raw.csv", &[]);
    let p = regions(&process.scopes[0]);
    let t = regions(&thread.scopes[0]);
    assert_eq!(p["train_step"].kernel_count, 64);
    assert_eq!(p["train_step/backward"].kernel_count, 42);
    assert_eq!(
        t["train_step/backward"].kernel_count, 2,
        "thread scope loses the autograd thread's kernels"
    );
    assert_eq!(p["train_step/forward/layer3"].depth, 2);
    assert_eq!(p["train_step"].self_kernel_count, 0);
}

#[test]
fn range_replay_reports_only_the_outermost_of_nested_includes() {
    let report = report(
        "ncu/h200-2025.3.1/range_nested_raw.csv",
        &["regions.include=[A, A/A1]"],
    );
    let r = regions(&report.scopes[0]);
    assert_eq!(r["A"].kernel_count, 1, "one range instance");
    assert_eq!(r["A/A1"].kernel_count, 0);
    assert!(r["A/A1"].notes[0].contains("Requested in regions.include"));
    assert_eq!(
        report
            .run
            .profiler
            .settings
            .get("replay_mode")
            .map(String::as_str),
        Some("range")
    );
    assert!(report.notes.iter().any(|n| n.contains("Range replay")));
}

#[test]
fn several_processes_get_a_scope_each_and_an_aggregate_that_adds_up() {
    let report = report("ncu/h200-2025.3.1/multiproc_raw.csv", &[]);
    assert_eq!(report.scopes.len(), 2);
    let aggregate = report.aggregate.as_ref().unwrap();
    let agg = regions(aggregate);
    for path in ["A", "A/A1", "B"] {
        let per_scope: u64 = report
            .scopes
            .iter()
            .map(|s| regions(s)[path].kernel_count)
            .sum();
        assert_eq!(agg[path].kernel_count, per_scope, "{path}");
        let per_scope_time: f64 = report
            .scopes
            .iter()
            .map(|s| time(regions(s)[path], true))
            .sum();
        assert_close(time(agg[path], true), per_scope_time, path);
    }
    let off = self::report(
        "ncu/h200-2025.3.1/multiproc_raw.csv",
        &["report.aggregate=false"],
    );
    assert!(off.aggregate.is_none());
    let same = serde_json::to_string(&off.scopes).unwrap()
        == serde_json::to_string(&report.scopes).unwrap();
    assert!(same, "turning the aggregate off changes nothing else");
}

#[test]
fn no_nvtx_columns_give_a_baseline_report() {
    // The manual capture with its NVTX columns removed, as an export made without --nvtx looks.
    let text = std::fs::read_to_string(fixture("ncu/h200-2025.3.1/manual_raw.csv")).unwrap();
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let headers = reader.headers().unwrap().clone();
    let keep: Vec<usize> = (0..headers.len())
        .filter(|&i| !headers[i].contains("_Range"))
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let path: PathBuf = dir.path().join("no_nvtx_raw.csv");
    let mut writer = csv::Writer::from_path(&path).unwrap();
    writer
        .write_record(keep.iter().map(|&i| &headers[i]))
        .unwrap();
    for row in reader.records() {
        let row = row.unwrap();
        writer.write_record(keep.iter().map(|&i| &row[i])).unwrap();
    }
    writer.flush().unwrap();
    let report = analyze(&config(&[]), &[path], &RunContext::default()).unwrap();
    assert!(report.notes[0].contains("No region-specific profiling was performed"));
    assert!(report.scopes[0].regions.is_empty());
    assert_eq!(report.scopes[0].total.kernel_count, 100);
    assert_eq!(report.scopes[0].outside_regions.kernel_count, 100);
}

#[test]
fn start_end_ranges_from_a_real_capture_are_flat_regions_beside_the_push_pop_tree() {
    let report = report("ncu/h100-2025.3.1/start_end_raw.csv", &[]);
    let scope = &report.scopes[0];
    let find = |kind: &str, path: &str| {
        scope
            .regions
            .iter()
            .find(|r| r.path == path && serde_json::to_value(r.kind).unwrap() == kind)
            .unwrap_or_else(|| panic!("{kind} {path}"))
    };
    assert_eq!(find("stack", "step").kernel_count, 6);
    assert_eq!(find("mark", "epoch").kernel_count, 9);
    assert_eq!(find("mark", "phase").kernel_count, 6, "phase outlives step");
    assert_eq!(scope.total.kernel_count, 13);
    assert_eq!(scope.outside_regions.kernel_count, 4);
}

#[test]
fn a_replayed_range_that_captured_cuinit_is_explained() {
    let log = std::fs::read_to_string(fixture("ncu/h100-2025.3.1/cold_range.ncu.log")).unwrap();
    let diagnoses = profile_run::profiler::ncu::capture::run::log::diagnose(&log);
    assert!(
        diagnoses[0].cause.contains("(cuInit)"),
        "{:?}",
        diagnoses[0]
    );
    assert!(diagnoses[0].fix.contains("warm up outside the range"));
}

#[test]
fn ncu_rule_results_become_prioritised_advice_per_region() {
    use crate::common::{analyze_sets, ExportSet};
    let set = ExportSet {
        raw: fixture("ncu/h200-2025.3.1/manual_raw.csv"),
        details: Some(fixture("ncu/h200-2025.3.1/manual_details.csv")),
        rank: None,
    };
    let report = analyze_sets(&config(&[]), &[set], &RunContext::default()).unwrap();
    let r = regions(&report.scopes[0]);
    let b = &r["B"].insights;
    assert!(!b.is_empty(), "B has rule results");
    // Optimisation opportunities and warnings come before information.
    let first_inf = b
        .iter()
        .position(|a| a.severity == Severity::Info)
        .unwrap_or(b.len());
    assert!(b[first_inf..].iter().all(|a| a.severity == Severity::Info));
    // Inclusive: A's advice covers A/A1's results too.
    for advice in &r["A/A1"].insights {
        let parent = r["A"]
            .insights
            .iter()
            .find(|a| a.rule == advice.rule && a.severity == advice.severity)
            .unwrap();
        assert!(
            parent.evidence.results >= advice.evidence.results,
            "{}",
            advice.rule
        );
    }
    for advice in b {
        assert!(advice.evidence.results <= r["B"].kernel_count);
        assert!(
            advice.evidence.time > 0.0 && advice.evidence.time <= time(r["B"], true) + 1e-6,
            "{}",
            advice.rule
        );
    }
    // The aggregate merges scopes' advice.
    let agg = regions(report.aggregate.as_ref().unwrap());
    assert_eq!(agg["B"].insights.len(), b.len());
}

#[test]
fn ranks_stay_apart_even_with_identical_pid_host_and_device() {
    use crate::common::{analyze_sets, ExportSet};
    // The same capture twice, as two ranks of one job would look with colliding pids.
    let sets: Vec<ExportSet> = (0..2)
        .map(|rank| ExportSet {
            raw: fixture("ncu/h200-2025.3.1/manual_raw.csv"),
            details: None,
            rank: Some(rank),
        })
        .collect();
    let report = analyze_sets(&config(&[]), &sets, &RunContext::default()).unwrap();
    assert_eq!(report.scopes.len(), 2);
    assert_eq!(report.scopes[1].rank, Some(1));
    assert!(report.scopes[1].label.ends_with("rank 1"));
    assert_eq!(
        regions(report.aggregate.as_ref().unwrap())["A"].kernel_count,
        100
    );
}

#[test]
fn torchrun_ranks_merge_and_nccl_ranges_form_their_own_tree() {
    use crate::common::{analyze_sets, ExportSet};
    let sets: Vec<ExportSet> = (0..2)
        .map(|rank| ExportSet {
            raw: fixture(&format!("ncu/h200x2-2025.3.1/ddp_rank{rank}_raw.csv")),
            details: None,
            rank: Some(rank),
        })
        .collect();
    let report = analyze_sets(&config(&[]), &sets, &RunContext::default()).unwrap();
    assert_eq!(report.scopes.len(), 2);
    for (rank, scope) in report.scopes.iter().enumerate() {
        assert_eq!(scope.rank, Some(rank as u32));
        assert_eq!(scope.device.as_deref(), Some(rank.to_string().as_str()));
        let r = regions(scope);
        assert_eq!(r["train_step"].kernel_count, 34);
        assert_eq!(r["train_step/backward"].kernel_count, 22);
        // NCCL's own range (domain NCCL) is its own top-level region, not a child of train_step.
        assert_eq!(r["NCCL@ncclCommInitRankConfig"].depth, 0);
        assert!(!r
            .keys()
            .any(|p| p.starts_with("train_step/") && p.contains("NCCL")));
        // The distributed preset kept NCCL kernels out of profiling.
        assert!(r["train_step"]
            .kernels
            .iter()
            .all(|k| !k.name.contains("nccl")));
    }
    let off = analyze_sets(
        &config(&["report.aggregate=false"]),
        &sets,
        &RunContext::default(),
    )
    .unwrap();
    assert!(off.aggregate.is_none());
    assert_eq!(off.scopes.len(), 2);
}

#[test]
fn the_default_domain_tree_comes_before_other_domains_seen_with_it() {
    use crate::common::{analyze_sets, ExportSet};
    let set = ExportSet {
        raw: fixture("ncu/h200x2-2025.3.1/ddp_rank0_raw.csv"),
        details: None,
        rank: Some(0),
    };
    let report = analyze_sets(&config(&[]), &[set], &RunContext::default()).unwrap();
    let top: Vec<&str> = report.scopes[0]
        .regions
        .iter()
        .filter(|r| r.depth == 0)
        .map(|r| r.path.as_str())
        .collect();
    assert_eq!(top, ["train_step", "NCCL@ncclCommInitRankConfig"]);
}
