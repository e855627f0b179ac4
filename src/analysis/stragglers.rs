//! Collectives across scopes (ranks, workers): each collective matched across the scopes by its key
//! and its order among the collectives of that key, each scope's arrival, the last to arrive, the
//! time the others waited for it, and the straggler, the scope whose lateness made the others wait
//! longest. Plain values in, plain values out: an adapter hands over one [`Arrival`] per collective
//! a scope took part in, with the instant the scope reached it (its trigger where the source records
//! one, else its start).
//!
//! Arrivals on different hosts compare only as far as the hosts' clocks agree: the adapter says where
//! its times come from.

use std::collections::BTreeMap;

/// One scope's part in one collective.
#[derive(Debug, Clone, PartialEq)]
pub struct Arrival<'a> {
    /// Index of the scope (rank, worker) in the caller's list.
    pub scope: usize,
    /// What the collective is (`AllReduce`, a collective's name): matched across scopes.
    pub key: &'a str,
    /// Its position among this scope's collectives of the same key, from 0 (see [`number_by_order`]).
    pub seq: u64,
    /// When the scope reached it, ns.
    pub start_ns: u64,
    /// When it left it, ns.
    pub end_ns: u64,
}

/// One collective matched across the scopes that took part in it.
#[derive(Debug, Clone, PartialEq)]
pub struct Matched {
    pub key: String,
    pub seq: u64,
    /// (scope, arrival ns, time in the collective ns), in scope order.
    pub arrivals: Vec<(usize, u64, u64)>,
    /// The scope that arrived last (the lowest index among equals).
    pub last: usize,
    /// (scope, ns it waited for the last), in scope order; the last waits 0.
    pub waits: Vec<(usize, u64)>,
}

impl Matched {
    /// The longest any scope waited for the last one.
    pub fn max_wait_ns(&self) -> u64 {
        self.waits.iter().map(|w| w.1).max().unwrap_or(0)
    }

    /// What the last scope's lateness cost the others, summed.
    pub fn total_wait_ns(&self) -> u64 {
        self.waits.iter().map(|w| w.1).sum()
    }
}

/// The scope that kept the others waiting longest over all matched collectives.
#[derive(Debug, Clone, PartialEq)]
pub struct Straggler {
    pub scope: usize,
    /// How many matched collectives it was last to.
    pub times_last: usize,
    /// Of how many matched collectives.
    pub of: usize,
    /// The others' waits for it, summed over the collectives it was last to, ns.
    pub wait_caused_ns: u64,
}

/// The cross-scope table.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CrossScope {
    /// Collectives two or more scopes took part in, by key, then order.
    pub matched: Vec<Matched>,
    /// Collectives (key, seq) only one scope has: no one to wait for, or the others' were not captured.
    pub unmatched: Vec<(String, u64, usize)>,
    /// `None` when no collective is matched or nobody ever waited.
    pub straggler: Option<Straggler>,
}

/// Numbers each scope's collectives of one key in the order given (sort by start first): the
/// `seq` of [`Arrival`] for sources that do not number them.
pub fn number_by_order<'a>(items: impl IntoIterator<Item = (usize, &'a str)>) -> Vec<u64> {
    let mut next: BTreeMap<(usize, &str), u64> = BTreeMap::new();
    items
        .into_iter()
        .map(|(scope, key)| {
            let n = next.entry((scope, key)).or_insert(0);
            *n += 1;
            *n - 1
        })
        .collect()
}

