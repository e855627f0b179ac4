//! The checked plan as a profiler is handed it: each adapter's own plan, built and checked by its
//! own `plan` function through [`super::Profiler::plan`], each holding the neutral analysis plan and
//! the region filter (`regions.include` / `regions.exclude`, read once by `crate::plan`).
//! `crate::plan` builds it; the profilers never see the rest of the plan (outputs, templates).

use super::ncu::NcuPlan;
use super::neuron::NeuronPlan;
use crate::analysis::AnalysisPlan;
use crate::region::RegionFilter;

/// One profiler's plan; the steps that take it follow it to its adapter.
#[derive(Debug)]
pub enum ProfilerPlan {
    Ncu(NcuPlan),
    Neuron(NeuronPlan),
}

impl ProfilerPlan {
    /// The neutral analysis plan, whichever profiler.
    pub fn analysis(&self) -> &AnalysisPlan {
        match self {
            ProfilerPlan::Ncu(plan) => &plan.analysis,
            ProfilerPlan::Neuron(plan) => &plan.analysis,
        }
    }

    /// The region filter every profiler selects its regions by, whichever profiler.
    pub fn regions(&self) -> &RegionFilter {
        match self {
            ProfilerPlan::Ncu(plan) => &plan.regions,
            ProfilerPlan::Neuron(plan) => &plan.regions,
        }
    }
}

impl From<NcuPlan> for ProfilerPlan {
    fn from(plan: NcuPlan) -> Self {
        ProfilerPlan::Ncu(plan)
    }
}

/// A plan made for another profiler than the one asked for.
#[derive(Debug)]
pub struct OtherProfiler;

impl<'p> TryFrom<&'p ProfilerPlan> for &'p NcuPlan {
    type Error = OtherProfiler;

    fn try_from(plan: &'p ProfilerPlan) -> Result<Self, OtherProfiler> {
        match plan {
            ProfilerPlan::Ncu(own) => Ok(own),
            _ => Err(OtherProfiler),
        }
    }
}

impl<'p> TryFrom<&'p ProfilerPlan> for &'p NeuronPlan {
    type Error = OtherProfiler;

    fn try_from(plan: &'p ProfilerPlan) -> Result<Self, OtherProfiler> {
        match plan {
            ProfilerPlan::Neuron(own) => Ok(own),
            _ => Err(OtherProfiler),
        }
    }
}

impl From<NeuronPlan> for ProfilerPlan {
    fn from(plan: NeuronPlan) -> Self {
        ProfilerPlan::Neuron(plan)
    }
}
