//! ncu's report files (`.ncu-rep`, plain or gzip) as a source of observations, read natively (no ncu
//! needed): each result becomes the observation the CSV pages give for it (same scope, region paths,
//! marks, renames and metric values in the same base units), plus the NVTX range instance ids the CSV
//! cells drop, and its rule results feed the same per-region advice as the details page.
//!
//! How a result maps to what the CSV reader (`export::raw`) makes of a row: the push/pop cell lists
//! every thread with an open range, in file order, each thread's domains in file order; so do the
//! record's [`NvtxThread`]s, and the same grouping by domain (`export::nvtx_cell::stacks_by_domain`)
//! follows. Units, which the file does not store, come from the metric names
//! ([`units::base_unit_of`]) and go through the same normalisation as the CSV's units row.

use std::path::PathBuf;
use std::sync::Mutex;

use smallvec::SmallVec;

use crate::analysis::{AnalysisPlan, MetricsFound, Observations, Reading, RunContext};
use crate::error::Result;
use crate::fast_map::FastMap;
use crate::region::{Cell, KernelFilter, MetricSpec, Observation, RegionKind, Renames, ScopeKey};
use crate::report::model::Advice;

use super::export::details::AdviceIndex;
use super::export::nvtx_cell::{DEFAULT_DOMAIN, UNNAMED};
use super::export::raw::parse_number;
use super::report_file::{
    MetricValue, NvtxRange, NvtxState, ReportFile, ReportFileError, ResultKind, ResultRecord,
    RuleResult,
};
use super::source::{ncu_reading, ResultCounts};
use super::{rollup, units};

/// The metric the details page calls `Duration`: what advice weighs a result's findings by.
const DURATION: &str = "gpu__time_duration.sum";

/// One capture's report file and the launcher rank that made it, when known.
#[derive(Debug, Clone, PartialEq)]
pub struct ReportInput {
    pub path: PathBuf,
    pub rank: Option<u32>,
}

/// Report files whose metrics are known, ready to read.
pub struct ReportSource<'p> {
    plan: &'p AnalysisPlan,
    inputs: Vec<ReportInput>,
    found: MetricsFound,
    /// The unit factor of each spec (same order), and of the time metric.
    factors: Vec<f64>,
    time_factor: f64,
    context: RunContext,
    /// Raw `--nvtx-include` expressions, for the trailing-`/` hint when nothing ran in a range.
    nvtx_include: Vec<String>,
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
    ) -> Result<ReportSource<'p>> {
        let mut names: Vec<Vec<String>> = Vec::with_capacity(inputs.len());
        for input in inputs {
            names.push(first_result_metrics(&input.path)?);
        }
        if inputs.is_empty() {
            return Err(crate::error::Error::Usage("no report file to read".into()));
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
                return Err(crate::error::Error::Usage(format!(
                    "{} and {} hold different metrics; profile every rank with the same sections and metrics",
                    inputs[with_results[0].0].path.display(),
                    inputs[*at].path.display()
                )));
            }
        }
        let (found, factors) = metrics_found(plan, reference);
        let found = MetricsFound {
            has_time: names.iter().all(|n| n.contains(&plan.time_metric)),
            ..found
        };
        Ok(ReportSource {
            plan,
            inputs: inputs.to_vec(),
            found,
            factors,
            time_factor: units::normalize(&units::base_unit_of(&plan.time_metric)).factor,
            context: context.clone(),
            nvtx_include: nvtx_include.to_vec(),
        })
    }
}

