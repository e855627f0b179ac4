//! The one executor of a run's passes: a profiler plans its passes as data ([`PassSpec`], in
//! [`PassGroup`]s) and this runs any group, all at once or one after another, with one rule for a
//! pass that failed ([`Rerun`]), the watchdog of a covered pass (its workload ends once the
//! expected results are counted) and signals (a signal stops the group; what ran is recorded).
//! Every start and end goes to the [`Journal`]; no profiler spawns a pass of its own.

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use super::journal::{Finding, Journal, Slot};
use super::record::PassRecord;
use super::store::fresh_path;
use crate::console::err_line;
use crate::error::{Error, Result};
use crate::process::progress::Display;
use crate::process::{received_signal, run_streaming, Finished, Flow, ProfilerError};

/// One process of a run, planned: what starts, where its output goes, what it is expected to give.
#[derive(Debug, Clone)]
pub struct PassSpec {
    /// How messages name it ("ncu's deep pass", "worker 2 of ncu's deep pass").
    pub name: String,
    /// Where run.json records it.
    pub slot: Slot,
    pub program: String,
    /// Its arguments, verbatim (a path need not be UTF-8).
    pub args: Vec<OsString>,
    /// Variables set for it on top of profile-run's own environment.
    pub env: Vec<(String, OsString)>,
    /// The command as run.json records it.
    pub command: Vec<String>,
    /// Its line in `command.txt`, quoted for a POSIX shell.
    pub line: String,
    /// Its log, in the run directory.
    pub log: String,
    /// The files it writes in the run directory besides its log (kept aside when it runs again).
    pub outputs: Vec<String>,
    /// The results after which its workload is stopped (`None`: it runs to its end).
    pub expected: Option<u64>,
    /// The progress line while it starts (`None`: "starting NAME").
    pub status: Option<String>,
    /// Whether its output lines go to the profiler's [`Watch`]; else each is passed through.
    pub watched: bool,
}

impl PassSpec {
    /// The workload itself as a pass, `name` in `slot`, logging to `log`: its program and arguments
    /// as given, its output passed through.
    pub fn of_workload(name: &str, slot: Slot, workload: &[String], log: &str) -> PassSpec {
        PassSpec {
            name: name.to_string(),
            slot,
            program: workload.first().cloned().unwrap_or_default(),
            args: workload.iter().skip(1).map(OsString::from).collect(),
            env: Vec::new(),
            command: workload.to_vec(),
            line: shell_words::join(workload),
            log: log.to_string(),
            outputs: Vec::new(),
            expected: None,
            status: None,
            watched: false,
        }
    }

    /// The same pass with `env` set for it: run.json's command and its line are then
    /// `env VAR=… program…`.
    pub fn with_env(mut self, env: Vec<(String, String)>) -> PassSpec {
        let assignments = env.iter().map(|(k, v)| format!("{k}={v}"));
        self.command = std::iter::once("env".to_string())
            .chain(assignments)
            .chain(self.command)
            .collect();
        self.line = shell_words::join(&self.command);
        self.env = env
            .into_iter()
            .map(|(k, v)| (k, OsString::from(v)))
            .collect();
        self
    }
}

/// What a profiler says of the passes it planned, while and after they run.
pub trait Watch: Sync {
    /// What one output line of `pass` is: its workload's own output, unless the profiler reads it.
    fn line(&self, pass: &PassSpec, line: &str) -> Line {
        let _ = (pass, line);
        Line::Output
    }
    /// The warning for `pass`, which ended but not well (`error`: could not be started);
    /// `again`: it was its second try.
    fn failed(&self, pass: &PassSpec, again: bool, error: Option<&ProfilerError>) -> String;
    /// `error`, from starting `pass`, in words that name the setting to fix.
    fn not_started(&self, pass: &PassSpec, error: ProfilerError) -> ProfilerError {
        let _ = pass;
        error
    }
    /// The warning for `pass` about to run once more, alone; `aside`: where its failed log went.
    fn rerun(&self, pass: &PassSpec, aside: &std::path::Path) -> String;
}

/// What a watched output line is.
pub enum Line {
    /// One more result profiled: what it was (a kernel's name and launch).
    Result(String),
    /// Progress to show, nothing counted.
    Status(String),
    /// The profiler's own line, kept in the log only.
    Hidden,
    /// The workload's own output: passed through.
    Output,
}

/// What becomes of a pass in a group that failed (ended but not well, or could not start).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rerun {
    /// Nothing is said: the run's outcome tells.
    Quietly,
    /// A warning, and no second try (a rank of a launch, whose workload alone would wait for its
    /// peers' collectives).
    Warn,
    /// Once more, alone, after the others, its failed try's files kept aside.
    Alone,
}

/// Passes that run together.
#[derive(Debug, Clone)]
pub struct PassGroup {
    pub passes: Vec<PassSpec>,
    /// All at once; else one after another, and a signal stops the rest.
    pub at_once: bool,
    pub rerun: Rerun,
}

