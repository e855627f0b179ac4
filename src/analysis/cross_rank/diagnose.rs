//! Collectives matched across ranks, each rank's wait in them, and the straggler.
//!
//! - **Matching.** The k-th launch of a collective kernel on one rank is the k-th launch of the same
//!   kernel on every other (NCCL launches a communicator's collectives in the same order on all its
//!   ranks). A collective is matched when every rank that ran collectives ran it.
//! - **Clocks.** Ranks of one host share one clock. Ranks on other hosts are shifted so that each
//!   collective ends at the same time on every host: a collective ends on all its ranks together,
//!   within its own transfer, however late each arrived.
//! - **Waits.** A rank arrives when its collective kernel starts; every rank waits for the last to
//!   arrive, so its wait is the last arrival minus its own (at most its kernel's duration), and the
//!   rest of its kernel is transfer.
//! - **Cause.** The waits of a collective are charged to the late rank's region whose time, over the
//!   kernels launched since its previous collective, is furthest above the other ranks' median.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::{Timeline, Timelines};
use crate::fast_map::FastMap;
use crate::region::percentile;
use crate::region::{function_name, ScopeKey};
use crate::report::build::scope_label;
use crate::report::format;
use crate::report::model::{Cause, CrossRank, RankWaits, RegionWaits, Straggler};

/// A rank is named the straggler when the waits for it are at least this share of all waiting …
const CAUSED_SHARE: f64 = 0.5;
/// … and the others' median wait for it is at least this share of their kernel time.
const WAIT_SHARE: f64 = 0.01;
/// A region of the late rank is named as the cause only when the time it ran above the others'
/// median explains at least this share of the others' wait: a region 0.2 ms slower is no cause of
/// a 1 s wait, and naming it would send the user to the wrong code (the delay is on the host).
const CAUSE_SHARE: f64 = 0.5;

/// The diagnosis of every scope's collectives; `None` unless two or more scopes share a collective
/// with in-place times.
pub fn diagnose(timelines: Timelines) -> Option<CrossRank> {
    let mut ranks: Vec<(ScopeKey, Timeline)> = timelines
        .scopes
        .into_iter()
        .filter(|(_, t)| !t.arrivals.is_empty())
        .collect();
    if ranks.len() < 2 {
        return None;
    }
    ranks.sort_by_key(|(key, _)| order_key(key));
    let matched = match_collectives(&ranks);
    if matched.is_empty() {
        return None;
    }
    let total: usize = ranks.iter().map(|(_, t)| t.arrivals.len()).sum();
    let unmatched = (total - matched.len() * ranks.len()) as u64;
    let (offsets, clock) = clock_offsets(&ranks, &matched);
    let mut tally = Tally::new(ranks.len());
    for at in &matched {
        tally.add(&ranks, at, &offsets);
    }
    // Collectives an adapter gave directly (a Neuron profile's) come without kernels in ranges, so
    // no region can explain a late arrival and none is named.
    let regions = ranks.iter().any(|(_, t)| t.kernels);
    let counts = (matched.len() as u64, unmatched);
    Some(tally.finish(&ranks, &offsets, clock, counts, regions))
}

/// Ranks in a stable order a reader expects: host, then launcher rank, device and process id, then
/// name with its numbers compared as numbers (`rank 2` before `rank 10`).
fn order_key(key: &ScopeKey) -> (String, u64, u64, u64, String) {
    let n = |s: &str| s.parse().unwrap_or(u64::MAX);
    (
        key.host.clone(),
        n(&key.rank),
        n(&key.device),
        n(&key.process_id),
        natural(&key.process_name),
    )
}

/// `name` with each run of digits padded to 20, so that text order is number order.
fn natural(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut digits = String::new();
    for c in name.chars().chain(std::iter::once('\0')) {
        if c.is_ascii_digit() {
            digits.push(c);
            continue;
        }
        if !digits.is_empty() {
            out.push_str(&format!("{digits:0>20}"));
            digits.clear();
        }
        if c != '\0' {
            out.push(c);
        }
    }
    out
}

