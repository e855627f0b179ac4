//! AWS Neuron (Trainium/Inferentia) profiles, in rooms by what they do:
//!
//! - `readers/`: every `neuron-explorer view` output (full JSON, summary JSON, summary text, Parquet
//!   directories) read into one [`model::NeuronProfile`], told apart by content;
//! - `model/`: the profile model and time-interval arithmetic;
//! - `capture/`: the `pipeline.neuron` settings, the command/environment builders for capturing and
//!   viewing, inspect-mode discovery, and `profile-run report`'s Neuron inputs (its side of
//!   [`crate::profiler::Profiler`]);
//! - `analysis/`: its timeline fed to the shared region methods, the metrics only Neuron can compute
//!   over those regions, and the rules' findings;
//! - `report/`: the mapping onto the shared report model, and a plain-text rendering.
//!
//! `settings` is the `neuron:` config section; `error` its errors.

pub mod capture;
pub mod error;
pub mod observe;
pub mod readers;
/// The `neuron:` section's schema lives with every other section's, in the config layer.
pub use crate::config::neuron_settings as settings;

pub use error::{NeuronError, Result};
pub use readers::model::NeuronProfile;
pub use readers::recognise::{load, recognise, InputKind};
