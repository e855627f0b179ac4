//! `run.json`: what a run records about itself (workload, profiler command and version, rank, start,
//! end and how the profiler ended), written by the run's journal alone (`journal`).

use serde::{Deserialize, Serialize};

use super::store::Rank;
use crate::analysis::{AdaptiveRecord, RankRun, RunContext};
use crate::process::Finished;
use crate::report::model::DeepWorker;

/// What a run records about itself in `run.json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunRecord {
    pub workload: Vec<String>,
    pub profiler_command: Vec<String>,
    pub profiler_version: Option<String>,
    pub config_fingerprint: String,
    pub rank: Option<Rank>,
    pub started: String,
    pub finished: Option<String>,
    pub profiler_exit_code: Option<i32>,
    pub profiler_signal: Option<i32>,
    /// The workload's own exit code, as the profiler reported it (ncu: `The application returned an
    /// error code (N)`), 0 when the profiler ended well; `None` when unknown (the profiler was
    /// killed, or did not say). Absent in runs recorded before it existed.
    #[serde(default)]
    pub workload_exit_code: Option<i32>,
    /// The signal that ended the workload, where its exit code says so the shell way (128 + n).
    #[serde(default)]
    pub workload_signal: Option<i32>,
    pub interrupted_by: Option<i32>,
    /// The second ncu run of a sampled run (`pipeline.ncu.sampling`); absent for a single run, whose
    /// one command is `profiler_command` (a sampled run's timing pass).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deep_pass: Option<PassRecord>,
    /// How an adaptive sampled run sized its deep samples; absent for any other run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adaptive: Option<AdaptiveRecord>,
    /// Which ranks took the deep pass (`pipeline.ncu.sampling.deep_ranks`); absent where the run
    /// had one process, or every rank took it with nothing to choose.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deep_ranks: Option<DeepRanksRecord>,
    /// The deep pass run as several ncu workers at once (adaptive sample counts, or chosen ranks
    /// taking turns), worker 0 first (its pass is also `deep_pass`); absent for a deep pass
    /// of one worker.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub deep_workers: Vec<DeepWorkerRecord>,
    /// Around one node's launcher of a job with ranks on other hosts: the job's world size, as the
    /// traces record it. The deep pass then runs to the workload's end and a failed pass is not run
    /// again alone: the other nodes' ranks wait in their collectives for this node's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job_world_size: Option<u32>,
    /// What collected a sampled run's deep metrics: `in-process` (the trace pass itself, with
    /// CUPTI's Range Profiler) or `ncu` (its deep pass); absent for a run with none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deep_engine: Option<String>,
    /// Why the in-process counters collected nothing in any traced process (the library's words:
    /// a libcupti without the Range Profiler, a GPU CUPTI cannot profile), where `deep_engine: auto`
    /// then had ncu's deep pass measure the deep metrics; absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counters_unavailable: Option<String>,
}

/// The ranks a sampled multi-process run chose for its deep pass, and what this run did about it.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct DeepRanksRecord {
    /// The ranks that run the deep pass, as this run knew them.
    pub chosen: Vec<u32>,
    /// ncu's `--devices` for them (one profile-run around the launcher).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub devices: Option<String>,
    /// ncu's `--devices` of each launch of the job, one after another, where several chosen ranks
    /// took turns (one profile-run around the launcher).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub turns: Vec<String>,
    /// This rank's deep-pass step: the workload run unprofiled, so that its peers' collectives
    /// complete (one profile-run per rank, not a deep rank).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unprofiled: Option<PassRecord>,
    /// One profile-run per rank with several deep ranks: this rank's deep-pass step, one round
    /// (one launch of the job) per deep rank, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rounds: Vec<RoundRecord>,
    /// Why the choice rests on part of the ranks (their signatures did not all come in time).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warning: Option<String>,
}

/// One round of a deep-pass step taken in rounds (one profile-run per rank).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct RoundRecord {
    /// The rank whose deep pass ran in this round.
    pub deep_rank: u32,
    /// This rank's unprofiled run of the workload in the round; `None`: the round was this rank's
    /// own deep pass (`deep_pass`, `deep_workers`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unprofiled: Option<PassRecord>,
}

/// One worker of a deep pass run as several ncu processes.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct DeepWorkerRecord {
    /// Its report file and log in the run directory.
    pub report: String,
    pub log: String,
    /// Its `CUDA_VISIBLE_DEVICES`, read from run directories that recorded one; `None`: the
    /// workload's own GPUs (what a run writes).
    pub gpu: Option<String>,
    /// ncu's `--devices` in its command (a chosen rank's turn around a launcher); `None`: every
    /// device.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub devices: Option<String>,
    /// `--launch-count`: deep samples per launch key and process.
    pub count: u32,
    /// The mangled names it profiled and their launch keys in the first pass.
    pub names: u64,
    pub keys: u64,
    /// The results the first pass's launches say it takes.
    pub expected_results: u64,
    /// Its command and how it ended (after its rerun, where it had one).
    #[serde(flatten)]
    pub pass: PassRecord,
    /// How its first try ended, where that failed and it was run again alone after the others;
    /// the failed try's report file is kept aside as `…failed.ncu-rep`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed_try: Option<PassRecord>,
    /// The worker whose kernel names this one profiles again: that worker ended well but profiled
    /// none of their launch keys.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rerun_of: Option<usize>,
}

