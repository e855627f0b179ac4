//! The deep pass as workers (docs/running.md, "Sampled runs"): ncu takes one `--launch-count` per
//! process, so a deep pass whose launch keys need different sample counts runs as several ncu
//! processes at once, each with its own mangled names, count, report file and log. Their results
//! join as one deep pass (`report_source::twins`).
//!
//! Each key's count is sized here from the first pass's durations, before the deep pass starts
//! (`pipeline.ncu.sampling.adaptive`: n = ⌈(1.96·CV/error)²⌉, pooled over the processes that launch
//! the key). ncu selects by name, so a name takes the largest count any of its keys needs.
//!
//! Worker 0 writes today's `profile.deep.ncu-rep` and `ncu.deep.log`, so a deep pass of one worker
//! reads exactly as before; worker i writes `profile.deep.i.ncu-rep` and `ncu.deep.i.log`.

use crate::config::{ErrorScope, KernelNameForm, NcuCliConfig, SamplingConfig};
use crate::profiler::ncu::observe::launch_durations::LaunchDurations;

use super::pattern_limit::{chunks, PATTERN_BYTES};
use super::DEEP_REPORT_BASE;
use super::{samples_needed, samples_needed_in_regions, strata::stratum_count, DEEP_LOG};

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
    /// Launch keys of its names.
    pub keys: u64,
    /// Results it is expected to give (see [`NameNeed::cost`]).
    pub cost: u64,
}

/// The workers for these names: one per count, its names in first-seen order so command lines
/// read the same every run. `narrowed`: the names are a choice (`min_time_share`), so even one
/// worker keeps its name filter.
pub(crate) fn plan(needs: &[NameNeed], narrowed: bool) -> Vec<Worker> {
    let mut workers: Vec<Worker> = Vec::new();
    for need in needs {
        match workers.iter_mut().find(|w| w.count == need.count) {
            Some(worker) => {
                worker
                    .names
                    .get_or_insert_with(Vec::new)
                    .push(need.name.clone());
                worker.keys += need.keys;
                worker.cost += need.cost;
            }
            None => workers.push(Worker {
                names: Some(vec![need.name.clone()]),
                count: need.count,
                keys: need.keys,
                cost: need.cost,
            }),
        }
    }
    workers.sort_by_key(|w| w.count);
    if let [only] = workers.as_mut_slice() {
        if !narrowed {
            only.names = None;
        }
    }
    workers
        .into_iter()
        .flat_map(|w| split_long(w, needs))
        .collect()
}

/// `worker` as several with its count where its names' pattern would pass the limit on
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
        let workers = plan(&needs, true);
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
    fn one_worker_runs_per_count() {
        let (wanted, _) = needs(&durations(), &sampling(true), 0, |_| true);
        let one = plan(&wanted, false);
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
        // Non-adaptive: one worker with no name filter, today's deep pass.
        let (flat, _) = needs(&durations(), &sampling(false), 0, |_| true);
        let today = plan(&flat, false);
        assert_eq!(today.len(), 1);
        assert_eq!((today[0].names.clone(), today[0].count), (None, 1));
        assert!(
            plan(&flat, true)[0].names.is_some(),
            "a choice keeps its filter"
        );
    }

    #[test]
    fn a_workers_flags_name_its_keys_and_keep_the_users_pattern() {
        let config = config();
        let deep = deep_flags(&config.pipeline.ncu.ncu_cli, 1, true);
        let worker = Worker {
            names: Some(vec!["_Z4gemm".into(), "_Z3f$x".into()]),
            count: 3,
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
}
