//! A capture a profiler could not read, whichever profiler made it: ncu's CSV exports and report
//! files, CUPTI traces, Neuron's profiles. It reaches the crate's error as a `DomainError`, so that nothing
//! outside `src/profiler/` names a profiler's own error type.

use thiserror::Error;

use super::ncu::readers::export::ExportError;
use super::ncu::readers::report_file::ReportFileError;
use super::ncu::readers::trace::TraceError;
use super::neuron::NeuronError;
use crate::error::DomainError;
use crate::exit;

#[derive(Debug, Error)]
pub enum ReadError {
    #[error(transparent)]
    Export(#[from] ExportError),
    #[error(transparent)]
    ReportFile(#[from] ReportFileError),
    #[error(transparent)]
    Trace(#[from] TraceError),
    #[error(transparent)]
    Neuron(#[from] NeuronError),
}

impl DomainError for ReadError {
    /// An export, report file or profile that cannot be read is exit 5; a missing Neuron tool is
    /// exit 3; a wrong Neuron input, region name or environment is a usage error.
    fn exit_code(&self) -> i32 {
        match self {
            ReadError::Export(_) | ReadError::ReportFile(_) | ReadError::Trace(_) => {
                exit::EXPORT_UNREADABLE
            }
            ReadError::Neuron(e) => match e {
                NeuronError::Io { .. }
                | NeuronError::Parse { .. }
                | NeuronError::NeffMismatch { .. }
                | NeuronError::UnsupportedSchema { .. }
                | NeuronError::MissingColumn { .. } => exit::EXPORT_UNREADABLE,
                NeuronError::ToolNotFound { .. } => exit::PROFILER_NOT_STARTED,
                NeuronError::NoHome | NeuronError::Unrecognised { .. } => exit::USAGE,
            },
        }
    }
}
