//! The CUPTI timing source (`pipeline.ncu.timing: trace`) as observations: the workload runs
//! unprofiled with the injection library of `crates/cupti-trace` (`capture::trace`), which writes one
//! trace per process; the traces are read (`readers::trace`), every kernel is given the NVTX ranges
//! open at its launch ([`attribute`]) and handed to the spine with its in-place time ([`source`]);
//! a sampled run's deep pass is joined to them ([`deep`]); trace.json replays them on their real
//! times ([`timeline`]).
//!
//! Floor: profiler (see `crate::profiler`): imports run, process, analysis, insights, report,
//! config, region and the ground floor, and its own profiler's rooms.

pub mod attribute;
pub mod deep;
mod demangle;
pub(crate) mod inprocess;
pub mod source;
pub mod timeline;
