//! The deep pass as workers (docs/running.md, "Sampled runs"): ncu takes one `--launch-count` per
//! process, so a deep pass whose launch keys need different sample counts, or that is spread over
//! several GPUs (`pipeline.ncu.sampling.deep_gpus`), runs as several ncu processes at once, each
//! with its own mangled names, count, report file and log, and its own `CUDA_VISIBLE_DEVICES`.
//! Their results join as one deep pass (`report_source::twins`).
//!
//! Each key's count is sized here from the first pass's durations, before the deep pass starts
//! (`pipeline.ncu.sampling.adaptive`: n = ⌈(1.96·CV/error)²⌉, pooled over the processes that launch
//! the key). ncu selects by name, so a name takes the largest count any of its keys needs.
//!
//! Worker 0 writes today's `profile.deep.ncu-rep` and `ncu.deep.log`, so a deep pass of one worker
//! reads exactly as before; worker i writes `profile.deep.i.ncu-rep` and `ncu.deep.i.log`.

use crate::config::{Config, DeepGpus, ErrorScope, KernelNameForm, NcuCliConfig};
use crate::config::{ReplayMode, SamplingConfig, TargetProcesses};
use crate::profiler::ncu::observe::launch_durations::LaunchDurations;

use super::pattern_limit::{chunks, PATTERN_BYTES};
use super::DEEP_REPORT_BASE;
use super::{samples_needed, samples_needed_in_regions, strata::stratum_count, DEEP_LOG};

/// The GPUs the deep pass is spread over: `[]` for one (the workload's own, no
/// `CUDA_VISIBLE_DEVICES` set), else each worker's `CUDA_VISIBLE_DEVICES` value. `visible`: the
/// host's `CUDA_VISIBLE_DEVICES`; `listed`: how many GPUs `nvidia-smi -L` listed (`None`: it could
/// not be run). Refused, naming the key, where the host shows fewer GPUs than asked for, or
/// (`all`) none at all.
pub fn gpus(
    deep_gpus: DeepGpus,
    visible: Option<&str>,
    listed: Option<usize>,
) -> Result<Vec<String>, String> {
    let shown: Option<Vec<String>> = match visible {
        Some(v) => Some(
            v.split(',')
                .map(str::trim)
                .filter(|id| !id.is_empty())
                .map(String::from)
                .collect(),
        ),
        None => listed.map(|n| (0..n).map(|i| i.to_string()).collect()),
    };
    let wanted = match (deep_gpus, &shown) {
        (DeepGpus::Count(1), _) => return Ok(Vec::new()),
        (DeepGpus::Count(n), _) => n as usize,
        (DeepGpus::All, Some(shown)) if !shown.is_empty() => shown.len(),
        (DeepGpus::All, _) => {
            return Err(
                "pipeline.ncu.sampling.deep_gpus is `all`, but this host shows no GPU (CUDA_VISIBLE_DEVICES is not set and `nvidia-smi -L` listed none or could not run); set deep_gpus to a count, or CUDA_VISIBLE_DEVICES to the GPUs to use (e.g. 0,1,2,3)"
                    .into(),
            )
        }
    };
    match shown {
        Some(shown) if shown.len() < wanted => Err(format!(
            "pipeline.ncu.sampling.deep_gpus is {wanted}, but this host shows {} GPU(s) ({}); set deep_gpus to {} or fewer, or `all`",
            shown.len(),
            if visible.is_some() { "CUDA_VISIBLE_DEVICES" } else { "nvidia-smi -L" },
            shown.len()
        )),
        // `all` on a host of one GPU: the workload's own, as with deep_gpus=1.
        Some(_) if wanted == 1 => Ok(Vec::new()),
        Some(shown) => Ok(shown[..wanted].to_vec()),
        None => Ok((0..wanted).map(|i| i.to_string()).collect()),
    }
}

/// The GPUs of this host for `deep_gpus`, as [`gpus`] reads them from the environment and
/// `nvidia-smi -L` (asked only when `CUDA_VISIBLE_DEVICES` is not set and more than one GPU is).
pub fn host_gpus(deep_gpus: DeepGpus) -> Result<Vec<String>, String> {
    if deep_gpus == DeepGpus::Count(1) {
        return Ok(Vec::new());
    }
    let visible = std::env::var("CUDA_VISIBLE_DEVICES").ok();
    let listed = match visible {
        Some(_) => None,
        None => std::process::Command::new("nvidia-smi")
            .arg("-L")
            .output()
            .ok()
            .filter(|out| out.status.success())
            .map(|out| {
                String::from_utf8_lossy(&out.stdout)
                    .lines()
                    .filter(|l| l.starts_with("GPU "))
                    .count()
            }),
    };
    gpus(deep_gpus, visible.as_deref(), listed)
}

