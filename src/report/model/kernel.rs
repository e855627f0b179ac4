//! Kernels (results by name) and the kernel selection that kept them.

use serde::Serialize;

use super::MetricMap;

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

#[derive(Debug, Clone, Serialize)]
pub struct Kernel {
    /// The name as the profiler recorded it (a demangled signature, for GPU kernels).
    pub name: String,
    /// Base function name, for display.
    pub function: String,
    pub count: u64,
    pub metrics: MetricMap,
}
