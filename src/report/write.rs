//! Atomic file writes.
