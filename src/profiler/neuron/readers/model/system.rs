//! A Neuron system profile (`NEURON_RT_INSPECT_SYSTEM_PROFILE`): the runtime's, the device's and the
//! framework's events on the host timeline, each tagged with the instance, process and worker that
//! produced it, and the device profiles the run captured. Several instances' system profiles merge
//! into one run (`SystemProfile::merge`). Times are the profile's own Unix nanoseconds.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Serialize;

/// One row of `SystemProfileEvents`.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct SystemEvent {
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
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
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

/// Who produced an event: the Neuron counterpart of a GPU rank. `worker_gid` where the profile has
/// it (unique across the workload); else the process and its NeuronCore on that instance.
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
            // With a global worker id, the process and core are not part of who it is.
            process_id: if e.worker_gid.is_some() {
                0
            } else {
                e.process_id
            },
            nc_idx: if e.worker_gid.is_some() {
                None
            } else {
                e.nc_idx
            },
        }
    }

    /// `i-0b1e… worker 3`, `i-0b1e… pid 4242 nc 1`, `i-0b1e… pid 4242`.
    pub fn label(&self) -> String {
        match (self.worker_gid, self.nc_idx) {
            (Some(w), _) => format!("{} worker {w}", self.instance_id),
            (None, Some(nc)) => format!("{} pid {} nc {nc}", self.instance_id, self.process_id),
            (None, None) => format!("{} pid {}", self.instance_id, self.process_id),
        }
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
}

impl SystemProfile {
    /// Several instances' profiles as one run: every event, device profile and metadata kept, events
    /// in time order.
    pub fn merge(parts: Vec<SystemProfile>) -> SystemProfile {
        let mut out = SystemProfile::default();
        for p in parts {
            out.sources.extend(p.sources);
            out.events.extend(p.events);
            out.devices.extend(p.devices);
            out.metadata.extend(p.metadata);
        }
        out.events.sort_by_key(|e| (e.start_ns, e.end_ns));
        out
    }

    /// The events of each worker, workers in order (instance, then worker id or process and core).
    pub fn by_worker(&self) -> BTreeMap<WorkerKey, Vec<&SystemEvent>> {
        let mut out: BTreeMap<WorkerKey, Vec<&SystemEvent>> = BTreeMap::new();
        for e in &self.events {
            out.entry(WorkerKey::of(e)).or_default().push(e);
        }
        out
    }
}
