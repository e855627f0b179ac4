//! The checked plan as a profiler is handed it: the neutral analysis plan and the profiler's own part
//! (ncu's NVTX expressions from `regions.include`). `crate::plan` builds it through
//! [`super::Profiler::plan`]; the profilers never see the rest of the plan (outputs, templates).

use super::ncu::capture::nvtx::NvtxPlan;
use crate::analysis::AnalysisPlan;

#[derive(Debug)]
pub struct ProfilerPlan {
    pub analysis: AnalysisPlan,
    /// The NVTX expressions handed to ncu (built for every profiler: `regions.include` is checked
    /// the same way whichever runs).
    pub nvtx: NvtxPlan,
}
