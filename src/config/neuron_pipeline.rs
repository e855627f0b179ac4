//! `NeuronPipeline`: the `pipeline.neuron:` section, how a Neuron profile is captured (runtime inspect
//! for framework workloads, or `capture` of one NEFF) and viewed. Unknown keys are refused.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct NeuronPipeline {
    /// The profiler binary; `neuron-profile` (same interface, end of support in Neuron 2.29) is tried
    /// when this one is not on PATH.
    pub executable: String,
    pub fallback_executable: String,
    pub mode: CaptureMode,
    /// The NEFF to capture (`mode: neff`).
    pub neff: Option<PathBuf>,
    pub capture: CaptureOptions,
    pub view: ViewOptions,
    pub inspect: InspectOptions,
}

impl Default for NeuronPipeline {
    fn default() -> Self {
        NeuronPipeline {
            executable: "neuron-explorer".into(),
            fallback_executable: "neuron-profile".into(),
            mode: CaptureMode::Inspect,
            neff: None,
            capture: CaptureOptions::default(),
            view: ViewOptions::default(),
            inspect: InspectOptions::default(),
        }
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CaptureMode {
    /// Run the workload with the runtime's inspect environment, then view each NEFF/NTFF pair.
    #[default]
    Inspect,
    /// `capture` one NEFF (`pipeline.neuron.neff`), then view it.
    Neff,
}

/// `pipeline.neuron.capture`: flags of `capture`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct CaptureOptions {
    /// Profile the N-th execution (the first carries ~1 ms of library start-up); `None` leaves it out.
    pub profile_nth_exec: Option<u32>,
    pub num_exec: Option<u32>,
    /// `-r/--collectives-workers-per-node`.
    pub workers_per_node: Option<u32>,
    /// `--collectives-worker-count`.
    pub worker_count: Option<u32>,
    pub ignore_exec_errors: bool,
    /// Passed after the flags above, verbatim.
    pub extra_args: Vec<String>,
}

impl Default for CaptureOptions {
    fn default() -> Self {
        CaptureOptions {
            profile_nth_exec: Some(2),
            num_exec: None,
            workers_per_node: None,
            worker_count: None,
            ignore_exec_errors: false,
            extra_args: Vec::new(),
        }
    }
}

/// `pipeline.neuron.view`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct ViewOptions {
    pub format: ViewFormat,
    pub extra_args: Vec<String>,
}

/// `view --output-format`. Parquet is the tool's default and its future; full JSON ends with Neuron 2.33.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ViewFormat {
    #[default]
    Parquet,
    Json,
    SummaryJson,
    SummaryText,
}

impl ViewFormat {
    pub fn as_arg(self) -> &'static str {
        match self {
            ViewFormat::Parquet => "parquet",
            ViewFormat::Json => "json",
            ViewFormat::SummaryJson => "summary-json",
            ViewFormat::SummaryText => "summary-text",
        }
    }

    /// The output name `view` is asked to write for one capture (Parquet: a directory; see
    /// [`crate::profiler::neuron::capture::cli::view_output`] for finding what was written).
    pub fn file_name(self, stem: &str) -> String {
        match self {
            ViewFormat::Parquet => stem.to_string(),
            ViewFormat::Json => format!("{stem}.json"),
            ViewFormat::SummaryJson => format!("{stem}.summary.json"),
            ViewFormat::SummaryText => format!("{stem}.summary.txt"),
        }
    }
}

/// `pipeline.neuron.inspect`: the runtime's inspect environment for framework workloads.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct InspectOptions {
    pub framework: Framework,
    /// `NEURON_RT_INSPECT_DEVICE_PROFILE`; `session` is required on PJRT runtimes.
    pub device_profile: DeviceProfile,
    pub system_profile: bool,
    /// `NEURON_RT_INSPECT_EVENT_FILTER_NC`, e.g. `0,1`.
    pub event_filter_nc: Option<String>,
    /// `NEURON_RT_INSPECT_EVENT_FILTER_TYPE`.
    pub event_filter_type: Option<String>,
    /// `XLA_IR_DEBUG=1 XLA_HLO_DEBUG=1`: layer paths and stack frames in the profile (compile time).
    pub debug_info: bool,
    /// `NEURON_FRAMEWORK_DEBUG=1`: NKI source locations and stack frames (compile time).
    pub nki_debug: bool,
}

impl Default for InspectOptions {
    fn default() -> Self {
        InspectOptions {
            framework: Framework::Pytorch,
            device_profile: DeviceProfile::On,
            system_profile: false,
            event_filter_nc: None,
            event_filter_type: None,
            debug_info: true,
            nki_debug: true,
        }
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Framework {
    #[default]
    Pytorch,
    /// JAX is profiled through `jax.profiler.trace`; the inspect switch is not set.
    Jax,
}

/// `NEURON_RT_INSPECT_DEVICE_PROFILE`: `1` (or `on`), `model` or `session`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(into = "String")]
pub enum DeviceProfile {
    #[default]
    On,
    Model,
    Session,
}

impl DeviceProfile {
    pub fn as_env(self) -> &'static str {
        match self {
            DeviceProfile::On => "1",
            DeviceProfile::Model => "model",
            DeviceProfile::Session => "session",
        }
    }
}

impl From<DeviceProfile> for String {
    fn from(d: DeviceProfile) -> String {
        d.as_env().to_string()
    }
}

/// YAML reads `1` as a number and `"1"`/`on` as text: all three mean the same.
impl<'de> Deserialize<'de> for DeviceProfile {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Int(u64),
            Text(String),
        }
        match Raw::deserialize(d)? {
            Raw::Int(1) => Ok(DeviceProfile::On),
            Raw::Text(t) => match t.as_str() {
                "1" | "on" => Ok(DeviceProfile::On),
                "model" => Ok(DeviceProfile::Model),
                "session" => Ok(DeviceProfile::Session),
                other => Err(serde::de::Error::custom(format!(
                    "unknown device_profile `{other}`; expected 1, model or session"
                ))),
            },
            Raw::Int(n) => Err(serde::de::Error::custom(format!(
                "unknown device_profile `{n}`; expected 1, model or session"
            ))),
        }
    }
}
