//! Reading ncu CSV exports.

use thiserror::Error;

#[derive(Debug, Error)]
pub enum ExportError {
    #[error("{0}")]
    Invalid(String),
}
