//! Neuron's own part of the checked plan: its settings checked before anything starts (NEFF mode
//! names a NEFF that exists, the rules file loads, the outlier factor is a factor) by
//! `capture::check_config`, and the neutral analysis plan it is handed.

use crate::analysis::AnalysisPlan;

/// What a Neuron run and its reading are handed, fully checked. Neuron's region methods and rules
/// read their settings from the configuration; the analysis plan is what the seam holds in common.
#[derive(Debug, Clone)]
pub struct NeuronPlan {
    pub analysis: AnalysisPlan,
}
