//! The integration tests, one binary organised by feature.

mod common;
mod ncu_cli;
mod config;
mod cli_e2e;
mod report_render;
