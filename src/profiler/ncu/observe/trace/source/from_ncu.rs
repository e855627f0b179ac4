//! ncu's deep pass read beside in-process counters (the CUDA graph kernels they could not
//! measure, `sampling.graph_kernels: ncu`): where the reading's specs lie among the deep pass's.

use super::{deep, in_process::Cells};
use crate::analysis::MetricsFound;
use crate::region::{Cell, Coverage};

/// ncu's deep pass beside in-process counters: its specs (what its twins' cells are in), and
/// where each of the reading's specs (the counters') lies among them, by metric name.
pub(super) struct FromNcu {
    pub specs: usize,
    pub time: deep::TimeSpecs,
    at: Vec<Option<usize>>,
}

impl FromNcu {
    pub fn new(reading: &MetricsFound, (ncu, time): (MetricsFound, deep::TimeSpecs)) -> FromNcu {
        let at = reading
            .specs
            .iter()
            .map(|s| ncu.specs.iter().position(|n| n.name == s.name))
            .collect();
        FromNcu {
            specs: ncu.specs.len(),
            time,
            at,
        }
    }

    /// Values in ncu's spec order, in the reading's.
    pub fn remap<T: Clone>(&self, values: &[T], missing: T) -> Vec<T> {
        let cell = |at: &Option<usize>| at.and_then(|at| values.get(at).cloned());
        self.at
            .iter()
            .map(|at| cell(at).unwrap_or_else(|| missing.clone()))
            .collect()
    }

    /// A kernel's ncu cells (coverage, values, weight, key) as the reading's, with its in-place
    /// `time` and `start`; `None` where ncu's deep pass has no values for it either.
    pub fn joined<'i>(
        &self,
        (coverage, values, weight, key): (Coverage, Vec<Cell<'i>>, Option<f64>, Option<u64>),
        time: f64,
        start: u64,
    ) -> Option<Cells<'i>> {
        let joined = matches!(coverage, Coverage::Measured | Coverage::Estimated);
        let values = self.remap(&values, Cell::Missing);
        joined.then_some((coverage, values, weight, key, time, Some(start)))
    }
}
