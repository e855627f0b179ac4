//! The in-process index built from the traces' first reading: every group's unprofiled in-place
//! durations and profiled launches' values, then each group cut into strata, each stratum given its
//! own samples or, where it has none, the nearest stratum's of its launch key, widened.

use crate::analysis::{AnalysisPlan, MetricsFound};
use crate::error::{Error, Result};
use crate::fast_map::FastMap;
use crate::profiler::ncu::observe::launch_key::Shape;
use crate::profiler::ncu::observe::report_source::twins::Twins;
use crate::profiler::ncu::observe::strata::{Strata, STRATUM_IDS};
use crate::profiler::ncu::readers::trace::{ProcessTrace, TracedKernel};
use crate::profiler::ncu::readers::units;
#[cfg(test)]
use crate::region::Cell;

use super::{Group, GroupKey, InProcessIndex, Profiled, ShortSamples, Stratum};
use crate::profiler::ncu::observe::trace::deep::{
    requested_spec, with_serialized, TimeSpecs, REPLAYED_LABEL,
};

/// One group's launches while the traces are read.
#[derive(Default)]
struct Pending {
    unprofiled: Vec<f64>,
    /// Whether some launch ran inside a CUDA graph (a node kernel, never profiled in process).
    in_graph: bool,
    /// Each profiled launch's values, in the counters' metric order.
    samples: Vec<Vec<Option<f64>>>,
}

/// Collects the groups of every trace of a reading.
#[derive(Default)]
pub(crate) struct IndexBuilder {
    /// The counters' metric names and the first trace that gave them.
    metrics: Option<(Vec<String>, String)>,
    pending: FastMap<GroupKey, Pending>,
    errors: Vec<String>,
    chips: Vec<String>,
    samples: u64,
    /// The ranks whose traces name the metrics but hold no profiled launch.
    quiet_ranks: Vec<u32>,
    cost_ns: Vec<u64>,
}

impl IndexBuilder {
    /// Takes `trace`'s counters' metric names, chips and errors; the traces of one reading must
    /// have measured the same metrics.
    pub fn trace(&mut self, trace: &ProcessTrace) -> Result<()> {
        let c = &trace.counters;
        if c.metrics.is_empty() {
            return Ok(());
        }
        let path = trace.path.display().to_string();
        match &self.metrics {
            Some((metrics, first)) if *metrics != c.metrics => {
                return Err(Error::Usage(format!(
                    "{first} and {path} hold in-process counters of different metrics; profile every process with the same PROFILE_RUN_DEEP_METRICS"
                )));
            }
            Some(_) => {}
            None => self.metrics = Some((c.metrics.clone(), path)),
        }
        self.errors.extend(c.errors.iter().cloned());
        self.cost_ns.extend(c.launches.iter().map(|l| l.cost_ns));
        if let (Some(rank), true) = (trace.rank, c.launches.is_empty()) {
            self.quiet_ranks.push(rank);
        }
        for chip in &c.chips {
            let line = format!("{}: {} passes", chip.chip, chip.passes);
            if !self.chips.contains(&line) {
                self.chips.push(line);
            }
        }
        Ok(())
    }

    /// Takes one kernel of a trace in the requested regions.
    pub fn kernel(&mut self, profiled: &Profiled<'_>, key: GroupKey, kernel: &TracedKernel) {
        let pending = self.pending.entry(key).or_default();
        pending.in_graph |= profiled.in_graph(kernel);
        match profiled.of_kernel(kernel) {
            None => pending.unprofiled.push(kernel.duration_ns()),
            Some(Some(row)) => {
                pending.samples.push(row.to_vec());
                self.samples += 1;
            }
            // Profiled, but CUPTI measured nothing: no sample, and no time of its own.
            Some(None) => {}
        }
    }

