//! A Neuron system profile (`NEURON_RT_INSPECT_SYSTEM_PROFILE`): the runtime's, the device's and the
//! framework's events on the host timeline, each tagged with the instance, process and worker that
//! produced it, and the device profiles the run captured. Several instances' system profiles merge
//! into one run (`SystemProfile::merge`), each event once: the same profile reached twice (a copy,
//! one process under two folders, a table part written twice) adds nothing. Times are the profile's
//! own Unix nanoseconds.

use std::cmp::Ordering;
use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;

use serde::Serialize;

use crate::region::ScopeKey;
use crate::report::build::scope_label;

/// One row of `SystemProfileEvents`. Two rows equal in every field (the event `id` among them) are
/// one event read twice.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct SystemEvent {
    /// The event's `id` in its process's table, where the table has one.
    pub id: Option<u64>,
    /// `nrt_execute`, …
    pub name: String,
    pub start_ns: u64,
    pub end_ns: u64,
    /// `trace_event_source`: `neuron_rt` (the runtime, on the CPU), `neuron_hw` (a device),
    /// `framework` (the application).
    pub source: Option<String>,
    pub instance_id: String,
    pub process_id: u64,
    pub thread_id: Option<u64>,
    /// The Logical NeuronCore, process-local (`nc_idx`).
    pub nc_idx: Option<u64>,
    /// The worker across every process and instance of the workload (`worker_gid`).
    pub worker_gid: Option<u64>,
}

/// One row of `DeviceProfileList`: a device profile the run captured, and whose it is.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct DeviceProfileEntry {
    pub name: String,
    pub instance_id: String,
    pub process_id: u64,
    pub nc_id: u64,
    pub session_id: Option<u64>,
    pub model_id: Option<u64>,
}

/// `SystemProfileMetadata`: the trace's first and last instant (Unix ns) and what it was written with.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct SystemMetadata {
    pub first_ns: Option<u64>,
    pub last_ns: Option<u64>,
    pub ntff_version: Option<u64>,
    pub hbm_capacity_bytes: Option<u64>,
}

/// Who produced an event: the Neuron counterpart of a GPU rank. A NeuronCore worker is known by
/// `worker_gid` where the profile has it (unique across the workload), else by its process and
/// NeuronCore on that instance; the process's own events (the framework's, and runtime calls tied
/// to no core) have neither and are the process's.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct WorkerKey {
    pub instance_id: String,
    pub worker_gid: Option<u64>,
    pub process_id: u64,
    pub nc_idx: Option<u64>,
}

impl WorkerKey {
    pub fn of(e: &SystemEvent) -> WorkerKey {
        WorkerKey {
            instance_id: e.instance_id.clone(),
            worker_gid: e.worker_gid,
            process_id: e.process_id,
            // With a global worker id, the core is not part of who it is.
            nc_idx: e.nc_idx.filter(|_| e.worker_gid.is_none()),
        }
    }

    /// Whether the key names a NeuronCore worker rather than a process's own events.
    pub fn is_worker(&self) -> bool {
        self.worker_gid.is_some() || self.nc_idx.is_some()
    }

    /// What the worker is called among the workers of its process: `worker 3`, `nc 1`, `process`.
    pub fn name(&self) -> String {
        match (self.worker_gid, self.nc_idx) {
            (Some(w), _) => format!("worker {w}"),
            (None, Some(nc)) => format!("nc {nc}"),
            (None, None) => "process".to_string(),
        }
    }

    /// The worker as the report's scopes and the cross-rank diagnosis key it: the instance is its
    /// host (each instance has its own clock), the worker its name.
    pub fn scope_key(&self) -> ScopeKey {
        ScopeKey {
            host: self.instance_id.clone(),
            process_id: self.process_id.to_string(),
            process_name: self.name(),
            ..ScopeKey::default()
        }
    }

    /// `worker 3 (pid 4242) on i-0b1e…`, `nc 1 (pid 4242) on i-0b1e…`, `process (pid 4242) on i-0b1e…`.
    pub fn label(&self) -> String {
        scope_label(&self.scope_key())
    }
}

/// Everything read from one or several instances' system profiles.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct SystemProfile {
    /// The directories read, one per instance and process.
    pub sources: Vec<PathBuf>,
    pub events: Vec<SystemEvent>,
    pub devices: Vec<DeviceProfileEntry>,
    /// Per source, in `sources` order.
    pub metadata: Vec<SystemMetadata>,
    /// What was left out while reading, and why: tables refused, directories and events read twice.
    pub notes: Vec<String>,
}

