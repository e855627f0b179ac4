//! Readers of every `neuron-explorer view` output into the one profile model (`model`, with its
//! interval arithmetic): full JSON
//! (`profile_json`, with the log-tolerant JSON helpers of `json_text`), summary JSON and summary text,
//! Parquet directories (`parquet`), and `recognise`, which tells them apart by content.
//!
//! Floor: profiler (see `crate::profiler`): imports run, process, analysis, insights, report,
//! config, region and the ground floor, and its own profiler's rooms.

pub mod json_text;
pub mod layer_summary;
pub mod model;
pub mod parquet;
pub mod profile_document;
pub mod profile_json;
pub mod recognise;
pub mod summary_json;
pub mod summary_text;
pub mod viewed;
