//! Trace files as a source of observations: every traced kernel in the requested regions, with its
//! in-place time and the regions [`super::attribute`] gives it, one scope per process and device.
//! `regions.include` / `regions.exclude` select kernels as ncu's NVTX filter would (a kernel counts
//! when a push/pop range the pattern names is open at its launch), since no ncu ran to filter them.
//!
//! Floor: profiler (see `crate::profiler`): imports run, process, analysis, insights, report,
//! config, region and the ground floor, and its own profiler's rooms.

use std::sync::Mutex;

use crate::analysis::{
    analyze, join_reasons, AdaptiveRecord, AnalysisPlan, MetricsFound, Observations, RankRun,
    Reading, RunContext,
};
use crate::config::{Config, PushPopScope as ConfigScope};
use crate::error::{Error, Result};
use crate::parallel;
use crate::region::{Coverage, KernelFilter, Observation, RequestedRegions, ScopeKey};
use crate::report::model::{ProfilerInfo, Report, Sampling};

mod analyze;
mod counts;
mod from_ncu;
mod in_process;
mod notes;
pub mod ranks;

use super::attribute::{attribute, Attributed, PerRegions, PushPopScope, TooMany};
use super::deep::{self, DeepJoin};
use super::demangle::demangle;
use super::inprocess::{self, InProcessIndex};
use super::timeline::attach_timeline;
use crate::profiler::ncu::observe::adaptive;
use crate::profiler::ncu::observe::launch_durations::LaunchDurations;
use crate::profiler::ncu::observe::read_plan::ReadPlan;
use crate::profiler::ncu::observe::report_source;
use crate::profiler::ncu::observe::report_source::twins::{LaunchOrdinals, TwinIndex};
use crate::profiler::ncu::observe::strata;
use crate::profiler::ncu::readers::trace::{self as file, ProcessTrace, TraceInput};
pub use analyze::{analyze_traces, scope_of};
use counts::Counts;
use from_ncu::FromNcu;

/// What report.json's `time_source` setting says of a trace's times.
pub const TIME_SOURCE: &str = "in-place (CUPTI trace)";

/// How the time metric reads when its values are the trace's own (a time-only run).
pub const IN_PLACE_LABEL: &str = "Duration, in place (CUPTI trace)";

/// What a time-only trace's times are, for the sentence beside the time metric's name.
const TIME_MEASURED: &str =
    "each kernel's end − start as CUPTI traced it in place (the workload ran unprofiled)";

/// The sampled run that adds deep metrics to the trace's times.
const DEEP_PASS: &str = "`--config ncu/sampled pipeline.ncu.timing=trace`";

/// One run's trace files, with what decides which kernels count. Each trace is read when its turn
/// comes and dropped once its kernels are handed over, so a merge of many ranks holds one trace per
/// reader thread and one open file per reader thread, never all of them.
pub struct TraceSource<'p> {
    plan: &'p AnalysisPlan,
    inputs: Vec<TraceInput>,
    found: MetricsFound,
    /// Where a sampled reading keeps the in-place and the serialized duration among its specs.
    time_specs: deep::TimeSpecs,
    scope: PushPopScope,
    exclude: RequestedRegions,
    sampled: Option<Sampled<'p>>,
    /// The traces' own deep counters (the in-process engine), where they carry some.
    inprocess: Option<InProcessIndex>,
    /// Where an in-process reading's kernels its counters could not measure (CUDA graph node
    /// kernels) take the values of ncu's deep pass; `None` without both.
    from_ncu: Option<FromNcu>,
}

