//! Collectives across a run's workers (the Neuron counterpart of GPU ranks): each profile's
//! collectives (`cc_ops` / `CcOp`) matched across profiles by operation and order, each worker's
//! arrival (the collective's trigger where the profile records it, else its start), the last to
//! arrive, the others' wait for it, and the straggler, through the neutral cross-rank diagnosis
//! the GPU side uses ([`crate::analysis::cross_rank`]). Times are each profile's own clock (its origin plus the rebased
//! time): workers on different instances compare as far as the instances' clocks agree.
//!
//! A system profile names its workers itself: `system` makes its report, one scope per worker, from
//! each worker's events swept into phases (`phases`).
//!
//! Floor: profiler (see `crate::profiler`): imports run, process, analysis, insights, report,
//! config, region and the ground floor, and its own profiler's rooms.

pub mod depth;
pub mod fold;
pub mod phases;
pub mod rows;
pub mod system;

use crate::analysis::cross_rank::{diagnose, Timelines};
use crate::profiler::neuron::readers::model::NeuronProfile;
use crate::region::ScopeKey;
use crate::report::model::CrossRank;

/// One collective of one profile: operation, arrival and end on the profile's clock, ns.
pub type Taken = (String, u64, u64);

/// A profile's collectives in the order it ran them.
pub fn collectives_of(profile: &NeuronProfile) -> Vec<Taken> {
    let origin = profile.origin_ns.unwrap_or(0);
    profile
        .collectives
        .iter()
        .map(|c| {
            (
                c.operation.clone(),
                origin.saturating_add(c.cut_ns()),
                origin.saturating_add(c.end_ns),
            )
        })
        .collect()
}

/// The cross-rank diagnosis over the workers' collectives (profile `i` is labelled `labels[i]`): the
/// one the GPU side gets, each worker's arrival its collective's trigger where recorded, else its
/// start; `None` unless two or more workers ran collectives.
pub fn cross_rank(labels: &[String], per_profile: &[Vec<Taken>]) -> Option<CrossRank> {
    let mut timelines = Timelines::default();
    for (label, taken) in labels.iter().zip(per_profile) {
        // The label names the worker as the report's scopes do (`rank 1`, a profile's file).
        let scope = ScopeKey {
            process_name: label.clone(),
            ..ScopeKey::default()
        };
        for (operation, arrival, end) in taken {
            timelines.collective(&scope, operation, *arrival, *end);
        }
    }
    diagnose(timelines)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op(name: &str, at: u64) -> Taken {
        (name.to_string(), at, at + 3_000)
    }

    #[test]
    fn the_late_worker_is_named_with_the_others_wait() {
        let labels = ["rank 0".to_string(), "rank 1".to_string()];
        let per = [
            vec![op("AllReduce", 100), op("AllGather", 5_000)],
            vec![op("AllReduce", 2_100), op("AllGather", 5_000)],
        ];
        let x = cross_rank(&labels, &per).expect("two workers");
        let s = x.straggler.expect("rank 1 is late");
        assert_eq!(s.scope, "rank 1");
        assert_eq!(s.last, 1);
        assert_eq!(s.wait_ns, 2_000.0);
        assert!(
            x.finding
                .starts_with("rank 1 is late to the collectives (last to 1 of 2"),
            "{}",
            x.finding
        );
    }

    #[test]
    fn one_profile_or_no_shared_collective_gives_no_diagnosis() {
        let labels = ["a".to_string(), "b".to_string()];
        assert!(cross_rank(&labels, &[vec![op("AllReduce", 1)]]).is_none());
        assert!(cross_rank(
            &labels,
            &[vec![op("AllReduce", 1)], vec![op("AllGather", 1)]]
        )
        .is_none());
    }
}
