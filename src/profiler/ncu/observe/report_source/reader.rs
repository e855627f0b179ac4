//! One report file's results turned into observations: metric values picked by name id in one pass,
//! the scope as the CSV's columns give it, NVTX paths ([`super::paths`]), and the result's rule
//! results folded into the advice index when the result counts in a region.

use std::sync::Mutex;

use smallvec::SmallVec;

use crate::fast_map::FastMap;
use crate::region::{Cell, Coverage, KernelFilter, Observation, Regioner, ScopeKey};

use super::paths::{advice_of, marks_of, regions_of, stacks_of};
use super::split_keys::SplitKeys;
use super::twins::{DeepResult, LaunchOrdinals, Process, Shape, TwinIndex, TwinIndexBuilder};
use super::ReportSource;
use crate::profiler::ncu::observe::launch_durations::LaunchDurations;
use crate::profiler::ncu::observe::source::ResultCounts;
use crate::profiler::ncu::readers::export::details::{Advice, AdviceIndex};
use crate::profiler::ncu::readers::export::raw::parse_number;
use crate::profiler::ncu::readers::report_file::{
    CallFrame, RecordedValue, ReportFileError, ResultKind, ResultRecord,
};

/// The metric the details page calls `Duration`: what advice weighs a result's findings by.
const DURATION: &str = "gpu__time_duration.sum";

/// The launch key's metrics that the record's grid and block leave out, in [`LaunchKey`] order.
const KEY_SLOTS: [&str; 3] = [
    "launch__registers_per_thread",
    "launch__shared_mem_per_block_static",
    "launch__shared_mem_per_block_dynamic",
];

/// What a metric of the file is to the report: a spec's value, the time metric, the advice's
/// duration, the device id, a part of the launch key (several at once for one name).
#[derive(Debug, Clone, Copy, Default)]
struct Slot {
    spec: Option<usize>,
    time: bool,
    duration: bool,
    device: bool,
    key: Option<usize>,
}

impl Slot {
    fn is_used(&self) -> bool {
        self.spec.is_some() || self.time || self.duration || self.device || self.key.is_some()
    }
}

/// Per-file state: metric slots by name id (ids are the file's), the current scope, counts.
pub(super) struct FileReader<'s> {
    source: &'s ReportSource<'s>,
    filter: &'s Mutex<KernelFilter>,
    rank: String,
    /// Indexed by name id; `None` until the name was first seen.
    slots: Vec<Option<Slot>>,
    scope: ScopeKey,
    /// The current scope's process id and device as numbers, to compare without formatting.
    scope_ids: (u32, Option<u64>),
    decisions: FastMap<String, bool>,
    pub(super) counts: ResultCounts,
    pub(super) has_nvtx: bool,
    /// A sampled capture's deep results by launch key; `None` for a capture read alone.
    twins: Option<&'s TwinIndex>,
    ordinals: LaunchOrdinals,
    /// Results per [`Coverage`] (measured, estimated, unmatched).
    pub(super) coverage: [u64; 4],
    /// The keys of this file that ran different work, split into strata per process.
    strata: Option<&'s FileStrata>,
    /// Results whose stratum had no deep sample and took another's.
    pub(super) other_stratum: u64,
}

/// A timing pass's keys that ran different work, split into strata per process.
pub(crate) type FileStrata = SplitKeys<(Process, usize)>;

/// The strata of the timing pass whose launches took `durations`, ids from `first` on.
pub(crate) fn file_strata(
    index: &TwinIndex,
    durations: &LaunchDurations,
    skipped: u32,
    first: u64,
) -> FileStrata {
    let splits = durations.keys().flat_map(|(name, shape, key)| {
        let at = index.find(name, shape).map(|(at, _)| at);
        key.processes().filter_map(move |(process, launches)| {
            let at = at?;
            Some(((process, at), index.stratify(at, launches, skipped)?))
        })
    });
    SplitKeys::new(splits, first)
}

/// One result's numbers, read in one pass over its metrics.
struct Numbers<'a> {
    values: SmallVec<[Cell<'a>; 32]>,
    time: Option<f64>,
    duration: f64,
    device: Option<u64>,
    /// Registers per thread, static and dynamic shared memory per block.
    key: [u64; 3],
}

