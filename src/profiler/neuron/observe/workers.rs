//! Collectives across a run's workers (the Neuron counterpart of GPU ranks): each profile's
//! collectives (`cc_ops` / `CcOp`) matched across profiles by operation and order, each worker's
//! arrival (the collective's trigger where the profile records it, else its start), the last to
//! arrive, the others' wait for it, and the straggler, through the neutral
//! [`crate::analysis::stragglers`]. Times are each profile's own clock (its origin plus the rebased
//! time): workers on different instances compare as far as the instances' clocks agree.

use crate::analysis::stragglers::{cross_scope, number_by_order, Arrival, CrossScope};
use crate::profiler::neuron::readers::model::NeuronProfile;
use crate::report::format::value;

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

/// The cross-worker table over each profile's collectives (profile `i` is scope `i`).
pub fn cross_worker(per_profile: &[Vec<Taken>]) -> CrossScope {
    let keys = per_profile
        .iter()
        .enumerate()
        .flat_map(|(scope, taken)| taken.iter().map(move |t| (scope, t.0.as_str())));
    let seqs = number_by_order(keys);
    let arrivals: Vec<Arrival<'_>> = per_profile
        .iter()
        .enumerate()
        .flat_map(|(scope, taken)| taken.iter().map(move |t| (scope, t)))
        .zip(seqs)
        .map(|((scope, t), seq)| Arrival {
            scope,
            key: &t.0,
            seq,
            start_ns: t.1,
            end_ns: t.2,
        })
        .collect();
    cross_scope(&arrivals)
}

/// How many of the longest waits the notes list.
const LISTED: usize = 5;

/// The report's notes on collectives across workers: the straggler and the longest waits; nothing
/// when fewer than two profiles share a collective.
pub fn notes(labels: &[String], per_profile: &[Vec<Taken>]) -> Vec<String> {
    let table = cross_worker(per_profile);
    if table.matched.is_empty() {
        return Vec::new();
    }
    let label = |i: usize| labels.get(i).map_or("?", String::as_str);
    let ns = |t: u64| value(Some(t as f64), "ns");
    let workers = per_profile.iter().filter(|p| !p.is_empty()).count();
    let mut out = vec![match &table.straggler {
        Some(s) => format!(
            "Collectives across workers: {} matched across {workers} profiles by operation and order. \
             Straggler: `{}`, last to arrive at {} of {}; the others waited {} for it in all.",
            table.matched.len(),
            label(s.scope),
            s.times_last,
            s.of,
            ns(s.wait_caused_ns)
        ),
        None => format!(
            "Collectives across workers: {} matched across {workers} profiles by operation and \
             order; every worker arrived at each at the same instant, so none waited.",
            table.matched.len()
        ),
    }];
    let mut by_wait: Vec<_> = table
        .matched
        .iter()
        .filter(|m| m.max_wait_ns() > 0)
        .collect();
    by_wait.sort_by_key(|m| std::cmp::Reverse(m.max_wait_ns()));
    for m in by_wait.into_iter().take(LISTED) {
        let arrivals: Vec<String> = m
            .waits
            .iter()
            .filter(|&&(scope, _)| scope != m.last)
            .map(|&(scope, wait)| format!("`{}` waited {}", label(scope), ns(wait)))
            .collect();
        out.push(format!(
            "{} #{}: `{}` arrived last; {}.",
            m.key,
            m.seq + 1,
            label(m.last),
            arrivals.join(", ")
        ));
    }
    if !table.unmatched.is_empty() {
        out.push(format!(
            "{} collective(s) appear in one profile only (the others' were not captured, or the \
             workers ran different programs): left out of the cross-worker comparison.",
            table.unmatched.len()
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op(name: &str, at: u64) -> Taken {
        (name.to_string(), at, at + 1_000)
    }

    #[test]
    fn the_late_worker_is_named_with_the_others_waits() {
        let labels = ["rank 0".to_string(), "rank 1".to_string()];
        let per = [
            vec![op("AllReduce", 100), op("AllGather", 5_000)],
            vec![op("AllReduce", 2_100), op("AllGather", 5_000)],
        ];
        let notes = notes(&labels, &per);
        assert!(
            notes[0].contains("Straggler: `rank 1`, last to arrive at 1 of 2"),
            "{notes:?}"
        );
        assert!(
            notes[0].contains("2.00 µs") || notes[0].contains("2 µs"),
            "{notes:?}"
        );
        assert_eq!(notes.len(), 2, "{notes:?}");
        assert!(notes[1].starts_with("AllReduce #1: `rank 1` arrived last; `rank 0` waited"));
    }

    #[test]
    fn one_profile_or_no_shared_collective_gives_no_note() {
        let labels = ["a".to_string(), "b".to_string()];
        assert!(notes(&labels, &[vec![op("AllReduce", 1)]]).is_empty());
        assert!(notes(
            &labels,
            &[vec![op("AllReduce", 1)], vec![op("AllGather", 1)]]
        )
        .is_empty());
    }
}
