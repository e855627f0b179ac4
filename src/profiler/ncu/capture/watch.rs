//! What ncu's output lines and failures mean while its passes run, for the run's executor: a
//! `==PROF== Profiling` line is one result (the count a covered pass stops at), the others
//! progress; a failed worker is worded with what becomes of its launch keys.

use std::path::{Path, PathBuf};

use crate::process::ProfilerError;
use crate::run::{Journal, Line, PassSpec, Slot, Watch};

use super::run::log;
use super::run::not_started;
use super::sampling;

/// What ncu's lines and failures mean, for the executor.
pub struct NcuWatch<'a> {
    pub journal: &'a Journal<'a>,
}

impl Watch for NcuWatch<'_> {
    fn line(&self, pass: &PassSpec, line: &str) -> Line {
        match log::parse_prof(line) {
            Some(log::Progress::Profiling { name, index }) => {
                Line::Result(format!("{name} (#{index})"))
            }
            Some(log::Progress::Connected { process }) => {
                Line::Status(format!("{}: connected to {process}", pass.name))
            }
            Some(_) => Line::Hidden,
            None => Line::Output,
        }
    }

    fn failed(&self, pass: &PassSpec, again: bool, error: Option<&ProfilerError>) -> String {
        let record = self.journal.record();
        match (&pass.slot, error) {
            (Slot::Worker { index, .. }, Some(e)) => match again {
                true => format!("warning: worker {index} of ncu's deep pass could not be run again ({e}); its launch keys have no deep results (unmatched)"),
                false => format!("warning: worker {index} of ncu's deep pass could not be run ({e}); the launch keys it was given have no deep results (unmatched)"),
            },
            (Slot::Worker { index, .. }, None) => {
                let worker = &record.deep_workers[*index];
                sampling::failed_worker(self.journal.run(), *index, worker, again)
            }
            (_, Some(e)) => format!("warning: {} could not be run ({e})", pass.name),
            (_, None) => {
                let log: PathBuf = self.journal.run().path(&pass.log);
                let ended = |code: Option<i32>| code.map_or("a signal".to_string(), |c| format!("exit code {c}"));
                let code = match &pass.slot {
                    Slot::Unprofiled => record.deep_ranks.as_ref().and_then(|c| c.unprofiled.as_ref()).and_then(|p| p.exit_code),
                    _ => record.deep_ranks.as_ref().and_then(|c| c.rounds.last()).and_then(|r| r.unprofiled.as_ref()).and_then(|p| p.exit_code),
                };
                format!("warning: {} ended with {}; its log is {}", pass.name, ended(code), log.display())
            }
        }
    }

    fn rerun(&self, pass: &PassSpec, aside: &Path) -> String {
        let (index, keys) = match &pass.slot {
            Slot::Worker { index, planned } => (*index, planned.keys),
            _ => (0, 0),
        };
        format!(
            "warning: worker {index} of ncu's deep pass failed (see {}); running its {keys} launch keys once more, alone",
            aside.display()
        )
    }

    fn not_started(&self, pass: &PassSpec, error: ProfilerError) -> ProfilerError {
        match pass.watched {
            true => not_started(error),
            false => error,
        }
    }
}
