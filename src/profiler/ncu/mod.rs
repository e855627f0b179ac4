//! Nsight Compute, in the same rooms as every profiler: `capture/` (the command line, the run, its
//! log and diagnosis, sampled runs, finding captures again), `readers/` (ncu's CSV pages and its
//! `.ncu-rep` report file, units and rollup rules) and `observe/` (what was read → the shared
//! observations, with metric labels).
//!
//! Floor: profiler. May import the floors below (run, process, analysis, insights, report, config,
//! region, ground) and `crate::profiler`'s own files; nothing outside `src/profiler/` imports it.

pub mod capture;
pub mod observe;
pub mod readers;