    /// The index, or `None` when no trace carries counters (a time-only run).
    pub fn finish(self, plan: &AnalysisPlan, in_place_label: &str) -> Option<InProcessIndex> {
        let (metrics, _) = self.metrics.as_ref()?;
        let (found, time) = metrics_found(plan, metrics, in_place_label);
        let columns = columns(&found, time, metrics, &plan.time_metric);
        let specs = found.specs.len();
        let to_specs = |row: &[Option<f64>]| -> Vec<Option<f64>> {
            let cell = |c: Option<(usize, f64)>| {
                c.and_then(|(at, f)| row.get(at).copied()?.map(|v| v * f))
            };
            columns.iter().map(|c| cell(*c)).collect()
        };
        let mut keys: Vec<(GroupKey, Pending)> = self.pending.into_iter().collect();
        // A stable order, so that every stratum keeps its id from one reading to the next.
        let order = |(m, s, r): &GroupKey| {
            let sizes = (s.registers, s.shared_static, s.shared_dynamic);
            (m.clone(), r.clone(), s.grid, s.block, sizes)
        };
        keys.sort_by_cached_key(|(key, _)| order(key));
        let mut own = Vec::with_capacity(keys.len());
        let mut short_samples = ShortSamples::default();
        for (_, p) in &keys {
            let rows: Vec<Vec<Option<f64>>> = p.samples.iter().map(|r| to_specs(r)).collect();
            short_samples.add(&rows, time.serialized);
            own.push(own_strata(&p.unprofiled, &rows, time.serialized, specs));
        }
        // Each launch key's groups, the regions it ran in, for a group with no sample to borrow from.
        let mut of_key: FastMap<(&str, Shape), Vec<usize>> = FastMap::default();
        for (at, ((mangled, shape, _), _)) in keys.iter().enumerate() {
            of_key.entry((mangled, *shape)).or_default().push(at);
        }
        let graph_only = graph_only(&of_key, &keys);
        let mut groups = FastMap::default();
        let mut next = IN_PROCESS_IDS;
        let mut stratified = 0;
        for (at, (key, p)) in keys.iter().enumerate() {
            let (strata, strata_own) = &own[at];
            stratified += u64::from(!strata.is_one());
            let per_stratum = strata_own
                .iter()
                .map(|o| {
                    let (twins, borrowed) = match &o.twins {
                        Some(t) => (Some(t.clone()), false),
                        None => {
                            let siblings = &of_key[&(key.0.as_str(), key.1)];
                            (nearest(siblings, &own, at, o.typical), true)
                        }
                    };
                    next += 1;
                    Stratum {
                        borrowed: borrowed && twins.is_some(),
                        twins,
                        id: next,
                        mean_time: o.mean_time,
                    }
                })
                .collect();
            let group = Group {
                strata: strata.clone(),
                per_stratum,
                mean_time: mean(&p.unprofiled),
            };
            groups.insert(key.clone(), group);
        }
        Some(InProcessIndex {
            groups,
            found,
            time,
            columns,
            samples: self.samples,
            stratified,
            errors: self.errors,
            chips: self.chips,
            quiet_ranks: self.quiet_ranks,
            cost_ns: self.cost_ns,
            graph_only,
            short_samples,
        })
    }
}

/// Replayed durations below this are µs-scale kernels, whose measured window in process runs
/// about half a µs longer than ncu's (docs/ncu-notes.md, "Small kernels").
pub(crate) const SHORT_NS: f64 = 10_000.0;

impl ShortSamples {
    /// Counts the samples among `rows` whose replayed duration (the `serialized` spec, in ns) is
    /// under [`SHORT_NS`], and the replayed time of all.
    fn add(&mut self, rows: &[Vec<Option<f64>>], serialized: Option<usize>) {
        let Some(at) = serialized else {
            return;
        };
        for ns in rows.iter().filter_map(|row| row.get(at).copied().flatten()) {
            self.all_ns += ns;
            if ns < SHORT_NS {
                self.count += 1;
                self.short_ns += ns;
            }
        }
    }
}

/// Where the in-process strata's ids start: apart from the ids of an ncu deep pass's strata
/// (`STRATUM_IDS | input << 32`, one block per trace), which a reading holds beside them where
/// ncu measured the CUDA graph kernels.
const IN_PROCESS_IDS: u64 = STRATUM_IDS | 1 << 62;

/// The mangled names of the launch keys no launch of which was profiled in any group, some
/// launch of which ran inside a CUDA graph: what only ncu's deep pass measures, sorted.
fn graph_only(
    of_key: &FastMap<(&str, Shape), Vec<usize>>,
    keys: &[(GroupKey, Pending)],
) -> Vec<String> {
    let mut names: Vec<String> = of_key
        .iter()
        .filter(|(_, groups)| {
            let (mut sampled, mut in_graph) = (false, false);
            for &at in groups.iter() {
                sampled |= !keys[at].1.samples.is_empty();
                in_graph |= keys[at].1.in_graph;
            }
            in_graph && !sampled
        })
        .map(|((name, _), _)| name.to_string())
        .collect();
    names.sort();
    names.dedup();
    names
}

