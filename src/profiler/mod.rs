//! The profilers profile-run drives and reads. Each is a folder that knows its tool (command line,
//! logs, export formats) and hands the neutral spine ([`crate::analysis`]) observations through the
//! [`crate::analysis::Observations`] contract; nothing outside this folder names a profiler's own
//! vocabulary.

pub mod ncu;
pub mod neuron;
