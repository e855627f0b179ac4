//! Savings that are true, on real captures: each kernel's time is saved once in a scope's summary,
//! under its best finding (launch overhead first on the short kernels it covers); the others are
//! listed as overlapping, findings without an estimate as not quantified with the reason; and
//! profile-run's own rules give their savings by the formulas of docs/insights.md.

use std::collections::BTreeMap;
use std::path::Path;

use profile_run::config::{Config, DEFAULT_PRESET};
use profile_run::insights::region::{apply, DERIVED};
use profile_run::insights::RuleSet;
use profile_run::report::model::{Region, Report, Scope};

use crate::common::{analyze_sets, fixture, render_fixture_copy, ExportSet};

const TIME: &str = "gpu__time_duration.sum";

fn config() -> Config {
    serde_yaml::from_str(DEFAULT_PRESET).unwrap()
}

fn pytorch(name: &str) -> Report {
    let dir = "ncu/h100-2025.3.1-pytorch";
    let set = ExportSet {
        raw: fixture(&format!("{dir}/{name}_raw.csv")),
        details: Some(fixture(&format!("{dir}/{name}_details.csv"))),
        rank: None,
    };
    analyze_sets(&config(), &[set], &Default::default()).unwrap()
}

fn region<'a>(scope: &'a Scope, path: &str) -> &'a Region {
    scope.regions.iter().find(|r| r.path == path).unwrap()
}

fn kernel_time(k: &profile_run::report::model::Kernel) -> f64 {
    k.metrics.get(TIME).unwrap().value.unwrap()
}

/// The summary's findings in report.json: savings within the scope, counted ≤ own, the overlapping
/// ones naming what holds their kernels, and every unestimated finding of a region with a reason.
fn check_summary_json(name: &str, scope: &serde_json::Value) {
    let summary = &scope["summary"];
    let Some(total) = summary["time"].as_f64() else {
        return;
    };
    let counted: f64 = summary["top_insights"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["estimated_saving_ns"].as_f64().unwrap())
        .sum();
    assert!(
        counted <= total * (1.0 + 1e-9),
        "{name}: findings save {counted} ns of a {total} ns scope"
    );
    for i in summary["top_insights"].as_array().unwrap() {
        let (c, own) = (
            i["estimated_saving_ns"].as_f64().unwrap(),
            i["own_saving_ns"].as_f64().unwrap(),
        );
        assert!(c > 0.0 && c <= own * (1.0 + 1e-9), "{name}: {i}");
        assert_eq!(
            c < own * (1.0 - 1e-9),
            !i["overlaps"].as_array().unwrap().is_empty()
        );
    }
    for i in summary["overlapping"].as_array().unwrap() {
        assert!(!i["overlaps"].as_array().unwrap().is_empty(), "{name}: {i}");
        assert_eq!(i["estimated_saving_ns"].as_f64(), Some(0.0));
    }
    for n in summary["not_quantified"].as_array().unwrap() {
        assert!(!n["reason"].as_str().unwrap().is_empty(), "{name}: {n}");
    }
    for r in scope["regions"].as_array().unwrap() {
        for i in r["insights"].as_array().unwrap() {
            let estimated = i["estimated_saving_ns"].as_f64().is_some();
            let info = i["severity"] == "info";
            assert!(
                estimated || info || i["not_quantified"].is_string(),
                "{name}: {} in {} has neither a saving nor a reason",
                i["rule"],
                r["path"]
            );
            let by_kernel: f64 = i["saving_by_kernel"]
                .as_object()
                .unwrap()
                .values()
                .map(|v| v.as_f64().unwrap())
                .sum();
            if let Some(saving) = i["estimated_saving_ns"].as_f64() {
                assert!(
                    (by_kernel - saving).abs() <= 1e-6 * saving.max(1.0),
                    "{name}: {i}"
                );
            }
        }
    }
}