/// Parents before the events they hold: an earlier start first, then the longer.
fn timeline_order(a: &SystemEvent, b: &SystemEvent) -> Ordering {
    (a.start_ns, std::cmp::Reverse(a.end_ns)).cmp(&(b.start_ns, std::cmp::Reverse(b.end_ns)))
}

/// How many events of part `.0` were already read from part `.1` (the same part: a row repeated).
type Repeats = BTreeMap<(usize, usize), u64>;

impl SystemProfile {
    /// Several instances' profiles as one run, events in time order, each event once: an event
    /// equal in every field to one read before (the same process's profile reached through a copy,
    /// a second folder or a table part written twice) is left out, with a note naming both places.
    /// A part all of whose events were read before is left out whole (its devices and metadata too).
    pub fn merge(parts: Vec<SystemProfile>) -> SystemProfile {
        let mut tagged: Vec<(SystemEvent, usize)> = Vec::new();
        let mut counts = Vec::with_capacity(parts.len());
        let mut rest = Vec::with_capacity(parts.len());
        for (i, mut p) in parts.into_iter().enumerate() {
            counts.push(p.events.len() as u64);
            tagged.extend(std::mem::take(&mut p.events).into_iter().map(|e| (e, i)));
            rest.push(p);
        }
        tagged.sort_unstable_by(|a, b| {
            timeline_order(&a.0, &b.0)
                .then_with(|| a.0.cmp(&b.0))
                .then(a.1.cmp(&b.1))
        });
        let mut repeats = Repeats::new();
        tagged.dedup_by(|later, kept| {
            let same = later.0 == kept.0;
            if same {
                *repeats.entry((later.1, kept.1)).or_default() += 1;
            }
            same
        });
        let mut out = SystemProfile {
            events: tagged.into_iter().map(|(e, _)| e).collect(),
            ..SystemProfile::default()
        };
        let names: Vec<String> = rest.iter().map(SystemProfile::named).collect();
        for (i, p) in rest.into_iter().enumerate() {
            let repeated: u64 = repeats
                .iter()
                .filter(|((r, _), _)| *r == i)
                .map(|(_, n)| n)
                .sum();
            out.notes.extend(p.notes);
            if counts[i] > 0 && repeated == counts[i] && repeats.keys().all(|k| k != &(i, i)) {
                let firsts = first_places(&repeats, i, &names);
                out.notes.push(format!(
                    "{} holds the same events as {firsts} (a copy, or the same process under two \
                     folders): read once.",
                    names[i]
                ));
                continue;
            }
            out.notes
                .extend(repeat_notes(&repeats, i, counts[i], &names));
            out.sources.extend(p.sources);
            out.devices.extend(p.devices);
            out.metadata.extend(p.metadata);
        }
        out.devices.sort_unstable();
        out.devices.dedup();
        out
    }

    /// The directories a part was read from, as a note names them.
    fn named(&self) -> String {
        let dirs: Vec<String> = self
            .sources
            .iter()
            .map(|d| format!("`{}`", d.display()))
            .collect();
        match dirs.is_empty() {
            true => "a profile".to_string(),
            false => dirs.join(", "),
        }
    }

    /// The events of each worker, workers in order (instance, then worker id or process and core).
    ///
    /// An event with a NeuronCore but no `worker_gid` belongs to the worker that core is in its
    /// process, where other events name both. A process's own events (no core, no worker) belong to
    /// its worker when it drives exactly one, so that its framework phases and runtime calls sit on
    /// that worker's timeline; a process driving several keeps them apart, under its own key.
    pub fn by_worker(&self) -> BTreeMap<WorkerKey, Vec<&SystemEvent>> {
        let core_of = self.workers_by_core();
        let mut out: BTreeMap<WorkerKey, Vec<&SystemEvent>> = BTreeMap::new();
        for e in &self.events {
            let mut key = WorkerKey::of(e);
            if let (None, Some(nc)) = (key.worker_gid, key.nc_idx) {
                if let Some(gid) = core_of.get(&(key.instance_id.clone(), key.process_id, nc)) {
                    key.worker_gid = Some(*gid);
                    key.nc_idx = None;
                }
            }
            out.entry(key).or_default().push(e);
        }
        for (process, only) in only_workers(&out) {
            let own = out.remove(&process).unwrap_or_default();
            let events = out.entry(only).or_default();
            events.extend(own);
            events.sort_by(|a, b| timeline_order(a, b));
        }
        out
    }

