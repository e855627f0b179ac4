//! ncu's report files (`.ncu-rep`, plain or gzip) as a source of observations, read natively (no ncu
//! needed): each result becomes the observation the CSV pages give for it (same scope, region paths,
//! marks, renames and metric values in the same base units), plus the NVTX range instance ids the CSV
//! cells drop, and its rule results feed the same per-region advice as the details page.
//!
//! How a result maps to what the CSV reader (`export::raw`) makes of a row: the push/pop cell lists
//! every thread with an open range, in file order, each thread's domains in file order; so does the
//! record's NVTX state, and the same grouping by domain (`export::nvtx_cell::stacks_by_domain`)
//! follows (`paths.rs`). Units, which the file does not store, come from the metric names
//! ([`units::base_unit_of`]) and go through the same normalisation as the CSV's units row.
//!
//! Floor: profiler (see `crate::profiler`): imports run, process, analysis, insights, report,
//! config, region and the ground floor, and its own profiler's rooms.

use std::path::PathBuf;
use std::sync::Mutex;

use crate::analysis::{analyze, AnalysisPlan, MetricsFound, Observations, Reading, RunContext};
use crate::error::{Error, Result};
use crate::parallel;
use crate::region::{KernelFilter, KeySamples, MetricSpec, Observation};
use crate::report::model::{DeepWorker, Report};

use super::launch_durations::{FirstRead, LaunchDurations};
use super::read_plan::ReadPlan;
use super::source::ncu_reading;
use super::strata::STRATUM_IDS;
use crate::profiler::ncu::readers::export::details::AdviceIndex;
use crate::profiler::ncu::readers::report_file::{ReportFile, ReportFileError, SessionInfo};
use crate::profiler::ncu::readers::siblings::worker_siblings;
use crate::profiler::ncu::readers::{rollup, units};

mod deep_join;
mod paths;
mod provenance;
mod reader;
mod sampling_info;
pub(crate) mod split_keys;
pub(crate) mod twins;
pub(crate) mod unreadable;

use reader::{FileReader, FileStrata};
use sampling_info::sampling_info;
use twins::{LaunchOrdinals, TwinIndex};

/// One capture's report file and the launcher rank that made it, when known.
#[derive(Debug, Clone, PartialEq)]
pub struct ReportInput {
    pub path: PathBuf,
    pub rank: Option<u32>,
    /// The deep pass of a sampled capture (`path` is then its timing pass): its results give every
    /// result of `path` with the same launch key its deep metrics.
    pub deep: Option<PathBuf>,
}

/// Report files whose metrics are known, ready to read.
pub struct ReportSource<'p> {
    plan: &'p AnalysisPlan,
    inputs: Vec<ReportInput>,
    found: MetricsFound,
    /// The unit factor of each spec (same order), and of the time metric.
    factors: Vec<f64>,
    /// Per spec: whether its values come from the deep pass of a sampled capture.
    from_deep: Vec<bool>,
    time_factor: f64,
    context: RunContext,
    /// Raw `--nvtx-include` expressions, for the trailing-`/` hint when nothing ran in a range.
    nvtx_include: Vec<String>,
    /// The largest block of a report file read (`pipeline.ncu.max_block_mib`), in bytes.
    max_block: u64,
    /// Deep passes' report files left out because they cannot be read, each with its note: their
    /// captures are read from their timing passes alone.
    left_out: Vec<(PathBuf, String)>,
    /// The timing pass's launches as the run's planning read them, where it did.
    first_read: FirstRead,
}

