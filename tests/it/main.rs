//! The integration tests, one binary organised by feature.

mod cli_e2e;
mod common;
mod config;
mod ncu_cli;
mod regions;
mod report_render;
mod region_core;
mod hardening;
