//! The checked plan as a profiler is handed it: the neutral analysis plan and the profiler's own part
//! (ncu's NVTX expressions from `regions.include`). `crate::plan` builds it through
//! [`super::Profiler::plan`]; the profilers never see the rest of the plan (outputs, templates).

use super::ncu::capture::nvtx::NvtxPlan;
use crate::analysis::AnalysisPlan;
use crate::config::Loaded;
use crate::region::RegionFilter;
use crate::run::{RunDir, RunRecord};

#[derive(Debug)]
pub struct ProfilerPlan {
    pub analysis: AnalysisPlan,
    /// `regions.include` / `regions.exclude`, checked once: every profiler selects regions by it.
    pub regions: RegionFilter,
    /// The NVTX expressions handed to ncu (built for every profiler: `regions.include` is checked
    /// the same way whichever runs).
    pub nvtx: NvtxPlan,
    /// `pipeline.ncu.max_block_mib` in bytes: the largest `.ncu-rep` block read.
    pub max_block_bytes: u64,
}

/// One capture a profiler is asked to make, whichever profiler: the loaded configuration, the run
/// directory and its record (kept up to date), the workload after `--`, and whether progress is
/// shown.
pub struct Capture<'a> {
    pub loaded: &'a Loaded,
    pub run: &'a RunDir,
    pub record: &'a mut RunRecord,
    pub workload: &'a [String],
    pub quiet: bool,
}
