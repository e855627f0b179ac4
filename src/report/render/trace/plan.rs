//! A real timeline planned before trace.json is written: one replay of every process finds its
//! devices, its last time and its steps (the default NVTX domain's top-level push/pop ranges), each
//! host's clock offset comes from the cross-rank diagnosis, and the bound (`report.trace_events`)
//! becomes one time on the aligned clock: each process keeps what it pushed or launched before its
//! last step ending by then, so that whole steps are kept on every rank rather than a random part
//! of each. Only per-step counts are kept, never the events themselves.
//!
//! Floor: report (see `crate::report`): imports config, region and the ground floor only.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use crate::report::format;
use crate::report::model::{
    PlannedProcess, ProcessTimeline, RealTimeline, Report, TimelineCut, TimelineEvent,
    TimelineProcess,
};

/// Plans `source` (each process's timeline) for trace.json, says in the report's notes what the
/// bound leaves out, and hands the plan to the report.
pub fn attach(report: &mut Report, source: Vec<ProcessTimeline>, bound: u64) {
    let timeline = plan(report, Arc::new(source), bound);
    if let Some(cut) = &timeline.cut {
        report.notes.push(cut_note(cut, timeline.origin_ns));
    }
    report.timeline = Some(timeline);
}

/// What report.md and trace.json say of a cut (`origin_ns`: trace.json's time 0).
pub fn cut_note(cut: &TimelineCut, origin_ns: i64) -> String {
    let kept = match cut.before_ns {
        None if cut.steps == 0 => "the capture has no step (top-level range of the default NVTX domain) to cut at, so each process keeps its first slices, an equal share of the bound".to_string(),
        None => "even the first step (top-level range of the default NVTX domain) holds more slices than that, so each process keeps its first slices, an equal share of the bound".to_string(),
        Some(before) => format!(
            "the {} of {} steps (top-level ranges of the default NVTX domain, over all ranks) that end by {} into the trace are kept whole, with everything pushed or launched before each process's last of them; what came later is left out",
            cut.steps_kept,
            cut.steps,
            format::value(Some(before.saturating_sub(origin_ns) as f64), "ns"),
        ),
    };
    format!(
        "trace.json is bounded to {} slices (`report.trace_events`) of the capture's {}: {kept}. Raise `report.trace_events` to keep more.",
        format::count(cut.bound as f64),
        format::count(cut.total as f64),
    )
}

/// One process's first replay: where its slices start relative to its steps' ends.
#[derive(Default)]
struct Census {
    devices: BTreeSet<u32>,
    first: Option<u64>,
    last: u64,
    /// Ends of its steps (the default domain's top-level push/pop ranges), ascending.
    ends: Vec<u64>,
    /// `buckets[i]`: slices pushed or launched in `[ends[i-1], ends[i])`; the last one after every
    /// end.
    buckets: Vec<u64>,
    /// Per thread and domain, the ends of the push/pop ranges open there.
    open: HashMap<(u32, usize), Vec<u64>>,
    domains: Domains,
    total: u64,
}

impl Census {
    /// A slice from `start` to `end`, counted in its step by `at` (its push, or its kernel's launch).
    fn count(&mut self, (start, end): (u64, u64), at: u64) {
        self.first = Some(self.first.map_or(start, |f| f.min(start)));
        self.last = self.last.max(end);
        let at = self.ends.partition_point(|&e| e <= at);
        self.buckets[at] += 1;
        self.total += 1;
    }

    fn visit(&mut self, event: &TimelineEvent<'_>) {
        if self.buckets.is_empty() {
            self.buckets.push(0);
        }
        match *event {
            TimelineEvent::Range {
                thread,
                domain,
                start,
                end,
                nested,
                ..
            } => {
                self.count((start, end.unwrap_or(start)), start);
                if !nested {
                    return;
                }
                // Steps are the default domain's: a library's own ranges (NCCL's) are not steps.
                let default = domain.is_empty();
                let domain = self.domains.index(domain);
                let open = self.open.entry((thread, domain)).or_default();
                while open.last().is_some_and(|&e| e <= start) {
                    open.pop();
                }
                let top = open.is_empty();
                open.push(end.unwrap_or(u64::MAX));
                if let (true, true, Some(end)) = (top, default, end) {
                    // Every slice counted so far started no later than this range, so all of the
                    // bucket it splits lies before its end.
                    let at = self.ends.partition_point(|&e| e <= end);
                    self.ends.insert(at, end);
                    self.buckets.insert(at + 1, 0);
                }
            }
            TimelineEvent::Kernel {
                device,
                launched,
                start,
                end,
                ..
            } => {
                self.devices.insert(device);
                self.count((start, end), launched);
            }
        }
    }

    /// Slices pushed or launched before each step's end.
    fn before_ends(&self) -> Vec<u64> {
        self.buckets
            .iter()
            .scan(0, |sum, b| {
                *sum += b;
                Some(*sum)
            })
            .take(self.ends.len())
            .collect()
    }
}

/// A process's range domains, numbered in order of appearance (the default domain, `""`, among them).
#[derive(Default)]
pub(super) struct Domains(Vec<String>);

impl Domains {
    pub(super) fn index(&mut self, domain: &str) -> usize {
        match self.0.iter().position(|d| d == domain) {
            Some(at) => at,
            None => {
                self.0.push(domain.to_string());
                self.0.len() - 1
            }
        }
    }
}

