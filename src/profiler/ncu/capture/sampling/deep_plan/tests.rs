//! The deep pass planned from plain values: no process starts, no file is opened, no fake ncu.

use std::path::Path;

use super::*;
use crate::config::{load, ConfigSources, Loaded};
use crate::profiler::ncu::nvtx;
use crate::profiler::ncu::observe::launch_key::Shape;
use crate::region::RegionFilter;

/// The `ncu/sampled` preset with `overrides` on top.
fn sampled(overrides: &[&str]) -> Loaded {
    let sources = ConfigSources {
        files: vec!["ncu/sampled".into()],
        overrides: overrides.iter().map(|s| s.to_string()).collect(),
        env: Vec::new(),
    };
    load(&sources).unwrap()
}

/// The NVTX filter of `regions.include=[step]`.
fn nvtx_plan(config: &Config) -> NvtxPlan {
    let regions = RegionFilter::new(&["step".to_string()], &[], None).unwrap();
    nvtx::plan(&regions, &config.pipeline.ncu.ncu_cli.nvtx).unwrap()
}

/// Two kernels of one process: `steady` launched 40 times at 10 µs ± 1%, `noisy` 40 times
/// alternating 5 and 15 µs.
fn durations() -> LaunchDurations {
    let mut d = LaunchDurations::default();
    let stack = [vec!["step".to_string()]];
    for i in 0..40 {
        let steady = 10_000.0 * (1.0 + 0.01 * f64::from(i % 2));
        d.add("_Z6steady", Shape::of_grid(8), (1, Some(0)), steady, &stack);
        let noisy = if i % 2 == 0 { 5_000.0 } else { 15_000.0 };
        d.add("_Z5noisy", Shape::of_grid(8), (1, Some(0)), noisy, &stack);
    }
    d
}

fn inputs<'a>(config: &'a Config, nvtx: &'a NvtxPlan, workload: &'a [String]) -> DeepInputs<'a> {
    DeepInputs {
        config,
        passes: Passes::of(config),
        nvtx,
        dir: Path::new("/runs/r"),
        workload,
        rank: None,
    }
}

fn groups(plan: &DeepPlan) -> Vec<&PassGroup> {
    plan.stages
        .iter()
        .filter_map(|s| match s {
            Stage::Run(group) => Some(group),
            Stage::Guarded { .. } => None,
        })
        .collect()
}

#[test]
fn with_nothing_found_the_deep_pass_runs_as_configured_to_the_workloads_end() {
    let loaded = sampled(&["pipeline.ncu.sampling.adaptive=false"]);
    let nvtx = nvtx_plan(&loaded.config);
    let workload = vec!["python3".to_string(), "train.py".to_string()];
    let deep = super::plan(
        &inputs(&loaded.config, &nvtx, &workload),
        FirstFindings::none(),
    )
    .unwrap();
    let groups = groups(&deep);
    assert_eq!(groups.len(), 1);
    let pass = &groups[0].passes[0];
    assert!(matches!(pass.slot, Slot::Deep), "{:?}", pass.slot);
    assert_eq!(pass.expected, None, "nothing known to count");
    assert!(pass.line.contains("/runs/r/profile.deep"), "{}", pass.line);
    assert!(pass.line.ends_with("python3 train.py"), "{}", pass.line);
    assert_eq!(pass.outputs, ["profile.deep.ncu-rep"]);
    assert_eq!(
        deep.lines(),
        vec![pass.line.as_str()],
        "--dry-run prints this plan"
    );
}

#[test]
fn adaptive_counts_become_one_worker_per_count_at_once_each_rerun_alone() {
    let loaded = sampled(&["pipeline.ncu.sampling.adaptive=true"]);
    let nvtx = nvtx_plan(&loaded.config);
    let workload = vec!["python3".to_string()];
    let found = FirstFindings {
        durations: Some(Ok(durations())),
        ..FirstFindings::none()
    };
    let deep = super::plan(&inputs(&loaded.config, &nvtx, &workload), found).unwrap();
    let adaptive = deep.adaptive.as_ref().expect("sized");
    assert_eq!(adaptive.keys, 2);
    let group = groups(&deep)[0];
    assert_eq!(
        group.passes.len(),
        2,
        "the steady and the noisy key need different counts"
    );
    assert!(group.at_once);
    assert_eq!(group.rerun, Rerun::Alone);
    let counts: Vec<u32> = group
        .passes
        .iter()
        .map(|p| match &p.slot {
            Slot::Worker { planned, .. } => planned.count,
            other => panic!("{other:?}"),
        })
        .collect();
    assert!(counts[0] != counts[1], "{counts:?}");
    for (index, pass) in group.passes.iter().enumerate() {
        let Slot::Worker { index: at, planned } = &pass.slot else {
            unreachable!()
        };
        assert_eq!(*at, index);
        assert_eq!(pass.log, planned.log);
        assert!(
            pass.line
                .contains(&format!("--launch-count {}", planned.count)),
            "{}",
            pass.line
        );
        assert!(
            pass.line.contains("--kernel-name"),
            "each worker names its kernels: {}",
            pass.line
        );
        assert_eq!(
            pass.expected,
            Some(planned.expected_results),
            "a covered worker stops at its count"
        );
    }
    assert!(
        deep.unseen.is_some(),
        "names never profiled are checked after"
    );
}

