//! Nsight Compute: the command-line builder, NVTX expressions, the CSV export reader, the native
//! report-file reader and metric rollups.

pub mod capture;
pub mod cli;
pub mod diagnose;
pub mod export;
pub mod export_pages;
pub mod inputs;
pub mod labels;
pub mod log;
pub mod nvtx;
pub mod report_file;
pub mod report_source;
pub mod rollup;
pub mod sampling;
pub mod source;
pub mod trace;
pub mod units;