impl DeepWorkerRecord {
    /// What the report says of the worker before its file is read.
    fn planned(&self) -> DeepWorker {
        DeepWorker {
            source: self.report.clone(),
            gpu: self.gpu.clone(),
            devices: self.devices.clone(),
            count: self.count,
            keys: self.keys,
            expected_results: self.expected_results,
            results: 0,
            ended_well: self.pass.ended_well(),
            rerun: self.failed_try.is_some(),
            rerun_of: self.rerun_of,
        }
    }
}

/// How a later pass of a sampled run (the deep pass, a worker of it) went.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct PassRecord {
    pub command: Vec<String>,
    pub finished: Option<String>,
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    /// Whether profile-run ended the pass's workload once ncu had profiled every result the first
    /// pass's launches said it would take (`pipeline.ncu.sampling.stop_when_covered`); ncu then
    /// wrote its report as when the workload ends, and `exit_code` is what it said of the stopped
    /// workload, not a failure.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub stopped_when_covered: bool,
    /// The results (ncu's `==PROF== Profiling` lines) counted when the workload was stopped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub covered_results: Option<u64>,
}

impl PassRecord {
    /// `covered`: the results counted when profile-run stopped the workload, if it did.
    pub fn finish(&mut self, finished: &Finished, covered: Option<u64>) {
        self.finished = Some(finished.ended.map_or_else(now, stamp));
        self.exit_code = finished.code;
        self.signal = finished.killed_by;
        self.stopped_when_covered = covered.is_some();
        self.covered_results = covered;
    }

    /// Whether the pass ended well: ncu exited 0, or profile-run stopped its workload once every
    /// result was profiled and ncu then ended on its own (no signal killed it).
    pub fn ended_well(&self) -> bool {
        self.exit_code == Some(0)
            || (self.stopped_when_covered && self.exit_code.is_some() && self.signal.is_none())
    }
}

/// `9 (SIGKILL)`, or the number alone for a signal this platform does not name.
fn signal_name(signal: i32) -> String {
    match nix::sys::signal::Signal::try_from(signal) {
        Ok(s) => format!("{signal} ({})", s.as_str()),
        Err(_) => signal.to_string(),
    }
}

fn now() -> String {
    stamp(std::time::SystemTime::now())
}

/// The latest of run.json's times, by time rather than by text: fractions of a second are written
/// without trailing zeros, so the text of a later time may sort first.
pub fn latest_time<'a>(times: impl Iterator<Item = &'a str>) -> Option<String> {
    let rfc3339 = time::format_description::well_known::Rfc3339;
    times
        .filter_map(|t| Some((time::OffsetDateTime::parse(t, &rfc3339).ok()?, t)))
        .max_by_key(|(at, _)| *at)
        .map(|(_, t)| t.to_string())
}

/// `at` as run.json writes times (RFC 3339, UTC).
fn stamp(at: std::time::SystemTime) -> String {
    time::OffsetDateTime::from(at)
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default()
}

impl RunRecord {
    pub fn new(
        workload: &[String],
        profiler_command: &[String],
        fingerprint: &str,
        rank: Option<Rank>,
    ) -> RunRecord {
        RunRecord {
            workload: workload.to_vec(),
            profiler_command: profiler_command.to_vec(),
            profiler_version: None,
            config_fingerprint: fingerprint.to_string(),
            rank,
            started: now(),
            finished: None,
            profiler_exit_code: None,
            profiler_signal: None,
            workload_exit_code: None,
            workload_signal: None,
            interrupted_by: None,
            deep_pass: None,
            adaptive: None,
            deep_ranks: None,
            deep_workers: Vec::new(),
            job_world_size: None,
            deep_engine: None,
            counters_unavailable: None,
        }
    }