#[test]
fn summary_savings_never_add_up_to_more_than_the_scope_on_real_captures() {
    for rel in [
        "ncu/h100-2025.3.1-pytorch/rep_kernel.ncu-rep.gz",
        "ncu/h100-2025.3.1-pytorch/rep_multiproc.ncu-rep.gz",
        "ncu/h100-2025.3.1-pytorch/emit_nvtx.ncu-rep.gz",
        "ncu/h100-2025.3.1-pytorch/nccl_one_rank.ncu-rep.gz",
        "ncu/h100-2025.3.1-pytorch/rep_start_end.ncu-rep.gz",
        "ncu/h100-2025.3.1-gpt2/gpt2_pystack.ncu-rep.gz",
        "ncu/h200-2025.3.1/ovh_all_raw.csv",
        // CSV exports without their details page: a GPT-2-like training step, a named domain
        // (`LLM@prefill`), emit_nvtx. profile-run's own findings still estimate a saving.
        "ncu/h200-2025.3.1/train_process_raw.csv",
        "ncu/h200-2025.3.1/workload_raw.csv",
        "ncu/h100-2025.3.1-pytorch/emit_nvtx_raw.csv",
    ] {
        let (_dir, _out, report) = render_fixture_copy(rel, &[]);
        for scope in report["scopes"].as_array().unwrap() {
            check_summary_json(rel, scope);
            assert!(
                !scope["summary"]["top_insights"]
                    .as_array()
                    .unwrap()
                    .is_empty(),
                "{rel}: no finding with an estimated saving"
            );
        }
    }
}

#[test]
fn launch_overhead_saves_every_launch_but_one_at_the_shortest_launch() {
    let report = pytorch("rep_kernel");
    let a = region(&report.scopes[0], "A");
    let launch = a
        .insights
        .iter()
        .find(|i| i.rule == "launch_overhead")
        .unwrap();
    // docs/insights.md: kernels averaging under 5 µs; each launch but one saves the shortest result's
    // time (or the kernel's own mean, if shorter).
    let floor = a
        .per_result
        .0
        .iter()
        .find(|(n, _)| &**n == TIME)
        .unwrap()
        .1
        .min;
    let short: Vec<_> = a
        .kernels
        .iter()
        .filter(|k| kernel_time(k) / (k.count as f64) < 5_000.0)
        .collect();
    let launches: u64 = short.iter().map(|k| k.count).sum();
    let expected: f64 = short
        .iter()
        .map(|k| k.count as f64 * floor.min(kernel_time(k) / k.count as f64))
        .sum::<f64>()
        * (launches - 1) as f64
        / launches as f64;
    let got = launch.estimated_saving_ns.unwrap();
    assert!((got - expected).abs() < 1e-6, "{got} vs {expected}");
    assert_eq!(launch.saving_by_kernel.len(), short.len());
    assert_eq!(
        launch.message,
        "61 kernels averaging 4.03 µs each: launch overhead dominates"
    );
    // The profiler's grid finding on the same region keeps only the kernels launch overhead does not
    // hold: the summary counts each kernel once.
    let summary = &report.scopes[0].summary;
    let row = |rule: &str| {
        summary
            .top_insights
            .iter()
            .find(|i| i.rule == rule && i.region == "A")
            .unwrap()
    };
    let grid = row("LaunchConfiguration");
    assert!(grid.estimated_saving_ns < grid.own_saving_ns);
    assert_eq!(grid.overlaps, ["profile-run:launch_overhead"]);
    assert!((row("launch_overhead").estimated_saving_ns - expected).abs() < 1e-6);
}

