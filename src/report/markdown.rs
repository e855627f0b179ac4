//! report.md rendering.
