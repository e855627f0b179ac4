//! The one writer of a run's record: `config.yaml` once, `command.txt` one line per pass as it is
//! planned (never rewritten), and `run.json` after every event, so that a signal at any moment
//! leaves a true record. The executor tells it when each pass is planned and how it ended; a
//! profiler tells it what its passes found ([`Finding`]).

use std::sync::{Mutex, MutexGuard};

use super::record::{DeepRanksRecord, DeepWorkerRecord, PassRecord, RoundRecord, RunRecord};
use super::store::{RunDir, COMMAND_FILE, CONFIG_FILE, RECORD_FILE};
use crate::analysis::AdaptiveRecord;
use crate::error::{Error, Result};
use crate::process::Finished;

/// Where run.json keeps a pass's record.
#[derive(Debug, Clone)]
pub enum Slot {
    /// The run's first (or only) pass: `profiler_command`, `finished` and the exit fields.
    First,
    /// A sampled run's later pass of one process: `deep_pass`.
    Deep,
    /// One of several processes of the later pass: `deep_workers[index]`, planned as `planned`
    /// (worker 0 is also `deep_pass`, ended when its last worker ended).
    Worker {
        index: usize,
        planned: Box<DeepWorkerRecord>,
    },
    /// A rank that takes no deep pass runs the workload unprofiled in its place:
    /// `deep_ranks.unprofiled` (and no `deep_pass`).
    Unprofiled,
    /// Another rank's round, this rank running the workload unprofiled: `deep_ranks.rounds`.
    Round { deep_rank: u32 },
}

/// What a profiler's passes found that run.json keeps.
#[derive(Debug, Clone)]
pub enum Finding {
    /// The profiler's own version.
    ProfilerVersion(Option<String>),
    /// The workload's exit code as the profiler reported it (`None`: it did not say).
    WorkloadExit(Option<i32>),
    /// How the workload ended where the pass was the workload itself: its exit code, or the
    /// signal that killed it.
    WorkloadEnded {
        code: Option<i32>,
        signal: Option<i32>,
    },
    /// How adaptive samples were sized.
    Adaptive(AdaptiveRecord),
    /// Which ranks take the deep pass.
    DeepRanks(DeepRanksRecord),
    /// The job has ranks on other hosts: its world size.
    JobWorldSize(Option<u32>),
    /// This rank's own round of the deep pass ran (`deep_ranks.rounds`).
    OwnRound(u32),
    /// A signal ended the run between passes.
    Interrupted(i32),
    /// What collects the deep metrics (run.json's `deep_engine`).
    DeepEngine(&'static str),
    /// The in-process counters collected nothing in any traced process, for this reason
    /// (run.json's `counters_unavailable`), so ncu's deep pass measures the deep metrics
    /// (`deep_engine: ncu`).
    CountersUnavailable(String),
}

/// The run's record, kept and written by one owner.
pub struct Journal<'a> {
    run: &'a RunDir,
    record: Mutex<RunRecord>,
}

impl<'a> Journal<'a> {
    /// A journal of `record` in `run`; nothing is written until [`Journal::begin`].
    pub fn new(run: &'a RunDir, record: RunRecord) -> Journal<'a> {
        Journal {
            run,
            record: Mutex::new(record),
        }
    }

    /// The run directory the journal writes into.
    pub fn run(&self) -> &RunDir {
        self.run
    }

    /// Writes what a run records before its first pass: the configuration, an empty
    /// `command.txt` (each pass's line is added as it is planned) and run.json.
    pub fn begin(&self, config_yaml: &str) -> Result<()> {
        self.run.write_text(CONFIG_FILE, config_yaml)?;
        self.run.write_text(COMMAND_FILE, "")?;
        self.write(&self.lock())
    }

    /// A copy of the record as it stands.
    pub fn record(&self) -> RunRecord {
        self.lock().clone()
    }

    /// The record, once the run has ended.
    pub fn into_record(self) -> RunRecord {
        self.record.into_inner().unwrap_or_else(|e| e.into_inner())
    }

    /// Passes about to run: each one's shell line added to `command.txt`, its record made in its
    /// slot with its command, then run.json written once.
    pub fn planned<'p>(
        &self,
        passes: impl IntoIterator<Item = (&'p Slot, Vec<String>, &'p str)>,
    ) -> Result<()> {
        let mut record = self.lock();
        let mut lines = String::new();
        for (slot, command, line) in passes {
            lines.push_str(line);
            lines.push('\n');
            let pass = PassRecord {
                command,
                ..PassRecord::default()
            };
            match slot {
                Slot::First => record.profiler_command = pass.command,
                Slot::Deep => record.deep_pass = Some(pass),
                Slot::Worker { index, planned } => {
                    let mut worker = (**planned).clone();
                    worker.pass = pass;
                    place(&mut record.deep_workers, *index, worker);
                    sync_deep_pass(&mut record);
                }
                Slot::Unprofiled => record.deep_pass = None,
                Slot::Round { .. } => {}
            }
        }
        self.append_commands(&lines)?;
        self.write(&record)
    }