/// For each matched collective, the index of its arrival on every rank, in the first rank's order.
fn match_collectives(ranks: &[(ScopeKey, Timeline)]) -> Vec<Vec<usize>> {
    let occurrences: Vec<FastMap<(Arc<str>, usize), usize>> = ranks
        .iter()
        .map(|(_, t)| {
            let mut seen: FastMap<Arc<str>, usize> = FastMap::default();
            let mut at = FastMap::default();
            for (i, a) in t.arrivals.iter().enumerate() {
                let k = seen.entry(a.kernel.clone()).or_default();
                at.insert((a.kernel.clone(), *k), i);
                *k += 1;
            }
            at
        })
        .collect();
    let mut seen: FastMap<Arc<str>, usize> = FastMap::default();
    let mut matched = Vec::new();
    for a in &ranks[0].1.arrivals {
        let k = seen.entry(a.kernel.clone()).or_default();
        let key = (a.kernel.clone(), *k);
        *k += 1;
        let found: Option<Vec<usize>> = occurrences.iter().map(|o| o.get(&key).copied()).collect();
        matched.extend(found);
    }
    matched
}

/// Each rank's clock offset (ns to subtract from its times) and how the clocks were joined.
fn clock_offsets(ranks: &[(ScopeKey, Timeline)], matched: &[Vec<usize>]) -> (Vec<i64>, String) {
    let mut distinct: Vec<&str> = ranks.iter().map(|(k, _)| k.host.as_str()).collect();
    distinct.sort_unstable();
    distinct.dedup();
    if distinct.len() < 2 {
        return (
            vec![0; ranks.len()],
            "one host: every rank's times are on one clock".into(),
        );
    }
    let first = ranks[0].0.host.as_str();
    // The mean end of each matched collective on each host.
    let host_end = |host: &str, at: &[usize]| -> f64 {
        let ends: Vec<f64> = ranks
            .iter()
            .zip(at)
            .filter(|((k, _), _)| k.host == host)
            .map(|((_, t), &i)| t.arrivals[i].end as f64)
            .collect();
        ends.iter().sum::<f64>() / ends.len().max(1) as f64
    };
    let mut by_host: BTreeMap<&str, i64> = BTreeMap::new();
    for host in distinct.iter().copied().filter(|h| *h != first) {
        let deltas: Vec<f64> = matched
            .iter()
            .map(|at| host_end(host, at) - host_end(first, at))
            .collect();
        by_host.insert(host, median(deltas).round() as i64);
    }
    let offsets = ranks
        .iter()
        .map(|(k, _)| by_host.get(k.host.as_str()).copied().unwrap_or(0))
        .collect();
    (
        offsets,
        format!(
            "{} hosts: each host's clock shifted so that the {} matched collectives end together (the median shift; {first} is the reference)",
            distinct.len(),
            matched.len()
        ),
    )
}

/// Sums over the matched collectives.
struct Tally {
    last: Vec<u64>,
    wait: Vec<f64>,
    transfer: Vec<f64>,
    /// region → (wait, transfer) per rank.
    regions: BTreeMap<Arc<str>, (Vec<f64>, Vec<f64>)>,
    /// Per rank that was last to some collective: what it caused. Only those ranks have an entry,
    /// each with one wait per rank, so 10,000 ranks need a few such rows, not 10,000².
    caused: BTreeMap<usize, Caused>,
}

#[derive(Default, Clone)]
struct Caused {
    /// Each other rank's wait for this one.
    wait_of: Vec<f64>,
    /// Waits by the region the waiting ranks' collective kernels ran in.
    wait_in: BTreeMap<Arc<str>, f64>,
    /// The others' waits for it, by the collective's kernel function.
    collective: BTreeMap<String, f64>,
    /// Per region of this rank: (its time, the others' median) summed over those segments.
    regions: BTreeMap<Arc<str>, (f64, f64)>,
}

impl Tally {
    fn new(n: usize) -> Tally {
        Tally {
            last: vec![0; n],
            wait: vec![0.0; n],
            transfer: vec![0.0; n],
            regions: BTreeMap::new(),
            caused: BTreeMap::new(),
        }
    }

