//! Kernel names as the report shows them: a trace holds the mangled names, the report and trace.json
//! the demangled ones.
//!
//! Floor: profiler (see `crate::profiler`): imports run, process, analysis, insights, report,
//! config, region and the ground floor, and its own profiler's rooms.

/// A mangled name as C++ reads it (`void gemm<float>(float*)`); the mangled name where it does not
/// demangle (C kernels, names of other languages).
pub(super) fn demangle(mangled: &str) -> String {
    cpp_demangle::Symbol::new(mangled)
        .ok()
        .and_then(|s| s.demangle().ok())
        .unwrap_or_else(|| mangled.to_string())
}
