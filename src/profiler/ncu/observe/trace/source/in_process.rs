//! A trace reading's side of the in-process counters: the first reading of every trace that builds
//! their index, and each kernel's join to it while the traces are read for the report.

use super::{deep, file, inprocess, TraceSource, Wanted, IN_PLACE_LABEL};
use crate::error::Result;
use crate::profiler::ncu::observe::trace::attribute::{Attributed, PerRegions};
use crate::profiler::ncu::readers::trace::{LaunchShape, ProcessTrace};
use crate::region::{Cell, Coverage};
use inprocess::{InProcessIndex, Profiled, Tally};

impl TraceSource<'_> {
    /// The deep counters the traces carry, indexed by group and stratum; `None` when none carries
    /// any. Each trace is read once for it, before the reading proper: every group's launches must
    /// be known before the first kernel takes its stratum's values.
    pub(super) fn in_process_index(&self) -> Result<Option<InProcessIndex>> {
        let mut builder = inprocess::IndexBuilder::default();
        for (at, input) in self.inputs.iter().enumerate() {
            let trace = file::read_input(input)?;
            // Every process of a run is traced with the same environment: a first trace with no
            // counters means a time-only run, whose traces are then read once, for the report.
            if at == 0 && trace.counters.metrics.is_empty() {
                return Ok(None);
            }
            builder.trace(&trace)?;
            let profiled = Profiled::of(&trace);
            let (mut wanted, mut region) = (Wanted::default(), Region::default());
            self.attribute(&trace, |a| {
                if !*wanted.of(a, |a| self.wanted(a)) {
                    return;
                }
                let launch = trace.shape(a.kernel);
                let key = (
                    trace.names[launch.name].clone(),
                    deep::shape(launch),
                    region.of(a, |a| inprocess::region_of(a.stacks)).clone(),
                );
                builder.kernel(&profiled, key, a.kernel);
            })?;
        }
        Ok(builder.finish(self.plan, IN_PLACE_LABEL))
    }
}

/// The regions of the kernels being read, worked out once per set of them.
type Region = PerRegions<String>;

/// One trace's kernels joined to the in-process index.
pub(super) struct Join<'i, 't> {
    index: &'i InProcessIndex,
    profiled: Profiled<'t>,
    region: Region,
}

/// A kernel's coverage, cells, weight, stratum id, time, and start where the time is its own.
pub(super) type Cells<'i> = (
    Coverage,
    Vec<Cell<'i>>,
    Option<f64>,
    Option<u64>,
    f64,
    Option<u64>,
);

impl<'i, 't> Join<'i, 't> {
    pub(super) fn new(index: &'i InProcessIndex, trace: &'t ProcessTrace) -> Join<'i, 't> {
        Join {
            index,
            profiled: Profiled::of(trace),
            region: Region::default(),
        }
    }

    /// The cells of kernel `a`; a profiled launch has no start of its own (its record's is 0), so
    /// it stays out of what compares start times across ranks. A kernel the counters have no
    /// values for takes `from_ncu`'s where it gives some (ncu's deep pass of CUDA graph kernels).
    pub(super) fn cells<'c>(
        &mut self,
        a: &Attributed<'_>,
        mangled: &str,
        launch: &LaunchShape,
        tally: &mut Tally,
        from_ncu: impl FnOnce() -> Option<Cells<'c>>,
    ) -> Cells<'c>
    where
        'i: 'c,
    {
        let region = self.region.of(a, |a| inprocess::region_of(a.stacks));
        let key = (mangled, deep::shape(launch), region.as_str());
        let j = self.index.join(&self.profiled, key, a.kernel, tally);
        if j.coverage == Coverage::Unmatched {
            let in_graph = self.profiled.in_graph(a.kernel);
            if let Some(cells) = from_ncu() {
                tally.from_ncu += 1;
                return cells;
            }
            tally.graph_unmatched += u64::from(in_graph);
        }
        let start = j.own_time.then_some(a.kernel.start);
        (j.coverage, j.values, j.weight, j.key, j.time, start)
    }
}
