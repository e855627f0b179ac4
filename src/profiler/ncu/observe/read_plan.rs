//! What reading ncu's captures takes of the checked plan ([`crate::profiler::ncu::plan::NcuPlan`]
//! hands it over): the analysis, the regions, the NVTX includes, the largest block read and what
//! planning the deep pass already read of the first pass.

use crate::analysis::AnalysisPlan;
use crate::region::RegionFilter;

use super::launch_durations::FirstRead;

/// The plan as the readers see it.
#[derive(Debug, Clone, Copy)]
pub struct ReadPlan<'p> {
    pub analysis: &'p AnalysisPlan,
    pub regions: &'p RegionFilter,
    /// Raw `--nvtx-include` expressions, for the trailing-`/` hint when nothing ran in a range.
    pub nvtx_include: &'p [String],
    /// `pipeline.ncu.max_block_mib` in bytes.
    pub max_block: u64,
    pub first_read: &'p FirstRead,
}
