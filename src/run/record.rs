//! `run.json`: what a run records about itself (workload, profiler command and version, rank, start,
//! end and how the profiler ended), written when the run starts and again when it ends.

use serde::{Deserialize, Serialize};

use super::store::Rank;
use crate::process::Finished;

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
        }
    }

    pub fn finish(&mut self, finished: &Finished) {
        self.finished = Some(now());
        self.profiler_exit_code = finished.code;
        self.profiler_signal = finished.killed_by;
        self.interrupted_by = finished.interrupted_by;
    }
}
