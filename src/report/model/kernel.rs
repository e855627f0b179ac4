//! Kernels (results by name) and the kernel selection that kept them.

use serde::Serialize;

use super::MetricMap;
use crate::config::{KernelNameBase, KernelSelection};

#[derive(Debug, Clone, Serialize)]
pub struct KernelSelectionInfo {
    pub include: Vec<String>,
    pub exclude: Vec<String>,
    /// `demangled` or `function`.
    pub name_base: String,
    /// Results kept by the selection, over all scopes.
    pub results_selected: u64,
    /// Results dropped by the selection, over all scopes.
    pub results_excluded: u64,
}

impl KernelSelectionInfo {
    /// What `report.kernels` selects, with `selected` results kept and none dropped yet.
    pub fn of(kernels: &KernelSelection, selected: u64) -> KernelSelectionInfo {
        KernelSelectionInfo {
            include: kernels.include.clone(),
            exclude: kernels.exclude.clone(),
            name_base: match kernels.name_base {
                KernelNameBase::Demangled => "demangled",
                KernelNameBase::Function => "function",
            }
            .to_string(),
            results_selected: selected,
            results_excluded: 0,
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Kernel {
    /// The name as the profiler recorded it (a demangled signature, for GPU kernels).
    pub name: String,
    /// Base function name, for display.
    pub function: String,
    pub count: u64,
    pub metrics: MetricMap,
}
