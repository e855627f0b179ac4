//! A traced run whose traces carry in-process counters (the injection library's Range Profiler,
//! `PROFILE_RUN_DEEP_METRICS`) read as a sampled run with no ncu deep pass: each profiled launch's
//! values are deep samples of its group, the launch key (mangled name, grid, block, registers,
//! shared memory) in the regions it ran in (runs of digits folded, so a repeated block is one group),
//! as the library chose its samples. A group whose
//! in-place durations form separate groups is split further into strata ([`Strata`], the rule the
//! ncu join uses), a sample placed by its own replayed duration. Launches take values only from
//! their own stratum; a stratum with no sample takes the nearest one's of its key, widened. A
//! profiled launch's kernel record has no duration (kernel replay leaves start = end = 0): its
//! time is the mean in-place duration of its stratum's unprofiled launches.
//!
//! Floor: profiler (see `crate::profiler`): imports run, process, analysis, insights, report,
//! config, region and the ground floor, and its own profiler's rooms.

mod build;
mod kept;
mod notes;

pub(crate) use build::IndexBuilder;
pub use kept::KeptIndex;
pub(crate) use notes::{ncu_beside, notes, sampling};

use cupti_trace::deep::rule::fold_digits;

use crate::analysis::MetricsFound;
use crate::fast_map::FastMap;
use crate::profiler::ncu::observe::launch_key::Shape;
use crate::profiler::ncu::observe::report_source::twins::Twins;
use crate::profiler::ncu::observe::strata::Strata;
use crate::profiler::ncu::readers::trace::{ProcessTrace, TracedKernel};
use crate::region::{Cell, Coverage, KeySamples};

use super::deep::TimeSpecs;

/// What report.json's `sampling.engine` says of counters collected in the traced process.
pub const ENGINE: &str = "in-process (CUPTI Range Profiler)";

/// A launch's group: its mangled name, its shape and the regions it ran in (each domain's path).
type GroupKey = (String, Shape, String);

/// One stratum of a group: its deep values and what its launches' time is.
#[derive(Debug)]
struct Stratum {
    /// `None`: no profiled launch of this key anywhere to take values from (unmatched).
    twins: Option<Twins>,
    /// Whether `twins` are another stratum's, widened.
    borrowed: bool,
    /// The stratum's id among the reading's keys (its deep samples' key for the intervals).
    id: u64,
    /// The mean in-place duration of its unprofiled launches, the time of its profiled ones.
    mean_time: Option<f64>,
}

#[derive(Debug)]
struct Group {
    strata: Strata,
    per_stratum: Vec<Stratum>,
    /// The mean in-place duration of all the group's unprofiled launches.
    mean_time: Option<f64>,
}

/// Every group of the reading's traces with its strata, and what the report says of the counters.
#[derive(Debug)]
pub(crate) struct InProcessIndex {
    groups: FastMap<GroupKey, Group>,
    /// The deep metrics (ncu's names and units) and the trace's time metric among them.
    pub found: MetricsFound,
    pub time: TimeSpecs,
    /// Per spec: the counters' metric index and the factor to its base unit.
    columns: Vec<Option<(usize, f64)>>,
    /// Deep samples taken (profiled launches with values, in the requested regions).
    pub samples: u64,
    /// Groups split into more than one stratum by duration.
    pub stratified: u64,
    /// What the library wrote of counters it could not collect, over all traces.
    pub errors: Vec<String>,
    /// Each device's chip and the metric set's replay passes, as `chip: N passes`.
    pub chips: Vec<String>,
    /// The launcher ranks that profiled nothing of their own (not among
    /// `pipeline.ncu.sampling.deep_ranks`): their launches take their peers' samples.
    pub quiet_ranks: Vec<u32>,
    /// Each profiled launch's host cost (every launch the library profiled, in any region), in ns.
    pub cost_ns: Vec<u64>,
    /// The mangled names of the launch keys that ran only inside CUDA graphs, never profiled
    /// (what `pipeline.ncu.sampling.graph_kernels: ncu` gives to ncu's deep pass), sorted.
    pub graph_only: Vec<String>,
    /// Samples of µs-scale kernels, whose throughputs read low in process.
    pub short_samples: ShortSamples,
}