#[test]
fn short_kernels_count_under_launch_overhead_before_a_larger_grid() {
    // Region B of rep_kernel: 25 reductions whose grid finding claims 98.5 % of their time, beside 25
    // short elementwise kernels. With a launch-overhead rule whose bound covers the reductions too,
    // those kernels count under launch overhead, and the grid finding keeps only the rest.
    let report = pytorch("rep_kernel");
    let mut scope = report.scopes[0].clone();
    scope.regions.retain(|r| r.path == "B");
    scope.regions[0]
        .insights
        .retain(|i| i.source != "profile-run");
    let rules = r#"
rules:
  - id: launch_overhead
    severity: high
    when: { ge: [kernel_count, 20] }
    message: "{kernel_count} kernels averaging {mean_kernel_duration}"
    cause: "short kernels"
    action: "fuse them"
    saving: { launch_overhead: { below_ns: 20000 } }
"#;
    let mut vocabulary: Vec<&str> = report.metrics.iter().map(|m| m.name.as_str()).collect();
    vocabulary.extend(DERIVED);
    let rules = RuleSet::parse(Path::new("short.yaml"), rules, &vocabulary).unwrap();
    apply(&rules, Some(TIME), &mut scope);
    profile_run::report::summary::fill(&mut scope, Some(TIME));
    let top = &scope.summary.top_insights;
    let grid = scope.regions[0]
        .insights
        .iter()
        .find(|i| i.rule == "LaunchConfiguration")
        .unwrap();
    let launch = scope.regions[0]
        .insights
        .iter()
        .find(|i| i.rule == "launch_overhead")
        .unwrap();
    // On its own the grid finding would save more than launch overhead, and come first.
    assert!(grid.estimated_saving_ns.unwrap() > launch.estimated_saving_ns.unwrap());
    let counted: BTreeMap<&str, f64> = top
        .iter()
        .map(|i| (i.rule.as_str(), i.estimated_saving_ns))
        .collect();
    let launch_counted = counted["launch_overhead"];
    assert!((launch_counted - launch.estimated_saving_ns.unwrap()).abs() < 1e-6);
    // Every kernel the grid finding names is one launch overhead holds: nothing is left for it.
    assert!(grid
        .saving_by_kernel
        .keys()
        .all(|k| launch.saving_by_kernel.contains_key(k)));
    assert!(!counted.contains_key("LaunchConfiguration"));
    let overlapping = scope
        .summary
        .overlapping
        .iter()
        .find(|i| i.rule == "LaunchConfiguration")
        .unwrap();
    assert_eq!(overlapping.overlaps, ["profile-run:launch_overhead"]);
}

#[test]
fn findings_without_an_estimate_are_listed_with_the_reason() {
    let report = pytorch("rep_kernel");
    let summary = &report.scopes[0].summary;
    let sol = summary
        .not_quantified
        .iter()
        .find(|n| n.rule == "SOLBottleneck")
        .unwrap();
    assert_eq!(sol.reason, "ncu gives no estimated speedup for this rule");
    // Outermost region first, one entry per rule.
    assert_eq!(
        summary
            .not_quantified
            .iter()
            .filter(|n| n.rule == "SOLBottleneck")
            .count(),
        1
    );
    // latency_bound has a formula: it is never in the list.
    assert!(summary
        .not_quantified
        .iter()
        .all(|n| n.rule != "latency_bound"));
}

