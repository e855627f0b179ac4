//! The counters the injection library collected inside the traced process (trace format 3,
//! `PROFILE_RUN_DEEP_METRICS`): the metric names, each device's chip and pass count, each profiled
//! launch with its values per kernel and metric, and why any are missing. Checked across lines
//! (metric order, values naming a profiled launch, range and metric read before them, nothing given
//! twice) and joined to the kernel records by correlation id once the trace is read.

use trace_format::{LineError, Record};

use super::ProcessTrace;
use crate::fast_map::FastMap;

/// In-process counters of one trace; empty for a trace with none (versions 1 and 2 included).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct InProcessCounters {
    /// ncu metric names, in the order of each launch's values.
    pub metrics: Vec<String>,
    /// Each device the library profiled on: CUPTI's chip name and the metric set's replay passes.
    pub chips: Vec<ChipPasses>,
    /// Profiled launches, in file order.
    pub launches: Vec<ProfiledLaunch>,
    /// Why counters are missing (a metric the chip lacks, a launch CUPTI measured nothing in), as
    /// the library wrote it.
    pub errors: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChipPasses {
    pub device: u32,
    pub chip: String,
    pub passes: u32,
}

/// One launch profiled in place (kernel replay around its launch call).
#[derive(Debug, Clone, PartialEq)]
pub struct ProfiledLaunch {
    /// The launch call's correlation id, which its kernel records carry.
    pub correlation: u32,
    /// Host time profiling added to the launch call (replay passes, decoding, evaluation), in ns.
    pub cost_ns: u64,
    /// `values[kernel][metric]`: one row per kernel CUPTI measured in the launch; `None` where the
    /// library wrote no value (it said why in [`InProcessCounters::errors`]).
    pub values: Vec<Vec<Option<f64>>>,
    /// Index into [`ProcessTrace::kernels`] of the launch's kernel, for a launch of one kernel whose
    /// record the trace holds.
    pub kernel: Option<usize>,
}

/// Files the counter records of a trace being read.
#[derive(Default)]
pub(super) struct CounterLines {
    counters: InProcessCounters,
    by_correlation: FastMap<u32, usize>,
}

impl CounterLines {
    /// Files `record` when it is a counter record (`Ok(true)`); `version` is the trace's format.
    pub(super) fn add(&mut self, record: &Record<'_>, version: u32) -> Result<bool, LineError> {
        let is_counter = matches!(
            record,
            Record::DeepSet(_)
                | Record::Metric(_)
                | Record::Profiled(_)
                | Record::Value(_)
                | Record::DeepError(_)
        );
        if is_counter && version < 3 {
            return Err(LineError(format!(
                "an in-process counter record in a version {version} trace, which has none (they came with version 3)"
            )));
        }
        let c = &mut self.counters;
        match record {
            Record::DeepSet(d) => c.chips.push(ChipPasses {
                device: d.device,
                chip: d.chip.to_string(),
                passes: d.passes,
            }),
            Record::Metric(m) => {
                if m.index as usize != c.metrics.len() {
                    return Err(LineError(format!(
                        "metric index {} out of order (expected {})",
                        m.index,
                        c.metrics.len()
                    )));
                }
                c.metrics.push(m.name.to_string());
            }
            Record::Profiled(p) => {
                if self.by_correlation.contains_key(&p.correlation) {
                    return Err(LineError(format!(
                        "launch {} is profiled twice; a correlation id names one launch",
                        p.correlation
                    )));
                }
                self.by_correlation.insert(p.correlation, c.launches.len());
                c.launches.push(ProfiledLaunch {
                    correlation: p.correlation,
                    cost_ns: p.cost_ns,
                    values: vec![vec![None; c.metrics.len()]; p.ranges as usize],
                    kernel: None,
                });
            }
            Record::Value(v) => self.value(v)?,
            Record::DeepError(e) => c.errors.push(e.text.to_string()),
            _ => {}
        }
        Ok(is_counter)
    }

    fn value(&mut self, v: &trace_format::Value) -> Result<(), LineError> {
        let Some(&at) = self.by_correlation.get(&v.correlation) else {
            return Err(LineError(format!(
                "a value of launch {}, which no `profiled` line before it names",
                v.correlation
            )));
        };
        let metrics = self.counters.metrics.len();
        let launch = &mut self.counters.launches[at];
        let ranges = launch.values.len();
        let Some(row) = launch.values.get_mut(v.range as usize) else {
            return Err(LineError(format!(
                "field 2 (range) is {}, but launch {} measured {ranges} kernels",
                v.range, v.correlation
            )));
        };
        let Some(cell) = row.get_mut(v.metric as usize) else {
            return Err(LineError(format!(
                "field 3 (metric index) is {}, but only {metrics} metrics precede it",
                v.metric
            )));
        };
        if cell.is_some() {
            return Err(LineError(format!(
                "launch {} range {} metric {} is given twice",
                v.correlation, v.range, v.metric
            )));
        }
        *cell = Some(v.value);
        Ok(())
    }

    /// The counters, each one-kernel launch joined to its kernel record (`trace.kernels` is in its
    /// final order).
    pub(super) fn finish(self, trace: &mut ProcessTrace) {
        let mut counters = self.counters;
        let mut kernel_of: FastMap<u32, Option<usize>> = FastMap::default();
        for (at, k) in trace.kernels.iter().enumerate() {
            kernel_of
                .entry(k.correlation)
                .and_modify(|seen| *seen = None)
                .or_insert(Some(at));
        }
        for launch in &mut counters.launches {
            if launch.values.len() == 1 {
                launch.kernel = kernel_of.get(&launch.correlation).copied().flatten();
            }
        }
        trace.counters = counters;
    }
}
