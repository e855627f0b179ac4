//! The join of a sampled run (docs/attribution.md, "Sampled runs"): the deep pass's results indexed
//! by launch key, so that every timing-pass result can take the deep metrics of its twins, the deep
//! results of launches with the same mangled name, grid, block, registers per thread and static and
//! dynamic shared memory. The key never uses launch order: two runs of a workload need not launch in
//! the same order.

// The join is keyed by launch: its readers name the key through it.
pub(crate) use crate::profiler::ncu::observe::launch_key::{Process, Shape};

use crate::analysis::RunContext;
use crate::fast_map::FastMap;
use crate::profiler::ncu::readers::export::details::Advice;
use crate::profiler::ncu::readers::report_file::SessionInfo;
use crate::profiler::ncu::readers::siblings;
use crate::region::{Cell, KeySamples, Moments, Spread};
use crate::report::model::DeepWorker;

use super::super::strata::Strata;

/// How far apart the key ids of two captures' indexes lie: each index numbers its keys from its own
/// base (`capture ordinal × KEY_BASE_STEP`), so tallies of several captures read into one report never
/// mix keys, and the same inputs always give the same ids.
pub(crate) const KEY_BASE_STEP: u64 = 1 << 32;

/// One deep result as the index takes it.
pub(super) struct DeepResult<'a> {
    pub mangled: &'a str,
    pub shape: Shape,
    pub process: Process,
    /// One cell per spec of the source.
    pub cells: &'a [Cell<'a>],
    pub advice: Vec<Advice>,
}

/// A deep metric value, averaged over a key's twins.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum TwinCell {
    Num(f64),
    Text(String),
    Missing,
}

/// The deep values every launch with one key (or one stratum of it) takes.
#[derive(Debug, Clone)]
pub(crate) struct Twins {
    cells: Vec<TwinCell>,
    /// Per spec: the deep samples' count, mean and spread (`None`: no number).
    spread: Vec<Option<Spread>>,
    /// Deep results of this key in one process (the most any process had): the first this many
    /// launches of the key in a process of the timing pass are the launches the deep pass measured.
    pub per_process: u32,
    /// ncu's rule results on the first twin, standing for every launch of the key.
    pub advice: Vec<Advice>,
}

impl Twins {
    /// The deep samples' spread of every spec, for the intervals.
    pub fn spread_of_specs(&self) -> Vec<Option<Spread>> {
        self.spread.clone()
    }

    /// The deep value of spec `at`, borrowed from the index.
    pub fn cell(&self, at: usize) -> Cell<'_> {
        match &self.cells[at] {
            TwinCell::Num(v) => Cell::Num(*v),
            TwinCell::Text(t) => Cell::Text(t),
            TwinCell::Missing => Cell::Missing,
        }
    }
}

impl Twins {
    /// The twins of deep samples one by one (`rows[sample][spec]`), as in-process counters give.
    pub(crate) fn of_samples(rows: &[&[Option<f64>]], specs: usize) -> Twins {
        let mut moments = vec![Moments::default(); specs];
        for row in rows {
            for (m, v) in moments.iter_mut().zip(row.iter()) {
                v.inspect(|v| m.add(*v));
            }
        }
        let mean = |m: &Moments| (m.count() > 0).then(|| m.mean());
        Twins {
            cells: moments
                .iter()
                .map(|m| mean(m).map_or(TwinCell::Missing, TwinCell::Num))
                .collect(),
            spread: moments.iter().map(spread).collect(),
            per_process: 0,
            advice: Vec::new(),
        }
    }

    /// These twins for a stratum lasting `ratio` times as long, widened as a borrowed stratum's.
    pub(crate) fn widened(&self, ratio: f64) -> Twins {
        let mut twins = self.clone();
        widen(&mut twins, ratio);
        twins
    }
}

