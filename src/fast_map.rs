//! Hash maps for the lookups made once per profiler result (scopes, NVTX stacks, kernel names).
//!
//! foldhash is several times faster than the standard SipHash on the short string keys these maps
//! hold, and a fixed seed makes iteration order the same on every run. Keys come from the user's own
//! exports, so resistance to crafted collisions buys nothing here.
//!
//! Floor: ground. Imports nothing above it. (docs/architecture.md, checked by
//! tests/it/architecture.rs)

use std::collections::HashMap;

/// A `HashMap` with foldhash and a fixed seed; build one with `FastMap::default()`.
pub type FastMap<K, V> = HashMap<K, V, foldhash::fast::FixedState>;
