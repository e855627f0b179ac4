//! Neuron profiles: readers, regions, metrics, insights and the capture builders, on fixtures whose
//! timeline is written down in tests/fixtures/neuron/README.md.

mod analysis;
mod cli;
mod cli_report;
mod cli_start;
mod cli_workers;
mod diff;
mod driver;
mod idle;
mod many_subgraphs;
mod parquet;
mod parquet_gen;
mod parsers;
mod real_layout;
mod real_outputs;
mod real_profiles;
mod regions;
mod robust;
mod selection;
mod settings;
mod summary_checks;
mod summary_rows;
mod system;
mod system_bounds;
mod system_fuzz;
mod system_gen;
mod system_once;
mod system_report;
mod view_serves;

use std::path::PathBuf;

use crate::common::fixture;

/// The four-layer tensor-parallel decoder profile (full JSON).
pub fn decoder_json() -> PathBuf {
    fixture("neuron/llama_tp_decoder.json")
}

/// The original timestamp the fixture's timeline starts at (rebased to 0 by the readers).
pub const BASE_NS: u64 = 1_763_800_000_000_000_000;

pub const MIB: f64 = 1_048_576.0;
