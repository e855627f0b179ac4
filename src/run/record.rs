//! `run.json`: what a run records about itself (workload, profiler command and version, rank, start,
//! end and how the profiler ended), written when the run starts and again when it ends.

use serde::{Deserialize, Serialize};

use super::store::{Rank, RunDir, COMMAND_FILE, CONFIG_FILE, RECORD_FILE};
use crate::analysis::RunContext;
use crate::error::Result;
use crate::process::Finished;

impl RunDir {
    /// Writes `run.json` (the record lives here, so that the directory never imports its record).
    pub fn write_record(&self, record: &RunRecord) -> Result<()> {
        let json = serde_json::to_string_pretty(record).expect("run record serialises");
        self.write_text(RECORD_FILE, &(json + "\n"))
    }

    /// What a run records before its profiler starts, whichever profiler: the configuration
    /// (`config_yaml`), the command lines and the record.
    pub fn write_start(
        &self,
        config_yaml: &str,
        commands: &[String],
        record: &RunRecord,
    ) -> Result<()> {
        self.write_text(CONFIG_FILE, config_yaml)?;
        self.write_text(COMMAND_FILE, &(commands.join("\n") + "\n"))?;
        self.write_record(record)
    }
}

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
    pub interrupted_by: Option<i32>,
    /// The second ncu run of a sampled run (`pipeline.ncu.sampling`); absent for a single run, whose
    /// one command is `profiler_command` (a sampled run's timing pass).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deep_pass: Option<PassRecord>,
}

/// How the deep pass of a sampled run went.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct PassRecord {
    pub command: Vec<String>,
    pub finished: Option<String>,
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
}

impl PassRecord {
    pub fn finish(&mut self, finished: &Finished) {
        self.finished = Some(now());
        self.exit_code = finished.code;
        self.signal = finished.killed_by;
    }
}

fn now() -> String {
    time::OffsetDateTime::now_utc()
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
            interrupted_by: None,
            deep_pass: None,
        }
    }

    /// What the reports of this run say about it: its commands and profiler version, and
    /// `fingerprint`, the configuration the report is made with.
    pub fn context(&self, fingerprint: String) -> RunContext {
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
        }
    }

    pub fn finish(&mut self, finished: &Finished) {
        self.finished = Some(now());
        self.profiler_exit_code = finished.code;
        self.profiler_signal = finished.killed_by;
        self.interrupted_by = finished.interrupted_by;
    }
}
