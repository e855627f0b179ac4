//! The shipped GPU rules (conf/rules/gpu.yaml) on real reports: what fires on the PyTorch captures of
//! tests/fixtures/ncu/h100-2025.3.1-pytorch, what stays silent where its metrics were not collected,
//! and each rule triggered on a real region whose metric values the test changes (each test says
//! which), with message, evidence and order checked.

use std::sync::Arc;

use profile_run::config::{Config, DEFAULT_PRESET};
use profile_run::insights::region::apply;
use profile_run::report::model::{MetricValue, Region, Report, Scope};

use crate::common::{analyze_sets, fixture, ExportSet};

fn config() -> Config {
    serde_yaml::from_str(DEFAULT_PRESET).unwrap()
}

fn report(name: &str) -> Report {
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

fn rules_of(region: &Region) -> Vec<(&str, &str)> {
    region
        .insights
        .iter()
        .map(|i| (i.source.as_str(), i.rule.as_str()))
        .collect()
}

const SM: &str = "sm__throughput.avg.pct_of_peak_sustained_elapsed";
const MEM: &str = "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed";
const TIME: &str = "gpu__time_duration.sum";

/// Region `path` of rep_kernel's first scope with its insights reduced to the profiler's, metric
/// values set as given, and the shipped rules applied again.
fn changed(path: &str, set: &[(&str, f64)]) -> Region {
    let report = report("rep_kernel");
    let mut scope = report.scopes[0].clone();
    scope.regions.retain(|r| r.path == path);
    let region = &mut scope.regions[0];
    region.insights.retain(|i| i.source != "profile-run");
    for (name, value) in set {
        match region.inclusive.0.iter_mut().find(|(n, _)| &**n == *name) {
            Some((_, v)) => v.value = Some(*value),
            None => region.inclusive.0.push((
                Arc::from(*name),
                MetricValue {
                    value: Some(*value),
                    unit: Arc::from("%"),
                    values: None,
                    interval95: None,
                },
            )),
        }
    }
    let plan = profile_run::plan::Plan::new(&config()).unwrap();
    apply(&plan.profiler.analysis().rules, Some(TIME), &mut scope);
    scope.regions.remove(0)
}

#[test]
fn many_short_kernels_fire_launch_overhead_first_then_the_profilers_finding() {
    let report = report("rep_kernel");
    let a = region(&report.scopes[0], "A");
    // 61 kernels in 245,664 ns: 4,027 ns each (the fixture's own numbers).
    assert_eq!(
        rules_of(a),
        [
            ("profile-run", "launch_overhead"),
            ("ncu", "LaunchConfiguration"),
            ("profile-run", "latency_bound"),
            ("ncu", "SOLBottleneck"),
        ]
    );
    let first = &a.insights[0];
    assert_eq!(
        first.message,
        "61 kernels averaging 4.03 µs each: launch overhead dominates"
    );
    assert_eq!(first.evidence.metrics["kernel_count"], 61.0);
    assert!((first.evidence.metrics["mean_kernel_duration"] - 245664.0 / 61.0).abs() < 1e-9);
    assert_eq!(first.evidence.results, 61);
    assert_eq!(first.evidence.time, 245664.0);
    assert!(first.action.as_deref().unwrap().contains("CUDA graph"));
}

#[test]
fn rules_whose_metrics_were_not_collected_stay_silent_on_every_real_capture() {
    // The default sections collect neither occupancy nor tensor-pipe metrics.
    for name in ["rep_kernel", "rep_multiproc", "emit_nvtx", "nccl_one_rank"] {
        let report = report(name);
        for r in report
            .scopes
            .iter()
            .chain(&report.aggregate)
            .flat_map(|s| &s.regions)
        {
            for i in &r.insights {
                assert!(
                    !["low_achieved_occupancy", "tensor_pipes_idle"].contains(&i.rule.as_str()),
                    "{name} {}: {}",
                    r.path,
                    i.rule
                );
                // Nothing in these small workloads reaches 60 % of peak.
                assert!(
                    !["memory_bound", "compute_bound"].contains(&i.rule.as_str()),
                    "{name} {}: {}",
                    r.path,
                    i.rule
                );
            }
        }
    }
}

#[test]
fn high_memory_throughput_against_low_compute_is_memory_bound() {
    // Changed: memory throughput 80 %, SM throughput 30 % (the fixture has 13.2 % and 5.5 %).
    let r = changed("B", &[(MEM, 80.0), (SM, 30.0)]);
    let i = r
        .insights
        .iter()
        .find(|i| i.rule == "memory_bound")
        .unwrap();
    assert_eq!(
        i.message,
        "Memory-bound: memory throughput 80.0% of peak, compute 30.0%"
    );
    assert_eq!(i.evidence.metrics[MEM], 80.0);
    assert_eq!(i.evidence.metrics[SM], 30.0);
    assert!(r
        .insights
        .iter()
        .all(|i| i.rule != "latency_bound" && i.rule != "compute_bound"));
}

#[test]
fn high_sm_throughput_is_compute_bound_and_not_latency_bound() {
    let r = changed("B", &[(MEM, 40.0), (SM, 85.0)]);
    let rules: Vec<&str> = r.insights.iter().map(|i| i.rule.as_str()).collect();
    assert!(rules.contains(&"compute_bound"), "{rules:?}");
    assert!(!rules.contains(&"latency_bound"), "{rules:?}");
}

#[test]
fn achieved_occupancy_well_below_theoretical_fires_only_when_both_are_known() {
    let warps = "sm__warps_active.avg.pct_of_peak_sustained_active";
    let max = "sm__maximum_warps_per_active_cycle_pct";
    let r = changed("B", &[(warps, 20.0), (max, 50.0)]);
    let i = r
        .insights
        .iter()
        .find(|i| i.rule == "low_achieved_occupancy")
        .unwrap();
    assert_eq!(
        i.message,
        "Achieved occupancy 20.0% against a theoretical 50.0%"
    );
    assert_eq!(i.evidence.metrics[warps], 20.0);
    let near = changed("B", &[(warps, 45.0), (max, 50.0)]);
    assert!(near
        .insights
        .iter()
        .all(|i| i.rule != "low_achieved_occupancy"));
    let half = changed("B", &[(warps, 20.0)]);
    assert!(half
        .insights
        .iter()
        .all(|i| i.rule != "low_achieved_occupancy"));
}

#[test]
fn idle_tensor_pipes_under_gemm_kernels_fire_and_rank_by_severity() {
    // Region A/A1 runs cuBLAS xmma GEMMs (FP32 on FMA pipes); the test adds a tensor-pipe value of 0.5 %.
    let tensor = "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active";
    let r = changed("A/A1", &[(tensor, 0.5)]);
    let i = r
        .insights
        .iter()
        .find(|i| i.rule == "tensor_pipes_idle")
        .expect("tensor_pipes_idle");
    let share = i.evidence.metrics["matmul_time_share"];
    assert!(share > 0.5 && share <= 1.0, "{share}");
    assert!(
        i.message
            .ends_with("tensor pipes are active 0.500% of cycles"),
        "{}",
        i.message
    );
    // Both high-severity findings first, launch overhead (priority 80) before tensor pipes (75).
    let order: Vec<&str> = r.insights.iter().map(|i| i.rule.as_str()).collect();
    assert_eq!(
        &order[..2],
        ["launch_overhead", "tensor_pipes_idle"],
        "{order:?}"
    );
    // The profiler's findings are all kept.
    assert!(order.contains(&"LaunchConfiguration") && order.contains(&"SOLBottleneck"));
}

#[test]
fn a_rules_file_naming_an_unknown_metric_stops_the_plan_with_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rules.yaml");
    std::fs::write(
        &path,
        "rules:\n  - id: busy\n    severity: low\n    when: { gt: [sm__throughput.avg.pct_of_peak_sustained_elapsd, 50] }\n    message: m\n    cause: c\n    action: a\n",
    )
    .unwrap();
    let mut config = config();
    config.report.rules = Some(path.display().to_string());
    let err = profile_run::plan::Plan::new(&config).err().unwrap();
    assert_eq!(err.exit_code(), 2);
    let message = err.to_string();
    assert!(message.starts_with("report.rules: "), "{message}");
    assert!(
        message.contains("rules.yaml: rule `busy`: unknown metric"),
        "{message}"
    );
    assert!(
        message.contains("did you mean `sm__throughput.avg.pct_of_peak_sustained_elapsed`"),
        "{message}"
    );
    config.report.rules = Some(dir.path().join("missing.yaml").display().to_string());
    let err = profile_run::plan::Plan::new(&config).err().unwrap();
    assert_eq!(err.exit_code(), 2);
    assert!(err.to_string().contains("missing.yaml"), "{err}");
}
