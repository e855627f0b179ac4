//! report.json rendering.