impl PassGroup {
    /// One pass, alone, its failure told by the run's outcome.
    pub fn alone(pass: PassSpec) -> PassGroup {
        PassGroup {
            passes: vec![pass],
            at_once: false,
            rerun: Rerun::Quietly,
        }
    }
}

/// One step of a plan.
#[derive(Debug)]
pub enum Stage {
    /// Passes that run together.
    Run(PassGroup),
    /// Groups whose failure to run does not stop the stages after it: `what`'s error (planning it,
    /// or starting it) is warned of and returned once every stage has run, so that the other
    /// processes of a job, which wait for this one's collectives, still complete. `then` is
    /// recorded after it, whether or not it ran (a rank's own round).
    Guarded {
        what: String,
        groups: std::result::Result<Vec<PassGroup>, Error>,
        then: Box<Finding>,
    },
}

/// How each pass of a group ended, in order (`None`: it could not be started), and how the first
/// one a signal stopped ended.
pub struct Ran {
    pub ended: Vec<Option<Finished>>,
    pub stopped: Option<Finished>,
}

/// Runs groups of passes into one run directory, recording each in its journal.
pub struct Executor<'a> {
    pub journal: &'a Journal<'a>,
    pub grace: Duration,
    pub display: &'a Display,
    pub watch: &'a dyn Watch,
}