/// A stratum before borrowing: its own twins, typical duration and mean unprofiled time.
struct Own {
    twins: Option<Twins>,
    typical: f64,
    mean_time: Option<f64>,
}

/// A group's strata, cut from its unprofiled durations, each sample placed by its replayed
/// duration (`serialized`: where it is among the specs; without it the group is one stratum).
fn own_strata(
    unprofiled: &[f64],
    rows: &[Vec<Option<f64>>],
    serialized: Option<usize>,
    specs: usize,
) -> (Strata, Vec<Own>) {
    let strata = match serialized {
        Some(_) => Strata::of(unprofiled),
        None => Strata::default(),
    };
    let replayed = |row: &[Option<f64>]| serialized.and_then(|at| row[at]).unwrap_or(0.0);
    let own = (0..strata.count())
        .map(|s| {
            let in_s: Vec<&[Option<f64>]> = rows
                .iter()
                .map(Vec::as_slice)
                .filter(|r| strata.of_duration(replayed(r)) == s)
                .collect();
            let times: Vec<f64> = unprofiled
                .iter()
                .copied()
                .filter(|d| strata.of_duration(*d) == s)
                .collect();
            let typical = match times.is_empty() {
                false => middle(&times),
                true => middle(&in_s.iter().map(|r| replayed(r)).collect::<Vec<_>>()),
            };
            Own {
                twins: (!in_s.is_empty()).then(|| Twins::of_samples(&in_s, specs)),
                typical,
                mean_time: mean(&times),
            }
        })
        .collect();
    (strata, own)
}

/// The twins of the stratum nearest in duration to one lasting `typical` that has samples of its
/// own: of the same group (`at`) first, else of the key's other groups (`siblings`, its groups in
/// other regions); widened by how far the two durations lie apart. `None` when no launch of the
/// key was profiled.
fn nearest(
    siblings: &[usize],
    own: &[(Strata, Vec<Own>)],
    at: usize,
    typical: f64,
) -> Option<Twins> {
    let with_samples = |g: usize| {
        own[g]
            .1
            .iter()
            .filter(|o| o.twins.is_some())
            .map(move |o| (g, o))
    };
    let candidates: Vec<(usize, &Own)> = match with_samples(at).next() {
        Some(_) => with_samples(at).collect(),
        None => siblings.iter().flat_map(|g| with_samples(*g)).collect(),
    };
    let distance = |o: &Own| match (typical > 0.0, o.typical > 0.0) {
        (true, true) => (typical / o.typical).ln().abs(),
        _ => f64::INFINITY,
    };
    let (_, from) = candidates
        .into_iter()
        .min_by(|a, b| distance(a.1).total_cmp(&distance(b.1)))?;
    Some(from.twins.as_ref()?.widened(typical / from.typical))
}

/// The requested metrics among the counters' (and the trace's time metric, always), with units and
/// rollups as the CSV reader gives ncu's, the time metric labelled as the in-place time and the
/// counters' own duration kept beside it where they measured it.
fn metrics_found(
    plan: &AnalysisPlan,
    metrics: &[String],
    in_place_label: &str,
) -> (MetricsFound, TimeSpecs) {
    let mut found = MetricsFound::default();
    for request in &plan.requests {
        let is_time = request.name == plan.time_metric;
        if !metrics.contains(&request.name) && !is_time {
            found.missing.push(request.name.clone());
            continue;
        }
        found.specs.push(requested_spec(plan, &request.name));
        found.groups.push(request.group.clone());
        let label = crate::profiler::ncu::observe::labels::label(&request.name, &[]);
        found.labels.push(label);
    }
    if metrics.contains(&plan.time_metric) {
        let labels = (in_place_label, REPLAYED_LABEL);
        return with_serialized(found, &plan.time_metric, labels);
    }
    // No replayed duration among the counters: the time metric is the trace's alone.
    let at = found.specs.iter().position(|s| s.name == plan.time_metric);
    if let Some(at) = at {
        found.labels[at] = Some(in_place_label.to_string());
    }
    found.has_time = true;
    let time = TimeSpecs {
        in_place: at,
        serialized: None,
    };
    (found, time)
}