/// Why `deep_gpus` cannot be used with these settings, naming the key and the fix; `None` when it
/// can (or is 1).
pub fn refusal(config: &Config) -> Option<String> {
    let ncu = &config.pipeline.ncu;
    let deep_gpus = ncu.sampling.deep_gpus;
    if !ncu.sampling.enabled || deep_gpus == DeepGpus::Count(1) {
        return None;
    }
    let shown = match deep_gpus {
        DeepGpus::All => "`all`".to_string(),
        DeepGpus::Count(n) => n.to_string(),
    };
    if ncu.ncu_cli.replay_mode != ReplayMode::Kernel {
        return Some(format!(
            "pipeline.ncu.sampling.deep_gpus is {shown}, but pipeline.ncu.ncu_cli.replay_mode is `{}`: each worker profiles its share of the launch keys kernel by kernel; set replay_mode=kernel, or deep_gpus=1",
            ncu.ncu_cli.replay_mode.as_ncu()
        ));
    }
    None
}

/// Why `deep_gpus` cannot spread a workload that is a launcher of several processes: the launcher
/// already places its ranks on the GPUs, and a worker's `CUDA_VISIBLE_DEVICES` would put them all
/// on one. `workload`: the command line profiled; `rank`: the launcher's rank profile-run itself
/// runs as, if any.
pub fn launcher_refusal(config: &Config, workload: &[String], rank: Option<u32>) -> Option<String> {
    let ncu = &config.pipeline.ncu;
    if !ncu.sampling.enabled || ncu.sampling.deep_gpus == DeepGpus::Count(1) {
        return None;
    }
    if let Some(rank) = rank {
        return Some(format!(
            "pipeline.ncu.sampling.deep_gpus is above 1, but profile-run runs as rank {rank} of a launcher, which places each rank on its GPU: one CUDA_VISIBLE_DEVICES per worker would move this rank's workload off its own; set deep_gpus=1"
        ));
    }
    let follows_children = ncu.ncu_cli.target_processes == Some(TargetProcesses::All);
    let launcher = workload.iter().take(4).any(|arg| {
        let name = arg.rsplit('/').next().unwrap_or(arg);
        matches!(
            name,
            "torchrun" | "mpirun" | "mpiexec" | "srun" | "deepspeed" | "accelerate"
        ) || arg == "torch.distributed.run"
            || arg == "torch.distributed.launch"
    });
    (follows_children && launcher).then(|| {
        "pipeline.ncu.sampling.deep_gpus is above 1, but the workload is a multi-process launcher and pipeline.ncu.ncu_cli.target_processes is `all`: the launcher already places its ranks on the GPUs, and one CUDA_VISIBLE_DEVICES per worker would put every rank on one GPU; set deep_gpus=1 (each rank's deep pass then runs on its own GPU)"
            .to_string()
    })
}

/// One name's share of the deep pass: the count its keys need and what that costs.
#[derive(Debug, Clone, PartialEq)]
pub struct NameNeed {
    pub name: String,
    /// `--launch-count`: per process, the most any key of the name needs.
    pub count: u32,
    /// Launch keys of the name.
    pub keys: u64,
    /// Results it will give: per key and process, min(count, launches − skipped).
    pub cost: u64,
}

/// What sizing the keys found, for run.json's `adaptive`.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Sizing {
    pub keys: u64,
    /// Keys given more samples than `launch_count`.
    pub above_launch_count: u64,
    /// Keys held below their n by `max_samples` (or by their launches).
    pub capped: u64,
}

