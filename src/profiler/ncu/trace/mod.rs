//! The CUPTI timing source (`pipeline.ncu.timing: trace`): the workload runs unprofiled with the
//! injection library of `crates/cupti-trace`, which writes one trace per process; the traces are read
//! ([`file`]), every kernel is given the NVTX ranges open at its launch ([`attribute`]) and handed to
//! the spine with its in-place time ([`source`]). [`capture`] runs the workload so.

pub mod attribute;
pub mod capture;
pub mod deep;
pub mod file;
pub mod source;
