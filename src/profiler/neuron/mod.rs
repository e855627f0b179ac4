//! AWS Neuron (Trainium/Inferentia) profiles, in the same rooms as every profiler:
//!
//! - `capture/`: the `pipeline.neuron` settings, the command/environment builders for capturing and
//!   viewing, inspect-mode discovery, and `profile-run report`'s Neuron inputs (its side of
//!   [`crate::profiler::Profiler`]);
//! - `readers/`: every `neuron-explorer view` output (full JSON, summary JSON, summary text, Parquet
//!   directories) read into one [`readers::model::NeuronProfile`] (with its interval arithmetic),
//!   told apart by content;
//! - `observe/`: its timeline fed to the shared region methods, the metrics only Neuron can compute
//!   over those regions, the rules' findings, and the mapping onto the shared report model.
//!
//! `settings` is the `neuron:` config section; `error` its errors.
//!
//! Floor: profiler. May import the floors below (run, process, analysis, insights, report, config,
//! region, ground) and `crate::profiler`'s own files; nothing outside `src/profiler/` imports it.

pub mod capture;
pub mod error;
pub mod observe;
pub mod readers;
/// The `neuron:` section's schema lives with every other section's, in the config layer.
pub use crate::config::neuron_settings as settings;

pub use error::{NeuronError, Result};
pub use readers::model::NeuronProfile;
pub use readers::recognise::{load, recognise, InputKind};
