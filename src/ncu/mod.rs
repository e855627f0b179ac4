//! Nsight Compute: the command-line builder, NVTX expressions, the CSV export reader and metric rollups.

pub mod analyze;
pub mod cli;
pub mod export;
pub mod log;
pub mod nvtx;
pub mod report_file;
pub mod rollup;
pub mod units;
