//! Ending a sampled run's deep pass (each of its workers) once it has profiled everything the report
//! will use (`pipeline.ncu.sampling.stop_when_covered`; docs/attribution.md, "Sampled runs"): how
//! many results such a pass takes, counted from the first pass's launches, and the count of ncu's
//! `==PROF== Profiling` lines that ends the workload when it gets there.
//!
//! A wrong count loses deep results, so every doubt means "no count": the pass then runs to the
//! workload's end, as without the setting.

use std::collections::BTreeMap;

use crate::config::Config;
use crate::config::ReplayMode;
use crate::profiler::ncu::observe::launch_durations::LaunchDurations;
use crate::profiler::ncu::plan::{FirstPass, Passes};

/// A pass's `--filter-mode per-launch-config` launch filter, per key and process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LaunchFilter {
    /// `--launch-skip`: launches of each key skipped before the first profiled one.
    pub skip: u32,
    /// `--launch-count`: launches of each key profiled after them.
    pub count: u32,
}

/// The results a pass with `filter` takes of the first pass's launches of the keys `selected`
/// picks (by mangled name): per key and process, min(count, max(0, launches − skip)), summed.
/// `None` when that is not certain: a key launched on more than one device of one process (whether
/// ncu's launch configurations tell devices apart is not known), or nothing to take.
pub(crate) fn expected_results(
    durations: &LaunchDurations,
    filter: LaunchFilter,
    selected: impl Fn(&str) -> bool,
) -> Option<u64> {
    let (total, certain) = results_taken(durations, filter, selected);
    (certain && total > 0).then_some(total)
}

/// [`expected_results`]' count whether or not it is certain (a key of one process on several
/// devices counts as one launch configuration), and whether it is.
pub(crate) fn results_taken(
    durations: &LaunchDurations,
    filter: LaunchFilter,
    selected: impl Fn(&str) -> bool,
) -> (u64, bool) {
    let (mut total, mut certain) = (0u64, true);
    for (name, _, key) in durations.keys() {
        if !selected(name) {
            continue;
        }
        let mut per_pid: BTreeMap<u32, (Option<u64>, u32)> = BTreeMap::new();
        for ((pid, device), launches) in key.per_process() {
            let seen = per_pid.entry(pid).or_insert((device, 0));
            certain &= seen.0 == device;
            seen.1 += launches;
        }
        total += per_pid
            .values()
            .map(|(_, launches)| u64::from(launches.saturating_sub(filter.skip).min(filter.count)))
            .sum::<u64>();
    }
    (total, certain)
}

/// Why the first pass's launches may not be the ones the later passes filter from; `None` when
/// they are. ncu's timing pass ran with the deep pass's own NVTX filter and kernel_name, so its
/// launches are exactly those. The CUPTI trace records every launch and selects by
/// `regions.include` / `regions.exclude` as ncu's expressions converted from the same patterns do
/// (docs/attribution.md, "In-place times"; checked against ncu on every workload kind of
/// tests/manual), but raw NVTX expressions and kernel_name are ncu's own matching, which the trace
/// does not repeat.
pub fn uncountable(config: &Config, passes: Passes) -> Option<&'static str> {
    let ncu = &config.pipeline.ncu;
    if !ncu.sampling.stop_when_covered {
        return Some("pipeline.ncu.sampling.stop_when_covered is off");
    }
    if ncu.ncu_cli.replay_mode == ReplayMode::Application {
        // ncu runs the workload once per replay pass, each run printing the results again: a stop
        // would end one of those runs, not the pass.
        return Some(
            "under application replay ncu runs the workload once per replay pass, so a pass cannot end early",
        );
    }
    if passes.first == FirstPass::Ncu {
        return None;
    }
    let raw = &ncu.ncu_cli.nvtx;
    if !raw.include.is_empty() || !raw.exclude.is_empty() {
        return Some(
            "under timing: trace, raw NVTX expressions (pipeline.ncu.ncu_cli.nvtx.include/exclude) decide which launches the deep pass sees",
        );
    }
    if ncu.ncu_cli.kernel_name.is_some() {
        return Some(
            "under timing: trace, ncu's kernel_name decides which launches the deep pass sees",
        );
    }
    None
}

