//! The integration tests, one binary organised by feature.

mod advice;
mod auto_regions;
mod cli_e2e;
mod common;
mod compare;
mod config;
mod diff;
mod flame;
mod gpt2_capture;
mod gpu_rules;
mod hardening;
mod insights;
mod native_report;
mod ncu_cli;
mod neuron;
mod parallel_read;
mod pytorch_runs;
mod readme;
mod region_core;
mod regions;
mod report_file;
mod report_render;
mod report_scopes;
mod rollups;
mod sampled;
mod visual;
