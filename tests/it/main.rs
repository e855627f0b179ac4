//! The integration tests, one binary organised by feature.

mod common;