/// The deep pass's results of one capture, by launch key.
#[derive(Debug, Default)]
pub(crate) struct TwinIndex {
    by_name: FastMap<String, Vec<(Shape, usize)>>,
    twins: Vec<Twins>,
    /// Each key's deep samples one by one, in the order each process profiled them, for its strata.
    samples: Vec<Vec<Sample>>,
    /// The id of the first key (see [`KEY_BASE_STEP`]).
    base: u64,
    /// Why report files of the deep pass were left out: a worker's that could not be read, a
    /// top-up pass's that is not read.
    pub unread: Vec<String>,
    /// Whether a top-up pass's report file lay beside the deep pass's (left out, in `unread`).
    pub topup_left_out: bool,
    /// Deep results read.
    pub results: u64,
    /// The deep pass's report file's session (its devices, driver and ncu), where one was read.
    pub session: Option<SessionInfo>,
    /// The deep pass's workers, where it ran as several, each with the results read of it.
    pub workers: Vec<DeepWorker>,
}

impl TwinIndex {
    /// The twins of a launch, with an id that tells keys apart, if the deep pass saw its key.
    pub fn find(&self, mangled: &str, shape: &Shape) -> Option<(usize, &Twins)> {
        let at = self
            .by_name
            .get(mangled)?
            .iter()
            .find(|(s, _)| s == shape)?
            .1;
        Some((at, &self.twins[at]))
    }

    /// Distinct launch keys with deep results.
    pub fn key_count(&self) -> usize {
        self.twins.len()
    }

    /// The reading-wide id of the key [`TwinIndex::find`] numbered `at`.
    pub fn key(&self, at: usize) -> u64 {
        self.base + at as u64
    }

    /// Every key's deep samples, for the intervals; `deep` says which specs took twins' values,
    /// `comparable_time` which spec is the time both passes measured the same way, if any.
    pub fn samples(&self, deep: Vec<bool>, comparable_time: Option<usize>) -> KeySamples {
        KeySamples {
            deep,
            comparable_time,
            keys: self
                .twins
                .iter()
                .enumerate()
                .map(|(at, t)| (self.key(at), t.spread.clone()))
                .collect(),
        }
    }
}

/// One deep result of a key: the how-many-th of its process's results of the key it was (the deep
/// pass profiles a key's first launches in each process, so this is its launch ordinal), and its
/// numbers per spec.
#[derive(Debug, Clone)]
pub(crate) struct Sample {
    pub ordinal: u32,
    pub numbers: Vec<Option<f64>>,
}

/// A key's twins split by stratum ([`Strata`]) for one process's launches.
#[derive(Debug, Clone)]
pub(crate) struct StratifiedTwins {
    pub strata: Strata,
    /// Per stratum: its twins, and the stratum they were taken from where it had no deep sample of
    /// its own (its spread then widened by how much the two strata's durations differ).
    pub twins: Vec<(Twins, Option<usize>)>,
}