#[test]
fn rounds_put_this_ranks_own_deep_pass_in_its_turn_and_the_workload_in_the_others() {
    let loaded = sampled(&["pipeline.ncu.sampling.adaptive=false"]);
    let nvtx = nvtx_plan(&loaded.config);
    let workload = vec!["python3".to_string(), "train.py".to_string()];
    let rank = Rank {
        rank: 1,
        source: "RANK".into(),
        world_size: Some(3),
    };
    let found = FirstFindings {
        step: DeepStep::InRounds {
            mine: Some(1),
            ranks: vec![0, 1, 2],
        },
        ..FirstFindings::none()
    };
    let deep_inputs = DeepInputs {
        rank: Some(&rank),
        ..inputs(&loaded.config, &nvtx, &workload)
    };
    let deep = super::plan(&deep_inputs, found).unwrap();
    assert_eq!(deep.stages.len(), 3);
    for (round, stage) in deep.stages.iter().enumerate() {
        match (round, stage) {
            (1, Stage::Guarded { groups, .. }) => {
                let pass = &groups.as_ref().unwrap()[0].passes[0];
                assert!(matches!(pass.slot, Slot::Deep));
                assert_eq!(pass.expected, None, "a rank of a launch runs to the end");
            }
            (_, Stage::Run(group)) => {
                let pass = &group.passes[0];
                assert!(
                    matches!(pass.slot, Slot::Round { deep_rank } if deep_rank == round as u32)
                );
                assert_eq!(pass.line, "python3 train.py");
                assert_eq!(pass.log, format!("unprofiled.round{round}.log"));
                assert_eq!(group.rerun, Rerun::Warn, "never alone: its peers wait");
            }
            (round, _) => panic!("round {round} out of place"),
        }
    }
}

#[test]
fn the_cuda_graph_kernels_pass_reads_the_caches_as_the_in_process_counters_unless_set() {
    let workload = vec!["python3".to_string(), "train.py".to_string()];
    let names = vec!["_Z4gemm".to_string(), "_Z4relu".to_string()];
    for (overrides, cache) in [
        (&[][..], "--cache-control none"),
        (
            &["pipeline.ncu.ncu_cli.cache_control=all"][..],
            "--cache-control all",
        ),
        (
            &["pipeline.ncu.ncu_cli.extra_args=[--cache-control, all]"][..],
            "--cache-control all",
        ),
    ] {
        let loaded = sampled(overrides);
        let nvtx = nvtx_plan(&loaded.config);
        let group = graph_kernels(&inputs(&loaded.config, &nvtx, &workload), names.clone());
        assert_eq!(group.passes.len(), 1);
        let pass = &group.passes[0];
        assert!(matches!(pass.slot, Slot::Deep), "{:?}", pass.slot);
        assert!(pass.line.contains(cache), "{overrides:?}: {}", pass.line);
        assert_eq!(
            pass.line.matches("--cache-control").count(),
            1,
            "once: {}",
            pass.line
        );
        assert!(
            pass.line
                .contains("--kernel-name 'regex:^(?:_Z4gemm|_Z4relu)$'"),
            "only those names: {}",
            pass.line
        );
    }
}

#[test]
fn the_cuda_graph_kernels_pass_collects_every_metric_the_counters_collect() {
    let workload = vec!["python3".to_string(), "train.py".to_string()];
    let loaded = sampled(&["report.sections=[time, speed_of_light, memory]"]);
    let nvtx = nvtx_plan(&loaded.config);
    let group = graph_kernels(
        &inputs(&loaded.config, &nvtx, &workload),
        vec!["_Z4gemm".to_string()],
    );
    let line = &group.passes[0].line;
    let metrics = line
        .split(" --metrics ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .expect("--metrics");
    for metric in [
        "lts__t_sector_hit_rate.pct",
        "dram__bytes_read.sum",
        "gpu__time_duration.sum",
    ] {
        assert!(metrics.split(',').any(|m| m == metric), "{metric}: {line}");
    }
    assert!(
        line.contains("--section SpeedOfLight"),
        "ncu's sections stay: {line}"
    );
}