    /// One matched collective: `at` indexes its arrival on each rank.
    fn add(&mut self, ranks: &[(ScopeKey, Timeline)], at: &[usize], offsets: &[i64]) {
        let n = ranks.len();
        let arrival = |r: usize| ranks[r].1.arrivals[at[r]].start as i64 - offsets[r];
        let late = (0..n).max_by_key(|&r| (arrival(r), n - r)).unwrap_or(0);
        self.last[late] += 1;
        let caused = self.caused.entry(late).or_insert_with(|| Caused {
            wait_of: vec![0.0; n],
            ..Caused::default()
        });
        let mut waited = 0.0;
        for r in 0..n {
            let a = &ranks[r].1.arrivals[at[r]];
            let duration = a.end.saturating_sub(a.start) as f64;
            let wait = ((arrival(late) - arrival(r)) as f64).clamp(0.0, duration);
            self.wait[r] += wait;
            self.transfer[r] += duration - wait;
            let entry = self
                .regions
                .entry(a.region.clone())
                .or_insert_with(|| (vec![0.0; n], vec![0.0; n]));
            entry.0[r] += wait;
            entry.1[r] += duration - wait;
            caused.wait_of[r] += wait;
            waited += wait;
            if r != late {
                *caused.wait_in.entry(a.region.clone()).or_default() += wait;
            }
        }
        let function = function_name(&ranks[late].1.arrivals[at[late]].kernel).to_string();
        *caused.collective.entry(function).or_default() += waited;
        charge_regions(caused, ranks, at, late);
    }

    fn finish(
        self,
        ranks: &[(ScopeKey, Timeline)],
        offsets: &[i64],
        clock: String,
        (collectives, unmatched): (u64, u64),
        regions: bool,
    ) -> CrossRank {
        let labels: Vec<String> = ranks.iter().map(|(k, _)| scope_label(k)).collect();
        let named = self.straggler(ranks, &labels);
        // The finding names a rank by its rank where the job said it (what a user searches their
        // launcher's logs for), else by its scope's label.
        let names: Vec<String> = ranks
            .iter()
            .zip(&labels)
            .map(|((k, _), label)| match k.rank.as_str() {
                "" => label.clone(),
                rank => format!("rank {rank}"),
            })
            .collect();
        let finding = finding(named.as_ref(), regions, &names, &self.last, collectives);
        let straggler = named.map(|(_, s)| s);
        CrossRank {
            finding,
            collectives,
            unmatched,
            clock,
            ranks: (0..ranks.len())
                .map(|r| RankWaits {
                    scope: labels[r].clone(),
                    last: self.last[r],
                    wait_ns: self.wait[r],
                    transfer_ns: self.transfer[r],
                    time_ns: ranks[r].1.time,
                    clock_offset_ns: offsets[r],
                })
                .collect(),
            regions: self
                .regions
                .into_iter()
                .map(|(region, (wait_ns, transfer_ns))| RegionWaits {
                    region: shown(&region),
                    wait_ns,
                    transfer_ns,
                })
                .collect(),
            straggler,
        }
    }

    /// The rank whose lateness cost the others most (its index and what it caused), when it stands
    /// out (see the constants).
    fn straggler(
        &self,
        ranks: &[(ScopeKey, Timeline)],
        labels: &[String],
    ) -> Option<(usize, Straggler)> {
        let others = |late: usize, v: &dyn Fn(usize) -> f64| -> f64 {
            median((0..ranks.len()).filter(|&r| r != late).map(v).collect())
        };
        // A rank never last caused no wait; among equal waits the last rank is named.
        let sum = |c: &Caused| c.wait_of.iter().sum::<f64>();
        let (&late, caused) = self
            .caused
            .iter()
            .max_by(|a, b| sum(a.1).total_cmp(&sum(b.1)))?;
        let wait_ns = others(late, &|r| caused.wait_of[r]);
        let time = others(late, &|r| ranks[r].1.time);
        let all_waiting: f64 = self.wait.iter().sum();
        let caused_share = caused.wait_of.iter().sum::<f64>() / all_waiting.max(f64::MIN_POSITIVE);
        let stands_out =
            caused_share >= CAUSED_SHARE && wait_ns > 0.0 && wait_ns >= WAIT_SHARE * time;
        if !stands_out {
            return None;
        }
        let region = top(&caused.wait_in)?;
        let cause = caused
            .regions
            .iter()
            .map(|(r, &(t, m))| (r, t, m))
            .filter(|(_, t, m)| t - m >= CAUSE_SHARE * wait_ns)
            .max_by(|a, b| (a.1 - a.2).total_cmp(&(b.1 - b.2)))
            .map(|(r, time_ns, median_ns)| Cause {
                region: shown(r),
                time_ns,
                median_ns,
            });
        Some((
            late,
            Straggler {
                scope: labels[late].clone(),
                last: self.last[late],
                caused_share,
                collective: top(&caused.collective).unwrap_or_default(),
                region: shown(&region),
                wait_ns,
                wait_share: (time > 0.0).then(|| wait_ns / time),
                cause,
            },
        ))
    }
}