impl TwinIndex {
    /// Key `at`'s twins per stratum, for a process whose launches of the key (those the deep pass
    /// could profile, in launch order) took `durations`; the deep pass skipped the first `skipped`.
    /// Each deep sample belongs to the stratum of the launch with its ordinal (a sample of another
    /// process to this process's launch with the same ordinal: ranks launch alike). `None` for a key
    /// of one stratum, or one whose samples cannot be placed: its twins are the key's own.
    pub fn stratify(&self, at: usize, durations: &[f64], skipped: u32) -> Option<StratifiedTwins> {
        let strata = Strata::of(durations);
        if strata.is_one() {
            return None;
        }
        let pooled = &self.twins[at];
        let specs = pooled.cells.len();
        let mut moments = vec![vec![Moments::default(); specs]; strata.count()];
        let mut placed = vec![0u32; strata.count()];
        let mut median = vec![Vec::new(); strata.count()];
        for d in durations.iter().skip(skipped as usize) {
            median[strata.of_duration(*d)].push(*d);
        }
        for sample in &self.samples[at] {
            let Some(d) = durations.get(skipped as usize + sample.ordinal as usize) else {
                continue;
            };
            let s = strata.of_duration(*d);
            placed[s] += 1;
            for (m, v) in moments[s].iter_mut().zip(&sample.numbers) {
                if let Some(v) = v {
                    m.add(*v);
                }
            }
        }
        if placed.iter().all(|n| *n == 0) {
            return None;
        }
        let own: Vec<Option<Twins>> = (0..strata.count())
            .map(|s| {
                (placed[s] > 0).then(|| Twins {
                    cells: pooled
                        .cells
                        .iter()
                        .zip(&moments[s])
                        .map(|(cell, m)| match (m.count(), cell) {
                            (0, TwinCell::Num(_)) => TwinCell::Missing,
                            (0, other) => other.clone(),
                            _ => TwinCell::Num(m.mean()),
                        })
                        .collect(),
                    spread: moments[s].iter().map(spread).collect(),
                    per_process: pooled.per_process,
                    advice: pooled.advice.clone(),
                })
            })
            .collect();
        let typical = |s: usize| middle(&mut median[s].clone());
        let twins = (0..strata.count())
            .map(|s| match &own[s] {
                Some(t) => (t.clone(), None),
                None => {
                    // The nearest stratum by duration with samples of its own.
                    let from = (0..strata.count())
                        .filter(|f| own[*f].is_some())
                        .min_by_key(|f| f.abs_diff(s))
                        .expect("one stratum has samples");
                    let ratio = typical(s) / typical(from);
                    let mut t = own[from].clone().expect("has samples");
                    widen(&mut t, ratio);
                    (t, Some(from))
                }
            })
            .collect();
        Some(StratifiedTwins { strata, twins })
    }
}

/// The middle value of `values` (0 for none).
fn middle(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(0.0)
}

/// A stratum's twins taken for another whose launches last `ratio` times as long: each spread's
/// deviation grows by the mean times how far the ratio is from 1, so the interval owns up to it.
fn widen(twins: &mut Twins, ratio: f64) {
    let off = if ratio.is_finite() && ratio > 0.0 {
        (ratio - 1.0).abs().max((1.0 / ratio - 1.0).abs())
    } else {
        1.0
    };
    for spread in twins.spread.iter_mut().flatten() {
        let extra = spread.mean.abs() * off;
        let sd = spread.sd.unwrap_or(0.0);
        spread.sd = Some((sd * sd + extra * extra).sqrt());
    }
}

/// Sums per key while the deep results stream in.
#[derive(Default, Clone)]
pub(super) struct TwinIndexBuilder {
    by_name: FastMap<String, Vec<(Shape, usize)>>,
    groups: Vec<Pending>,
    results: u64,
}

#[derive(Clone)]
struct Pending {
    /// Per spec: the numbers' moments, or the first text.
    numbers: Vec<Moments>,
    texts: Vec<Option<String>>,
    per_process: FastMap<Process, u32>,
    advice: Option<Vec<Advice>>,
    samples: Vec<Sample>,
}

impl TwinIndexBuilder {
    /// Deep results taken so far.
    pub fn results(&self) -> u64 {
        self.results
    }

    pub fn add(&mut self, result: DeepResult<'_>) {
        self.results += 1;
        let shapes = self.by_name.entry(result.mangled.to_string()).or_default();
        let at = match shapes.iter().find(|(s, _)| *s == result.shape) {
            Some((_, at)) => *at,
            None => {
                let specs = result.cells.len();
                self.groups.push(Pending {
                    numbers: vec![Moments::default(); specs],
                    texts: vec![None; specs],
                    per_process: FastMap::default(),
                    advice: None,
                    samples: Vec::new(),
                });
                shapes.push((result.shape, self.groups.len() - 1));
                self.groups.len() - 1
            }
        };
        let group = &mut self.groups[at];
        for ((numbers, text), cell) in group
            .numbers
            .iter_mut()
            .zip(&mut group.texts)
            .zip(result.cells)
        {
            match cell {
                Cell::Num(v) => numbers.add(*v),
                Cell::Text(t) if text.is_none() => *text = Some(t.to_string()),
                _ => {}
            }
        }
        let ordinal = group.per_process.entry(result.process).or_default();
        group.samples.push(Sample {
            ordinal: *ordinal,
            numbers: result
                .cells
                .iter()
                .map(|c| match c {
                    Cell::Num(v) => Some(*v),
                    _ => None,
                })
                .collect(),
        });
        *ordinal += 1;
        group.advice.get_or_insert(result.advice);
    }

