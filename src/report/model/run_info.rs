//! What a report was made from: the command lines, the profiler, the platform and the sources.

use std::collections::BTreeMap;

use serde::Serialize;

use super::FlaggedRank;

#[derive(Debug, Clone, Serialize)]
pub struct RunInfo {
    /// The workload command line, when known (empty for a report made from a bare export).
    pub command: Vec<String>,
    /// The profiler command line, when known.
    pub profiler_command: Vec<String>,
    pub profiler: ProfilerInfo,
    /// Where the inputs were captured, as they record it: device models and driver.
    pub platform: Platform,
    /// SHA-256 of the resolved configuration (YAML), first 16 hex digits.
    pub config_fingerprint: String,
    /// The export files the numbers come from; for a sampled run the timing pass's, then
    /// `sampling.deep_sources`.
    pub sources: Vec<String>,
    /// Why the report covers only part of the run (the workload exited non-zero, the profiler was
    /// killed, the run was interrupted), as `run.json` recorded it; `null` for a run that ended well
    /// or when no run was recorded (a bare export).
    pub partial: Option<String>,
    /// Ranks of a merged run that are missing or whose capture is partial: their numbers are not
    /// the whole job's, so the Summary names them (empty when none is).
    pub flagged_ranks: Vec<FlaggedRank>,
}

/// The profiler that made the inputs, as its adapter describes it.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ProfilerInfo {
    /// The profiler's name, as its adapter gives it.
    pub name: String,
    /// Its version, when known.
    pub version: Option<String>,
    /// The settings that shape what a result is and how numbers compare between runs, named by the
    /// adapter, as recorded or inferred; a setting the inputs do not tell is absent.
    pub settings: BTreeMap<String, String>,
}

/// The hardware and driver the inputs were captured on, as the inputs record them; nothing is
/// guessed, so a source that does not record them leaves `devices` empty and `driver` null.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Platform {
    /// Each device the inputs list, once per (id, model), in the order first listed.
    pub devices: Vec<DeviceModel>,
    /// The driver as the inputs name it (`CUDA 13.0`: the CUDA version the driver supports), `null`
    /// when not recorded; several inputs that disagree are listed joined by `, `.
    pub driver: Option<String>,
    /// The runtime and libraries the workload ran with, as the inputs name them (`Neuron runtime
    /// 2.29.40 (f954c), collectives 2.29.41, compiler 2.22.12471.0+b4a00d10`); `null` when not recorded.
    pub runtime: Option<String>,
}

/// One device of [`Platform::devices`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DeviceModel {
    /// The device's id as the scopes name it (`Scope::device`).
    pub id: String,
    /// Its model (`NVIDIA H100 80GB HBM3`).
    pub model: String,
}

impl Platform {
    /// Adds a device unless the same (id, model) is already listed.
    pub fn add_device(&mut self, id: String, model: String) {
        if !self.devices.iter().any(|d| d.id == id && d.model == model) {
            self.devices.push(DeviceModel { id, model });
        }
    }

    /// Adds a driver name unless it is already named.
    pub fn add_driver(&mut self, driver: &str) {
        match &mut self.driver {
            Some(known) if known.split(", ").any(|d| d == driver) => {}
            Some(known) => *known = format!("{known}, {driver}"),
            None => self.driver = Some(driver.to_string()),
        }
    }

    /// The distinct models, in order: what `GPU` lines show and what comparisons check.
    pub fn models(&self) -> Vec<&str> {
        let mut models: Vec<&str> = Vec::new();
        for d in &self.devices {
            if !models.contains(&d.model.as_str()) {
                models.push(&d.model);
            }
        }
        models
    }
}
