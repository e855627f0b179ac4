//! The counters' index an in-process run's planning built of its traces (the CUDA graph kernels'
//! check), kept for the report of the same run: each trace is read once to plan and once to report.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};

use super::InProcessIndex;
use crate::profiler::ncu::readers::trace::TraceInput;

/// The traces' paths, in order, and their index.
type Kept = Option<(Vec<PathBuf>, InProcessIndex)>;

/// Clones share what is kept; the report takes it.
#[derive(Debug, Clone, Default)]
pub struct KeptIndex(Arc<Mutex<Kept>>);

impl KeptIndex {
    /// Keeps the `index` of the traces `inputs`.
    pub(crate) fn keep(&self, inputs: &[TraceInput], index: InProcessIndex) {
        *self.lock() = Some((paths(inputs), index));
    }

    /// The index kept of exactly the traces `inputs`, handed over once. The paths are the whole
    /// key: the plan that holds this is the one both readings take their analysis, scope and
    /// excluded regions from.
    pub(crate) fn take(&self, inputs: &[TraceInput]) -> Option<InProcessIndex> {
        let mut kept = self.lock();
        match kept.as_ref() {
            Some((of, _)) if *of == paths(inputs) => kept.take().map(|(_, index)| index),
            _ => None,
        }
    }

    fn lock(&self) -> MutexGuard<'_, Kept> {
        // A panic while the lock was held leaves nothing half-written: the value is one move.
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

fn paths(inputs: &[TraceInput]) -> Vec<PathBuf> {
    inputs.iter().map(|input| input.path.clone()).collect()
}
