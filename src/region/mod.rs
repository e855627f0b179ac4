//! The region core: turns profiler results that carry a range stack into a tree of nested regions with
//! inclusive and exclusive (self) metric aggregates, per scope and across scopes.
//!
//! Nothing here knows which profiler ran or does I/O: a profiler adapter (under `crate::profiler`)
//! feeds [`Observation`]s through the analysis spine and gets [`ScopeStats`] back. The attribution
//! rules implemented here are the ones written down in docs/attribution.md.
//!
//! Floor: region (the pure core). May import the ground floor only. (docs/architecture.md, checked
//! by tests/it/architecture.rs)

mod coverage;
mod estimate;
mod filter;
pub mod methods;
mod moments;
mod nest;
mod path;
pub mod pattern;
mod percentile;
mod regioner;
mod rename;
mod requested;
mod rollup;
mod selection;
mod tree;

pub use coverage::{Coverage, CoverageTimes};
pub use estimate::{Estimate, KeySamples, KeyTally, RunToRun, Spread, Tallies, Z95};
pub use filter::{function_name, KernelFilter, PatternError};
pub use moments::Moments;
pub use nest::{nest, Nested, WholeRegion};
pub use path::display_of;
pub use percentile::percentile;
pub use regioner::{
    collective_kernels, AutoError, AutoMethod, AutoRegions, CollectiveCuts, Regioner,
    RegionerState, COLLECTIVES_REGION,
};
pub use rename::{cut_name, was_cut, RenameError, RenameRule, Renames, NAME_LIMIT};
pub use requested::RequestedRegions;
pub use rollup::{Acc, Cell, Group, MetricSpec, PerResult, Rollup};
pub use selection::{PatternForm, RegionFilter, RegionPattern, RegionPatternError};
pub use tree::{
    Observation, RegionAccumulator, RegionKind, RegionPath, RegionStats, ScopeKey, ScopeStats,
};