    /// Averages each key's twins; the index numbers its keys from `base`.
    pub fn finish(self, base: u64) -> TwinIndex {
        let mut samples = Vec::with_capacity(self.groups.len());
        let twins = self
            .groups
            .into_iter()
            .map(|mut g| {
                samples.push(std::mem::take(&mut g.samples));
                g
            })
            .map(|g| Twins {
                spread: g.numbers.iter().map(spread).collect(),
                cells: g
                    .numbers
                    .iter()
                    .zip(g.texts)
                    .map(|(numbers, text)| match (numbers.count(), text) {
                        (0, Some(t)) => TwinCell::Text(t),
                        (0, None) => TwinCell::Missing,
                        _ => TwinCell::Num(numbers.mean()),
                    })
                    .collect(),
                per_process: g.per_process.values().copied().max().unwrap_or(0),
                advice: g.advice.unwrap_or_default(),
            })
            .collect();
        TwinIndex {
            by_name: self.by_name,
            twins,
            samples,
            base,
            unread: Vec::new(),
            topup_left_out: false,
            results: self.results,
            session: None,
            workers: Vec::new(),
        }
    }
}

/// A key's deep samples of one spec as the intervals take them; `None` without a number.
fn spread(numbers: &Moments) -> Option<Spread> {
    (numbers.count() > 0).then(|| Spread {
        samples: u32::try_from(numbers.count()).unwrap_or(u32::MAX),
        mean: numbers.mean(),
        sd: numbers.sd(),
    })
}

/// Counts each key's launches per process in a timing pass, in the order they come: the first
/// `per_process` of them are the launches the deep pass measured.
#[derive(Debug, Default, Clone)]
pub(crate) struct LaunchOrdinals {
    seen: FastMap<(Process, usize), u32>,
    /// Launches of each key the deep pass skipped before profiling (`--launch-skip`).
    skipped: u32,
    /// The mangled names the deep pass was limited to (`None`: every name).
    kept: Option<regex::Regex>,
}

impl LaunchOrdinals {
    /// Ordinals for a deep pass that skipped the first `skipped` launches of each key.
    pub fn skipping(skipped: u32) -> LaunchOrdinals {
        LaunchOrdinals {
            skipped,
            ..LaunchOrdinals::default()
        }
    }

    /// Ordinals for the deep pass run by `deep_command`: its `--launch-skip` and `--kernel-name`.
    pub fn of_deep_pass(deep_command: &[String]) -> LaunchOrdinals {
        LaunchOrdinals::skipping(siblings::skipped(deep_command))
            .keeping(siblings::kept_names(deep_command))
    }

    /// Ordinals for a run's deep pass: worker 0's `--launch-skip` (every worker skips the same), and
    /// the names of all its workers (`RunContext::deep_worker_commands`) where it ran as several.
    pub fn of_run(context: &RunContext) -> LaunchOrdinals {
        match context.deep_worker_commands.as_slice() {
            [] => LaunchOrdinals::of_deep_pass(&context.deep_command),
            workers => LaunchOrdinals::skipping(siblings::skipped(&context.deep_command))
                .keeping(siblings::kept_names_of_all(workers)),
        }
    }

    /// The same, for a deep pass limited to the mangled names `kept` matches (`None`: every name).
    pub fn keeping(self, kept: Option<regex::Regex>) -> LaunchOrdinals {
        LaunchOrdinals { kept, ..self }
    }

    /// Whether the deep pass was told to leave out launches named `mangled`: a launch without a
    /// twin is then not measured, rather than unmatched.
    pub fn left_out(&self, mangled: &str) -> bool {
        self.kept
            .as_ref()
            .is_some_and(|kept| !kept.is_match(mangled))
    }

    /// Launches of each key the deep pass skipped before profiling.
    pub fn skipped(&self) -> u32 {
        self.skipped
    }

