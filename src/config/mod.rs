//! Configuration: layered YAML presets resolved into one [`Config`].
//!
//! Precedence, later wins:
//! 1. the embedded default preset (`conf/ncu/default.yaml`, compiled in);
//! 2. each `--config FILE`, in command-line order; a file's `defaults: [name, …]` parents are merged
//!    just before the file itself;
//! 3. environment variables `PROFILE_RUN_<KEY>` (`__` separates levels);
//! 4. positional `dotted.key=value` overrides, the value parsed as YAML.

pub mod schema;

use std::path::PathBuf;

use figment::providers::{Format, Yaml};
use figment::Figment;
use thiserror::Error;

pub use schema::*;

/// The embedded default preset.
pub const DEFAULT_PRESET: &str = include_str!("../../conf/ncu/default.yaml");

#[derive(Debug, Error)]
pub enum ConfigError {
    #[error("{0}")]
    Invalid(String),
}

/// Where configuration comes from.
#[derive(Debug, Clone, Default)]
pub struct ConfigSources {
    pub files: Vec<PathBuf>,
    pub overrides: Vec<String>,
}

/// A resolved configuration and the layers it came from.
#[derive(Debug)]
pub struct Loaded {
    pub config: Config,
    pub figment: Figment,
}

pub fn load(sources: &ConfigSources) -> Result<Loaded, ConfigError> {
    let mut figment = Figment::from(Yaml::string(DEFAULT_PRESET));
    for file in &sources.files {
        figment = figment.merge(Yaml::file_exact(file));
    }
    let config: Config = figment
        .extract()
        .map_err(|e| ConfigError::Invalid(e.to_string()))?;
    Ok(Loaded { config, figment })
}

impl Loaded {
    pub fn to_yaml(&self) -> String {
        serde_yaml::to_string(&self.config).expect("config serialises")
    }

    /// First 16 hex digits of the SHA-256 of the resolved YAML.
    pub fn fingerprint(&self) -> String {
        use sha2::{Digest, Sha256};
        let digest = Sha256::digest(self.to_yaml().as_bytes());
        digest.iter().take(8).map(|b| format!("{b:02x}")).collect()
    }
}