    /// What the reports of this run say about it: its commands and profiler version, and
    /// `fingerprint`, the configuration the report is made with.
    pub fn context(&self, fingerprint: String) -> RunContext {
        let partial = self.partial_reason();
        RunContext {
            command: self.workload.clone(),
            profiler_command: self.profiler_command.clone(),
            profiler_version: self.profiler_version.clone(),
            config_fingerprint: fingerprint,
            deep_command: self
                .deep_pass
                .as_ref()
                .map(|p| p.command.clone())
                .unwrap_or_default(),
            deep_worker_commands: self
                .deep_workers
                .iter()
                .map(|w| w.pass.command.clone())
                .collect(),
            deep_workers: self
                .deep_workers
                .iter()
                .map(DeepWorkerRecord::planned)
                .collect(),
            partial: partial.clone(),
            adaptive: self.adaptive.clone(),
            stopped_when_covered: self.deep_passes().any(|pass| pass.stopped_when_covered),
            deep_ranks: self.deep_ranks_measured(),
            deep_engine: self.deep_engine.clone(),
            ranks: self
                .rank
                .iter()
                .map(|r| RankRun {
                    rank: r.rank,
                    world_size: r.world_size,
                    partial: partial.clone(),
                    run: None,
                })
                .collect(),
            notes: self.counters_note().into_iter().collect(),
        }
    }

    /// The deep pass's record and each worker's (worker 0's pass is also `deep_pass`).
    fn deep_passes(&self) -> impl Iterator<Item = &PassRecord> {
        (self.deep_pass.iter()).chain(self.deep_workers.iter().map(|w| &w.pass))
    }

    /// The note of a run whose in-process counters collected nothing (`counters_unavailable`):
    /// ncu's deep pass measured the deep metrics instead, or, where no pass of it ended well, the
    /// report has the trace's times alone.
    fn counters_note(&self) -> Option<String> {
        let why = self.counters_unavailable.as_deref()?;
        let measured = self.deep_passes().any(PassRecord::ended_well);
        let instead = match measured {
            true => "ncu's deep pass measured the deep metrics instead, a second launch of the workload (pipeline.ncu.sampling.deep_engine=auto)",
            false => "ncu's deep pass, run to measure them instead (pipeline.ncu.sampling.deep_engine=auto), did not end well, so the report has the trace's times alone",
        };
        Some(format!(
            "The in-process counters collected nothing in the traced process(es): {why}. {instead}. The counters need CUPTI's Range Profiler (a libcupti of CUDA 12.6 or later: the workload's own, or pipeline.ncu.trace.libcupti where it loads none), a GPU it can profile and metrics its chip knows."
        ))
    }

    /// The ranks whose deep results this run holds: the chosen ones around a launcher, this rank
    /// alone (or none, when it ran unprofiled, in one step or in every round) for one profile-run
    /// per rank; `None` when the run chose no ranks.
    fn deep_ranks_measured(&self) -> Option<Vec<u32>> {
        let chosen = self.deep_ranks.as_ref()?;
        Some(match &self.rank {
            None => chosen.chosen.clone(),
            Some(rank)
                if chosen.unprofiled.is_none()
                    && self.deep_pass.is_some()
                    && chosen.chosen.contains(&rank.rank) =>
            {
                vec![rank.rank]
            }
            Some(_) => Vec::new(),
        })
    }

    /// Why the capture holds only part of the run, in the words report.md and report.json use;
    /// `None` for a run that ended well (or has not ended: the record of a run still going).
    pub fn partial_reason(&self) -> Option<String> {
        if let Some(signal) = self.interrupted_by {
            return Some(format!(
                "the run was interrupted by signal {}",
                signal_name(signal)
            ));
        }
        if let Some(signal) = self.profiler_signal {
            return Some(format!(
                "the profiler was killed by signal {}",
                signal_name(signal)
            ));
        }
        if let Some(signal) = self.workload_signal {
            return Some(format!(
                "the workload was killed by signal {}",
                signal_name(signal)
            ));
        }
        match (self.workload_exit_code, self.profiler_exit_code) {
            (Some(code), _) if code != 0 => Some(format!("the workload exited with code {code}")),
            (_, Some(code)) if code != 0 => Some(format!("the profiler exited with code {code}")),
            _ => None,
        }
    }

    /// Records the workload's exit code the profiler reported (`None`: it did not say).
    pub fn set_workload_exit(&mut self, code: Option<i32>) {
        let code = code.or_else(|| {
            let ended_well = self.profiler_exit_code == Some(0) && self.interrupted_by.is_none();
            ended_well.then_some(0)
        });
        self.workload_exit_code = code;
        self.workload_signal = code
            .and_then(|c| c.checked_sub(128))
            .filter(|s| (1..=64).contains(s));
    }

    pub fn finish(&mut self, finished: &Finished) {
        self.finished = Some(now());
        self.profiler_exit_code = finished.code;
        self.profiler_signal = finished.killed_by;
        self.interrupted_by = finished.interrupted_by;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_latest_time_is_by_time_not_by_text() {
        // ".5Z" sorts after ".50001Z" as text but is the earlier time.
        let times = [
            "2026-11-27T11:08:00.5Z",
            "2026-11-27T11:08:00.50001Z",
            "bad",
        ];
        assert_eq!(
            latest_time(times.into_iter()).as_deref(),
            Some("2026-11-27T11:08:00.50001Z")
        );
        assert_eq!(latest_time(std::iter::empty()), None);
    }
}
