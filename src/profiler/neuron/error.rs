//! Errors of the Neuron readers and builders: each names the file and where in it (line, byte offset,
//! key path, table row) and says how to fix it.

use std::path::PathBuf;

use thiserror::Error;

/// The Parquet schema versions whose tables this reader understands.
pub const SUPPORTED_SCHEMAS: &[&str] = &["7.4.0", "12.0.1"];

#[derive(Debug, Error)]
pub enum NeuronError {
    #[error("could not read {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// Malformed content; `at` is `line N`, `byte N`, `key a.b[3]` or `table T, row N, column C`.
    #[error("{path}: {at}: {message}")]
    Parse {
        path: PathBuf,
        at: String,
        message: String,
    },
    #[error(
        "{path}: the profile holds only `profile_info`: the NTFF was not captured from this NEFF. \
         Pass the NEFF the NTFF was captured from (same hash in the inspect output), or capture again"
    )]
    NeffMismatch { path: PathBuf },
    #[error(
        "{path}: Parquet profile schema version {version} is not supported (supported: {}). \
         Re-export with a Neuron Explorer release that writes one of them",
        SUPPORTED_SCHEMAS.join(", ")
    )]
    UnsupportedSchema { path: PathBuf, version: String },
    #[error(
        "{path}: table {table} (schema {version}) has no column `{column}`, which this reader needs; \
         re-export the profile or report the schema version"
    )]
    MissingColumn {
        path: PathBuf,
        table: String,
        column: String,
        version: String,
    },
    #[error(
        "none of {} found on PATH or in /opt/aws/neuron/bin: install the Neuron tools \
         (aws-neuronx-tools) or set `pipeline.neuron.executable` to the profiler's path",
        tried.join(", ")
    )]
    ToolNotFound { tried: Vec<String> },
    #[error("`neuron-explorer view` needs HOME set; set HOME in the environment of profile-run")]
    NoHome,
    #[error("{path}: {message}")]
    Unrecognised { path: PathBuf, message: String },
}

impl NeuronError {
    pub(crate) fn parse(
        path: impl Into<PathBuf>,
        at: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        NeuronError::Parse {
            path: path.into(),
            at: at.into(),
            message: message.into(),
        }
    }

    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        NeuronError::Io {
            path: path.into(),
            source,
        }
    }
}

pub type NeuronResult<T, E = NeuronError> = std::result::Result<T, E>;
