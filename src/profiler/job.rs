//! What the seam hands an adapter at each step of a run, and what it hands back, the same for every
//! profiler: [`BeforeRun`] (a plan and its configuration, before anything starts), [`Capture`] (one
//! capture to make), [`AfterRun`] (a run that captured), [`RunEnd`] and [`Judgement`] (how it
//! ended, and what the adapter makes of it), [`Settled`] and [`Analysed`]. A door reads the fields
//! it needs and leaves the rest. A leaf: it names no adapter, so the adapters import it without a
//! loop through the seam.

use crate::config::{Config, Loaded};
use crate::process::{Finished, ProfilerError};
use crate::report::model::Report;
use crate::run::{Journal, RunDir, RunRecord};

/// What a configuration leaves to the machine, settled before the plan and before the configuration
/// is recorded: the notes that say what was chosen and why, and whether the run profiles a workload
/// named after `--` (a Neuron NEFF capture runs the NEFF itself).
pub struct Settled {
    pub notes: Vec<String>,
    pub needs_workload: bool,
}

/// A profiler's plan and the configuration it was made from: what `--dry-run` and the checks before
/// a run read.
pub struct BeforeRun<'a, P> {
    pub plan: &'a P,
    pub config: &'a Config,
}

impl<'a, P> BeforeRun<'a, P> {
    /// The same context, holding `plan` (the adapter's own, from the seam's).
    pub fn with_plan<'p, Q>(&self, plan: &'p Q) -> BeforeRun<'p, Q>
    where
        'a: 'p,
    {
        BeforeRun {
            plan,
            config: self.config,
        }
    }
}

/// One capture a profiler is asked to make, whichever profiler: its plan, the loaded
/// configuration, the journal of its run directory (the one writer of its record), the workload
/// after `--`, and whether progress is shown.
pub struct Capture<'a, P> {
    pub plan: &'a P,
    pub loaded: &'a Loaded,
    pub journal: &'a Journal<'a>,
    pub workload: &'a [String],
    pub quiet: bool,
}

impl<'a, P> Capture<'a, P> {
    /// The same capture, holding `plan` (the adapter's own, from the seam's).
    pub fn with_plan<'p, Q>(&self, plan: &'p Q) -> Capture<'p, Q>
    where
        'a: 'p,
    {
        Capture {
            plan,
            loaded: self.loaded,
            journal: self.journal,
            workload: self.workload,
            quiet: self.quiet,
        }
    }
}

/// A run that captured, as the steps after it read it: its plan and configuration, its run
/// directory and record, how the profiler ended, and whether progress is shown.
pub struct AfterRun<'a, P> {
    pub plan: &'a P,
    pub loaded: &'a Loaded,
    pub run: &'a RunDir,
    pub record: &'a RunRecord,
    pub finished: &'a Finished,
    pub quiet: bool,
}

impl<'a, P> AfterRun<'a, P> {
    /// The same run, holding `plan` (the adapter's own, from the seam's).
    pub fn with_plan<'p, Q>(&self, plan: &'p Q) -> AfterRun<'p, Q>
    where
        'a: 'p,
    {
        AfterRun {
            plan,
            loaded: self.loaded,
            run: self.run,
            record: self.record,
            finished: self.finished,
            quiet: self.quiet,
        }
    }
}

/// How a run ended as the seam sees it once its report is written (or not): it failed (the
/// profiler did not succeed, or nothing was captured to render), or the profiler succeeded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunEnd {
    Failed { report_written: bool },
    Succeeded,
}

impl RunEnd {
    /// The end of a run whose profiler ended as `finished`, with a report written or not, under a
    /// configuration that renders (`output.render`) or not.
    pub fn of(finished: &Finished, report_written: bool, config: &Config) -> RunEnd {
        if !finished.success() || (!report_written && config.output.render) {
            RunEnd::Failed { report_written }
        } else {
            RunEnd::Succeeded
        }
    }
}

/// What the adapter makes of a run's end: whole, failed (why, with the fix), or short of what it
/// was asked to capture (a sampled run's deep pass failed), with the report of what was captured
/// already written.
#[derive(Debug)]
pub enum Judgement {
    Whole,
    Failed(ProfilerError),
    Incomplete(ProfilerError),
}

/// A report of captures found again, and what only `-v` shows of how they were read (a Neuron
/// profile's top-level keys that were not used).
pub struct Analysed {
    pub report: Report,
    pub details: Vec<String>,
}
