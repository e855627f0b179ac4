//! `NeuronSettings` (the `neuron:` config section: regions, hardware peaks, insights, distribution) and
//! `NeuronPipeline` (the `pipeline.neuron:` section: which tool, what to capture, how to view it).
//! Unknown keys are refused so a misspelt key fails at load time with its path.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::region::{AutoMethod, AutoRegions};

/// The `neuron:` section.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct NeuronSettings {
    pub regions: RegionSettings,
    pub hardware: HardwareSettings,
    pub insights: InsightSettings,
    pub distribution: DistributionSettings,
}

/// `neuron.regions`: one method at a time, each with its own options. The documented alias of
/// `regions.auto.*`, read only while `regions.auto.method` is `none` ([`RegionSettings::resolve`]).
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct RegionSettings {
    pub method: RegionMethod,
    pub collectives: CollectiveRegions,
    pub hierarchy: HierarchyRegions,
    pub stack_frames: StackFrameRegions,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RegionMethod {
    /// The whole profile only.
    None,
    /// Between collective operations (Neuron Explorer's Region Highlighter).
    #[default]
    Collectives,
    /// Along the framework layer/module path.
    Hierarchy,
    /// Along NKI kernel invocations.
    StackFrames,
}

impl RegionSettings {
    /// The settings a Neuron profile is cut with: `regions.auto.*` when it names a method (the keys
    /// both profilers share), else this section (`neuron.regions.*`, the alias kept for older configs).
    pub fn resolve(&self, auto: &AutoRegions) -> RegionSettings {
        let method = match auto.method {
            AutoMethod::None => return self.clone(),
            AutoMethod::Hierarchy => RegionMethod::Hierarchy,
            AutoMethod::Collectives => RegionMethod::Collectives,
            AutoMethod::StackFrames => RegionMethod::StackFrames,
        };
        let c = &auto.collectives;
        RegionSettings {
            method,
            collectives: CollectiveRegions {
                name: c.name.clone(),
                op_type_1: c.op_type_1.clone(),
                op_type_2: c.op_type_2.clone(),
                stride: c.stride,
                offset: c.offset,
                count: c.count,
            },
            hierarchy: HierarchyRegions { depth: auto.depth },
            // `regions.auto.depth` counts frames kept (1: the kernel entry); the alias counts from 0.
            stack_frames: StackFrameRegions {
                depth: auto.depth.map_or(0, |d| d.saturating_sub(1)),
            },
        }
    }
}

impl RegionMethod {
    pub fn as_str(self) -> &'static str {
        match self {
            RegionMethod::None => "none",
            RegionMethod::Collectives => "collectives",
            RegionMethod::Hierarchy => "hierarchy",
            RegionMethod::StackFrames => "stack_frames",
        }
    }
}

/// `neuron.regions.collectives`: the Region Highlighter's Name, Op Type 1, Op Type 2, Stride, Offset,
/// Count. A region opens at the end of an `op_type_1` collective (or the profile start) and closes at the
/// trigger (else start) of the next `op_type_2` collective; of those candidates, `offset` are skipped,
/// then every `stride`-th is kept, at most `count`. An unset op type matches any collective.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct CollectiveRegions {
    pub name: String,
    pub op_type_1: Option<String>,
    pub op_type_2: Option<String>,
    pub stride: usize,
    pub offset: usize,
    pub count: Option<usize>,
}

impl Default for CollectiveRegions {
    fn default() -> Self {
        CollectiveRegions {
            name: "segment".into(),
            op_type_1: None,
            op_type_2: None,
            stride: 1,
            offset: 0,
            count: None,
        }
    }
}

/// `neuron.regions.hierarchy` (alias of `regions.auto.depth`): depth counts layer path components (`2`
/// → `model/NeuronLlamaModel[0]`); unset, the layer level (the first depth where siblings repeat).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct HierarchyRegions {
    pub depth: Option<usize>,
}

/// `neuron.regions.stack_frames` (alias of `regions.auto.depth` minus one): depth counts frames from the kernel entry (`0` → the kernel itself).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct StackFrameRegions {
    pub depth: usize,
}

/// `neuron.hardware`: peaks for MFU/HFU/MBU. Unset values are derived from the profile's own summary
/// (see docs/neuron.md); with neither, those metrics are unknown.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct HardwareSettings {
    /// FLOP/s of one NeuronCore at the profiled data type.
    pub peak_flops: Option<f64>,
    /// HBM bytes/s available to one NeuronCore.
    pub peak_bandwidth: Option<f64>,
}

/// `neuron.insights`.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct InsightSettings {
    /// Rules file; `None` uses the shipped `conf/neuron/rules.yaml`.
    pub rules: Option<PathBuf>,
    /// Most insights shown per region.
    pub max: usize,
}

impl Default for InsightSettings {
    fn default() -> Self {
        InsightSettings {
            rules: None,
            max: 4,
        }
    }
}

/// `neuron.distribution`.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct DistributionSettings {
    /// A region is an outlier when its duration is more than this many times the group median, or less
    /// than the median divided by it.
    pub outlier_factor: f64,
}

impl Default for DistributionSettings {
    fn default() -> Self {
        DistributionSettings {
            outlier_factor: 1.5,
        }
    }
}