impl<'p> ReportSource<'p> {
    /// Opens every report and reads the metric names of its first result: ncu collects the same
    /// sections and metrics for every result of a run, so those are the metrics the report holds (the
    /// raw page's columns).
    pub fn open(
        plan: &'p AnalysisPlan,
        inputs: &[ReportInput],
        context: &RunContext,
        nvtx_include: &[String],
        max_block: u64,
    ) -> Result<ReportSource<'p>> {
        let mut names: Vec<Vec<String>> = Vec::with_capacity(inputs.len());
        let mut timing_names: Vec<String> = Vec::new();
        let mut labels: Vec<(String, String)> = Vec::new();
        let mut left_out = Vec::new();
        for input in inputs {
            let mut file_names = first_result_metrics(&input.path, &mut labels, max_block)?;
            timing_names.extend(file_names.iter().cloned());
            let deep = input.deep.as_ref().filter(|d| d.is_file());
            let error = deep.and_then(|d| unreadable::unreadable(d, max_block));
            if let (Some(deep), Some(error)) = (deep, &error) {
                left_out.push((deep.clone(), unreadable::leave_out(deep, error)));
            }
            if let Some(deep) = deep.filter(|_| error.is_none()) {
                file_names.extend(first_result_metrics(deep, &mut labels, max_block)?);
                file_names.sort_unstable();
                file_names.dedup();
            }
            names.push(file_names);
        }
        if inputs.is_empty() {
            return Err(Error::Usage("no report file to read".into()));
        }
        let with_results: Vec<(usize, &Vec<String>)> = names
            .iter()
            .enumerate()
            .filter(|(_, n)| !n.is_empty())
            .collect();
        let reference: &[String] = with_results.first().map_or(&[], |(_, n)| n.as_slice());
        let requested = |n: &[String]| -> Vec<bool> {
            plan.requests.iter().map(|r| n.contains(&r.name)).collect()
        };
        for (at, n) in with_results.iter().skip(1) {
            if requested(n) != requested(reference) {
                return Err(Error::Usage(format!(
                    "{} and {} hold different metrics; profile every rank with the same sections and metrics",
                    inputs[with_results[0].0].path.display(),
                    inputs[*at].path.display()
                )));
            }
        }
        let (found, factors) = metrics_found(plan, reference, &labels);
        let found = MetricsFound {
            has_time: names.iter().all(|n| n.contains(&plan.time_metric)),
            ..found
        };
        let sampled = inputs.iter().any(|i| i.deep.is_some());
        let from_deep = found
            .specs
            .iter()
            .map(|s| sampled && !timing_names.contains(&s.name))
            .collect();
        Ok(ReportSource {
            plan,
            inputs: inputs.to_vec(),
            found,
            factors,
            from_deep,
            time_factor: units::normalize(&units::base_unit_of(&plan.time_metric)).factor,
            context: context.clone(),
            nvtx_include: nvtx_include.to_vec(),
            max_block,
            left_out,
            first_read: FirstRead::default(),
        })
    }

    /// The same source, taking a timing report's launches from `first_read` where planning read
    /// that file, rather than reading it again.
    pub(crate) fn with_first_read(self, first_read: FirstRead) -> Self {
        ReportSource { first_read, ..self }
    }
}

/// The requested metrics among `names`, with units and rollups as the CSV reader gives them, ncu's
/// labels (the file's sections' where given), and the factor that brings each value to its base unit.
fn metrics_found(
    plan: &AnalysisPlan,
    names: &[String],
    labels: &[(String, String)],
) -> (MetricsFound, Vec<f64>) {
    let mut found = MetricsFound::default();
    let mut factors = Vec::new();
    for request in &plan.requests {
        if !names.contains(&request.name) {
            found.missing.push(request.name.clone());
            continue;
        }
        let norm = units::normalize(&units::base_unit_of(&request.name));
        let rollup = plan
            .rollups
            .get(&request.name)
            .copied()
            .unwrap_or_else(|| rollup::infer(&request.name, &norm.unit));
        found.specs.push(MetricSpec {
            name: request.name.clone(),
            unit: norm.unit,
            rollup,
        });
        found.groups.push(request.group.clone());
        found
            .labels
            .push(super::labels::label(&request.name, labels));
        factors.push(norm.factor);
    }
    (found, factors)
}

/// Stops a pass after the first result.
enum Peek {
    Done,
    File(ReportFileError),
}

impl From<ReportFileError> for Peek {
    fn from(e: ReportFileError) -> Peek {
        Peek::File(e)
    }
}

/// The metric names of the report's first result (none when it holds no result); the labels its
/// sections give are added to `labels` (a name already there keeps its label).
fn first_result_metrics(
    path: &std::path::Path,
    labels: &mut Vec<(String, String)>,
    max_block: u64,
) -> Result<Vec<String>> {
    let mut report = ReportFile::open_limited(path, max_block)?;
    let mut names = Vec::new();
    let pass = report.for_each_result(|r| {
        for m in r.metrics() {
            names.push(m.map_err(|e| r.err(e))?.name.to_owned());
        }
        for (name, label) in r.section_labels()? {
            if !labels.iter().any(|(n, _)| *n == name) {
                labels.push((name, label));
            }
        }
        Err(Peek::Done)
    });
    match pass {
        Ok(_) | Err(Peek::Done) => Ok(names),
        Err(Peek::File(e)) => Err(e.into()),
    }
}

