//! The region core: turns profiler results that carry a range stack into a tree of nested regions with
//! inclusive and exclusive (self) metric aggregates, per scope and across scopes.
//!
//! Nothing here knows about Nsight Compute or does I/O: a profiler adapter (`crate::profiler::ncu`, later the
//! Neuron one) feeds [`Observation`]s and gets [`ScopeStats`] back. The attribution rules implemented
//! here are the ones written down in docs/attribution.md.

mod filter;
mod rename;
mod requested;
mod rollup;
mod tree;

pub use filter::{function_name, KernelFilter, PatternError};
pub use rename::{RenameError, RenameRule, Renames};
pub use requested::RequestedRegions;
pub use rollup::{Acc, Cell, Group, MetricSpec, Rollup};
pub use tree::{
    Observation, RegionAccumulator, RegionKind, RegionPath, RegionStats, ScopeKey, ScopeStats,
};