/// Matches the arrivals across scopes and names the straggler. A scope that lists the same (key, seq)
/// twice keeps its first.
pub fn cross_scope(arrivals: &[Arrival<'_>]) -> CrossScope {
    let mut by_collective: BTreeMap<(&str, u64), Vec<&Arrival<'_>>> = BTreeMap::new();
    for a in arrivals {
        let seen = by_collective.entry((a.key, a.seq)).or_default();
        if !seen.iter().any(|s| s.scope == a.scope) {
            seen.push(a);
        }
    }
    let mut out = CrossScope::default();
    for ((key, seq), mut parts) in by_collective {
        if parts.len() < 2 {
            out.unmatched
                .extend(parts.first().map(|p| (key.to_string(), seq, p.scope)));
            continue;
        }
        parts.sort_by_key(|p| p.scope);
        let last_start = parts.iter().map(|p| p.start_ns).max().unwrap_or(0);
        let last = parts
            .iter()
            .find(|p| p.start_ns == last_start)
            .map_or(0, |p| p.scope);
        out.matched.push(Matched {
            key: key.to_string(),
            seq,
            arrivals: parts
                .iter()
                .map(|p| (p.scope, p.start_ns, p.end_ns.saturating_sub(p.start_ns)))
                .collect(),
            last,
            waits: parts
                .iter()
                .map(|p| (p.scope, last_start - p.start_ns))
                .collect(),
        });
    }
    out.straggler = straggler(&out.matched);
    out
}

fn straggler(matched: &[Matched]) -> Option<Straggler> {
    let mut by_scope: BTreeMap<usize, (usize, u64)> = BTreeMap::new();
    for m in matched {
        let entry = by_scope.entry(m.last).or_default();
        entry.0 += 1;
        entry.1 += m.total_wait_ns();
    }
    // Most wait caused; among equals, most often last; then the lowest scope.
    let (scope, (times_last, wait_caused_ns)) = by_scope.into_iter().max_by(|a, b| {
        (a.1 .1, a.1 .0, std::cmp::Reverse(a.0)).cmp(&(b.1 .1, b.1 .0, std::cmp::Reverse(b.0)))
    })?;
    (wait_caused_ns > 0).then_some(Straggler {
        scope,
        times_last,
        of: matched.len(),
        wait_caused_ns,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(scope: usize, key: &str, seq: u64, start_ns: u64, end_ns: u64) -> Arrival<'_> {
        Arrival {
            scope,
            key,
            seq,
            start_ns,
            end_ns,
        }
    }

    #[test]
    fn the_last_to_arrive_makes_the_others_wait() {
        let t = cross_scope(&[
            at(0, "AllReduce", 0, 100, 900),
            at(1, "AllReduce", 0, 700, 900),
            at(2, "AllReduce", 0, 300, 900),
        ]);
        assert_eq!(t.matched.len(), 1);
        let m = &t.matched[0];
        assert_eq!(m.last, 1);
        assert_eq!(m.waits, vec![(0, 600), (1, 0), (2, 400)]);
        assert_eq!(m.arrivals[1], (1, 700, 200));
        assert_eq!(m.max_wait_ns(), 600);
        let s = t.straggler.unwrap();
        assert_eq!(
            (s.scope, s.times_last, s.of, s.wait_caused_ns),
            (1, 1, 1, 1000)
        );
    }

    #[test]
    fn collectives_match_by_key_and_order_not_by_time() {
        // scope 1 is so late that its second AllGather starts after scope 0's third
        let items = [
            (0, "AllGather"),
            (0, "AllGather"),
            (0, "ReduceScatter"),
            (1, "AllGather"),
            (1, "ReduceScatter"),
            (1, "AllGather"),
        ];
        assert_eq!(number_by_order(items), vec![0, 1, 0, 0, 0, 1]);
        let t = cross_scope(&[
            at(0, "AllGather", 0, 0, 10),
            at(0, "AllGather", 1, 20, 30),
            at(1, "AllGather", 0, 5, 10),
            at(1, "AllGather", 1, 100, 110),
        ]);
        let second = t.matched.iter().find(|m| m.seq == 1).unwrap();
        assert_eq!(second.last, 1);
        assert_eq!(second.waits, vec![(0, 80), (1, 0)]);
    }

    #[test]
    fn the_straggler_is_who_caused_the_most_wait_not_who_was_last_most_often() {
        let t = cross_scope(&[
            // scope 0 is last twice, by 1 ns
            at(0, "a", 0, 11, 20),
            at(1, "a", 0, 10, 20),
            at(0, "a", 1, 31, 40),
            at(1, "a", 1, 30, 40),
            // scope 1 is last once, by 500 ns
            at(0, "a", 2, 100, 700),
            at(1, "a", 2, 600, 700),
        ]);
        let s = t.straggler.unwrap();
        assert_eq!(
            (s.scope, s.times_last, s.of, s.wait_caused_ns),
            (1, 1, 3, 500)
        );
    }

    #[test]
    fn a_collective_of_one_scope_is_unmatched_and_no_wait_names_no_straggler() {
        let t = cross_scope(&[
            at(0, "AllReduce", 0, 10, 20),
            at(1, "AllReduce", 0, 10, 20),
            at(1, "Broadcast", 0, 30, 40),
            // a repeated (key, seq) of one scope keeps its first
            at(1, "AllReduce", 0, 99, 100),
        ]);
        assert_eq!(t.unmatched, vec![("Broadcast".to_string(), 0, 1)]);
        assert_eq!(t.matched[0].waits, vec![(0, 0), (1, 0)]);
        assert_eq!(t.straggler, None);
        assert_eq!(cross_scope(&[]), CrossScope::default());
    }
}
