//! The integration tests, one binary organised by feature.

mod common;
mod ncu_cli;
