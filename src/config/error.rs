//! Configuration errors. Each names its source (file, env var or override) and, where there is one,
//! the full dotted key, and says how to fix it. Every variant is a usage error (exit code 2).

use std::path::PathBuf;

use thiserror::Error;

use super::origin::Origin;
use crate::error::DomainError;
use crate::exit;

#[derive(Debug, Error)]
pub enum ConfigError {
    #[error(
        "config file `{}` does not exist and is not a built-in preset{hint}; pass an existing file or one of \
         the built-in presets: {presets}",
        path.display()
    )]
    MissingFile {
        path: PathBuf,
        presets: String,
        /// ` (did you mean `ncu/sampled`?)`, or empty.
        hint: String,
    },

    /// A run directory's recorded configuration that is not a small regular file.
    #[error("{}: {reason}", path.display())]
    Refused { path: PathBuf, reason: String },
    #[error("config file `{}` {kind}, not a YAML file; pass a regular file", path.display())]
    NotAFile { path: PathBuf, kind: &'static str },

    #[error("could not read config file `{}`", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    #[error("invalid YAML in {origin} at line {line}, column {column}: {message}")]
    Yaml {
        origin: Origin,
        line: usize,
        column: usize,
        message: String,
    },

    #[error("{origin} nests {depth} levels deep at line {line}; at most {limit} levels are read (a configuration needs about 5): flatten the document or fix the unclosed brackets")]
    TooDeep {
        origin: Origin,
        line: usize,
        depth: usize,
        limit: usize,
    },

    #[error("{origin} must be a mapping of keys such as `pipeline:` or `report:`, found {found}")]
    NotAMapping { origin: Origin, found: String },

    #[error(
        "`defaults` in {origin} must be a list of preset names, e.g. `defaults: [ncu/default]`"
    )]
    BadDefaults { origin: Origin },

    #[error(
        "preset `{name}` named in `defaults` of {origin} was not found; looked in {searched}{hint}"
    )]
    UnknownPreset {
        name: String,
        origin: Origin,
        searched: String,
        hint: String,
    },

    #[error(
        "presets extend each other in a cycle: {chain}; remove one of these `defaults` entries"
    )]
    PresetCycle { chain: String },

    #[error("override `{text}` has no `=`; {fix}")]
    OverrideWithoutEquals {
        text: String,
        /// What to type instead: a subcommand it is close to, the `--` before a program, or the
        /// `dotted.key=value` form.
        fix: String,
    },

    #[error("bad key `{key}` in {origin}: {reason}")]
    BadKey {
        key: String,
        origin: Origin,
        reason: String,
    },

    #[error("unknown key `{key}` in {origin}{hint}")]
    UnknownKey {
        key: String,
        origin: Origin,
        hint: String,
    },

    #[error("`{key}` in {origin} must be {expected}, found {found}")]
    WrongType {
        key: String,
        origin: Origin,
        expected: String,
        found: String,
    },

    #[error("invalid value {value} for `{key}` in {origin}; allowed values: {allowed}")]
    InvalidValue {
        key: String,
        origin: Origin,
        value: String,
        allowed: String,
    },

    #[error("`{key}` in {origin}: {message}")]
    Invalid {
        key: String,
        origin: Origin,
        message: String,
    },
}

impl ConfigError {
    /// The source the error is about, where there is exactly one.
    pub fn origin(&self) -> Option<&Origin> {
        match self {
            ConfigError::Yaml { origin, .. }
            | ConfigError::TooDeep { origin, .. }
            | ConfigError::NotAMapping { origin, .. }
            | ConfigError::BadDefaults { origin }
            | ConfigError::UnknownPreset { origin, .. }
            | ConfigError::BadKey { origin, .. }
            | ConfigError::UnknownKey { origin, .. }
            | ConfigError::WrongType { origin, .. }
            | ConfigError::InvalidValue { origin, .. }
            | ConfigError::Invalid { origin, .. } => Some(origin),
            ConfigError::MissingFile { .. }
            | ConfigError::Read { .. }
            | ConfigError::Refused { .. }
            | ConfigError::NotAFile { .. }
            | ConfigError::PresetCycle { .. }
            | ConfigError::OverrideWithoutEquals { .. } => None,
        }
    }
}

impl DomainError for ConfigError {
    fn exit_code(&self) -> i32 {
        exit::USAGE
    }
}