/// A sampled run's deep pass, when the trace times one.
pub struct Sampled<'p> {
    /// `None` when the deep pass wrote no report file.
    pub deep: Option<DeepJoin<'p>>,
    /// The deep passes' report files, where they were expected (one per rank that ran its own).
    pub paths: Vec<std::path::PathBuf>,
    /// A note on each of them left out because it cannot be read.
    pub unread: Vec<String>,
    /// The ranks whose own deep results these are (`run.json`'s `deep_ranks`); `None`: the run
    /// chose no ranks, and every process's deep metrics count as its own.
    pub deep_ranks: Option<Vec<u32>>,
    /// Deep results per distinct launch (`--launch-count`).
    pub launch_count: Option<u32>,
    /// Each trace's count of launches per key starts here: none seen yet, the launches the deep
    /// pass skipped first (`--launch-skip`) and the names it was limited to (`--kernel-name`).
    pub(crate) ordinals: LaunchOrdinals,
    /// How an adaptive run sized its deep samples (`run.json`).
    pub adaptive: Option<AdaptiveRecord>,
    /// Whether the deep pass was ended once covered (`run.json`).
    pub stopped_when_covered: bool,
    /// Whether the traces carry in-process counters beside the deep pass (run.json's
    /// `deep_engine`), which then measured only what they could not: CUDA graph kernels.
    pub beside_counters: bool,
}

impl<'p> TraceSource<'p> {
    /// The traces of `inputs`, read later ([`Observations::read`]). `exclude` holds
    /// `regions.exclude` as level matchers. Their in-process counters' index is taken from
    /// `kept` where planning built it of the same traces, and built here otherwise.
    pub fn open(
        plan: &'p AnalysisPlan,
        inputs: &[TraceInput],
        (scope, exclude): (PushPopScope, RequestedRegions),
        sampled: Option<Sampled<'p>>,
        kept: &inprocess::KeptIndex,
    ) -> Result<TraceSource<'p>> {
        Self::open_with(plan, inputs, (scope, exclude), sampled, Some(kept))
    }

    /// The traces of `inputs` for their launches alone (a sampled run's deep pass planned from
    /// them): no in-process deep counters are looked for, as a run with a deep pass under ncu
    /// collects none, so each trace is read once to plan rather than twice.
    pub(crate) fn open_for_launches(
        plan: &'p AnalysisPlan,
        inputs: &[TraceInput],
        scope: PushPopScope,
        exclude: RequestedRegions,
    ) -> Result<TraceSource<'p>> {
        Self::open_with(plan, inputs, (scope, exclude), None, None)
    }

    /// `indexed`: where the counters' index may already be; `None`: no counters looked for.
    fn open_with(
        plan: &'p AnalysisPlan,
        inputs: &[TraceInput],
        (scope, exclude): (PushPopScope, RequestedRegions),
        sampled: Option<Sampled<'p>>,
        indexed: Option<&inprocess::KeptIndex>,
    ) -> Result<TraceSource<'p>> {
        let mut found = MetricsFound {
            has_time: true,
            ..MetricsFound::default()
        };
        // The time metric is the one a trace has: each kernel's in-place duration, in ns.
        for request in &plan.requests {
            if request.name != plan.time_metric {
                found.missing.push(request.name.clone());
                continue;
            }
            found.specs.push(deep::requested_spec(plan, &request.name));
            found.groups.push(request.group.clone());
            found.labels.push(Some(IN_PLACE_LABEL.to_string()));
        }
        let mut time_specs = deep::TimeSpecs::default();
        let ncu_specs = sampled
            .as_ref()
            .and_then(|s| s.deep.as_ref())
            .map(|deep| deep.metrics(&plan.time_metric, IN_PLACE_LABEL));
        if let Some(ncu) = &ncu_specs {
            (found, time_specs) = ncu.clone();
        }
        let counters = indexed.filter(|_| sampled.as_ref().is_none_or(|s| s.beside_counters));
        let mut source = TraceSource {
            plan,
            inputs: inputs.to_vec(),
            found,
            time_specs,
            scope,
            exclude,
            sampled,
            inprocess: None,
            from_ncu: None,
        };
        if let Some(kept) = counters {
            source.inprocess = match kept.take(inputs) {
                Some(index) => Some(index),
                None => source.in_process_index()?,
            };
        }
        if let Some(index) = &source.inprocess {
            (source.found, source.time_specs) = (index.found.clone(), index.time);
            source.from_ncu = ncu_specs.map(|ncu| FromNcu::new(&index.found, ncu));
        }
        Ok(source)
    }

    /// The counters' index of the traces, if they carry counters: what planning keeps for the
    /// report ([`inprocess::KeptIndex`]).
    pub(crate) fn into_index(self) -> Option<InProcessIndex> {
        self.inprocess
    }

    /// Whether a kernel is in the requested regions: some push/pop range an include pattern names is
    /// open (every kernel when none is given), and none an exclude pattern names.
    fn wanted(&self, a: &Attributed<'_>) -> bool {
        let prefixes = || {
            a.stacks
                .iter()
                .flat_map(|path| (1..=path.len()).map(move |depth| &path[..depth]))
        };
        let included = self.plan.requested.is_empty()
            || prefixes().any(|prefix| self.plan.requested.names(prefix));
        included
            && (self.exclude.is_empty() || !prefixes().any(|prefix| self.exclude.names(prefix)))
    }
}

