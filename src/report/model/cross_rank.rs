//! The report model's cross-rank diagnosis: collectives matched across ranks, each rank's arrivals
//! and waits, and the straggler that made the others wait, with the region that made it late.

use serde::Serialize;

/// Collectives matched across the scopes of a multi-process report. Times in ns.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct CrossRank {
    /// The finding in one sentence, first in the report's Summary.
    pub finding: String,
    /// Collectives matched on every scope that ran collectives.
    pub collectives: u64,
    /// Collective launches left unmatched: a scope ran more of a collective kernel than another.
    pub unmatched: u64,
    /// How the scopes' clocks were put on one time line.
    pub clock: String,
    /// One entry per scope that ran collectives, in report order.
    pub ranks: Vec<RankWaits>,
    /// Per region holding collective kernels: each scope's wait and transfer in it.
    pub regions: Vec<RegionWaits>,
    /// The rank that arrived last to most of the waiting (`null`: none stands out).
    pub straggler: Option<Straggler>,
}

/// One scope's part in the matched collectives.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RankWaits {
    /// The scope's label, as its section names it.
    pub scope: String,
    /// Matched collectives this scope arrived to last (the others waited for it).
    pub last: u64,
    /// Time spent in collective kernels waiting for the last rank to arrive.
    pub wait_ns: f64,
    /// Time in collective kernels not spent waiting: the transfer itself.
    pub transfer_ns: f64,
    /// The scope's kernel time (every kernel, collectives included).
    pub time_ns: f64,
    /// The clock offset applied to this scope's host (0 on the first host, or on one host).
    pub clock_offset_ns: i64,
}

/// A scope's collective kernels launched directly in one region: waiting for the last rank to
/// arrive, and the rest, the transfer. ns.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct CollectiveTime {
    pub wait_ns: f64,
    pub transfer_ns: f64,
}

/// Waiting and transfer inside one region, per scope (same order as [`CrossRank::ranks`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RegionWaits {
    pub region: String,
    pub wait_ns: Vec<f64>,
    pub transfer_ns: Vec<f64>,
}

/// The rank the others waited for, and why it was late.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Straggler {
    pub scope: String,
    /// Matched collectives it arrived to last, of [`CrossRank::collectives`].
    pub last: u64,
    /// The others' waits for it over all waiting in the matched collectives, 0..1.
    pub caused_share: f64,
    /// The kernel function of the collectives the others waited in most for it (an all-reduce, …).
    pub collective: String,
    /// The region the waiting ranks' collective kernels ran in, most of that wait.
    pub region: String,
    /// The median, over the other ranks, of each one's wait for it.
    pub wait_ns: f64,
    /// That wait over the other ranks' median kernel time, 0..1 (`null` without kernel times).
    pub wait_share: Option<f64>,
    /// The region that made it late (`null` when no region of it ran longer than on the others).
    pub cause: Option<Cause>,
}

/// The late rank's region furthest above the other ranks' median, summed over the segments (the
/// kernels launched since the previous collective) before the collectives it was last to.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Cause {
    pub region: String,
    pub time_ns: f64,
    /// The other ranks' median time in that region over the same segments.
    pub median_ns: f64,
}

/// A rank of a merged run that the report cannot speak for in full (`run.flagged_ranks`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FlaggedRank {
    pub rank: u32,
    /// `missing: …` or why its capture is partial.
    pub why: String,
}