fn plan(report: &Report, source: Arc<Vec<ProcessTimeline>>, bound: u64) -> RealTimeline {
    let offsets = host_offsets(report);
    let mut processes = Vec::with_capacity(source.len());
    let mut censuses = Vec::with_capacity(source.len());
    for timeline in source.iter() {
        let mut census = Census::default();
        timeline.replay(&mut |event| census.visit(event));
        let process = timeline.process.clone();
        let offset_ns = offsets.get(process.host.as_str()).copied().unwrap_or(0);
        processes.push(PlannedProcess {
            label: label(&process, &census.devices),
            devices: census.devices.iter().copied().collect(),
            offset_ns,
            last_ns: census.last,
            before_ns: None,
            quota: None,
            process,
        });
        censuses.push(census);
    }
    let origin_ns = processes
        .iter()
        .zip(&censuses)
        .filter_map(|(p, c)| c.first.map(|f| f as i64 + p.offset_ns))
        .min()
        .unwrap_or(0);
    let hosts: BTreeSet<&str> = processes.iter().map(|p| p.process.host.as_str()).collect();
    let clock = match &report.cross_rank {
        Some(cross) => cross.clock.clone(),
        None if hosts.len() > 1 => "each process's times as traced: no collective was matched across hosts to align their clocks".to_string(),
        None => "one host: every process's times are on one clock".to_string(),
    };
    let cut = cut(&mut processes, &censuses, bound);
    if cut.as_ref().is_some_and(|c| c.before_ns.is_none()) {
        // Not even the first step fits: each process keeps its first slices, an equal share.
        let shown = censuses.iter().filter(|c| c.total > 0).count();
        let share = bound / shown.max(1) as u64;
        processes.iter_mut().for_each(|p| p.quota = Some(share));
    }
    RealTimeline {
        source,
        processes,
        origin_ns,
        clock,
        cut,
    }
}

/// The latest step end (aligned) such that each process's slices pushed or launched before its own
/// last step end by then stay within `bound` together; each process's own end is set as its
/// `before_ns`. `None` when all fit.
fn cut(processes: &mut [PlannedProcess], censuses: &[Census], bound: u64) -> Option<TimelineCut> {
    let total: u64 = censuses.iter().map(|c| c.total).sum();
    if total <= bound {
        return None;
    }
    let before: Vec<Vec<u64>> = censuses.iter().map(Census::before_ends).collect();
    let offsets: Vec<i64> = processes.iter().map(|p| p.offset_ns).collect();
    // How many of process p's steps end by aligned time t.
    let steps_by = |p: usize, t: i64| {
        censuses[p]
            .ends
            .partition_point(|&e| e as i64 + offsets[p] <= t)
    };
    let mut candidates: Vec<i64> = censuses
        .iter()
        .enumerate()
        .flat_map(|(p, c)| {
            let offset = offsets[p];
            c.ends.iter().map(move |&e| e as i64 + offset)
        })
        .collect();
    candidates.sort_unstable();
    let kept = |t: i64| -> u64 {
        (0..censuses.len())
            .map(|p| match steps_by(p, t) {
                0 => 0,
                k => before[p][k - 1],
            })
            .sum()
    };
    let fits = candidates.partition_point(|&t| kept(t) <= bound);
    let before_ns = fits.checked_sub(1).map(|n| candidates[n]);
    let mut steps_kept = 0;
    for (p, process) in processes.iter_mut().enumerate() {
        // Nothing of a process none of whose steps ends by then; no step cut where none fits.
        process.before_ns = before_ns.map(|t| match steps_by(p, t) {
            0 => 0,
            k => {
                steps_kept += k as u64;
                censuses[p].ends[k - 1]
            }
        });
    }
    Some(TimelineCut {
        bound,
        before_ns,
        total,
        steps_kept,
        steps: candidates.len() as u64,
    })
}

/// Each host's clock offset, as the cross-rank diagnosis put the hosts on one time line (none on
/// one host, or where no collective was matched).
fn host_offsets(report: &Report) -> HashMap<&str, i64> {
    let Some(cross) = &report.cross_rank else {
        return HashMap::new();
    };
    let host_of: HashMap<&str, &str> = report
        .scopes
        .iter()
        .filter_map(|s| Some((s.label.as_str(), s.host.as_deref()?)))
        .collect();
    cross
        .ranks
        .iter()
        .filter_map(|r| Some((*host_of.get(r.scope.as_str())?, r.clock_offset_ns)))
        .collect()
}

/// `rank 2 (host-a, GPU 2)`; `pid 4242 (host-a, GPU 0)` where no rank is known.
fn label(process: &TimelineProcess, devices: &BTreeSet<u32>) -> String {
    let who = match process.rank {
        Some(rank) => format!("rank {rank}"),
        None => format!("pid {}", process.pid),
    };
    let mut place: Vec<String> = Vec::new();
    if !process.host.is_empty() {
        place.push(process.host.clone());
    }
    if !devices.is_empty() {
        let list: Vec<String> = devices.iter().map(u32::to_string).collect();
        place.push(format!("GPU {}", list.join(", ")));
    }
    match place.is_empty() {
        true => who,
        false => format!("{who} ({})", place.join(", ")),
    }
}

#[cfg(test)]
mod tests;