/// What `--dry-run` says of the stop, as a titled comment line; `None` when no pass will stop.
pub fn dry_run_note(config: &Config, passes: Passes) -> Option<(&'static str, String)> {
    if !passes.deep || uncountable(config, passes).is_some() {
        return None;
    }
    Some((
        "the deep pass (each of its workers) may end early",
        "# once ncu has profiled every result the first pass's launches say it will take (per launch key and process, min(K, launches - skipped), K being the worker's --launch-count), the workload gets SIGTERM and ncu writes its report (pipeline.ncu.sampling.stop_when_covered)".into(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::DEFAULT_PRESET;
    use crate::profiler::ncu::observe::report_source::twins::Shape;
    use crate::profiler::ncu::observe::trace::deep;
    use crate::profiler::ncu::readers::report_file::{ReportFile, ReportFileError};
    use crate::profiler::ncu::readers::trace;

    fn fixture(path: &str) -> std::path::PathBuf {
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/ncu")
            .join(path)
    }

    fn filter(skip: u32, count: u32) -> LaunchFilter {
        LaunchFilter { skip, count }
    }

    /// One launch as the test counts it: mangled name, grid, block, process.
    type Launch = (String, [u64; 3], [u64; 3], u32);

    /// Every launch of a report file, read straight from the file, and their durations by launch
    /// key (what the first pass's reader gathers).
    fn launches_of(path: &std::path::Path) -> (Vec<Launch>, LaunchDurations) {
        let mut launches = Vec::new();
        let mut durations = LaunchDurations::default();
        ReportFile::open(path)
            .unwrap()
            .for_each_result(|r| {
                let number = |name: &str| {
                    r.metric(name)
                        .unwrap()
                        .and_then(|m| m.value.as_f64())
                        .unwrap_or(0.0)
                };
                let (name, grid, block) = (
                    r.kernel.as_ref().unwrap().mangled.to_string(),
                    r.grid_size.unwrap(),
                    r.block_size.unwrap(),
                );
                let shape = Shape {
                    grid,
                    block,
                    registers: number("launch__registers_per_thread") as u64,
                    shared_static: number("launch__shared_mem_per_block_static") as u64,
                    shared_dynamic: number("launch__shared_mem_per_block_dynamic") as u64,
                };
                let duration = number("gpu__time_duration.sum");
                durations.add(&name, shape, (r.process.id, Some(0)), duration, &[]);
                launches.push((name, grid, block, r.process.id));
                Ok::<(), ReportFileError>(())
            })
            .unwrap();
        (launches, durations)
    }

    #[test]
    fn the_timing_pass_counts_what_the_real_deep_pass_profiled() {
        let (timing, durations) = launches_of(&fixture("h100-2025.3.1-sampled/train.ncu-rep.gz"));
        // The real deep pass (--launch-count 1, no skip) of the same workload and regions.
        let (deep, _) = launches_of(&fixture("h100-2025.3.1-sampled/train.deep.ncu-rep.gz"));
        assert_eq!(deep.len(), 13);
        assert_eq!(
            expected_results(&durations, filter(0, 1), |_| true),
            Some(deep.len() as u64)
        );
        // Per key: its launches in the timing pass, counted from the file.
        let mut per_key: BTreeMap<_, u32> = BTreeMap::new();
        for (name, grid, block, pid) in &timing {
            *per_key.entry((name, grid, block, pid)).or_default() += 1;
        }
        let take = |skip: u32, count: u32| -> u64 {
            per_key
                .values()
                .map(|n| u64::from(n.saturating_sub(skip).min(count)))
                .sum()
        };
        assert_eq!(timing.len(), 54);
        for (skip, count) in [(0, 2), (1, 1), (1, 3), (2, 2), (4, 4)] {
            assert_eq!(
                expected_results(&durations, filter(skip, count), |_| true),
                Some(take(skip, count)).filter(|n| *n > 0),
                "--launch-skip {skip} --launch-count {count}"
            );
        }
        assert_eq!(take(0, 9), 54, "every launch, at most");
        // A pass selecting one name past the first launches: its keys only.
        let (name, ..) = &timing[0];
        let one: u64 = per_key
            .iter()
            .filter(|((n, ..), _)| *n == name)
            .map(|(_, n)| u64::from(n.saturating_sub(1 + 1).min(2)))
            .sum();
        assert_eq!(
            expected_results(&durations, filter(2, 2), |n| n == name),
            Some(one).filter(|n| *n > 0)
        );
        assert_eq!(expected_results(&durations, filter(0, 1), |_| false), None);
    }

    #[test]
    fn several_processes_each_take_their_own_samples() {
        // The real two-process trace: each process's launches per key, from its own file.
        let mut durations = LaunchDurations::default();
        let mut per_process: BTreeMap<(String, u32, [u32; 3], [u32; 3]), u32> = BTreeMap::new();
        for file in ["twoproc.cupti.1959.trace.gz", "twoproc.cupti.1986.trace.gz"] {
            let path = fixture(&format!("h100-2025.3.1-cupti/{file}"));
            let trace = trace::read(&path).unwrap();
            for k in &trace.kernels {
                let launch = trace.shape(k);
                let name = &trace.names[launch.name];
                let shape = deep::shape(launch);
                durations.add(
                    name,
                    shape,
                    (trace.pid, Some(u64::from(k.device))),
                    k.duration_ns(),
                    &[],
                );
                *per_process
                    .entry((name.clone(), trace.pid, launch.grid, launch.block))
                    .or_default() += 1;
            }
        }
        let pids: std::collections::BTreeSet<u32> = per_process.keys().map(|k| k.1).collect();
        assert_eq!(pids.len(), 2);
        for (skip, count) in [(0, 1), (1, 2), (2, 5)] {
            let want: u64 = per_process
                .values()
                .map(|n| u64::from(n.saturating_sub(skip).min(count)))
                .sum();
            assert_eq!(
                expected_results(&durations, filter(skip, count), |_| true),
                Some(want).filter(|n| *n > 0),
                "skip {skip}, count {count}: per process, summed"
            );
        }
    }

    #[test]
    fn a_key_on_two_devices_of_one_process_is_not_counted() {
        let mut d = LaunchDurations::default();
        d.add("_Z4gemm", Shape::of_grid(1), (7, Some(0)), 10.0, &[]);
        d.add("_Z4gemm", Shape::of_grid(1), (8, Some(1)), 10.0, &[]);
        assert_eq!(expected_results(&d, filter(0, 1), |_| true), Some(2));
        d.add("_Z4gemm", Shape::of_grid(1), (7, Some(1)), 10.0, &[]);
        assert_eq!(expected_results(&d, filter(0, 1), |_| true), None);
    }

    #[test]
    fn only_a_trace_filtered_by_ncus_own_matching_is_uncountable() {
        let mut config: Config = serde_yaml::from_str(DEFAULT_PRESET).unwrap();
        let ncu = Passes {
            first: FirstPass::Ncu,
            in_place: false,
            deep: true,
        };
        let traced = Passes {
            first: FirstPass::Trace,
            in_place: false,
            deep: true,
        };
        assert_eq!(uncountable(&config, ncu), None);
        config
            .pipeline
            .ncu
            .ncu_cli
            .nvtx
            .exclude
            .push("warmup/".into());
        assert_eq!(uncountable(&config, ncu), None, "the timing pass saw it");
        assert!(uncountable(&config, traced).unwrap().contains("raw NVTX"));
        config.pipeline.ncu.ncu_cli.nvtx.exclude.clear();
        config.regions.include = vec!["train_step".into()];
        assert_eq!(
            uncountable(&config, traced),
            None,
            "the trace selects by regions.include as ncu does"
        );
        config.pipeline.ncu.ncu_cli.kernel_name = Some("regex:gemm".into());
        assert!(uncountable(&config, traced)
            .unwrap()
            .contains("kernel_name"));
        config.pipeline.ncu.sampling.stop_when_covered = false;
        assert!(uncountable(&config, traced).unwrap().contains("off"));
        let mut application: Config = serde_yaml::from_str(DEFAULT_PRESET).unwrap();
        application.pipeline.ncu.ncu_cli.replay_mode = ReplayMode::Application;
        assert!(uncountable(&application, ncu)
            .unwrap()
            .contains("application replay"));
    }
}
