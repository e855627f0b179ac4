//! Profiler advice from real `--page details` exports: every entry's description, kernel and estimated
//! speedup come from one and the same result, checked against a plain parse of the CSV.

use std::collections::HashSet;
use std::path::Path;

use crate::common::{analyze_sets, ExportSet};
use profile_run::analysis::RunContext;
use profile_run::config::{load, ConfigSources};
use profile_run::report::model::{Insight, Report};
use profile_run::report::render::markdown::render;
use profile_run::report::render::RenderOptions;

use crate::common::fixture;

fn report(raw: &str, details: &str) -> Report {
    let config = load(&ConfigSources::default()).unwrap().config;
    let set = ExportSet {
        raw: fixture(raw),
        details: Some(fixture(details)),
        rank: None,
    };
    analyze_sets(&config, &[set], &RunContext::default()).unwrap()
}

/// (kernel, rule, type, description, speedup) of every rule row, each taken from one row, i.e. one result.
fn rule_rows(path: &Path) -> HashSet<(String, String, String, String, Option<String>)> {
    let mut reader = csv::ReaderBuilder::new()
        .flexible(true)
        .from_path(path)
        .unwrap();
    let headers = reader.headers().unwrap().clone();
    let col = |name: &str| headers.iter().position(|h| h == name).unwrap();
    let (kernel, rule, kind, text, speedup) = (
        col("Kernel Name"),
        col("Rule Name"),
        col("Rule Type"),
        col("Rule Description"),
        col("Estimated Speedup"),
    );
    let mut rows = HashSet::new();
    for rec in reader.records() {
        let rec = rec.unwrap();
        let get = |i: usize| rec.get(i).unwrap_or("").trim().to_string();
        if get(rule).is_empty() {
            continue;
        }
        let estimate = Some(get(speedup)).filter(|s| !s.is_empty());
        rows.insert((get(kernel), get(rule), get(kind), get(text), estimate));
    }
    rows
}

/// The profiler's own findings (profile-run's rules are tested in tests/it/gpu_rules.rs).
fn all_advice(report: &Report) -> Vec<&Insight> {
    report
        .scopes
        .iter()
        .chain(&report.aggregate)
        .flat_map(|s| &s.regions)
        .flat_map(|r| &r.insights)
        .filter(|i| i.source != "profile-run")
        .collect()
}

#[test]
fn each_advice_entry_shows_one_result_s_message_kernel_and_speedup() {
    let cases = [
        (
            "ncu/h200-2025.3.1/manual_raw.csv",
            "ncu/h200-2025.3.1/manual_details.csv",
        ),
        (
            "ncu/h100-2025.3.1-pytorch/rep_kernel_raw.csv",
            "ncu/h100-2025.3.1-pytorch/rep_kernel_details.csv",
        ),
        (
            "ncu/h100-2025.3.1-pytorch/rep_multiproc_raw.csv",
            "ncu/h100-2025.3.1-pytorch/rep_multiproc_details.csv",
        ),
    ];
    for (raw, details) in cases {
        let rows = rule_rows(&fixture(details));
        let report = report(raw, details);
        let advice = all_advice(&report);
        assert!(!advice.is_empty(), "{details}: no advice");
        for a in advice {
            let kernel = a.evidence.kernel.clone().unwrap_or_default();
            let kind = a.evidence.labels["type"].clone();
            let speedup = rows
                .iter()
                .filter(|r| (&r.0, &r.1, &r.2, &r.3) == (&kernel, &a.rule, &kind, &a.message))
                .map(|r| r.4.as_deref().map(|s| s.parse::<f64>().unwrap()))
                .collect::<Vec<_>>();
            assert!(
                speedup.contains(&a.estimated_speedup),
                "{details}: {} {} pairs kernel {:?}, speedup {:?} and {:?}, which no single result gave",
                a.rule,
                kind,
                kernel,
                a.estimated_speedup,
                a.message
            );
        }
    }
}

