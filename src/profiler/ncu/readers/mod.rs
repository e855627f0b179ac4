//! ncu's file formats, read as they are: the CSV pages `ncu --import --page raw|details` writes
//! (`export/`) and the `.ncu-rep` report file itself (`report_file/`, format in
//! docs/ncu-report-format.md), units normalised as they are read (`units`) and the rollup rule of
//! each metric (`rollup`). Nothing here knows regions or the report model.
//!
//! Floor: profiler (see `crate::profiler`): imports run, process, analysis, insights, report,
//! config, region and the ground floor, and its own profiler's rooms.

pub mod export;
pub mod report_file;
pub mod rollup;
pub mod siblings;
pub mod trace;
pub mod units;