impl<'s> FileReader<'s> {
    pub(super) fn new(
        source: &'s ReportSource<'s>,
        rank: Option<u32>,
        filter: &'s Mutex<KernelFilter>,
        twins: Option<&'s TwinIndex>,
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
            scope_ids: (0, None),
            decisions: FastMap::default(),
            counts: ResultCounts::default(),
            has_nvtx: false,
            twins,
            ordinals: LaunchOrdinals::of_run(&source.context),
            coverage: [0; 4],
            strata: None,
            other_stratum: 0,
        }
    }

    /// Gives keys split into strata the twins of each launch's stratum.
    pub(super) fn with_strata(&mut self, strata: &'s FileStrata) {
        self.strata = Some(strata);
    }

    /// Limits the deep results it takes to the names `only` matches: a worker of a deep pass run as
    /// several takes only its own names, whatever else its file holds.
    pub(super) fn taking_only(&mut self, only: Option<regex::Regex>) {
        if only.is_some() {
            self.ordinals = self.ordinals.clone().keeping(only);
        }
    }

    /// One result of a deep pass, into the index of twins. Results that are no kernel launch (none
    /// in a kernel-replay capture) have no launch key and are left out.
    pub(super) fn deep_result(
        &mut self,
        r: &ResultRecord<'_>,
        twins: &mut TwinIndexBuilder,
    ) -> std::result::Result<(), ReportFileError> {
        self.counts.results += 1;
        let numbers = self.numbers(r)?;
        let Some((mangled, shape)) = launch_key(r, &numbers) else {
            return Ok(());
        };
        // A name the deep pass was told to leave out stays not measured, whatever came back.
        if self.ordinals.left_out(mangled) {
            return Ok(());
        }
        twins.add(DeepResult {
            mangled,
            shape,
            process: (r.process.id, numbers.device),
            cells: &numbers.values,
            advice: advice_of(&r.rule_results()?),
        });
        Ok(())
    }

    /// One result, its time into `durations` under its launch key and process; a result that is no
    /// kernel launch is left out, and one without a time too unless `untimed` stands for it.
    pub(super) fn timed_launch(
        &mut self,
        r: &ResultRecord<'_>,
        durations: &mut LaunchDurations,
        untimed: Option<f64>,
    ) -> std::result::Result<(), ReportFileError> {
        let numbers = self.numbers(r)?;
        let time = numbers.time.or(untimed);
        if let (Some(time), Some((name, shape))) = (time, launch_key(r, &numbers)) {
            let stacks = match r.nvtx()? {
                Some(state) => stacks_of(&state, r.thread_id, &self.source.plan.renames).0,
                None => Vec::new(),
            };
            durations.add(name, shape, (r.process.id, numbers.device), time, &stacks);
        }
        Ok(())
    }

    pub(super) fn result(
        &mut self,
        r: &ResultRecord<'_>,
        sink: &mut dyn FnMut(&Observation<'_>),
        advice: &mut AdviceIndex,
    ) -> std::result::Result<(), ReportFileError> {
        self.counts.results += 1;
        let mut numbers = self.numbers(r)?;
        self.set_scope(r, numbers.device);
        let (coverage, twin_advice, key) = self.join(r, &mut numbers);
        let nvtx = r.nvtx()?;
        self.has_nvtx |= nvtx.is_some();
        let renames = &self.source.plan.renames;
        let ((stacks, ids), marks) = match &nvtx {
            Some(state) => (
                stacks_of(state, r.thread_id, renames),
                marks_of(state, renames),
            ),
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
        // Only the stack_frames regioner reads call stacks; decode them for it alone.
        let call_stack = match self.source.plan.regioner {
            Regioner::StackFrames { .. } => r.python_stack()?.map(|frames| python_frames(&frames)),
            _ => None,
        };
        sink(&Observation {
            scope: &self.scope,
            stacks: &stacks,
            instances: Some(&ids),
            marks: &marks,
            call_stack: call_stack.as_deref(),
            kernel,
            time: numbers.time,
            start: None,
            weight: None,
            values: &numbers.values,
            coverage,
            key,
        });
        // Rule results are decoded only for a selected result that counts in some region: the others
        // give no advice (as on the details page).
        let regions = regions_of(&stacks, &marks);
        if !regions.is_empty() && self.selects(kernel) {
            let rules = match twin_advice {
                Some(twin) => twin,
                None => advice_of(&r.rule_results()?),
            };
            advice.add_result(&self.scope, &regions, kernel, numbers.duration, rules);
        }
        Ok(())
    }

    /// In a sampled capture, gives the result its twins' deep values (the specs the timing pass did
    /// not collect) and says how they were obtained; the twins' rule results stand for the result's
    /// own (`None`: use the result's), and the twins' key id. A capture read alone measures
    /// everything itself.
    fn join<'a>(
        &mut self,
        r: &ResultRecord<'_>,
        numbers: &mut Numbers<'a>,
    ) -> (Coverage, Option<Vec<Advice>>, Option<u64>)
    where
        's: 'a,
    {
        let Some(index) = self.twins else {
            return (Coverage::Measured, None, None);
        };
        let found = launch_key(r, numbers).and_then(|(name, shape)| index.find(name, &shape));
        let mut found_key = None;
        let coverage = match found {
            Some((id, pooled)) => {
                let process = (r.process.id, numbers.device);
                let measured = self.ordinals.measured(process, id, pooled);
                // A key split into strata gives the twins of this launch's stratum (by its time).
                let split = match (self.strata, numbers.time) {
                    (Some(strata), Some(time)) => strata.twins(&(process, id), time),
                    _ => None,
                };
                let (twins, key, borrowed) = split.unwrap_or((pooled, index.key(id), false));
                for (at, deep) in self.source.from_deep.iter().enumerate() {
                    if *deep {
                        numbers.values[at] = twins.cell(at);
                    }
                }
                self.other_stratum += u64::from(borrowed);
                found_key = Some((key, twins.advice.clone()));
                if measured && !borrowed {
                    Coverage::Measured
                } else {
                    Coverage::Estimated
                }
            }
            None => match launch_key(r, numbers) {
                Some((name, _)) if self.ordinals.left_out(name) => Coverage::NotMeasured,
                _ => Coverage::Unmatched,
            },
        };
        self.coverage[coverage as usize] += 1;
        let (key, advice) = found_key.unzip();
        (coverage, advice, key)
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
            key: [0; 3],
        };
        for m in r.metrics() {
            let m = m.map_err(|e| r.err(e))?;
            let slot = self.slot(m.name_id, m.name);
            if !slot.is_used() {
                continue;
            }
            let number = match m.value {
                RecordedValue::String(s) => parse_number(s.as_bytes()),
                v => v.as_f64(),
            };
            if let Some(at) = slot.spec {
                n.values[at] = match (number, m.value) {
                    (Some(v), _) => Cell::Num(v * source.factors[at]),
                    (None, RecordedValue::String(s)) if !s.is_empty() && s != "n/a" => {
                        Cell::Text(s)
                    }
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
            if let Some(at) = slot.key {
                n.key[at] = number.map_or(0, |v| v as u64);
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
            key: KEY_SLOTS.iter().position(|k| *k == name),
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
            && self.scope_ids == (r.process.id, device)
            && self.scope.host == host
            && self.scope.process_name == name;
        if !same {
            self.scope_ids = (r.process.id, device);
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

/// A kernel launch's key: its mangled name and launch configuration; `None` for a result that is no
/// kernel launch.
fn launch_key<'r>(r: &ResultRecord<'r>, numbers: &Numbers<'_>) -> Option<(&'r str, Shape)> {
    let names = r.kernel.as_ref()?;
    let shape = Shape {
        grid: r.grid_size?,
        block: r.block_size?,
        registers: numbers.key[0],
        shared_static: numbers.key[1],
        shared_dynamic: numbers.key[2],
    };
    // A file without mangled names keys by the demangled signature, which tells templates apart too.
    let name = if names.mangled.is_empty() {
        names.display()
    } else {
        names.mangled
    };
    Some((name, shape))
}

/// A Python stack as region segments, outermost frame first: `function (file:line)`, the file by its
/// name only, so two call sites of one function stay apart and paths stay short.
fn python_frames(frames: &[CallFrame]) -> Vec<String> {
    frames
        .iter()
        .rev()
        .map(|f| {
            let file = f
                .file
                .as_deref()
                .map(|p| p.rsplit('/').next().unwrap_or(p))
                .unwrap_or("?");
            let function = if f.function.is_empty() {
                "?"
            } else {
                &f.function
            };
            match f.line {
                Some(line) => format!("{function} ({file}:{line})"),
                None => format!("{function} ({file})"),
            }
        })
        .collect()
}
