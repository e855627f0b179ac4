//! AWS Neuron (Trainium/Inferentia) profiles: readers for every `neuron-explorer view` output (full
//! JSON, summary JSON, summary text, Parquet directories) into one [`model::NeuronProfile`], region
//! generators (between collectives, along the layer hierarchy, along NKI stack frames), per-region
//! metrics, comparison and distribution, and the command/environment builders for capturing.
//!
//! Its types are its own; `report.rs` maps them onto the shared report model and `capture.rs` is its
//! side of [`crate::profiler::Profiler`].

pub mod analysis;
pub mod capture;
pub mod cli;
pub mod error;
pub mod group_ratios;
pub mod inputs;
pub mod inspect;
pub mod intervals;
pub mod json_text;
pub mod metrics;
pub mod model;
pub mod parquet;
pub mod pipeline;
pub mod profile_json;
pub mod recognise;
pub mod regions;
pub mod report;
pub mod report_units;
pub mod settings;
pub mod summary_json;
pub mod summary_text;
pub mod text;
pub mod views;

pub use error::{NeuronError, Result};
pub use model::NeuronProfile;
pub use recognise::{load, recognise, InputKind};