/// Each kept name's count and cost (`adaptive`: sized from the first pass's durations; else
/// `launch_count` for every name), in first-seen order, and what sizing found. A key's samples pool
/// over its processes: per process it can give min(budget, launches − skipped), and its count per
/// process is the smallest that gives n in all.
pub(crate) fn needs(
    durations: &LaunchDurations,
    sampling: &SamplingConfig,
    skipped: u32,
    kept: impl Fn(&str) -> bool,
) -> (Vec<NameNeed>, Sizing) {
    let mut names: Vec<NameNeed> = Vec::new();
    let mut sizing = Sizing::default();
    let (budget, taken) = (sampling.budget(), sampling.launch_count);
    let mut counted: Vec<(String, Vec<u32>, u32)> = Vec::new();
    for (name, _, key) in durations.keys() {
        if !kept(name) {
            continue;
        }
        sizing.keys += 1;
        let available: Vec<u32> = key
            .per_process()
            .map(|(_, launches)| launches.saturating_sub(skipped))
            .collect();
        let given = |c: u32| -> u32 { available.iter().map(|a| (*a).min(c)).sum() };
        let count = if sampling.adaptive {
            let needed = match sampling.error_scope {
                ErrorScope::Key => samples_needed(key.cv(), sampling.error),
                ErrorScope::Region => samples_needed_in_regions(
                    key.cv(),
                    sampling.error,
                    durations.largest_share(key),
                ),
            };
            let wanted = needed.min(given(u32::MAX));
            let allowed = given(budget);
            if wanted > allowed {
                sizing.capped += 1;
            }
            let n = wanted.min(allowed);
            (taken..=budget).find(|c| given(*c) >= n).unwrap_or(budget)
        } else {
            taken
        };
        // A key that ran different work is sized per stratum (its pooled spread mixes the strata).
        let strata = stratum_count(key, sampling, skipped, durations);
        let count = if strata > 0 { strata.max(taken) } else { count };
        if count > taken {
            sizing.above_launch_count += 1;
        }
        counted.push((name.to_string(), available, count));
        match names.iter_mut().find(|n| n.name == name) {
            Some(known) => {
                known.count = known.count.max(count);
                known.keys += 1;
            }
            None => names.push(NameNeed {
                name: name.to_string(),
                count,
                keys: 1,
                cost: 0,
            }),
        }
    }
    for (name, available, _) in counted {
        if let Some(need) = names.iter_mut().find(|n| n.name == name) {
            let per: u64 = available
                .iter()
                .map(|a| u64::from((*a).min(need.count)))
                .sum();
            need.cost += per;
        }
    }
    (names, sizing)
}

/// One ncu process of the deep pass.
#[derive(Debug, Clone, PartialEq)]
pub struct Worker {
    /// The mangled names it profiles (`None`: every name, as a deep pass of one worker does).
    pub names: Option<Vec<String>>,
    /// `--launch-count`.
    pub count: u32,
    /// Its `CUDA_VISIBLE_DEVICES` (`None`: the workload's own GPUs).
    pub gpu: Option<String>,
    /// Launch keys of its names.
    pub keys: u64,
    /// Results it is expected to give (see [`NameNeed::cost`]).
    pub cost: u64,
}

/// The workers for these names: names spread over `gpus` by expected cost (longest first, each to
/// the GPU with the least so far), then one worker per GPU and count. `narrowed`: the names are a
/// choice (`min_time_share`), so even one worker keeps its name filter.
pub(crate) fn plan(needs: &[NameNeed], gpus: &[String], narrowed: bool) -> Vec<Worker> {
    let mut order: Vec<&NameNeed> = needs.iter().collect();
    order.sort_by_key(|need| std::cmp::Reverse(need.cost));
    let slots = gpus.len().max(1);
    let mut load = vec![0u64; slots];
    let mut placed: Vec<(usize, &NameNeed)> = Vec::new();
    for need in order {
        let (slot, _) = load
            .iter()
            .enumerate()
            .min_by_key(|(at, l)| (**l, *at))
            .unwrap_or((0, &0));
        load[slot] += need.cost;
        placed.push((slot, need));
    }
    let mut workers: Vec<(usize, Worker)> = Vec::new();
    // First-seen order of the names within each worker, so command lines read the same every run.
    for need in needs {
        let Some((slot, _)) = placed.iter().find(|(_, n)| n.name == need.name) else {
            continue;
        };
        let found = workers
            .iter_mut()
            .find(|(s, w)| s == slot && w.count == need.count);
        match found {
            Some((_, worker)) => {
                worker
                    .names
                    .get_or_insert_with(Vec::new)
                    .push(need.name.clone());
                worker.keys += need.keys;
                worker.cost += need.cost;
            }
            None => workers.push((
                *slot,
                Worker {
                    names: Some(vec![need.name.clone()]),
                    count: need.count,
                    gpu: gpus.get(*slot).cloned(),
                    keys: need.keys,
                    cost: need.cost,
                },
            )),
        }
    }
    workers.sort_by_key(|(slot, w)| (*slot, w.count));
    let mut workers: Vec<Worker> = workers.into_iter().map(|(_, w)| w).collect();
    if let [only] = workers.as_mut_slice() {
        if !narrowed && only.gpu.is_none() {
            only.names = None;
        }
    }
    workers
        .into_iter()
        .flat_map(|w| split_long(w, needs))
        .collect()
}