/// Adds the late rank's regions before this collective, beside the other ranks' median in each.
fn charge_regions(caused: &mut Caused, ranks: &[(ScopeKey, Timeline)], at: &[usize], late: usize) {
    let before = |r: usize| &ranks[r].1.arrivals[at[r]].before;
    let mut names: Vec<&Arc<str>> = (0..ranks.len())
        .flat_map(|r| before(r).iter().map(|(k, _)| k))
        .collect();
    names.sort();
    names.dedup();
    for name in names {
        let time_of = |r: usize| {
            before(r)
                .binary_search_by(|(k, _)| k.cmp(name))
                .map_or(0.0, |i| before(r)[i].1)
        };
        let others = median(
            (0..ranks.len())
                .filter(|&r| r != late)
                .map(time_of)
                .collect(),
        );
        let entry = caused.regions.entry(name.clone()).or_default();
        entry.0 += time_of(late);
        entry.1 += others;
    }
}

/// The median of `values` (linear between the middle two), 0 for none.
fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    percentile(&values, 0.5).unwrap_or(0.0)
}

fn top<K: Clone + Ord, V: PartialOrd + Copy>(map: &BTreeMap<K, V>) -> Option<K> {
    map.iter()
        .max_by(|a, b| a.1.partial_cmp(b.1).unwrap_or(std::cmp::Ordering::Equal))
        .map(|(k, _)| k.clone())
}

/// What the time outside every range is called.
const OUTSIDE: &str = "(outside every range)";

/// A region path as a reader sees it; the time outside every range has none.
fn shown(region: &str) -> String {
    if region.is_empty() {
        OUTSIDE.into()
    } else {
        format::plain_name(region).into_owned()
    }
}

/// The one sentence the Summary opens with, naming each rank as `names` does; `straggler`: the late
/// rank's index and what it caused; `regions`: whether the ranks' regions are known.
fn finding(
    straggler: Option<&(usize, Straggler)>,
    regions: bool,
    names: &[String],
    last: &[u64],
    n: u64,
) -> String {
    let time = |ns: f64| format::value(Some(ns), "ns");
    match straggler {
        Some((late, s)) => {
            let cause = s.cause.as_ref().map_or_else(
                || if !regions { String::new() } else { "; none of its regions ran long enough above the other ranks' median to explain the wait (the delay is outside the traced kernels: host work, data loading or launch)".to_string() },
                |c| format!("; its `{}` takes {} against a median of {} on the other ranks", c.region, time(c.time_ns), time(c.median_ns)),
            );
            let share = s
                .wait_share
                .map(|w| format!(", {} of their kernel time", format::share(Some(w))))
                .unwrap_or_default();
            let place = if regions {
                format!(" in `{}`", s.region)
            } else {
                String::new()
            };
            format!(
                "{} is late to the collectives{place} (last to {} of {n}, {} of all waiting, mostly in `{}`){cause}; the other ranks wait {} each (median){share}.",
                names[*late], s.last, format::share(Some(s.caused_share)), s.collective, time(s.wait_ns)
            )
        }
        None => {
            let most = (0..names.len()).max_by_key(|&r| last[r]).unwrap_or(0);
            format!(
                "No rank stands out across {n} collectives on {} ranks: the most often last, {}, is last to {} of them.",
                names.len(),
                names[most],
                last[most]
            )
        }
    }
}