#[test]
fn the_1_block_finding_keeps_its_own_speedup_beside_the_128_block_one() {
    // Region B of the manual capture: LaunchConfiguration fired on 1-block adds (99.24%) and on
    // 128-block reductions (3.03%). The row shows the adds' finding, with their kernel and estimate.
    let report = report(
        "ncu/h200-2025.3.1/manual_raw.csv",
        "ncu/h200-2025.3.1/manual_details.csv",
    );
    let b = report.scopes[0]
        .regions
        .iter()
        .find(|r| r.path == "B")
        .unwrap();
    let launch = b
        .insights
        .iter()
        .find(|a| a.rule == "LaunchConfiguration")
        .unwrap();
    assert_eq!(launch.estimated_speedup, Some(99.24));
    assert!(launch.message.contains("only 1 block"), "{launch:?}");
    assert!(
        launch
            .evidence
            .kernel
            .as_deref()
            .unwrap()
            .contains("vectorized_elementwise_kernel"),
        "{launch:?}"
    );
    assert_eq!(launch.evidence.results, 50);

    let text = render(&report, &RenderOptions::default()).unwrap();
    let row = text
        .lines()
        .find(|l| l.starts_with("| LaunchConfiguration | ncu | opportunity | 50 |"))
        .unwrap_or_else(|| panic!("no LaunchConfiguration row in\n{text}"));
    assert!(
        row.contains("| vectorized\\_elementwise\\_kernel |"),
        "{row}"
    );
    assert!(
        row.contains("| 99.2% |") && row.contains("only 1 block"),
        "{row}"
    );
    assert!(!row.contains("128 blocks"), "{row}");
}

/// Per result (ID) of `region` (its push/pop cell names it): duration in ns and `rule`'s estimated
/// speedups in percent, read with the csv crate.
fn rule_savings(path: &Path, region: &str, rule: &str) -> (f64, f64) {
    let mut reader = csv::ReaderBuilder::new()
        .flexible(true)
        .from_path(path)
        .unwrap();
    let headers = reader.headers().unwrap().clone();
    let col = |name: &str| headers.iter().position(|h| h == name).unwrap();
    let (id, nvtx, metric, unit, value, name, speedup) = (
        col("ID"),
        headers
            .iter()
            .position(|h| h.contains("Push/Pop_Range"))
            .unwrap(),
        col("Metric Name"),
        col("Metric Unit"),
        col("Metric Value"),
        col("Rule Name"),
        col("Estimated Speedup"),
    );
    let needle = format!(":{region}:");
    let mut duration: std::collections::BTreeMap<String, f64> = Default::default();
    let mut speedups: Vec<(String, f64)> = Vec::new();
    for row in reader.records() {
        let row = row.unwrap();
        if !row[nvtx].contains(&needle) {
            continue;
        }
        if &row[metric] == "Duration" {
            let scale = match &row[unit] {
                "ns" => 1.0,
                "us" => 1e3,
                "ms" => 1e6,
                other => panic!("unit {other}"),
            };
            let v: f64 = row[value].replace(',', "").parse().unwrap();
            duration.insert(row[id].to_string(), v * scale);
        }
        if &row[name] == rule {
            if let Ok(s) = row[speedup].parse::<f64>() {
                speedups.push((row[id].to_string(), s));
            }
        }
    }
    let saving = speedups.iter().map(|(i, s)| duration[i] * s / 100.0).sum();
    (saving, duration.values().sum())
}

#[test]
fn findings_are_ranked_by_the_time_they_save_not_by_kernel_local_percentages() {
    let dir = "ncu/h100-2025.3.1-pytorch";
    let details = fixture(&format!("{dir}/rep_kernel_details.csv"));
    let report = report(
        &format!("{dir}/rep_kernel_raw.csv"),
        &format!("{dir}/rep_kernel_details.csv"),
    );
    let scope = &report.scopes[0];
    for path in ["A", "B"] {
        let region = scope.regions.iter().find(|r| r.path == path).unwrap();
        let finding = region
            .insights
            .iter()
            .find(|i| i.rule == "LaunchConfiguration")
            .unwrap();
        let (expected, region_time) = rule_savings(&details, path, "LaunchConfiguration");
        let got = finding.estimated_saving_ns.unwrap();
        assert!(
            (got - expected.min(region_time)).abs() <= 1e-6 * expected.max(1.0),
            "{path}: {got} vs {expected} (sum of each result's speedup × its own time)"
        );
        assert!(got <= region_time);
    }
    // The scope's summary ranks the findings by that saving, largest first, each as a share of the scope.
    let top = &scope.summary.top_insights;
    assert!(!top.is_empty());
    for pair in top.windows(2) {
        assert!(pair[0].estimated_saving_ns >= pair[1].estimated_saving_ns);
    }
    let total = scope.summary.time.unwrap();
    for i in top {
        let share = i.saving_share.unwrap();
        assert!((share - i.estimated_saving_ns / total).abs() < 1e-12 && share <= 1.0);
    }
    // Regions by self time add up to no more than the scope.
    let self_times: f64 = scope.summary.top_regions.iter().map(|r| r.self_time).sum();
    assert!(self_times <= total + 1e-6);
}