/// The requested metrics among `names`, with units and rollups as the CSV reader gives them, and the
/// factor that brings each value to its base unit.
fn metrics_found(plan: &AnalysisPlan, names: &[String]) -> (MetricsFound, Vec<f64>) {
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

/// The metric names of the report's first result (none when it holds no result).
fn first_result_metrics(path: &std::path::Path) -> Result<Vec<String>> {
    let mut report = ReportFile::open(path)?;
    let mut names = Vec::new();
    let pass = report.for_each_result(|r| {
        for m in r.metrics() {
            names.push(m.map_err(|e| r.err(e))?.name.to_owned());
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

    /// Reads the files one after the other in input order on one thread (decompressing and decoding
    /// one file is sequential), into one state: `threads` and `merge` are not needed.
    fn read<S, I, V, M>(
        self,
        _threads: usize,
        filter: &Mutex<KernelFilter>,
        init: I,
        visit: V,
        _merge: M,
    ) -> Result<(S, Reading)>
    where
        S: Send,
        I: Fn() -> S + Sync,
        V: Fn(&mut S, &Observation<'_>) + Sync,
        M: FnMut(&mut S, S),
    {
        let mut state = init();
        let mut advice = AdviceIndex::default();
        let mut counts = Vec::with_capacity(self.inputs.len());
        let mut has_ranges = false;
        for input in &self.inputs {
            let mut reader = FileReader::new(&self, input.rank, filter);
            let mut report = ReportFile::open(&input.path)?;
            report.for_each_result(|r| {
                reader.result(r, &mut |obs| visit(&mut state, obs), &mut advice)
            })?;
            counts.push(reader.counts);
            has_ranges |= reader.has_nvtx;
        }
        let sources = self
            .inputs
            .iter()
            .map(|i| i.path.display().to_string())
            .collect();
        let reading = ncu_reading(
            &self.context,
            &counts,
            has_ranges,
            sources,
            &self.nvtx_include,
            advice,
        );
        Ok((state, reading))
    }
}

/// What a metric of the file is to the report: a spec's value, the time metric, the advice's
/// duration, the device id (several at once for one name).
#[derive(Debug, Clone, Copy, Default)]
struct Slot {
    spec: Option<usize>,
    time: bool,
    duration: bool,
    device: bool,
}

impl Slot {
    fn is_used(&self) -> bool {
        self.spec.is_some() || self.time || self.duration || self.device
    }
}

/// Per-file state: metric slots by name id (ids are the file's), the current scope, counts.
struct FileReader<'s> {
    source: &'s ReportSource<'s>,
    filter: &'s Mutex<KernelFilter>,
    rank: String,
    /// Indexed by name id; `None` until the name was first seen.
    slots: Vec<Option<Slot>>,
    scope: ScopeKey,
    decisions: FastMap<String, bool>,
    counts: ResultCounts,
    has_nvtx: bool,
}

/// One result's numbers, read in one pass over its metrics.
struct Numbers<'a> {
    values: SmallVec<[Cell<'a>; 32]>,
    time: Option<f64>,
    duration: f64,
    device: Option<u64>,
}

impl<'s> FileReader<'s> {
    fn new(
        source: &'s ReportSource<'s>,
        rank: Option<u32>,
        filter: &'s Mutex<KernelFilter>,
    ) -> FileReader<'s> {
        FileReader {
            source,
            filter,
            rank: rank.map(|r| r.to_string()).unwrap_or_default(),
            slots: Vec::new(),
            // Never equal to a real result's scope (the rank differs), so the first builds its own.
            scope: ScopeKey {
                rank: "\0".into(),
                ..ScopeKey::default()
            },
            decisions: FastMap::default(),
            counts: ResultCounts::default(),
            has_nvtx: false,
        }
    }

    fn result(
        &mut self,
        r: &ResultRecord<'_>,
        sink: &mut dyn FnMut(&Observation<'_>),
        advice: &mut AdviceIndex,
    ) -> std::result::Result<(), ReportFileError> {
        self.counts.results += 1;
        let numbers = self.numbers(r)?;
        self.set_scope(r, numbers.device);
        let nvtx = r.nvtx()?;
        self.has_nvtx |= nvtx.is_some();
        let renames = &self.source.plan.renames;
        let ((stacks, ids), marks) = match &nvtx {
            Some(state) => (stacks_of(state, renames), marks_of(state, renames)),
            None => ((vec![Vec::new()], vec![Vec::new()]), Vec::new()),
        };
        if stacks.iter().any(|s| !s.is_empty()) || !marks.is_empty() {
            self.counts.results_in_ranges += 1;
        }
        let kernel = match (r.kind, r.kernel) {
            (ResultKind::Kernel, Some(names)) => names.display(),
            (kind, _) => kind.as_str(),
        };
        if r.kind == ResultKind::Range {
            self.counts.range_results += 1;
        }
        sink(&Observation {
            scope: &self.scope,
            stacks: &stacks,
            instances: Some(&ids),
            marks: &marks,
            kernel,
            time: numbers.time,
            values: &numbers.values,
        });
        let rules = r.rule_results()?;
        if !rules.is_empty() && self.selects(kernel) {
            let regions = regions_of(&stacks, &marks);
            advice.add_result(
                &self.scope,
                &regions,
                kernel,
                numbers.duration,
                advice_of(&rules),
            );
        }
        Ok(())
    }

    /// The spec values, time, duration and device of one result, in one pass over its metrics.
    fn numbers<'a>(
        &mut self,
        r: &ResultRecord<'a>,
    ) -> std::result::Result<Numbers<'a>, ReportFileError> {
        let source = self.source;
        let mut n = Numbers {
            values: SmallVec::from_elem(Cell::Missing, source.found.specs.len()),
            time: None,
            duration: 0.0,
            device: None,
        };
        for m in r.metrics() {
            let m = m.map_err(|e| r.err(e))?;
            let slot = self.slot(m.name_id, m.name);
            if !slot.is_used() {
                continue;
            }
            let number = match m.value {
                MetricValue::String(s) => parse_number(s.as_bytes()),
                v => v.as_f64(),
            };
            if let Some(at) = slot.spec {
                n.values[at] = match (number, m.value) {
                    (Some(v), _) => Cell::Num(v * source.factors[at]),
                    (None, MetricValue::String(s)) if !s.is_empty() && s != "n/a" => Cell::Text(s),
                    _ => Cell::Missing,
                };
            }
            if slot.time {
                n.time = number.map(|v| v * source.time_factor);
            }
            if slot.duration {
                n.duration = number.unwrap_or(0.0);
            }
            if slot.device {
                n.device = m.value.as_u64();
            }
        }
        Ok(n)
    }

    fn slot(&mut self, id: u32, name: &str) -> Slot {
        let at = id as usize;
        if let Some(Some(slot)) = self.slots.get(at) {
            return *slot;
        }
        let source = self.source;
        let slot = Slot {
            spec: source.found.specs.iter().position(|s| s.name == name),
            time: name == source.plan.time_metric,
            duration: name == DURATION,
            device: name == "launch__device_id",
        };
        if self.slots.len() <= at {
            self.slots.resize(at + 1, None);
        }
        self.slots[at] = Some(slot);
        slot
    }

    /// The scope of a result as the CSV's columns give it: host, process id and name, device, rank.
    fn set_scope(&mut self, r: &ResultRecord<'_>, device: Option<u64>) {
        let host = r.process.host.as_deref().unwrap_or("").trim();
        let name = r.process.name().unwrap_or("").trim();
        let same = self.scope.rank == self.rank
            && self.scope.host == host
            && self.scope.process_name == name
            && self.scope.process_id.parse() == Ok(r.process.id)
            && self.scope.device.parse().ok() == device;
        if !same {
            self.scope = ScopeKey {
                host: host.to_string(),
                process_id: r.process.id.to_string(),
                process_name: name.to_string(),
                device: device.map(|d| d.to_string()).unwrap_or_default(),
                rank: self.rank.clone(),
            };
        }
    }

    /// The report's kernel selection, asked once per distinct kernel name.
    fn selects(&mut self, kernel: &str) -> bool {
        if let Some(&decision) = self.decisions.get(kernel) {
            return decision;
        }
        let decision = self
            .filter
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .selects(kernel);
        self.decisions.insert(kernel.to_string(), decision);
        decision
    }
}

/// A range's name as the CSV cell gives it: the name, else its message, else `<unnamed>`; renamed.
fn range_name(range: &NvtxRange, renames: &Renames) -> String {
    let message = || {
        range
            .attributes
            .as_ref()
            .and_then(|a| a.message.as_ref())
            .and_then(|m| m.text.as_deref())
            .filter(|t| !t.is_empty() && *t != "none")
    };
    let name = if range.name.is_empty() || range.name == "none" {
        message().unwrap_or(UNNAMED)
    } else {
        range.name.as_str()
    };
    renames.apply(name).into_owned()
}

fn segment(domain: &str, name: String) -> String {
    if domain == DEFAULT_DOMAIN || domain.is_empty() {
        name
    } else {
        format!("{domain}@{name}")
    }
}

/// One path per NVTX domain (the default domain's first, then others in order of appearance), each
/// chaining the stacks of every thread with an open range in file order, with the ranges' instance
/// ids alongside (docs/attribution.md, "Several threads in one cell").
fn stacks_of(state: &NvtxState, renames: &Renames) -> (Vec<Vec<String>>, Vec<Vec<u64>>) {
    let mut stacks = vec![Vec::new()];
    let mut ids = vec![Vec::new()];
    let mut domains: Vec<&str> = Vec::new();
    for thread in state.threads.iter().filter(|t| t.has_ranges()) {
        for domain in &thread.domains {
            if domain.stack.is_empty() {
                continue;
            }
            let at = if domain.domain == DEFAULT_DOMAIN {
                0
            } else if let Some(i) = domains.iter().position(|d| *d == domain.domain) {
                i + 1
            } else {
                domains.push(&domain.domain);
                stacks.push(Vec::new());
                ids.push(Vec::new());
                domains.len()
            };
            for range in &domain.stack {
                stacks[at].push(segment(&domain.domain, range_name(range, renames)));
                ids[at].push(range.id);
            }
        }
    }
    (stacks, ids)
}

/// The open start/end ranges, in file order (as the start/end cell lists them), renamed.
fn marks_of(state: &NvtxState, renames: &Renames) -> Vec<String> {
    state
        .start_end
        .iter()
        .map(|r| {
            let name = if r.name.is_empty() || r.name == "none" {
                UNNAMED
            } else {
                r.name.as_str()
            };
            segment(&r.domain, renames.apply(name).into_owned())
        })
        .collect()
}

/// Every region a result belongs to: each prefix of each stack path, and each mark once.
fn regions_of(stacks: &[Vec<String>], marks: &[String]) -> Vec<(RegionKind, Vec<String>)> {
    let mut regions = Vec::new();
    for path in stacks {
        for depth in 1..=path.len() {
            regions.push((RegionKind::Stack, path[..depth].to_vec()));
        }
    }
    for mark in marks {
        let region = (RegionKind::Mark, vec![mark.clone()]);
        if !regions.contains(&region) {
            regions.push(region);
        }
    }
    regions
}

/// One advice row per rule message, as the details page lists them.
fn advice_of(rules: &[RuleResult]) -> Vec<Advice> {
    let mut out = Vec::new();
    for rule in rules {
        for message in &rule.messages {
            out.push(Advice {
                source: "ncu".into(),
                rule: rule.identifier.clone(),
                kind: message.severity.csv_label().to_string(),
                section: rule.section.clone().unwrap_or_default(),
                description: message.plain_text().trim().to_string(),
                kernel: String::new(),
                results: 1,
                time: 0.0,
                estimated_speedup: message.speedup.map(|s| s.value),
                speedup_type: message
                    .speedup
                    .map(|s| s.kind.csv_label().to_string())
                    .filter(|t| !t.is_empty()),
            });
        }
    }
    out
}

/// The report of one or more captures' report files, under a checked plan.
pub fn analyze_report_files(
    plan: &crate::plan::Plan,
    inputs: &[ReportInput],
    context: &RunContext,
) -> Result<crate::report::model::Report> {
    let source = ReportSource::open(&plan.analysis, inputs, context, &plan.nvtx.include)?;
    crate::analysis::analyze(&plan.analysis, source, context)
}