impl TraceSource<'_> {
    /// Each launch key's in-place durations, over the kernels in the requested regions (the ones
    /// the report counts), for the adaptive deep samples: the same reading that tells the
    /// processes apart for the deep ranks ([`TraceSource::process_launches`]).
    pub(crate) fn launch_durations(&self) -> Result<LaunchDurations> {
        self.process_launches().map(|(_, durations)| durations)
    }

    /// Every kernel of `trace` with its regions, in launch order; a kernel inside more ranges than
    /// `regions.max_depth` refuses the trace, in the words the CSV reader uses for a deep stack.
    fn attribute(&self, trace: &ProcessTrace, each: impl FnMut(&Attributed<'_>)) -> Result<()> {
        let limit = self.plan.max_depth;
        attribute(trace, self.scope, &self.plan.renames, limit, each).map_err(|refused| {
            let path = trace.path.clone();
            match refused {
                TooMany::Levels { depth, .. } => Error::RegionsTooDeep {
                    depth,
                    limit,
                    sources: path.display().to_string(),
                },
                TooMany::Marks { count, at } => file::TraceError::TooMany {
                    path,
                    at,
                    count,
                    what: "start/end ranges",
                    limit,
                }
                .into(),
                TooMany::Domains { count, at } => file::TraceError::TooMany {
                    path,
                    at,
                    count,
                    what: "NVTX domains with a push/pop range",
                    limit,
                }
                .into(),
            }
        })
    }
}

/// Whether the kernels of one set of regions are wanted, worked out once per set.
type Wanted = PerRegions<bool>;

impl Observations for TraceSource<'_> {
    fn metrics(&self) -> &MetricsFound {
        &self.found
    }

    /// Reads each process's trace on its own thread, folded in input order a batch at a time: at
    /// most a batch of traces and of their states is held at once, however many ranks are merged.
    fn read<S, I, V, M>(
        self,
        threads: usize,
        filter: &Mutex<KernelFilter>,
        init: I,
        visit: V,
        mut merge: M,
    ) -> Result<(S, Reading)>
    where
        S: Send,
        I: Fn() -> S + Sync,
        V: Fn(&mut S, &Observation<'_>) + Sync,
        M: FnMut(&mut S, S),
    {
        let (index, deep) = self.deep_index(filter)?;
        let (mut state, mut total) = (None, Counts::default());
        let batch_size = parallel::thread_count(threads) * 2;
        for (b, batch) in self.inputs.chunks(batch_size).enumerate() {
            let numbered = batch
                .iter()
                .enumerate()
                .map(|(i, t)| (b * batch_size + i, t));
            let parts = parallel::map(numbered.collect(), threads, |(at, input)| {
                let mut state = init();
                let deep = index.as_ref().map(|i| (i, at));
                let counts = self.read_one(input, deep, |obs| visit(&mut state, obs));
                counts.map(|counts| (state, counts))
            });
            for part in parts {
                let (part, counts) = part?;
                match state.as_mut() {
                    Some(state) => merge(state, part),
                    None => state = Some(part),
                }
                total.add(counts);
            }
        }
        let mut reading = self.reading(&total, &deep);
        if let Some(session) = index.as_ref().and_then(|i| i.session.as_ref()) {
            report_source::deep_pass_provenance(session, &mut reading);
        }
        let specs = (self.found.specs.len(), self.time_specs);
        reading.key_samples = match (&self.inprocess, &self.from_ncu) {
            (Some(counters), from_ncu) => {
                let mut samples = counters.key_samples();
                if let (Some(from), Some(index)) = (from_ncu, &index) {
                    let ncu = deep::key_samples(index, from.specs, from.time, &total.strata);
                    let remapped = ncu.keys.into_iter().map(|(k, s)| (k, from.remap(&s, None)));
                    samples.keys.extend(remapped);
                }
                Some(samples)
            }
            (None, _) => index.map(|i| deep::key_samples(&i, specs.0, specs.1, &total.strata)),
        };
        Ok((state.unwrap_or_else(init), reading))
    }
}