impl Executor<'_> {
    /// A signal received since the last pass: recorded, and returned.
    pub fn signalled(&self) -> Result<Option<i32>> {
        let Some(signal) = received_signal() else {
            return Ok(None);
        };
        self.journal.found(Finding::Interrupted(signal))?;
        Ok(Some(signal))
    }

    /// Runs `stages` in order, until one a signal stopped; returns how that one ended (`None`:
    /// none was), or the error of a [`Stage::Guarded`] once every stage has run.
    pub fn run_stages(&self, stages: Vec<Stage>) -> Result<Option<Finished>> {
        let mut failed = None;
        for stage in stages {
            let stopped = match stage {
                Stage::Run(group) => self.run(&group)?.stopped,
                Stage::Guarded { what, groups, then } => {
                    let ran = groups.and_then(|groups| self.first_stopped(&groups));
                    self.journal.found(*then)?;
                    ran.unwrap_or_else(|e| {
                        err_line(&format!(
                            "warning: {what} failed ({e}); running the passes left, so that the other processes' collectives complete"
                        ));
                        failed = Some(e);
                        None
                    })
                }
            };
            if stopped.is_some() {
                return Ok(stopped);
            }
        }
        failed.map_or(Ok(None), Err)
    }

    /// Runs `groups` in order, until one a signal stopped; how that one ended.
    fn first_stopped(&self, groups: &[PassGroup]) -> Result<Option<Finished>> {
        for group in groups {
            if let Some(stopped) = self.run(group)?.stopped {
                return Ok(Some(stopped));
            }
        }
        Ok(None)
    }

    /// Runs `group`: every pass planned in the journal first, then run as the group says, each end
    /// recorded as it is known; a failed pass is treated as `group.rerun` says. An error is the
    /// journal's alone; a pass that cannot start is a warning (or, alone in its group with
    /// [`Rerun::Quietly`], the error).
    pub fn run(&self, group: &PassGroup) -> Result<Ran> {
        let planned = group
            .passes
            .iter()
            .map(|p| (&p.slot, p.command.clone(), p.line.as_str()));
        self.journal.planned(planned)?;
        let outcomes = match group.at_once && group.passes.len() > 1 {
            true => self.at_once(&group.passes),
            false => self.in_turn(&group.passes),
        };
        let mut ran = Ran {
            ended: Vec::new(),
            stopped: None,
        };
        let mut failed = Vec::new();
        for (at, outcome) in outcomes.into_iter().enumerate() {
            let pass = &group.passes[at];
            match outcome {
                Ok((finished, covered)) => {
                    self.journal
                        .ended(&pass.slot, &pass.command, &finished, covered)?;
                    if finished.interrupted_by.is_some() {
                        ran.stopped.get_or_insert(finished.clone());
                    } else if !ended_well(&finished, covered) {
                        failed.push(at);
                    }
                    ran.ended.push(Some(finished));
                }
                Err(e) if group.rerun == Rerun::Quietly && group.passes.len() == 1 => {
                    return Err(e.into())
                }
                Err(e) => {
                    err_line(&self.watch.failed(pass, false, Some(&e)));
                    failed.push(at);
                    ran.ended.push(None);
                }
            }
        }
        if ran.stopped.is_some() {
            return Ok(ran);
        }
        match group.rerun {
            Rerun::Quietly => {}
            Rerun::Warn => {
                for &at in &failed {
                    if ran.ended[at].is_some() {
                        err_line(&self.watch.failed(&group.passes[at], false, None));
                    }
                }
            }
            Rerun::Alone => {
                for at in failed {
                    if let Some(stopped) = self.again(&group.passes[at], &mut ran.ended[at])? {
                        ran.stopped = Some(stopped);
                        break;
                    }
                }
            }
        }
        Ok(ran)
    }

    /// `pass`'s second try, alone: its failed try's files moved aside and its record kept as
    /// `failed_try`. Returns how it ended if a signal stopped it.
    fn again(&self, pass: &PassSpec, ended: &mut Option<Finished>) -> Result<Option<Finished>> {
        let aside = self.keep_aside(pass)?;
        self.journal.failed_try(&pass.slot)?;
        err_line(&self.watch.rerun(pass, &aside));
        match self.start(pass) {
            Ok((finished, covered)) => {
                self.journal
                    .ended(&pass.slot, &pass.command, &finished, covered)?;
                let stopped = finished.interrupted_by.is_some();
                if !stopped && !ended_well(&finished, covered) {
                    err_line(&self.watch.failed(pass, true, None));
                }
                *ended = Some(finished.clone());
                Ok(stopped.then_some(finished))
            }
            Err(e) => {
                err_line(&self.watch.failed(pass, true, Some(&e)));
                Ok(None)
            }
        }
    }

    /// Moves `pass`'s outputs and log of a failed try aside (`STEM.failed.EXT`): kept, but never
    /// read as the pass's. Returns where its log went.
    fn keep_aside(&self, pass: &PassSpec) -> Result<PathBuf> {
        let run = self.journal.run();
        let aside = |file: &str| {
            let (stem, ext) = file.rsplit_once('.').unwrap_or((file, ""));
            fresh_path(run.root(), &format!("{stem}.failed"), ext)
        };
        let log_aside = aside(&pass.log);
        let moves = pass
            .outputs
            .iter()
            .map(|file| (run.path(file), aside(file)))
            .chain([(run.path(&pass.log), log_aside.clone())]);
        for (from, to) in moves {
            if from.is_file() {
                std::fs::rename(&from, &to).map_err(|source| Error::Write { path: to, source })?;
            }
        }
        Ok(log_aside)
    }

    /// Every pass at once, one thread each; how each ended, in order.
    fn at_once(&self, passes: &[PassSpec]) -> Vec<Outcome> {
        std::thread::scope(|scope| {
            let handles: Vec<_> = passes
                .iter()
                .map(|pass| scope.spawn(move || self.start(pass)))
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join()
                        .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
                })
                .collect()
        })
    }

    /// The passes one after another, until one a signal stopped; how each that ran ended.
    fn in_turn(&self, passes: &[PassSpec]) -> Vec<Outcome> {
        let mut ran = Vec::new();
        for pass in passes {
            let outcome = self.start(pass);
            let stopped = matches!(&outcome, Ok((f, _)) if f.interrupted_by.is_some());
            ran.push(outcome);
            if stopped {
                break;
            }
        }
        ran
    }

    /// Runs one pass to its end, its output to its log and to the display (watched lines as the
    /// profiler says); its workload is stopped once its expected results are counted. Returns how
    /// it ended and, when its workload was stopped, the results counted then.
    fn start(&self, pass: &PassSpec) -> Outcome {
        let status = pass.status.clone();
        self.display
            .status(status.unwrap_or_else(|| format!("starting {}", pass.name)));
        let mut expression = duct::cmd(&pass.program, &pass.args);
        for (key, value) in &pass.env {
            expression = expression.env(key, value);
        }
        let mut counted = 0u64;
        let log = self.journal.run().path(&pass.log);
        let finished = run_streaming(&pass.program, expression, &log, self.grace, &mut |line| {
            if !pass.watched {
                self.display.passthrough(line);
                return Flow::Continue;
            }
            match self.watch.line(pass, line) {
                Line::Result(what) => {
                    counted += 1;
                    let covered = pass.expected.is_some_and(|e| counted >= e);
                    self.display.status(match covered {
                        false => format!("{}: profiling {what} ({counted} so far)", pass.name),
                        // Coverage only ever stops the workload; the profiler itself exits.
                        true => format!(
                            "{}: all {counted} results profiled; ending the workload",
                            pass.name
                        ),
                    });
                    match covered {
                        true => Flow::StopWorkload,
                        false => Flow::Continue,
                    }
                }
                Line::Status(status) => {
                    self.display.status(status);
                    Flow::Continue
                }
                Line::Hidden => Flow::Continue,
                Line::Output => {
                    self.display.passthrough(line);
                    Flow::Continue
                }
            }
        })
        .map_err(|e| self.watch.not_started(pass, e))?;
        let covered = pass.expected.filter(|_| finished.workload_stopped);
        Ok((finished, covered))
    }
}

/// Whether a pass ended well, as run.json will say (exit 0, or stopped once covered).
fn ended_well(finished: &Finished, covered: Option<u64>) -> bool {
    let mut pass = PassRecord::default();
    pass.finish(finished, covered);
    pass.ended_well()
}

type Outcome = std::result::Result<(Finished, Option<u64>), ProfilerError>;