/// `worker` as several with its count and GPU where its names' pattern would pass the limit on
/// one argument ([`PATTERN_BYTES`]), each with its names' keys and cost.
fn split_long(worker: Worker, needs: &[NameNeed]) -> Vec<Worker> {
    let runs = worker.names.as_deref().map(|n| chunks(n, PATTERN_BYTES));
    let Some(runs) = runs.filter(|runs| runs.len() > 1) else {
        return vec![worker];
    };
    runs.into_iter()
        .map(|names| {
            let mine = needs.iter().filter(|need| names.contains(&need.name));
            Worker {
                keys: mine.clone().map(|need| need.keys).sum(),
                cost: mine.map(|need| need.cost).sum(),
                names: Some(names),
                count: worker.count,
                gpu: worker.gpu.clone(),
            }
        })
        .collect()
}

/// A worker's flags: the deep pass's `deep` with its count and, where it has them, its names (with
/// the user's `kernel_name` pattern, if any, still required of them).
pub fn worker_flags(deep: &NcuCliConfig, worker: &Worker) -> NcuCliConfig {
    let mut flags = deep.clone();
    flags.launch_count = Some(u64::from(worker.count));
    if let Some(names) = &worker.names {
        let escaped: Vec<String> = names.iter().map(|n| regex::escape(n)).collect();
        let names = format!("(?:{})", escaped.join("|"));
        // A user's pattern stays in force: names from a trace pass were not filtered by it.
        let user = match deep.kernel_name.as_deref() {
            Some(p) => match p.strip_prefix("regex:") {
                Some(expression) => format!("(?=.*?(?:{expression}))"),
                None => format!("(?={}$)", regex::escape(p)),
            },
            None => String::new(),
        };
        flags.kernel_name = Some(format!("regex:^{user}{names}$"));
        flags.kernel_name_base = Some(KernelNameForm::Mangled);
    }
    flags
}