/// The scope of a trace's kernels on `device`, ranked by the run record's rank (one profile-run
/// per rank) else by the one the launcher gave the process (one profile-run around the launcher).
fn trace_scope(trace: &ProcessTrace, device: String, rank: Option<u32>) -> ScopeKey {
    ScopeKey {
        host: trace.host.clone(),
        process_id: trace.pid.to_string(),
        process_name: trace.process_name.clone(),
        device,
        rank: rank
            .or(trace.rank)
            .map(|r| r.to_string())
            .unwrap_or_default(),
    }
}

impl TraceSource<'_> {
    /// One process's trace, read, handed over kernel by kernel to `visit` and dropped; `deep`: a
    /// sampled run's deep results and the trace's place among the inputs.
    fn read_one(
        &self,
        input: &TraceInput,
        deep: Option<(&TwinIndex, usize)>,
        mut visit: impl FnMut(&Observation<'_>),
    ) -> Result<Counts> {
        let trace = file::read_input(input)?;
        let index = deep.map(|(index, _)| index);
        let mut counts = Counts::of(&trace);
        let mut ordinals = self
            .sampled
            .as_ref()
            .map(|s| s.ordinals.clone())
            .unwrap_or_default();
        let strata = self.strata(&trace, deep, ordinals.skipped())?;
        counts.strata = deep::strata_counts(&strata);
        let specs = (self.found.specs.len(), self.time_specs);
        let names: Vec<String> = trace.names.iter().map(|n| demangle(n)).collect();
        let mut scope = ScopeKey::default();
        let mut wanted = Wanted::default();
        let rank = input.rank.or(trace.rank);
        if let Some(rank) = rank {
            counts.ranks.insert(rank, trace.world_size);
        }
        let deep_ranks = self.sampled.as_ref().and_then(|s| s.deep_ranks.as_deref());
        let own = ranks::measures_itself(rank, deep_ranks);
        let mut own_counters = self
            .inprocess
            .as_ref()
            .map(|i| in_process::Join::new(i, &trace));
        self.attribute(&trace, |a| {
            if !*wanted.of(a, |a| self.wanted(a)) {
                return;
            }
            counts.results += 1;
            counts.unlaunched += u64::from(!a.launched);
            if a.stacks.iter().any(|s| !s.is_empty()) || !a.marks.is_empty() {
                counts.in_ranges += 1;
            }
            let launch = trace.shape(a.kernel);
            let mangled = &trace.names[launch.name];
            let time = a.kernel.duration_ns();
            let process = (trace.pid, Some(u64::from(a.kernel.device)));
            let mut twins = |specs| {
                deep::cells(
                    index.map(|i| ((i, &strata), &mut ordinals, &mut counts.strata)),
                    process,
                    (mangled, launch),
                    time,
                    specs,
                )
            };
            let (coverage, values, weight, key, time, start) = match &mut own_counters {
                Some(join) => {
                    // What the counters could not measure takes ncu's deep values, if it has some.
                    let from_ncu = || {
                        let from = self.from_ncu.as_ref()?;
                        from.joined(twins((from.specs, from.time)), time, a.kernel.start)
                    };
                    join.cells(a, mangled, launch, &mut counts.inprocess, from_ncu)
                }
                None => {
                    let (coverage, values, weight, key) = twins(specs);
                    (coverage, values, weight, key, time, Some(a.kernel.start))
                }
            };
            // A rank that ran no deep pass of its own measured none of its launches.
            let coverage = match coverage {
                Coverage::Measured if !own => Coverage::Estimated,
                other => other,
            };
            counts.coverage[coverage as usize] += 1;
            if let (Some(rank), true) = (rank, self.sampled.is_some()) {
                let with =
                    index.is_some() && matches!(coverage, Coverage::Measured | Coverage::Estimated);
                counts.rank_time.entry(rank).or_default()[usize::from(!with)] += time;
            }
            let device = a.kernel.device.to_string();
            if scope.device != device || scope.process_id.is_empty() {
                scope = trace_scope(&trace, device, input.rank);
            }
            visit(&Observation {
                scope: &scope,
                stacks: a.stacks,
                instances: Some(a.ids),
                marks: a.marks,
                call_stack: None,
                kernel: &names[launch.name],
                time: Some(time),
                start,
                weight,
                values: &values,
                coverage,
                key,
            });
        })?;
        Ok(counts)
    }

    /// The strata of `trace`'s launch keys among the deep pass's results (`deep`: its index and
    /// the trace's place among the inputs); none without a deep pass.
    fn strata(
        &self,
        trace: &ProcessTrace,
        deep: Option<(&TwinIndex, usize)>,
        skipped: u32,
    ) -> Result<deep::ProcessStrata> {
        let Some((index, at)) = deep else {
            return Ok(deep::ProcessStrata::default());
        };
        let launches = self.launches_by_key(trace, index)?;
        Ok(deep::process_strata(index, at, &launches, skipped))
    }

    /// The in-place durations of each key the deep pass has results of (by its place in the index),
    /// over the launches the deep pass could profile (those in the requested regions), in launch
    /// order: what its strata are cut from and its deep samples placed by.
    fn launches_by_key(
        &self,
        trace: &ProcessTrace,
        index: &TwinIndex,
    ) -> Result<crate::fast_map::FastMap<usize, Vec<f64>>> {
        let mut launches: crate::fast_map::FastMap<usize, Vec<f64>> = Default::default();
        let mut wanted = Wanted::default();
        self.attribute(trace, |a| {
            if !*wanted.of(a, |a| self.wanted(a)) {
                return;
            }
            let launch = trace.shape(a.kernel);
            if let Some((at, _)) = index.find(&trace.names[launch.name], &deep::shape(launch)) {
                launches.entry(at).or_default().push(a.kernel.duration_ns());
            }
        })?;
        Ok(launches)
    }

    /// A sampled run's deep results by launch key, and their counts.
    fn deep_index(
        &self,
        filter: &Mutex<KernelFilter>,
    ) -> Result<(Option<TwinIndex>, deep::DeepCounts)> {
        let deep = self.sampled.as_ref().and_then(|s| s.deep.as_ref());
        let Some(index) = deep.map(|d| d.index(filter)).transpose()? else {
            return Ok((None, deep::DeepCounts::default()));
        };
        let counts = deep::DeepCounts {
            results: index.results,
            keys: index.key_count() as u64,
            topup_left_out: index.topup_left_out,
            unread: index.unread.clone(),
            workers: index.workers.clone(),
        };
        Ok((Some(index), counts))
    }

    fn reading(&self, total: &Counts, deep: &deep::DeepCounts) -> Reading {
        let mut settings = std::collections::BTreeMap::new();
        settings.insert("time_source".to_string(), TIME_SOURCE.to_string());
        let scope = match self.scope {
            PushPopScope::Process => "process",
            PushPopScope::Thread => "thread",
        };
        settings.insert("nvtx_push_pop_scope".to_string(), scope.to_string());
        let mut notes = vec![notes::times_note(total)];
        let sampling = self.sampling(total, deep, &mut notes);
        let time_only = sampling.is_none();
        notes.extend(notes::left_out_notes(total, time_only));
        Reading {
            platform: Default::default(),
            results: total.results,
            results_in_ranges: total.in_ranges,
            has_ranges: total.has_ranges,
            profiler: ProfilerInfo {
                name: total.recorder.unwrap_or("cupti").into(),
                version: total.libcupti.clone().filter(|l| !l.is_empty()),
                settings,
            },
            sources: self
                .inputs
                .iter()
                .map(|t| t.path.display().to_string())
                .collect(),
            notes,
            no_results_hint: "Check that regions.include names push/pop ranges the program pushes, and that the workload launches kernels.".into(),
            no_ranges_hint: "The trace holds no NVTX range: mark regions with NVTX ranges (torch.cuda.nvtx.range_push/pop).".into(),
            no_call_stacks_hint: "a trace records no call stacks; profile with ncu (pipeline.ncu.timing=ncu) and pipeline.ncu.ncu_cli.call_stack=true".into(),
            missing_metrics_hint: if time_only {
                format!("A trace holds kernel times alone: run the deep pass for them ({DEEP_PASS}), or drop them from report.sections / report.metrics (`--config ncu/trace` asks for the time group alone).")
            } else {
                // The deep pass is ncu's: the same advice as for ncu's inputs.
                "Collect them with the profiler (sections, metrics), or drop them from report.sections / report.metrics.".into()
            },
            time_only,
            // Sampled or not, the time metric holds the trace's in-place times.
            time_measured: Some(TIME_MEASURED.to_string()),
            insights: Box::new(|_, _| Vec::new()),
            origin: "nvtx".into(),
            sampling,
            key_samples: None,
            partial: join_reasons(total.partial.iter()),
            ranks: total
                .ranks
                .iter()
                .map(|(&rank, &world_size)| RankRun {
                    rank,
                    world_size,
                    partial: None,
                    run: None,
                })
                .collect(),
        }
    }
}

