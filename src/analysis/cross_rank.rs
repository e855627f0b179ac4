//! Each scope's collectives and what ran between them, collected while results stream in, for the
//! cross-rank diagnosis (`diagnose`): which rank arrived last to each collective, how long the
//! others waited, and which region of the late rank made it late.
//!
//! Results arrive in launch order per scope (the `Observations` contract), so the kernels launched
//! since a scope's previous collective are one running tally per region: memory grows with the
//! collectives, never with the kernels.
//!
//! Floor: analysis (see `crate::analysis`): imports report, region and the ground floor only.

mod diagnose;

use std::sync::Arc;

use globset::GlobSet;

use crate::fast_map::FastMap;
use crate::region::{display_of, Observation, ScopeKey};
use crate::report::format::plain_name;
use crate::report::model::{CollectiveTime, Region, Report};

pub use diagnose::diagnose;

/// Puts each scope's collective wait and transfer on the regions its collectives ran in, from the
/// diagnosis, so that a region's own section says how much of its time was waiting.
pub fn annotate(report: &mut Report) {
    let Some(x) = report.cross_rank.as_ref() else {
        return;
    };
    for (at, rank) in x.ranks.iter().enumerate() {
        let Some(scope) = report.scopes.iter_mut().find(|s| s.label == rank.scope) else {
            continue;
        };
        for g in &x.regions {
            let shown = |r: &&mut Region| plain_name(&r.path) == g.region.as_str();
            if let Some(region) = scope.regions.iter_mut().find(shown) {
                region.collectives = Some(CollectiveTime {
                    wait_ns: g.wait_ns[at],
                    transfer_ns: g.transfer_ns[at],
                });
            }
        }
    }
}

#[cfg(test)]
mod tests;

/// One collective kernel as one scope ran it.
#[derive(Debug, Clone)]
struct Arrival {
    kernel: Arc<str>,
    start: u64,
    end: u64,
    /// The innermost region the collective kernel ran in (`""`: outside every range).
    region: Arc<str>,
    /// Kernel time per innermost region over the kernels launched since the previous collective.
    before: Vec<(Arc<str>, f64)>,
}

/// One scope's collectives in launch order, and its kernel time.
#[derive(Debug, Clone, Default)]
struct Timeline {
    arrivals: Vec<Arrival>,
    /// The running tally since the last collective.
    since_last: FastMap<Arc<str>, f64>,
    time: f64,
    /// Whether its results came as kernels in ranges ([`Timelines::visit`]), so that its regions can
    /// explain a late arrival; collectives given directly carry no regions.
    kernels: bool,
    /// Interned kernel and region names (a run repeats a few of them many times).
    names: FastMap<String, Arc<str>>,
    /// Whether each kernel name seen is a collective: the glob match costs more than the rest of a
    /// result's visit, and a run launches a few names many times.
    collective: FastMap<String, bool>,
    /// The last range stack seen and its region: consecutive kernels mostly share one, so its path
    /// is built once, not once per kernel.
    last_stack: Vec<String>,
    last_region: Option<Arc<str>>,
}

impl Timeline {
    /// The region of a range stack, displayed as the report displays region paths.
    fn region_of(&mut self, stack: &[String]) -> Arc<str> {
        if let Some(region) = self
            .last_region
            .as_ref()
            .filter(|_| self.last_stack == stack)
        {
            return region.clone();
        }
        let region = self.intern(&display_of(stack));
        self.last_stack = stack.to_vec();
        self.last_region = Some(region.clone());
        region
    }

    fn is_collective(&mut self, kernel: &str, collectives: &GlobSet) -> bool {
        if let Some(&known) = self.collective.get(kernel) {
            return known;
        }
        let matched = collectives.is_match(kernel);
        self.collective.insert(kernel.to_string(), matched);
        matched
    }

    fn intern(&mut self, name: &str) -> Arc<str> {
        if let Some(found) = self.names.get(name) {
            return found.clone();
        }
        let interned: Arc<str> = Arc::from(name);
        self.names.insert(name.to_string(), interned.clone());
        interned
    }
}

/// The collectives of every scope seen so far.
#[derive(Debug, Clone, Default)]
pub struct Timelines {
    scopes: FastMap<ScopeKey, Timeline>,
}

impl Timelines {
    /// The scope's timeline, made on its first result (the key cloned once per scope, not per
    /// result).
    fn timeline(&mut self, scope: &ScopeKey) -> Option<&mut Timeline> {
        if !self.scopes.contains_key(scope) {
            self.scopes.insert(scope.clone(), Timeline::default());
        }
        self.scopes.get_mut(scope)
    }

    /// Adds one result; `collectives` tells collective kernels by name. Results without an in-place
    /// start (replayed by a profiler) say nothing about arrivals and are skipped.
    pub fn visit(&mut self, obs: &Observation<'_>, collectives: &GlobSet) {
        let (Some(start), Some(time)) = (obs.start, obs.time) else {
            return;
        };
        let Some(timeline) = self.timeline(obs.scope) else {
            return;
        };
        let region = timeline.region_of(obs.stacks.first().map_or(&[], Vec::as_slice));
        timeline.kernels = true;
        timeline.time += time;
        if timeline.is_collective(obs.kernel, collectives) {
            let kernel = timeline.intern(obs.kernel);
            let mut before: Vec<(Arc<str>, f64)> = timeline.since_last.drain().collect();
            before.sort_by(|a, b| a.0.cmp(&b.0));
            timeline.arrivals.push(Arrival {
                kernel,
                start,
                end: start.saturating_add(time.max(0.0) as u64),
                region,
                before,
            });
        } else {
            *timeline.since_last.entry(region).or_default() += time;
        }
    }

    /// Adds one collective a scope took part in, given directly by an adapter whose timeline names
    /// its collectives (a Neuron profile's): arriving at `start`, leaving at `end`, in no region and
    /// with no kernels of its own between collectives.
    pub fn collective(&mut self, scope: &ScopeKey, name: &str, start: u64, end: u64) {
        let Some(timeline) = self.timeline(scope) else {
            return;
        };
        let kernel = timeline.intern(name);
        let region = timeline.intern("");
        timeline.arrivals.push(Arrival {
            kernel,
            start,
            end: end.max(start),
            region,
            before: Vec::new(),
        });
    }

    /// Folds in the timelines read after these (another reader's scopes, or later results of the
    /// same scope).
    pub fn merge(&mut self, later: Timelines) {
        for (key, mut timeline) in later.scopes {
            match self.scopes.get_mut(&key) {
                None => {
                    self.scopes.insert(key, timeline);
                }
                Some(mine) => {
                    mine.time += timeline.time;
                    mine.kernels |= timeline.kernels;
                    mine.arrivals.append(&mut timeline.arrivals);
                    for (region, t) in timeline.since_last {
                        *mine.since_last.entry(region).or_default() += t;
                    }
                }
            }
        }
    }
}
