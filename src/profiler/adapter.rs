//! The doors of the seam as a trait: what a profiler implements to be driven by profile-run
//! ([`Adapter`], for a run: settle, plan, dry run, checks, capture, report, notes, judgement; and
//! finding its captures again), and what its captures found again answer ([`FoundCaptures`]).
//! `enum Profiler` calls every door through these traits, so the compiler checks that each adapter
//! has them all, with the same parameters. A door takes one context of `job` and reads the fields
//! it needs of it. A leaf: it names no adapter.

use std::path::{Path, PathBuf};

use crate::analysis::AnalysisPlan;
use crate::config::Config;
use crate::error::Result;
use crate::process::Finished;
use crate::region::RegionFilter;
use crate::report::model::{ItemNoun, Report};

use super::job::{AfterRun, Analysed, BeforeRun, Capture, Judgement, RunEnd, Settled};

/// One profiler as the seam drives it (docs/architecture.md, "Adding a profiler").
pub trait Adapter {
    /// What a run of this profiler is handed, checked and decided once before anything starts;
    /// it holds the neutral [`AnalysisPlan`] and the [`RegionFilter`].
    type Plan;
    /// Its captures found again for `report`, `merge` and `diff`.
    type Inputs: FoundCaptures<Plan = Self::Plan>;

    /// What its reports call their results, regions, scopes and hardware.
    const ITEM_NOUN: ItemNoun;

    /// How to tell a capture file it reads by itself that opens as a report.json does (a Neuron
    /// `view` output), so `diff` takes it in place of one; `None` when none of its captures does.
    const READS_AS_CAPTURE: Option<fn(&Path) -> bool>;

    /// Settles what the configuration leaves to the machine, before the plan and before the
    /// configuration is recorded, and says whether the run profiles a workload after `--`.
    fn settle(config: &mut Config) -> Settled;

    /// Its checks of a configuration (a mistake exits 2 before anything runs) and its plan,
    /// holding `regions` (refused in a form it cannot apply).
    fn plan(config: &Config, analysis: AnalysisPlan, regions: RegionFilter) -> Result<Self::Plan>;

    /// What `--dry-run` prints: the command lines a run in `dir` would start.
    fn dry_run(before: BeforeRun<'_, Self::Plan>, dir: &Path, workload: &[String]) -> String;

    /// `--dry-run`'s check that what the run starts can start (exit 3 otherwise), as a clause for
    /// its `checked:` line.
    fn check_starts(before: BeforeRun<'_, Self::Plan>) -> Result<String>;

    /// Fails (exit 3, with the fix) when the profiler cannot be started at all.
    fn check_runnable(before: BeforeRun<'_, Self::Plan>) -> Result<()>;

    /// Runs the workload under the profiler into the journal's run directory.
    fn capture(job: Capture<'_, Self::Plan>) -> Result<Finished>;

    /// The report of what a run captured; `None` when nothing was captured to report on (or
    /// rendering is off).
    fn report(after: &AfterRun<'_, Self::Plan>) -> Result<Option<Report>>;

    /// Notes for a run ended by a signal: why it may have needed it.
    fn interrupted_notes(after: &AfterRun<'_, Self::Plan>) -> Vec<String>;

    /// What the run's end means: why a failed run failed, with the fix, or what a run that
    /// succeeded still missed (its report already written).
    fn judge(after: &AfterRun<'_, Self::Plan>, end: RunEnd) -> Judgement;

    /// Its captures among `report`/`merge`/`diff` arguments, told apart by content; `None` when they
    /// are not its own. What a reader must write first goes into `export_dir(the input's run
    /// directory, if any)`.
    fn find_inputs(
        paths: &[PathBuf],
        config: &Config,
        export_dir: &mut dyn FnMut(Option<&Path>) -> Result<PathBuf>,
    ) -> Result<Option<Self::Inputs>>;
}

/// A profiler's captures found again ([`Adapter::find_inputs`]).
pub trait FoundCaptures {
    /// The plan they are read under.
    type Plan;

    /// The run directory the first input belongs to; `None` for a bare export or profile.
    fn run_dir(&self) -> Option<&Path>;

    /// Whether several captures are merged into one report (the ranks of one job), so they must be
    /// of one workload.
    fn merges_captures(&self) -> bool;

    /// Their report under `plan`, recorded with the configuration's `fingerprint`.
    fn analyze(&self, plan: &Self::Plan, config: &Config, fingerprint: String) -> Result<Analysed>;
}
