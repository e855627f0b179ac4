//! profile-run: profile only the marked regions of a GPU (or Neuron) workload and report per region.
//!
//! Data flows one way (docs/architecture.md): `commands` → `plan` / `run` → `profiler` → `analysis`
//! → `region` → `report`. `cli` parses arguments, `config` resolves layered presets, `plan` checks them
//! before anything runs, `process` runs the profiler, `profiler/*` knows each tool and its formats,
//! `analysis` and `region` are the profiler-neutral spine and core, `insights` evaluates rules as
//! data, and `report` holds the model and one renderer per output format.

pub mod analysis;
pub mod cli;
pub mod commands;
pub mod config;
pub mod console;
pub mod error;
pub mod exit;
pub mod fast_map;
pub mod file_kind;
pub mod insights;
pub mod parallel;
pub mod plan;
pub mod process;
pub mod profiler;
pub mod region;
pub mod report;
pub mod run;
