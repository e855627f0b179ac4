//! Nsight Compute: the command-line builder, NVTX expressions, the CSV export reader and metric rollups.

pub mod cli;
pub mod export;
pub mod nvtx;
pub mod rollup;
pub mod units;
pub mod analyze;
pub mod log;
