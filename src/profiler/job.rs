//! What the seam hands an adapter for one capture ([`Capture`]) and what reading captures again
//! gives back ([`Analysed`]), the same for every profiler. A leaf: it names no adapter, so the
//! adapters import it without a loop through the seam.

use crate::config::Loaded;
use crate::report::model::Report;
use crate::run::Journal;

/// One capture a profiler is asked to make, whichever profiler: the loaded configuration, the
/// journal of its run directory (the one writer of its record), the workload after `--`, and
/// whether progress is shown.
pub struct Capture<'a> {
    pub loaded: &'a Loaded,
    pub journal: &'a Journal<'a>,
    pub workload: &'a [String],
    pub quiet: bool,
}

/// A report of captures found again, and what only `-v` shows of how they were read (a Neuron
/// profile's top-level keys that were not used).
pub struct Analysed {
    pub report: Report,
    pub details: Vec<String>,
}