/// Worker `index`'s report file base (`-o`) and log in the run directory.
pub fn files(index: usize) -> (String, String) {
    match index {
        0 => (DEEP_REPORT_BASE.to_string(), DEEP_LOG.to_string()),
        i => (
            format!("{DEEP_REPORT_BASE}.{i}"),
            format!("{}.{i}.log", DEEP_LOG.trim_end_matches(".log")),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profiler::ncu::capture::sampling::deep_flags;
    use crate::profiler::ncu::capture::sampling::tests::config;
    use crate::profiler::ncu::observe::report_source::twins::Shape;

    fn sampling(adaptive: bool) -> SamplingConfig {
        let mut s = config().pipeline.ncu.sampling;
        s.adaptive = adaptive;
        s.launch_count = 1;
        s.max_samples = 4;
        s.error = 0.05;
        // The counts below follow `key`'s rule; `region` has its own test.
        s.error_scope = ErrorScope::Key;
        s
    }

    fn key(d: &mut LaunchDurations, name: &str, grid: u64, process: u32, durations: &[f64]) {
        for ns in durations {
            d.add(name, Shape::of_grid(grid), (process, Some(0)), *ns, &[]);
        }
    }

    fn durations() -> LaunchDurations {
        let mut d = LaunchDurations::default();
        // cv 0: n = 1, count 1, cost 1.
        key(&mut d, "_Z4copy", 1, 7, &[100.0; 6]);
        // cv 0.10954: n = 19, held at max_samples 4 (capped): count 4.
        key(
            &mut d,
            "_Z4gemm",
            1,
            7,
            &[90.0, 110.0, 90.0, 110.0, 90.0, 110.0],
        );
        // Same name, steady: count 1 alone, but the name takes gemm's 4 (cost min(4, 6) = 4).
        key(&mut d, "_Z4gemm", 2, 7, &[100.0; 6]);
        // cv 0.05872: n = 6, held at its 3 launches (capped): count 3.
        key(&mut d, "_Z4norm", 1, 7, &[95.0, 105.0, 95.0]);
        d
    }

    #[test]
    fn region_scope_gives_keys_that_weigh_little_fewer_samples() {
        // The process's time: copy 600, gemm (grid 1) 600, gemm (grid 2) 600, norm 295: 2095 ns.
        // gemm (grid 1) holds 600/2095 = 28.6% of it: n = ⌈18.44 · 0.286⌉ = 6, held at 4 by the
        // budget, as under `key`. norm holds 14.1%: ⌈5.30 · 0.141⌉ = 1 where `key` gave 3.
        let mut region = sampling(true);
        region.error_scope = ErrorScope::Region;
        let (wanted, _) = needs(&durations(), &region, 0, |_| true);
        let counts: Vec<(&str, u32)> = wanted.iter().map(|n| (n.name.as_str(), n.count)).collect();
        assert_eq!(counts, [("_Z4copy", 1), ("_Z4gemm", 4), ("_Z4norm", 1)]);
        // A looser error shows the scaling below the budget: gemm's n at ±10% is ⌈4.61⌉ = 5 for its
        // own mean, ⌈4.61 · 0.286⌉ = 2 for the region's.
        region.error = 0.1;
        let (wanted, _) = needs(&durations(), &region, 0, |_| true);
        assert_eq!(wanted[1].count, 2, "{wanted:?}");
        let mut key = region.clone();
        key.error_scope = ErrorScope::Key;
        let (wanted, _) = needs(&durations(), &key, 0, |_| true);
        assert_eq!(wanted[1].count, 4, "5, held at the budget: {wanted:?}");
    }

    #[test]
    fn a_worker_whose_names_pass_the_argument_limit_becomes_several() {
        let needs: Vec<NameNeed> = (0..1000)
            .map(|i| NameNeed {
                name: format!("_Z{i:04}{}", "x".repeat(190)),
                count: 1 + i % 2,
                keys: 2,
                cost: 3,
            })
            .collect();
        let workers = plan(&needs, &[], true);
        assert_eq!(workers.len(), 4, "two counts, ~100 KB of names each");
        for w in &workers {
            let names = w.names.as_ref().unwrap();
            assert!(names
                .iter()
                .all(|n| needs.iter().any(|x| &x.name == n && x.count == w.count)));
            assert_eq!(
                (w.keys, w.cost),
                (2 * names.len() as u64, 3 * names.len() as u64)
            );
        }
    }

    #[test]
    fn each_name_takes_the_largest_count_its_keys_need() {
        let (wanted, sizing) = needs(&durations(), &sampling(true), 0, |_| true);
        let got: Vec<(&str, u32, u64, u64)> = wanted
            .iter()
            .map(|n| (n.name.as_str(), n.count, n.keys, n.cost))
            .collect();
        assert_eq!(
            got,
            [
                ("_Z4copy", 1, 1, 1),
                ("_Z4gemm", 4, 2, 8),
                ("_Z4norm", 3, 1, 3)
            ]
        );
        assert_eq!(
            sizing,
            Sizing {
                keys: 4,
                above_launch_count: 2,
                capped: 1
            }
        );
        // Without adaptive samples every name takes launch_count.
        let (flat, sizing) = needs(&durations(), &sampling(false), 0, |n| n != "_Z4norm");
        assert!(flat.iter().all(|n| n.count == 1));
        assert_eq!(
            (flat.len(), sizing.keys, sizing.above_launch_count),
            (2, 3, 0)
        );
    }

    #[test]
    fn one_gpu_runs_one_worker_per_count_and_several_spread_by_cost() {
        let (wanted, _) = needs(&durations(), &sampling(true), 0, |_| true);
        let one = plan(&wanted, &[], false);
        let counts: Vec<(u32, Option<Vec<String>>)> =
            one.iter().map(|w| (w.count, w.names.clone())).collect();
        assert_eq!(
            counts,
            [
                (1, Some(vec!["_Z4copy".to_string()])),
                (3, Some(vec!["_Z4norm".to_string()])),
                (4, Some(vec!["_Z4gemm".to_string()])),
            ]
        );
        assert!(one.iter().all(|w| w.gpu.is_none()));
        // Non-adaptive on one GPU: one worker with no name filter, today's deep pass.
        let (flat, _) = needs(&durations(), &sampling(false), 0, |_| true);
        let today = plan(&flat, &[], false);
        assert_eq!(today.len(), 1);
        assert_eq!((today[0].names.clone(), today[0].count), (None, 1));
        assert!(
            plan(&flat, &[], true)[0].names.is_some(),
            "a choice keeps its filter"
        );
        // Two GPUs: gemm (cost 8) alone on GPU 0, norm (3) and copy (1) on GPU 1.
        let gpus = ["0".to_string(), "1".to_string()];
        let two = plan(&wanted, &gpus, false);
        let spread: Vec<(Option<&str>, u32, u64)> = two
            .iter()
            .map(|w| (w.gpu.as_deref(), w.count, w.cost))
            .collect();
        assert_eq!(
            spread,
            [(Some("0"), 4, 8), (Some("1"), 1, 1), (Some("1"), 3, 3)]
        );
        let flat_two = plan(&flat, &gpus, false);
        assert_eq!(flat_two.len(), 2, "one worker per GPU");
        assert!(flat_two.iter().all(|w| w.names.is_some()));
    }

    #[test]
    fn a_workers_flags_name_its_keys_and_keep_the_users_pattern() {
        let config = config();
        let deep = deep_flags(&config.pipeline.ncu.ncu_cli, 1, true);
        let worker = Worker {
            names: Some(vec!["_Z4gemm".into(), "_Z3f$x".into()]),
            count: 3,
            gpu: Some("1".into()),
            keys: 2,
            cost: 6,
        };
        let flags = worker_flags(&deep, &worker);
        assert_eq!(
            flags.kernel_name.as_deref(),
            Some("regex:^(?:_Z4gemm|_Z3f\\$x)$")
        );
        assert_eq!((flags.launch_count, flags.launch_skip), (Some(3), Some(1)));
        let mut user = deep.clone();
        user.kernel_name = Some("regex:^(?!(_Z[0-9]+)?nccl)".into());
        assert_eq!(
            worker_flags(&user, &worker).kernel_name.as_deref(),
            Some("regex:^(?=.*?(?:^(?!(_Z[0-9]+)?nccl)))(?:_Z4gemm|_Z3f\\$x)$")
        );
        let every = Worker {
            names: None,
            ..worker
        };
        assert_eq!(worker_flags(&deep, &every).kernel_name, None);
        assert_eq!(files(0), ("profile.deep".into(), "ncu.deep.log".into()));
        assert_eq!(files(2), ("profile.deep.2".into(), "ncu.deep.2.log".into()));
    }

    #[test]
    fn a_launcher_places_its_ranks_itself() {
        let mut c = config();
        c.pipeline.ncu.sampling.deep_gpus = DeepGpus::Count(2);
        c.pipeline.ncu.ncu_cli.target_processes = Some(TargetProcesses::All);
        let argv = |line: &str| -> Vec<String> { line.split(' ').map(String::from).collect() };
        let torchrun = launcher_refusal(&c, &argv("/usr/bin/torchrun --nproc 2 x.py"), None);
        assert!(torchrun.unwrap().contains("multi-process launcher"));
        let module = launcher_refusal(&c, &argv("python -m torch.distributed.run x.py"), None);
        assert!(module.is_some());
        assert_eq!(launcher_refusal(&c, &argv("python train.py"), None), None);
        let ranked = launcher_refusal(&c, &argv("python train.py"), Some(3)).unwrap();
        assert!(ranked.contains("rank 3 of a launcher"), "{ranked}");
        c.pipeline.ncu.sampling.deep_gpus = DeepGpus::Count(1);
        assert_eq!(launcher_refusal(&c, &argv("torchrun x.py"), Some(3)), None);
    }

    #[test]
    fn deep_gpus_reads_the_hosts_gpus_and_refuses_what_it_lacks() {
        assert_eq!(gpus(DeepGpus::Count(1), None, None), Ok(vec![]));
        assert_eq!(
            gpus(DeepGpus::Count(2), None, None),
            Ok(vec!["0".into(), "1".into()])
        );
        assert_eq!(
            gpus(DeepGpus::All, Some("2, 3"), Some(8)),
            Ok(vec!["2".into(), "3".into()])
        );
        assert_eq!(gpus(DeepGpus::All, None, Some(4)).map(|g| g.len()), Ok(4));
        let none = gpus(DeepGpus::All, None, None).unwrap_err();
        assert!(
            none.contains("pipeline.ncu.sampling.deep_gpus is `all`"),
            "{none}"
        );
        let short = gpus(DeepGpus::Count(4), Some("0,1"), None).unwrap_err();
        assert!(
            short.contains("deep_gpus is 4, but this host shows 2 GPU(s) (CUDA_VISIBLE_DEVICES)"),
            "{short}"
        );
    }
}
