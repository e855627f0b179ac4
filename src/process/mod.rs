//! Running the profiler: spawning, streaming its log, signals and exit status.

use thiserror::Error;

use crate::error::exit;

#[derive(Debug, Error)]
pub enum ProfilerError {
    #[error("{0}")]
    NotStarted(String),
    #[error("{0}")]
    Failed(String),
}

impl ProfilerError {
    pub fn exit_code(&self) -> i32 {
        match self {
            ProfilerError::NotStarted(_) => exit::PROFILER_NOT_STARTED,
            ProfilerError::Failed(_) => exit::PROFILER_FAILED,
        }
    }
}
