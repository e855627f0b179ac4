//! ncu's passes as plain data for the run's executor: the first pass (ncu, ncu's timing pass or
//! the workload under the CUPTI trace), a deep pass or worker from its command line, the workload
//! run unprofiled in a rank's place, and what ncu's output lines and failures mean while they run
//! ([`NcuWatch`]).

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::config::Config;
use crate::process::ProfilerError;
use crate::profiler::ncu::plan::{FirstPass, NcuPlan};
use crate::run::{Journal, Line, PassSpec, Slot, Watch, REPORT_BASE};

use super::run::cli::NcuCli;
use super::run::log::{self, LOG};
use super::run::not_started;
use super::sampling;
use super::trace;

/// The run's ncu command line before any sampling flags: every ncu pass starts from it.
pub fn ncu_cli(plan: &NcuPlan, config: &Config, dir: &Path, workload: &[String]) -> NcuCli {
    NcuCli::profile(config, &plan.nvtx, &dir.join(REPORT_BASE), workload)
}

/// The run's first pass: ncu's only pass, a sampled run's timing pass, or the workload under the
/// CUPTI trace.
pub fn first(plan: &NcuPlan, config: &Config, dir: &Path, workload: &[String]) -> PassSpec {
    if plan.passes.first == FirstPass::Trace {
        return trace::pass(config, dir, workload);
    }
    let cli = ncu_cli(plan, config, dir, workload);
    let ncu = &config.pipeline.ncu;
    let (name, cli) = match plan.passes.deep {
        false => ("ncu", cli),
        true => (
            "ncu's timing pass",
            cli.with_flags(
                sampling::timing_flags(&ncu.ncu_cli, &config.report.time_metric),
                &dir.join(REPORT_BASE),
            ),
        ),
    };
    under_ncu(name, Slot::First, &cli, LOG, Vec::new())
}

/// A pass of `cli` under ncu, recorded in `slot`, logging to `log`; `outputs`: the files it
/// writes (its report file), kept aside if it fails and runs again.
pub fn under_ncu(
    name: &str,
    slot: Slot,
    cli: &NcuCli,
    log: &str,
    outputs: Vec<String>,
) -> PassSpec {
    PassSpec {
        name: name.to_string(),
        slot,
        program: cli.program().to_string(),
        args: cli.argv_os(),
        env: Vec::new(),
        command: std::iter::once(cli.program().to_string())
            .chain(cli.argv())
            .collect(),
        line: cli.shell_line(),
        log: log.to_string(),
        outputs,
        expected: None,
        status: None,
        watched: true,
    }
}

/// The workload itself, unprofiled, logging to `log`, with `status` on the progress line: a rank's
/// step where it takes no deep pass, so that its peers' collectives complete.
pub fn unprofiled(workload: &[String], slot: Slot, log: &str, status: String) -> PassSpec {
    let program = workload.first().cloned().unwrap_or_default();
    PassSpec {
        name: "the unprofiled run of this rank's deep-pass step".to_string(),
        slot,
        program,
        args: workload.iter().skip(1).map(OsString::from).collect(),
        env: Vec::new(),
        command: workload.to_vec(),
        line: shell_words::join(workload),
        log: log.to_string(),
        outputs: Vec::new(),
        expected: None,
        status: Some(status),
        watched: false,
    }
}

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