impl Observations for ReportSource<'_> {
    fn metrics(&self) -> &MetricsFound {
        &self.found
    }

    /// Reads each file on its own thread (decompressing and decoding one file is sequential; up to
    /// `threads` files at once, 0: one per core) into its own state and advice, then folds them
    /// together in input order, so the report does not depend on the thread count.
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
        let inputs: Vec<(u64, &ReportInput)> = (0..).zip(self.inputs.iter()).collect();
        let read = parallel::map(inputs, threads, |(ordinal, input)| {
            let base = ordinal * twins::KEY_BASE_STEP;
            let twins = match &input.deep {
                Some(deep) => Some(self.twins(deep, input.rank, filter, base)?),
                None => None,
            };
            let mut state = init();
            let mut advice = AdviceIndex::default();
            let strata = self.strata(input, twins.as_ref(), ordinal)?;
            let mut reader = FileReader::new(&self, input.rank, filter, twins.as_ref());
            reader.with_strata(&strata);
            let mut report = ReportFile::open_limited(&input.path, self.max_block)?;
            report.for_each_result(|r| {
                reader.result(r, &mut |obs| visit(&mut state, obs), &mut advice)
            })?;
            let (counts, nvtx, coverage) = (reader.counts, reader.has_nvtx, reader.coverage);
            let other_stratum = reader.other_stratum;
            let joined = twins.map(|twins| self.joined(twins, coverage, (&strata, other_stratum)));
            let session = report.session().clone();
            Ok::<_, Error>((state, advice, counts, nvtx, joined, session))
        });
        let mut state = None;
        let mut advice = AdviceIndex::default();
        let mut counts = Vec::with_capacity(read.len());
        let mut has_ranges = false;
        let mut joined = Vec::new();
        let mut sessions = Vec::new();
        for file in read {
            let (part, part_advice, part_counts, part_nvtx, part_joined, session) = file?;
            sessions.push(session);
            match state.as_mut() {
                Some(state) => merge(state, part),
                None => state = Some(part),
            }
            advice.merge(part_advice);
            counts.push(part_counts);
            has_ranges |= part_nvtx;
            joined.extend(part_joined);
        }
        let sources = self
            .inputs
            .iter()
            .map(|i| i.path.display().to_string())
            .collect();
        let mut reading = ncu_reading(
            &self.context,
            &counts,
            has_ranges,
            sources,
            &self.nvtx_include,
            advice,
        );
        provenance::apply(&sessions, &mut reading);
        if self.from_deep.iter().any(|d| *d) || !joined.is_empty() {
            let (sampling, notes) = sampling_info(&self, &joined);
            reading.sampling = Some(sampling);
            reading.notes.extend(notes);
            reading
                .notes
                .extend(joined.iter().flat_map(|j| j.unread.iter().cloned()));
            reading.key_samples = joined
                .into_iter()
                .map(|j| j.samples)
                .reduce(|mut all, one| {
                    all.keys.extend(one.keys);
                    all
                });
        }
        Ok((state.unwrap_or_else(init), reading))
    }
}

impl ReportSource<'_> {
    /// The strata of the keys that ran different work in a sampled capture's timing pass, cut from
    /// the file's own durations (none for a capture read alone).
    fn strata(
        &self,
        input: &ReportInput,
        twins: Option<&TwinIndex>,
        ordinal: u64,
    ) -> Result<FileStrata> {
        let Some(index) = twins else {
            return Ok(FileStrata::default());
        };
        let read;
        let durations = match self.first_read.of(&input.path) {
            Some(planned) => planned,
            None => {
                read = launch_durations(self.plan, &input.path, self.max_block, None)?;
                &read
            }
        };
        let skipped = LaunchOrdinals::of_run(&self.context).skipped();
        Ok(reader::file_strata(
            index,
            durations,
            skipped,
            STRATUM_IDS | (ordinal << 40),
        ))
    }

    /// What joining one sampled capture found: its deep index, its results per
    /// coverage, its strata and the results that took another stratum's samples.
    fn joined(
        &self,
        index: TwinIndex,
        coverage: [u64; 4],
        (strata, other_stratum): (&FileStrata, u64),
    ) -> Joined {
        let mut samples = index.samples(self.from_deep.clone(), self.timed_in_both());
        samples.keys.extend(strata.spreads());
        Joined {
            workers: index.workers.clone(),
            unread: index.unread.clone(),
            deep_results: index.results,
            keys: index.key_count() as u64,
            topup_left_out: index.topup_left_out,
            coverage,
            samples,
            stratified_keys: strata.len(),
            other_stratum_results: other_stratum,
        }
    }
}