#[test]
fn throughput_over_peak_is_called_a_measurement_artefact() {
    // The GPT-2 step's backward pass has results whose L1/TEX throughput reads over 100 % of peak.
    let (_dir, out, report) =
        render_fixture_copy("ncu/h100-2025.3.1-gpt2/gpt2_pystack.ncu-rep.gz", &[]);
    let notes: Vec<&str> = report["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect();
    let over: Vec<&&str> = notes
        .iter()
        .filter(|n| n.contains("measurement artefact"))
        .collect();
    assert_eq!(over.len(), 1, "{notes:?}");
    assert!(
        over[0].starts_with("L1/TEX Cache Throughput reads up to 171% of peak"),
        "{}",
        over[0]
    );
    // The metric table flags the row where it happens.
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    let flagged: Vec<&str> = md
        .lines()
        .filter(|l| l.contains("over peak: a measurement artefact"))
        .collect();
    assert!(!flagged.is_empty());
    assert!(flagged
        .iter()
        .all(|l| l.starts_with("| L1/TEX Cache Throughput |")));
    // rep_kernel has none over 100 %: no such note.
    let (_dir, _out, plain) =
        render_fixture_copy("ncu/h100-2025.3.1-pytorch/rep_kernel.ncu-rep.gz", &[]);
    assert!(plain["notes"]
        .as_array()
        .unwrap()
        .iter()
        .all(|n| !n.as_str().unwrap().contains("measurement artefact")));
}

/// The real rep_kernel scope, analysed once.
fn rep_kernel_scope() -> &'static Scope {
    static SCOPE: std::sync::OnceLock<Scope> = std::sync::OnceLock::new();
    SCOPE.get_or_init(|| pytorch("rep_kernel").scopes[0].clone())
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

    /// Whatever findings claim on the real regions and kernels of rep_kernel (each at most a
    /// kernel's own time in its region, several rules on the same kernels, in nested regions), the
    /// summary's counted savings never exceed the scope's time, nor any finding its own estimate.
    #[test]
    fn counted_savings_never_exceed_the_scope_whatever_the_findings_claim(
        claims in proptest::collection::vec(
            (0usize..3, 0usize..6, 0usize..8, 0.0f64..=1.0, proptest::bool::ANY),
            1..24,
        )
    ) {
        let mut scope = rep_kernel_scope().clone();
        for (region_at, rule, kernel_at, fraction, launch) in claims {
            let regions = scope.regions.len();
            let region = &mut scope.regions[region_at % regions];
            let Some(kernel) = region.kernels.get(kernel_at % region.kernels.len().max(1)) else {
                continue;
            };
            let (name, time) = (kernel.name.clone(), kernel_time(kernel));
            let rule = format!("rule{rule}");
            let at = region.insights.iter().position(|i| i.rule == rule);
            let at = at.unwrap_or_else(|| {
                let mut insight = region.insights[0].clone();
                insight.rule = rule;
                insight.saving_by_kernel.clear();
                insight.evidence.labels.clear();
                if launch {
                    insight
                        .evidence
                        .labels
                        .insert("saving_formula".into(), "launch_overhead".into());
                }
                region.insights.push(insight);
                region.insights.len() - 1
            });
            let insight = &mut region.insights[at];
            insight.saving_by_kernel.insert(name, time * fraction);
            insight.estimated_saving_ns = Some(insight.saving_by_kernel.values().sum());
        }
        profile_run::report::summary::fill(&mut scope, Some(TIME));
        let summary = &scope.summary;
        let total = summary.time.unwrap();
        let counted: f64 = summary.top_insights.iter().map(|i| i.estimated_saving_ns).sum();
        proptest::prop_assert!(counted <= total * (1.0 + 1e-9), "{counted} > {total}");
        for i in summary.top_insights.iter().chain(&summary.overlapping) {
            proptest::prop_assert!(i.estimated_saving_ns <= i.own_saving_ns * (1.0 + 1e-9));
        }
    }
}

#[test]
fn a_saving_formula_with_a_typo_or_an_unknown_metric_is_a_load_error_naming_file_and_line() {
    let rule = |saving: &str| {
        format!(
            "rules:\n  - id: slow\n    severity: medium\n    when: {{ lt: [kernel_count, 5] }}\n    \
             message: m\n    cause: c\n    action: a\n    saving: {saving}\n"
        )
    };
    let vocabulary: Vec<&str> = DERIVED.to_vec();
    let path = Path::new("conf/custom.yaml");
    let err = RuleSet::parse(
        path,
        &rule("{ launch_overhed: { below_ns: 5000 } }"),
        &vocabulary,
    )
    .unwrap_err()
    .to_string();
    assert!(err.starts_with("conf/custom.yaml: line "), "{err}");
    assert!(err.contains("launch_overhed"), "{err}");
    let err = RuleSet::parse(
        path,
        &rule("{ busy_below: { metrics: [sm_busy], target: 40 } }"),
        &vocabulary,
    )
    .unwrap_err()
    .to_string();
    assert_eq!(
        err,
        "conf/custom.yaml: rule `slow`: unknown metric `sm_busy`"
    );
    // A well-formed formula loads.
    assert!(RuleSet::parse(
        path,
        &rule("{ launch_overhead: { below_ns: 5000 } }"),
        &vocabulary
    )
    .is_ok());
}