/// The samples of kernels replayed in under `build::SHORT_NS`, and their share of the samples'
/// replayed time.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct ShortSamples {
    pub count: u64,
    pub short_ns: f64,
    /// Every sample's replayed time.
    pub all_ns: f64,
}

/// How one trace's launches joined, summed over the reading.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Tally {
    /// Results whose stratum had no sample of its own and took another's.
    pub borrowed: u64,
    /// Profiled launches whose time is their unprofiled twins' mean (the record has none).
    pub timed_by_twins: u64,
    /// Profiled launches with no unprofiled twin, timed by their own replayed duration instead.
    pub timed_by_replay: u64,
    /// Profiled launches with neither an unprofiled twin nor a replayed duration: no time known.
    pub untimed: u64,
    /// Unmatched results launched inside a CUDA graph (their launch key never profiled).
    pub graph_unmatched: u64,
    /// Results the counters had no values for that took ncu's deep pass's (CUDA graph kernels).
    pub from_ncu: u64,
}

impl Tally {
    pub fn add(&mut self, other: Tally) {
        self.borrowed += other.borrowed;
        self.timed_by_twins += other.timed_by_twins;
        self.timed_by_replay += other.timed_by_replay;
        self.graph_unmatched += other.graph_unmatched;
        self.from_ncu += other.from_ncu;
        self.untimed += other.untimed;
    }
}

/// One traced kernel's cells as the join gives them.
pub(crate) struct Joined<'i> {
    pub coverage: Coverage,
    pub values: Vec<Cell<'i>>,
    /// The replayed duration that weighs the deep rates (`None`: the in-place time).
    pub weight: Option<f64>,
    pub key: Option<u64>,
    /// The in-place time the report counts.
    pub time: f64,
    /// Whether `time` is the kernel's own (false: a profiled launch, timed by its twins).
    pub own_time: bool,
}

/// The profiled launches of one trace by correlation id, with their row of values where CUPTI
/// measured the one kernel, and the correlation ids shared by several kernels (CUDA graph nodes).
pub(crate) struct Profiled<'t> {
    rows: FastMap<u32, Option<&'t [Option<f64>]>>,
    graphs: std::collections::HashSet<u32, foldhash::fast::FixedState>,
}

impl<'t> Profiled<'t> {
    pub fn of(trace: &'t ProcessTrace) -> Profiled<'t> {
        let mut seen: FastMap<u32, u32> = FastMap::default();
        for k in &trace.kernels {
            *seen.entry(k.correlation).or_default() += 1;
        }
        let graphs = seen.iter().filter(|(_, n)| **n > 1).map(|(c, _)| *c);
        let rows = trace.counters.launches.iter().map(|l| {
            let row = match (l.kernel, l.values.as_slice()) {
                (Some(_), [row]) => Some(row.as_slice()),
                _ => None,
            };
            (l.correlation, row)
        });
        Profiled {
            rows: rows.collect(),
            graphs: graphs.collect(),
        }
    }

    /// Whether `kernel` was profiled (its launch replayed), with its values where it has them.
    fn of_kernel(&self, kernel: &TracedKernel) -> Option<Option<&'t [Option<f64>]>> {
        if self.graphs.contains(&kernel.correlation) {
            return None;
        }
        self.rows.get(&kernel.correlation).copied()
    }

    pub fn in_graph(&self, kernel: &TracedKernel) -> bool {
        self.graphs.contains(&kernel.correlation)
    }
}

/// The regions a kernel ran in, as one word of its group key: each domain's path with its runs of
/// digits folded to `#` by the library's own rule, as it counts a stratum, so that a repeated
/// block's launches (`layer0/attn`, `layer7/attn`) are one group and share its samples; durations
/// that differ still split the group into strata.
pub(crate) fn region_of(stacks: &[Vec<String>]) -> String {
    let mut word = String::new();
    for (at, stack) in stacks.iter().enumerate() {
        if at > 0 {
            word.push('\u{1}');
        }
        word.extend(fold_digits(stack.join("/").chars()));
    }
    word
}

impl InProcessIndex {
    /// Each stratum's deep samples under its id, for the intervals: every spec but the in-place
    /// time is a deep one.
    pub fn key_samples(&self) -> KeySamples {
        let specs = self.found.specs.len();
        KeySamples {
            deep: (0..specs)
                .map(|at| Some(at) != self.time.in_place)
                .collect(),
            comparable_time: None,
            keys: self
                .groups
                .values()
                .flat_map(|g| &g.per_stratum)
                .filter_map(|s| Some((s.id, s.twins.as_ref()?.spread_of_specs())))
                .collect(),
        }
    }

