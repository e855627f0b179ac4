//! ncu's own part of the checked plan (built and checked by `capture::plan`): the NVTX expressions
//! from `regions.include`, the largest report-file block read, and the passes a run makes. The
//! passes are decided here once, from the settled `pipeline.ncu.timing` and
//! `pipeline.ncu.sampling.enabled`; every step that differs by them matches on [`Passes`] rather
//! than reading the settings again.

use crate::analysis::AnalysisPlan;
use crate::config::{Config, DeepEngine, TimingSource};
use crate::region::RegionFilter;

use super::nvtx::NvtxPlan;
use super::observe::launch_durations::FirstRead;
use super::observe::read_plan::ReadPlan;
use super::observe::trace::inprocess::KeptIndex;

/// What an ncu run and its reading are handed, fully checked.
#[derive(Debug, Clone)]
pub struct NcuPlan {
    pub analysis: AnalysisPlan,
    /// `regions.include` / `regions.exclude`, read once: the NVTX expressions are built from it,
    /// and the trace (which no ncu filtered) selects its kernels by it.
    pub regions: RegionFilter,
    /// The NVTX expressions handed to ncu, built from `regions`.
    pub nvtx: NvtxPlan,
    /// `pipeline.ncu.max_block_mib` in bytes: the largest `.ncu-rep` block read.
    pub max_block_bytes: u64,
    pub passes: Passes,
    /// What planning the deep pass read of ncu's timing pass, for the report of the same run.
    pub first_read: FirstRead,
    /// The in-process counters' index planning built of the traces, for the report of the same run.
    pub first_index: KeptIndex,
}

impl NcuPlan {
    /// What reading this run's captures takes of the plan.
    pub fn reading(&self) -> ReadPlan<'_> {
        ReadPlan {
            analysis: &self.analysis,
            regions: &self.regions,
            nvtx_include: &self.nvtx.include,
            max_block: self.max_block_bytes,
            first_read: &self.first_read,
        }
    }
}

/// Where kernel times come from: the pass every run starts with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FirstPass {
    /// ncu's own pass (a sampled run's timing pass): its time metric, measured on the serialized
    /// replay.
    Ncu,
    /// The CUPTI trace: the workload run unprofiled with the injection library.
    Trace,
}

/// The passes of one run: the first, whether it collects a sampled run's deep metrics itself (the
/// trace pass, in process), and whether a sampled run's deep pass under ncu follows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Passes {
    pub first: FirstPass,
    /// The trace pass collects the deep metrics in the traced process (`deep_engine`).
    pub in_place: bool,
    pub deep: bool,
}

impl Passes {
    /// The passes a configuration asks for. `timing: auto` is settled before a run is planned
    /// (`settle`); a plan that reads captures again never runs a pass, so there it is
    /// taken as ncu's.
    pub fn of(config: &Config) -> Passes {
        let ncu = &config.pipeline.ncu;
        let first = match ncu.timing {
            TimingSource::Trace => FirstPass::Trace,
            TimingSource::Ncu | TimingSource::Auto => FirstPass::Ncu,
        };
        let in_place = ncu.sampling.enabled
            && first == FirstPass::Trace
            && ncu.sampling.deep_engine != DeepEngine::Ncu;
        Passes {
            first,
            in_place,
            deep: ncu.sampling.enabled && !in_place,
        }
    }

    /// Whether any pass runs under ncu (a time-only traced run starts none).
    pub fn runs_ncu(self) -> bool {
        self.first == FirstPass::Ncu || self.deep
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::DEFAULT_PRESET;

    #[test]
    fn the_passes_follow_the_settled_timing_and_sampling() {
        let mut config: Config = serde_yaml::from_str(DEFAULT_PRESET).unwrap();
        config.pipeline.ncu.timing = TimingSource::Ncu;
        config.pipeline.ncu.sampling.enabled = false;
        let ncu_only = Passes::of(&config);
        assert_eq!((ncu_only.first, ncu_only.deep), (FirstPass::Ncu, false));
        assert!(ncu_only.runs_ncu());
        config.pipeline.ncu.timing = TimingSource::Trace;
        let trace_only = Passes::of(&config);
        assert_eq!(trace_only.first, FirstPass::Trace);
        assert!(
            !trace_only.runs_ncu(),
            "a time-only traced run starts no ncu"
        );
        config.pipeline.ncu.sampling.enabled = true;
        config.pipeline.ncu.sampling.deep_engine = DeepEngine::Ncu;
        let traced_deep = Passes::of(&config);
        assert!(traced_deep.deep && traced_deep.runs_ncu() && !traced_deep.in_place);
        for engine in [DeepEngine::Auto, DeepEngine::InProcess] {
            config.pipeline.ncu.sampling.deep_engine = engine;
            let in_place = Passes::of(&config);
            assert!(in_place.in_place && !in_place.deep, "{engine}: one launch");
            assert!(!in_place.runs_ncu(), "{engine}: no ncu at all");
        }
        config.pipeline.ncu.timing = TimingSource::Ncu;
        let timed_by_ncu = Passes::of(&config);
        assert!(
            timed_by_ncu.deep && !timed_by_ncu.in_place,
            "ncu's timing pass: ncu's deep pass"
        );
        config.pipeline.ncu.timing = TimingSource::Auto;
        assert_eq!(Passes::of(&config).first, FirstPass::Ncu);
    }
}