    /// How a pass in `slot` ended; `covered`: the results counted when its workload was stopped.
    pub fn ended(
        &self,
        slot: &Slot,
        command: &[String],
        finished: &Finished,
        covered: Option<u64>,
    ) -> Result<()> {
        let mut record = self.lock();
        let ended = || {
            let mut pass = PassRecord {
                command: command.to_vec(),
                ..PassRecord::default()
            };
            pass.finish(finished, covered);
            pass
        };
        match slot {
            Slot::First => record.finish(finished),
            Slot::Deep => record.deep_pass = Some(ended()),
            Slot::Worker { index, .. } => {
                if let Some(worker) = record.deep_workers.get_mut(*index) {
                    worker.pass.finish(finished, covered);
                }
                sync_deep_pass(&mut record);
            }
            Slot::Unprofiled => {
                if let Some(chosen) = record.deep_ranks.as_mut() {
                    chosen.unprofiled = Some(ended());
                }
            }
            Slot::Round { deep_rank } => {
                let round = RoundRecord {
                    deep_rank: *deep_rank,
                    unprofiled: Some(ended()),
                };
                if let Some(chosen) = record.deep_ranks.as_mut() {
                    chosen.rounds.push(round);
                }
            }
        }
        if finished.interrupted_by.is_some() {
            record.interrupted_by = finished.interrupted_by;
        }
        self.write(&record)
    }

    /// A pass in `slot` failed and runs once more: its failed try is kept (`failed_try`).
    pub fn failed_try(&self, slot: &Slot) -> Result<()> {
        let mut record = self.lock();
        if let Slot::Worker { index, .. } = slot {
            if let Some(worker) = record.deep_workers.get_mut(*index) {
                let failed = std::mem::take(&mut worker.pass);
                worker.pass.command = failed.command.clone();
                worker.failed_try = Some(failed);
            }
        }
        self.write(&record)
    }

    /// Records what a pass found.
    pub fn found(&self, finding: Finding) -> Result<()> {
        let mut record = self.lock();
        match finding {
            Finding::ProfilerVersion(version) => record.profiler_version = version,
            Finding::WorkloadExit(code) => record.set_workload_exit(code),
            Finding::WorkloadEnded { code, signal } => {
                record.workload_exit_code = code;
                record.workload_signal = signal;
            }
            Finding::Adaptive(adaptive) => record.adaptive = Some(adaptive),
            Finding::DeepRanks(chosen) => record.deep_ranks = Some(chosen),
            Finding::JobWorldSize(world) => record.job_world_size = world,
            Finding::OwnRound(deep_rank) => {
                if let Some(chosen) = record.deep_ranks.as_mut() {
                    chosen.rounds.push(RoundRecord {
                        deep_rank,
                        unprofiled: None,
                    });
                }
            }
            Finding::Interrupted(signal) => record.interrupted_by = Some(signal),
            Finding::DeepEngine(engine) => record.deep_engine = Some(engine.to_string()),
            Finding::CountersUnavailable(why) => {
                record.deep_engine = Some("ncu".to_string());
                record.counters_unavailable = Some(why);
            }
        }
        self.write(&record)
    }

    fn lock(&self) -> MutexGuard<'_, RunRecord> {
        self.record.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn write(&self, record: &RunRecord) -> Result<()> {
        let json = serde_json::to_string_pretty(record).expect("run record serialises");
        self.run.write_text(RECORD_FILE, &(json + "\n"))
    }

    /// Adds `lines` to the end of `command.txt`: what was written stays as it was.
    fn append_commands(&self, lines: &str) -> Result<()> {
        use std::io::Write;
        let path = self.run.path(COMMAND_FILE);
        let write = std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .open(&path)
            .and_then(|mut file| file.write_all(lines.as_bytes()));
        write.map_err(|source| Error::Write { path, source })
    }
}

/// Puts `worker` at `index` (the next one, or in place of one planned again).
fn place(workers: &mut Vec<DeepWorkerRecord>, index: usize, worker: DeepWorkerRecord) {
    match workers.get_mut(index) {
        Some(slot) => *slot = worker,
        None => workers.push(worker),
    }
}

/// Worker 0's pass is the deep pass run.json has always recorded, ended when its last worker ended.
fn sync_deep_pass(record: &mut RunRecord) {
    if let Some(first) = record.deep_workers.first() {
        let mut pass = first.pass.clone();
        let ends = record
            .deep_workers
            .iter()
            .filter_map(|w| w.pass.finished.as_deref());
        pass.finished = super::record::latest_time(ends).or(pass.finished);
        record.deep_pass = Some(pass);
    }
}
