//! Neuron's own part of the checked plan: its settings checked before anything starts (NEFF mode
//! names a NEFF that exists, the rules file loads, the outlier factor is a factor) by
//! `capture::check_config`, the neutral analysis plan and the region filter it is handed.

use crate::analysis::AnalysisPlan;
use crate::region::RegionFilter;

/// What a Neuron run and its reading are handed, fully checked. Neuron's region methods and rules
/// read their settings from the configuration; the analysis plan and the region filter are what the
/// seam holds in common.
#[derive(Debug, Clone)]
pub struct NeuronPlan {
    pub analysis: AnalysisPlan,
    /// `regions.include` / `regions.exclude`, read once: which of a method's regions are kept.
    pub regions: RegionFilter,
}