impl TraceSource<'_> {
    /// A sampled reading's account of its deep pass, its notes added to `notes`; `None` for a
    /// time-only reading.
    fn sampling(
        &self,
        total: &Counts,
        deep: &deep::DeepCounts,
        notes: &mut Vec<String>,
    ) -> Option<Sampling> {
        if let Some(index) = &self.inprocess {
            notes.extend(inprocess::notes(index, total.coverage, &total.inprocess));
            let mut sampling = inprocess::sampling(index, total.coverage, &total.inprocess);
            // A deep pass beside the counters: ncu's, for the CUDA graph kernels.
            if let Some(sampled) = &self.sampled {
                if self.from_ncu.is_some() {
                    let beside = (sampled.paths.as_slice(), deep.results);
                    notes.extend(inprocess::ncu_beside(
                        &mut sampling,
                        beside,
                        &total.inprocess,
                    ));
                }
                notes.extend(sampled.unread.iter().cloned());
                notes.extend(deep.unread.iter().cloned());
            }
            return Some(sampling);
        }
        let sampled = self.sampled.as_ref()?;
        notes.extend(notes::sampled_notes(
            sampled,
            total,
            deep.results,
            &self.plan.time_metric,
        ));
        let (paths, launch_count) = (&sampled.paths, sampled.launch_count);
        let recorded = sampled.adaptive.as_ref();
        let mut sampling = deep::sampling(
            (&self.found, self.time_specs),
            paths,
            deep,
            (total.coverage, &total.strata),
            (launch_count, recorded),
        );
        sampling.ranks = ranks::coverage(&total.rank_time, sampled.deep_ranks.as_deref());
        notes.extend(adaptive::notes(recorded, deep.topup_left_out));
        notes.extend(strata::note(total.strata.keys, total.strata.borrowed));
        notes.extend(deep.unread.iter().cloned());
        Some(sampling)
    }
}
