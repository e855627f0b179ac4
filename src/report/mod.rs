//! Reports: one model ([`model::Report`]) rendered as report.json and report.md.
//!
//! `build` turns region statistics into the model; `finish` is the one way every report is made
//! whole (`Report::new`, then `Report::finish`); `render` holds one output per file format; `write`
//! puts files in place atomically (temporary file, then rename) so a crash never leaves a half-written
//! report.
//!
//! Floor: report. May import config, region and the ground floor; never insights, analysis or a
//! profiler. (docs/architecture.md, checked by tests/it/architecture.rs)

pub mod build;
pub mod compare;
pub mod diff;
pub mod distribution;
pub mod empty_metrics;
pub mod finish;
pub mod format;
pub mod headline;
pub mod idle;
pub mod inside;
pub mod model;
pub mod over_peak;
pub mod render;
pub mod summary;
pub mod workload;
pub mod write;

use std::path::PathBuf;

use thiserror::Error;

use crate::error::DomainError;
use crate::exit;

#[derive(Debug, Error)]
pub enum RenderError {
    #[error("template {name}: {message}\n  fix the template, or unset report.template to use the built-in one")]
    Template { name: String, message: String },
    #[error("could not read template {path}: {source}")]
    TemplateRead {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}", exit::write_message(path, source))]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A path in the report directory that profile-run will not write through, replace or read.
    #[error("{}: {reason}", path.display())]
    Refused { path: PathBuf, reason: String },
}

impl DomainError for RenderError {
    fn exit_code(&self) -> i32 {
        match self {
            RenderError::Template { .. }
            | RenderError::TemplateRead { .. }
            | RenderError::Refused { .. } => exit::USAGE,
            RenderError::Write { source, .. } => exit::write_exit_code(source),
        }
    }
}