    /// Whether this launch of key `id` in `process` is one the deep pass profiled itself.
    pub fn measured(&mut self, process: Process, id: usize, twins: &Twins) -> bool {
        let n = self.seen.entry((process, id)).or_default();
        *n += 1;
        *n > self.skipped && *n <= self.skipped + twins.per_process
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn deep<'a>(name: &'a str, grid: u64, process: u32, cells: &'a [Cell<'a>]) -> DeepResult<'a> {
        DeepResult {
            mangled: name,
            shape: Shape::of_grid(grid),
            process: (process, Some(0)),
            cells,
            advice: Vec::new(),
        }
    }

    #[test]
    fn twins_are_found_by_name_and_shape_and_averaged() {
        let mut b = TwinIndexBuilder::default();
        b.add(deep("_Z4gemm", 8, 1, &[Cell::Num(10.0), Cell::Text("a")]));
        b.add(deep("_Z4gemm", 8, 1, &[Cell::Num(30.0), Cell::Text("b")]));
        b.add(deep("_Z4gemm", 16, 1, &[Cell::Missing, Cell::Missing]));
        b.add(deep("_Z4gemm", 8, 2, &[Cell::Num(50.0), Cell::Missing]));
        let index = b.finish(0);
        assert_eq!(index.results, 4);
        let (id, twins) = index.find("_Z4gemm", &Shape::of_grid(8)).unwrap();
        assert_eq!(twins.cell(0), Cell::Num(30.0));
        // 10, 30 and 50: sample standard deviation 20.
        let samples = index.samples(vec![true, false], None);
        let spreads = &samples.keys[&index.key(id)];
        assert_eq!(
            spreads[0],
            Some(Spread {
                samples: 3,
                mean: 30.0,
                sd: Some(20.0)
            })
        );
        assert_eq!(spreads[1], None, "text has no spread");
        assert_eq!(twins.cell(1), Cell::Text("a"));
        assert_eq!(twins.per_process, 2);
        let (other, twins16) = index.find("_Z4gemm", &Shape::of_grid(16)).unwrap();
        assert_ne!(id, other);
        assert_eq!(twins16.cell(0), Cell::Missing);
        assert!(index.find("_Z4gemm", &Shape::of_grid(32)).is_none());
        assert!(index.find("_Z4gemv", &Shape::of_grid(8)).is_none());

        let mut ordinals = LaunchOrdinals::default();
        let measured: Vec<bool> = (0..3)
            .map(|_| ordinals.measured((7, Some(0)), id, twins))
            .collect();
        assert_eq!(measured, [true, true, false]);
        assert!(ordinals.measured((8, Some(0)), id, twins), "per process");
        let mut skipping = LaunchOrdinals::skipping(1);
        let measured: Vec<bool> = (0..4)
            .map(|_| skipping.measured((7, Some(0)), id, twins))
            .collect();
        assert_eq!(
            measured,
            [false, true, true, false],
            "the cold start was skipped"
        );
    }

    /// One key, two kinds of work: launches alternate 48 and 73 (as a GEMM of attn and mlp does).
    #[test]
    fn a_key_of_two_kinds_of_work_gives_each_stratum_its_own_samples() {
        let mut b = TwinIndexBuilder::default();
        b.add(deep("_Z4gemm", 8, 1, &[Cell::Num(20.0)]));
        b.add(deep("_Z4gemm", 8, 1, &[Cell::Num(40.0)]));
        b.add(deep("_Z4gemm", 8, 1, &[Cell::Num(22.0)]));
        let index = b.finish(0);
        let (at, pooled) = index.find("_Z4gemm", &Shape::of_grid(8)).unwrap();
        assert_eq!(pooled.cell(0), Cell::Num(82.0 / 3.0), "the mixture, pooled");
        let durations = [48.0, 73.0, 48.5, 72.0, 47.5, 73.5];
        let split = index.stratify(at, &durations, 0).unwrap();
        assert_eq!(split.strata.count(), 2);
        let (short, long) = (&split.twins[0], &split.twins[1]);
        assert_eq!(
            (short.0.cell(0), short.1),
            (Cell::Num(21.0), None),
            "ordinals 0 and 2"
        );
        assert_eq!(
            (long.0.cell(0), long.1),
            (Cell::Num(40.0), None),
            "ordinal 1"
        );
        assert_eq!(long.0.spread[0].unwrap().samples, 1);
        // A key of one kind of work keeps its pooled twins.
        assert!(index.stratify(at, &[48.0, 48.2, 47.9], 0).is_none());
    }

    #[test]
    fn a_stratum_without_samples_takes_the_nearest_ones_with_a_wider_spread() {
        let mut b = TwinIndexBuilder::default();
        b.add(deep("_Z4gemm", 8, 1, &[Cell::Num(20.0)]));
        b.add(deep("_Z4gemm", 8, 1, &[Cell::Num(24.0)]));
        let index = b.finish(0);
        let (at, _) = index.find("_Z4gemm", &Shape::of_grid(8)).unwrap();
        // The deep pass reached only the first two launches, both at 50: the 100s have no sample.
        let durations = [50.0, 50.0, 100.0, 100.0, 100.0];
        let split = index.stratify(at, &durations, 0).unwrap();
        let (own, borrowed) = (&split.twins[0], &split.twins[1]);
        assert_eq!(own.1, None);
        assert_eq!(borrowed.1, Some(0), "taken from stratum 0");
        assert_eq!(borrowed.0.cell(0), Cell::Num(22.0));
        let (sd_own, sd_borrowed) = (
            own.0.spread[0].unwrap().sd.unwrap(),
            borrowed.0.spread[0].unwrap().sd.unwrap(),
        );
        // √8 of its own, and the mean (22) times |100/50 − 1| = 22 on top: √(8 + 484).
        assert!((sd_own - 8f64.sqrt()).abs() < 1e-12);
        assert!((sd_borrowed - 492f64.sqrt()).abs() < 1e-9, "{sd_borrowed}");
        // Samples past the launches this process made cannot be placed: the pooled twins stand.
        assert!(index.stratify(at, &[50.0, 50.0, 100.0, 100.0], 5).is_none());
    }

    /// More results of one key feed the same builder after its first: that key's measured
    /// launches run on past K (S < n ≤ S + K + M), another key's stop at K.
    #[test]
    fn more_results_of_a_key_extend_only_its_measured_launches() {
        let mut b = TwinIndexBuilder::default();
        // The deep pass: one result per key (K = 1), after skipping each key's cold start (S = 1).
        b.add(deep("_Z4gemm", 8, 1, &[Cell::Num(10.0)]));
        b.add(deep("_Z4gemv", 8, 1, &[Cell::Num(5.0)]));
        // M = 2 more of gemm only.
        b.add(deep("_Z4gemm", 8, 1, &[Cell::Num(12.0)]));
        b.add(deep("_Z4gemm", 8, 1, &[Cell::Num(14.0)]));
        let index = b.finish(0);
        let (gemm, gemm_twins) = index.find("_Z4gemm", &Shape::of_grid(8)).unwrap();
        let (gemv, gemv_twins) = index.find("_Z4gemv", &Shape::of_grid(8)).unwrap();
        assert_eq!(gemm_twins.cell(0), Cell::Num(12.0), "all three averaged");
        let mut ordinals = LaunchOrdinals::skipping(1);
        let gemm_measured: Vec<bool> = (0..5)
            .map(|_| ordinals.measured((1, Some(0)), gemm, gemm_twins))
            .collect();
        assert_eq!(gemm_measured, [false, true, true, true, false]);
        let gemv_measured: Vec<bool> = (0..3)
            .map(|_| ordinals.measured((1, Some(0)), gemv, gemv_twins))
            .collect();
        assert_eq!(gemv_measured, [false, true, false]);
        let samples = index.samples(vec![true], None);
        assert_eq!(samples.keys[&index.key(gemm)][0].unwrap().samples, 3);
        assert_eq!(samples.keys[&index.key(gemv)][0].unwrap().samples, 1);
    }
}