/// Per spec: the counters' metric it reads and the factor to its base unit (`None`: the in-place
/// time, which is the trace's).
fn columns(
    found: &MetricsFound,
    time: TimeSpecs,
    metrics: &[String],
    time_metric: &str,
) -> Vec<Option<(usize, f64)>> {
    (0..found.specs.len())
        .map(|at| {
            let name = match (Some(at) == time.in_place, Some(at) == time.serialized) {
                (true, _) => return None,
                (_, true) => time_metric,
                _ => found.specs[at].name.as_str(),
            };
            let factor = units::normalize(&units::base_unit_of(name)).factor;
            Some((metrics.iter().position(|m| m == name)?, factor))
        })
        .collect()
}

fn mean(values: &[f64]) -> Option<f64> {
    (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
}

fn middle(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    sorted.get(sorted.len() / 2).copied().unwrap_or(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One key in one region at two sizes: 48 and 73 µs unprofiled, samples replayed at about
    /// the same: each goes to its own stratum by its replayed duration (spec 1).
    #[test]
    fn samples_go_to_the_stratum_of_their_replayed_duration() {
        let unprofiled = [48.0, 73.0, 48.5, 72.5, 47.8, 73.4];
        let rows = vec![
            vec![Some(20.0), Some(49.0)],
            vec![Some(40.0), Some(74.0)],
            vec![Some(22.0), Some(48.0)],
        ];
        let (strata, own) = own_strata(&unprofiled, &rows, Some(1), 2);
        assert_eq!(strata.count(), 2);
        let sm = |s: usize| own[s].twins.as_ref().unwrap().cell(0);
        assert_eq!((sm(0), sm(1)), (Cell::Num(21.0), Cell::Num(40.0)));
        assert_eq!(own[0].mean_time, Some((48.0 + 48.5 + 47.8) / 3.0));
        // Without a replayed duration the samples cannot be placed: one stratum, pooled.
        let (strata, own) = own_strata(&unprofiled, &rows, None, 2);
        assert!(strata.is_one());
        assert_eq!(
            own[0].twins.as_ref().unwrap().cell(0),
            Cell::Num(82.0 / 3.0)
        );
    }

    /// A group with no sample takes the nearest stratum in duration of its key in other regions,
    /// its spread widened; a key never profiled has none.
    #[test]
    fn a_group_without_samples_borrows_the_nearest_of_its_key() {
        let shape = Shape {
            grid: [2, 66, 1],
            block: [384, 1, 1],
            registers: 168,
            shared_static: 0,
            shared_dynamic: 0,
        };
        let group = |region: &str, unprofiled: Vec<f64>, samples: Vec<Vec<Option<f64>>>| {
            let key = ("_Z4gemm".to_string(), shape, region.to_string());
            (
                key,
                Pending {
                    unprofiled,
                    in_graph: false,
                    samples,
                },
            )
        };
        let keys = [
            group(
                "attn",
                vec![48.0, 48.0],
                vec![vec![Some(20.0), Some(48.0)], vec![Some(22.0), Some(48.0)]],
            ),
            group(
                "mlp",
                vec![73.0, 73.0],
                vec![vec![Some(40.0), Some(73.0)], vec![Some(40.0), Some(73.0)]],
            ),
            group("warm-up", vec![70.0], Vec::new()),
        ];
        let own: Vec<_> = keys
            .iter()
            .map(|(_, p)| own_strata(&p.unprofiled, &p.samples, Some(1), 2))
            .collect();
        let borrowed = nearest(&[0, 1, 2], &own, 2, 70.0).unwrap();
        assert_eq!(
            borrowed.cell(0),
            Cell::Num(40.0),
            "mlp's, the nearest in duration"
        );
        let spread = borrowed.spread_of_specs()[0].unwrap();
        // No spread of its own; the mean (40) times |70/73 − 1| on top.
        let widened = 40.0 * (73.0 / 70.0 - 1.0);
        assert!((spread.sd.unwrap() - widened).abs() < 1e-9, "{spread:?}");
        let alone = [group("warm-up", vec![70.0], Vec::new())];
        let own_alone = vec![own_strata(&alone[0].1.unprofiled, &[], Some(1), 2)];
        assert!(nearest(&[0], &own_alone, 0, 70.0).is_none());
    }
}
