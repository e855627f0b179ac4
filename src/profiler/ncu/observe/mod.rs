//! ncu's results as the shared observations the analysis spine reads: from the CSV pages
//! (`source`) or the report file (`report_source`), with readable metric labels (`labels`).
//!
//! Floor: profiler (see `crate::profiler`): imports run, process, analysis, insights, report,
//! config, region and the ground floor, and its own profiler's rooms.

pub mod adaptive;
pub mod hints;
pub mod labels;
pub mod launch_durations;
pub mod launch_key;
pub mod read_plan;
pub mod report_source;
pub mod source;
pub mod strata;
pub mod trace;