    /// The worker id of each (instance, process, core) that events name together.
    fn workers_by_core(&self) -> BTreeMap<(String, u64, u64), u64> {
        self.events
            .iter()
            .filter_map(|e| {
                let (nc, gid) = (e.nc_idx?, e.worker_gid?);
                Some(((e.instance_id.clone(), e.process_id, nc), gid))
            })
            .collect()
    }
}

/// Each process key whose process drives exactly one worker, with that worker: one pass over the
/// keys, so that a run of many processes costs no more per process than a run of few.
fn only_workers<V>(keys: &BTreeMap<WorkerKey, V>) -> Vec<(WorkerKey, WorkerKey)> {
    let mut workers: HashMap<(&str, u64), (u32, &WorkerKey)> = HashMap::new();
    for k in keys.keys().filter(|k| k.is_worker()) {
        let slot = workers
            .entry((k.instance_id.as_str(), k.process_id))
            .or_insert((0, k));
        slot.0 += 1;
    }
    keys.keys()
        .filter(|k| !k.is_worker())
        .filter_map(
            |p| match workers.get(&(p.instance_id.as_str(), p.process_id)) {
                Some(&(1, only)) => Some((p.clone(), only.clone())),
                _ => None,
            },
        )
        .collect()
}

/// The places that first held part `part`'s repeated events.
fn first_places(repeats: &Repeats, part: usize, names: &[String]) -> String {
    let firsts: Vec<&str> = repeats
        .keys()
        .filter(|(r, first)| *r == part && *first != part)
        .map(|(_, first)| names[*first].as_str())
        .collect();
    firsts.join(", ")
}

/// The notes of a part some of whose events were read before: in itself (a row or table part
/// written twice) or in another part.
fn repeat_notes(repeats: &Repeats, part: usize, count: u64, names: &[String]) -> Vec<String> {
    repeats
        .iter()
        .filter(|((r, _), _)| *r == part)
        .map(|(&(_, first), n)| match first == part {
            true => format!(
                "{}: {n} of its {count} events appear twice in it (a table part written twice?): \
                 each counted once.",
                names[part]
            ),
            false => format!(
                "{}: {n} of its {count} events are also in {}: each counted once.",
                names[part], names[first]
            ),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(name: &str, pid: u64, nc: Option<u64>, gid: Option<u64>, start: u64) -> SystemEvent {
        SystemEvent {
            name: name.into(),
            start_ns: start,
            end_ns: start + 10,
            instance_id: "i-1".into(),
            process_id: pid,
            nc_idx: nc,
            worker_gid: gid,
            ..SystemEvent::default()
        }
    }

    fn names(p: &SystemProfile) -> Vec<(String, Vec<String>)> {
        p.by_worker()
            .into_iter()
            .map(|(k, evs)| (k.label(), evs.iter().map(|e| e.name.clone()).collect()))
            .collect()
    }

    #[test]
    fn a_core_named_without_its_worker_id_joins_the_worker_and_a_process_its_only_worker() {
        let p = SystemProfile::merge(vec![SystemProfile {
            events: vec![
                ev("forward", 7, None, None, 0),
                ev("nrt_execute", 7, Some(1), None, 1),
                ev("nc_exec_running", 7, Some(1), Some(5), 2),
            ],
            ..SystemProfile::default()
        }]);
        assert_eq!(
            names(&p),
            [(
                "worker 5 (pid 7) on i-1".to_string(),
                vec![
                    "forward".into(),
                    "nrt_execute".into(),
                    "nc_exec_running".into()
                ]
            )]
        );
    }

    #[test]
    fn a_process_driving_several_workers_keeps_its_own_events_apart() {
        let p = SystemProfile::merge(vec![SystemProfile {
            events: vec![
                ev("forward", 7, None, None, 0),
                ev("nc_exec_running", 7, Some(0), Some(0), 1),
                ev("nc_exec_running", 7, Some(1), Some(1), 1),
            ],
            ..SystemProfile::default()
        }]);
        let labels: Vec<String> = names(&p).into_iter().map(|(l, _)| l).collect();
        assert_eq!(
            labels,
            [
                "process (pid 7) on i-1",
                "worker 0 (pid 7) on i-1",
                "worker 1 (pid 7) on i-1"
            ]
        );
    }
}