    /// The cells of `kernel` (in the regions `region`, its mangled name and shape), its coverage,
    /// and its time: its own in-place duration, or a profiled launch's twins' mean.
    pub fn join<'i>(
        &'i self,
        profiled: &Profiled<'_>,
        (mangled, shape, region): (&str, Shape, &str),
        kernel: &TracedKernel,
        tally: &mut Tally,
    ) -> Joined<'i> {
        let specs = self.found.specs.len();
        let own = profiled.of_kernel(kernel);
        let replayed = own.flatten().and_then(|row| self.replayed_time(row));
        let group = self
            .groups
            .get(&(mangled.to_string(), shape, region.to_string()));
        let (duration, own_time) = match own {
            None => (kernel.duration_ns(), true),
            Some(_) => (profiled_time(group, replayed, tally), false),
        };
        let place = replayed.unwrap_or(duration);
        let stratum = group.map(|g| &g.per_stratum[g.strata.of_duration(place)]);
        let Some((s, twins)) = stratum.and_then(|s| Some((s, s.twins.as_ref()?))) else {
            let mut values = vec![Cell::Missing; specs];
            if let Some(at) = self.time.in_place {
                values[at] = Cell::Num(duration);
            }
            return Joined {
                coverage: Coverage::Unmatched,
                values,
                weight: None,
                key: None,
                time: duration,
                own_time,
            };
        };
        tally.borrowed += u64::from(s.borrowed);
        let coverage = match own {
            Some(Some(_)) if !s.borrowed => Coverage::Measured,
            _ => Coverage::Estimated,
        };
        let values: Vec<Cell<'i>> = (0..specs)
            .map(|at| match Some(at) == self.time.in_place {
                true => Cell::Num(duration),
                false => twins.cell(at),
            })
            .collect();
        let weight = self.time.serialized.and_then(|at| match values[at] {
            Cell::Num(v) => Some(v),
            _ => None,
        });
        Joined {
            coverage,
            values,
            weight,
            key: Some(s.id),
            time: duration,
            own_time,
        }
    }

    /// A profiled launch's own replayed duration (the time metric among its counters), in ns.
    fn replayed_time(&self, row: &[Option<f64>]) -> Option<f64> {
        let (at, factor) = self.columns.get(self.time.serialized?).copied().flatten()?;
        row.get(at).copied().flatten().map(|v| v * factor)
    }
}

/// A profiled launch's time (its record has none): the mean in-place duration of its stratum's
/// unprofiled launches, else of its group's; else its own replayed duration; else none is known
/// (0, counted, and said in a note).
fn profiled_time(group: Option<&Group>, replayed: Option<f64>, tally: &mut Tally) -> f64 {
    let twins = group.and_then(|g| {
        let stratum = g.strata.of_duration(replayed.unwrap_or(0.0));
        g.per_stratum[stratum].mean_time.or(g.mean_time)
    });
    let (time, count) = match (twins, replayed) {
        (Some(t), _) => (t, &mut tally.timed_by_twins),
        (None, Some(r)) => (r, &mut tally.timed_by_replay),
        (None, None) => (0.0, &mut tally.untimed),
    };
    *count += 1;
    time
}

#[cfg(test)]
mod tests {
    use super::region_of;

    #[test]
    fn a_repeated_blocks_regions_are_one_group_and_siblings_stay_apart() {
        let of = |paths: &[&[&str]]| {
            let stacks: Vec<Vec<String>> = paths
                .iter()
                .map(|p| p.iter().map(|s| s.to_string()).collect())
                .collect();
            region_of(&stacks)
        };
        let layer0 = of(&[&["train_step", "forward", "layer0", "attn"]]);
        assert_eq!(layer0, "train_step/forward/layer#/attn");
        assert_eq!(layer0, of(&[&["train_step", "forward", "layer17", "attn"]]));
        assert_ne!(layer0, of(&[&["train_step", "forward", "layer0", "mlp"]]));
        assert_eq!(
            of(&[&["a1"], &["b22"]]),
            "a#\u{1}b#",
            "each domain's path apart"
        );
    }
}
