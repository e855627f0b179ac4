//! profile-run: profile only the NVTX-marked regions of a GPU workload and report per region.
//!
//! Layout: `cli` parses arguments, `config` resolves layered presets, `ncu` builds the profiler command
//! and reads its exports, `process` runs it, `region` is the profiler-neutral region core, `report`
//! renders the model, and `app` ties the commands together.

pub mod app;
pub mod cli;
pub mod config;
pub mod error;
pub mod fast_map;
pub mod insights;
pub mod ncu;
pub mod parallel;
pub mod process;
pub mod profiler;
pub mod region;
pub mod report;
pub mod run_dir;