/// What joining one sampled capture found.
struct Joined {
    /// The deep pass's workers, where it ran as several.
    workers: Vec<DeepWorker>,
    deep_results: u64,
    /// Distinct launch keys with deep results.
    keys: u64,
    /// Whether a top-up pass's file was left out.
    topup_left_out: bool,
    /// Why report files of the deep pass were left out (each could not be read).
    unread: Vec<String>,
    /// Timing results measured, estimated, unmatched.
    coverage: [u64; 4],
    /// The deep samples of each launch key (and stratum), for the intervals.
    samples: KeySamples,
    /// Keys split into strata (per process), and results that took another stratum's samples.
    stratified_keys: u64,
    other_stratum_results: u64,
}

impl ReportSource<'_> {
    /// The time metric's spec when both passes of a sampled capture timed launches with it (ncu's
    /// serialized replay both times), so their durations of the same launches compare.
    fn timed_in_both(&self) -> Option<usize> {
        let at = self
            .found
            .specs
            .iter()
            .position(|s| s.name == self.plan.time_metric)?;
        (!self.from_deep[at]).then_some(at)
    }
}

/// Each launch key's durations in a report file (`path`), for the adaptive deep samples: a timing
/// pass's, or (`untimed`: the duration of a result without the time metric) a deep pass's keys.
pub(crate) fn launch_durations(
    plan: &AnalysisPlan,
    path: &std::path::Path,
    max_block: u64,
    untimed: Option<f64>,
) -> Result<LaunchDurations> {
    let input = ReportInput {
        path: path.to_path_buf(),
        rank: None,
        deep: None,
    };
    let source = ReportSource::open(plan, &[input], &RunContext::default(), &[], max_block)?;
    let filter = Mutex::new(plan.filter.clone());
    let mut reader = FileReader::new(&source, None, &filter, None);
    let mut durations = LaunchDurations::default();
    ReportFile::open_limited(path, max_block)?
        .for_each_result(|r| reader.timed_launch(r, &mut durations, untimed))?;
    Ok(durations)
}

/// The deep passes' files, each followed by its other workers' where they ran, so the report can
/// say which file played which part.
fn deep_files(inputs: &[ReportInput]) -> Vec<String> {
    inputs
        .iter()
        .filter_map(|i| i.deep.as_deref())
        .flat_map(|d| std::iter::once(d.to_path_buf()).chain(worker_siblings(d)))
        .map(|p| p.display().to_string())
        .collect()
}

/// The report of one or more captures' report files, under a checked plan.
pub fn analyze_report_files(
    plan: &ReadPlan<'_>,
    inputs: &[ReportInput],
    context: &RunContext,
) -> Result<Report> {
    let source = ReportSource::open(
        plan.analysis,
        inputs,
        context,
        plan.nvtx_include,
        plan.max_block,
    )?
    .with_first_read(plan.first_read.clone());
    let mut report = analyze(plan.analysis, source, context)?;
    super::hints::add_hints(&mut report);
    Ok(report)
}

/// What report.json's `sampling.engine` says of deep metrics from a deep pass under ncu.
pub const NCU_ENGINE: &str = "ncu";

/// The note a sampled run gets when a pass it ended once covered left launches without a twin: the
/// count assumes the second run launches what the first did, and these say it did not.
/// What a trace-timed sampled reading takes from its deep pass's report file: the devices and the
/// driver (a trace records neither), and the ncu that measured every deep metric, as the
/// `deep_pass` setting (the reading's own profiler is the trace's).
pub(crate) fn deep_pass_provenance(session: &SessionInfo, reading: &mut Reading) {
    let ncu = provenance::platform_and_ncu(std::slice::from_ref(session), reading);
    if let Some(version) = ncu {
        reading
            .profiler
            .settings
            .insert("deep_pass".to_string(), format!("ncu {version}"));
    }
}

/// A note on results whose names `min_time_share` left out of the deep pass (`None`: none were).
pub(crate) fn not_measured_note(not_measured: u64) -> Option<String> {
    (not_measured > 0).then(|| format!(
        "{not_measured} result(s) were left out of the deep pass by pipeline.ncu.sampling.min_time_share (their kernel's launch keys were below that share of every region they ran in): they keep their times, and their deep metrics are not measured (— in the tables, `not measured` in each region's coverage), never estimated. Profile with min_time_share=0 to measure them."
    ))
}

/// A note on results left without a twin by a pass ended once covered (`None`: none were).
pub(crate) fn stopped_pass_note(stopped: bool, unmatched: u64) -> Option<String> {
    (stopped && unmatched > 0).then(|| format!(
        "{unmatched} result(s) had no twin although the deep pass was ended once its count of results was in: the run under ncu launched kernels the first pass had not seen, which count too. Profile again with pipeline.ncu.sampling.stop_when_covered=false to run the workload to its end."
    ))
}
