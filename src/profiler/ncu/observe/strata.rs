//! A launch key's strata: the groups its launches fall into by in-place duration. One kernel with
//! one name, grid and block can do different work per launch (a GEMM whose inner dimension differs
//! but whose output tiles, and so grid, are the same), and its durations then form clearly separate
//! groups. Each group is a stratum: it gets deep samples of its own, and its launches take values
//! only from them (docs/attribution.md, "Strata of a launch key"). The deep plan (how many launches
//! of a key the deep pass profiles) and the join (which samples a launch takes) both split a key here,
//! with the same rule over the same durations.

/// Sorted durations split where one is at least this much longer than the one before it: launches
/// of the same work vary by a few percent, twice the work takes about twice as long.
pub const SPLIT_RATIO: f64 = 1.25;

/// At most this many strata per key: past it, the closest groups are kept together.
pub const MAX_STRATA: usize = 4;

/// A stratum holds at least this share of a key's launches, and at least [`MIN_LAUNCHES`], so that
/// one launch slowed by a neighbour or by its cold start does not become a stratum of its own.
pub const MIN_SHARE: f64 = 0.05;
pub const MIN_LAUNCHES: usize = 2;

/// Ids of strata among a reading's launch keys lie above every key's (each capture's keys number
/// from `ordinal × 2^32`).
pub const STRATUM_IDS: u64 = 1 << 63;

/// Where a key's durations split: stratum `s` holds the durations in `[cuts[s-1], cuts[s])`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Strata {
    cuts: Vec<f64>,
}

impl Strata {
    /// The strata of a key with these durations (in any order; non-finite ones are ignored).
    pub fn of(durations: &[f64]) -> Strata {
        let mut sorted: Vec<f64> = durations
            .iter()
            .copied()
            .filter(|d| d.is_finite())
            .collect();
        sorted.sort_by(f64::total_cmp);
        let n = sorted.len();
        let least = ((n as f64 * MIN_SHARE).ceil() as usize).max(MIN_LAUNCHES);
        // Every gap wide enough to split at, widest first.
        let mut gaps: Vec<(f64, usize)> = (1..n)
            .filter(|&i| sorted[i - 1] > 0.0 && sorted[i] >= sorted[i - 1] * SPLIT_RATIO)
            .map(|i| (sorted[i] / sorted[i - 1], i))
            .collect();
        gaps.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        let mut at: Vec<usize> = Vec::new();
        for (_, i) in gaps {
            if at.len() + 1 >= MAX_STRATA {
                break;
            }
            // Both sides of the new cut, within the group it splits, must hold `least` launches.
            let below = at.iter().copied().filter(|&c| c < i).max().unwrap_or(0);
            let above = at.iter().copied().filter(|&c| c > i).min().unwrap_or(n);
            if i - below >= least && above - i >= least {
                at.push(i);
            }
        }
        at.sort_unstable();
        // Cut halfway (geometrically) between the two durations on either side of the gap.
        let cuts = at
            .into_iter()
            .map(|i| (sorted[i - 1] * sorted[i]).sqrt())
            .collect();
        Strata { cuts }
    }

    /// How many strata: 1 for a key whose launches all do alike.
    pub fn count(&self) -> usize {
        self.cuts.len() + 1
    }

    /// Whether the key is one stratum.
    pub fn is_one(&self) -> bool {
        self.cuts.is_empty()
    }

    /// The stratum a launch of this duration belongs to.
    pub fn of_duration(&self, duration: f64) -> usize {
        self.cuts.iter().take_while(|cut| duration >= **cut).count()
    }
}

/// The fewest launches of a key, counted per process from its first after the `skipped` ones, that
/// give every stratum `need(stratum)` deep samples pooled over the processes (or all its launches
/// there, where it has fewer), at least `floor` and at most `cap`. `launches` holds each process's
/// durations in launch order: the deep pass profiles the first launches of each key in a process.
pub fn covering_count(
    launches: &[&[f64]],
    strata: &Strata,
    skipped: u32,
    need: impl Fn(usize) -> u32,
    (floor, cap): (u32, u32),
) -> u32 {
    let strata_of: Vec<Vec<usize>> = launches
        .iter()
        .map(|d| {
            d.iter()
                .skip(skipped as usize)
                .map(|d| strata.of_duration(*d))
                .collect()
        })
        .collect();
    let mut available = vec![0u32; strata.count()];
    for s in strata_of.iter().flatten() {
        available[*s] += 1;
    }
    let wanted: Vec<u32> = (0..strata.count())
        .map(|s| need(s).min(available[s]))
        .collect();
    let longest = strata_of.iter().map(Vec::len).max().unwrap_or(0);
    let mut given = vec![0u32; strata.count()];
    let mut count = 0usize;
    while count < longest && given.iter().zip(&wanted).any(|(g, w)| g < w) {
        for process in &strata_of {
            if let Some(s) = process.get(count) {
                given[*s] += 1;
            }
        }
        count += 1;
    }
    u32::try_from(count)
        .unwrap_or(u32::MAX)
        .clamp(floor, cap.max(floor))
}

/// The note on keys split into strata, and on results whose stratum took another's samples.
pub fn note(keys: u64, borrowed: u64) -> Option<String> {
    if keys == 0 {
        return None;
    }
    let borrowed = match borrowed {
        0 => "every stratum had deep samples of its own".to_string(),
        n => format!(
            "{n} result(s) fell in a stratum with no deep sample of its own and took the nearest stratum's, their intervals widened by how much the two strata's durations differ"
        ),
    };
    Some(format!(
        "{} launch key(s) ran different work in different launches (one kernel, grid and block whose in-place durations fall into separate groups, such as a GEMM at two problem sizes): each group (stratum) takes deep values from its own samples only; {borrowed} (docs/attribution.md, \"Strata of a launch key\").",
        keys
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_kind_of_work_is_one_stratum_however_it_jitters() {
        let d = [48.1, 48.3, 47.9, 49.0, 52.0, 48.2];
        assert!(Strata::of(&d).is_one());
        assert!(Strata::of(&[]).is_one());
        assert!(Strata::of(&[5.0]).is_one());
    }

    #[test]
    fn two_problem_sizes_of_one_key_are_two_strata() {
        // attn's GEMM at 48 µs, mlp's at 73 µs, alternating as layers do.
        let d = [48.0, 73.0, 48.5, 72.5, 47.8, 73.4];
        let strata = Strata::of(&d);
        assert_eq!(strata.count(), 2);
        assert_eq!(strata.of_duration(48.0), 0);
        assert_eq!(strata.of_duration(73.4), 1);
        // The cut lies between the groups: √(48.5·72.5) ≈ 59.3.
        assert_eq!(strata.of_duration(59.0), 0);
        assert_eq!(strata.of_duration(60.0), 1);
    }

    #[test]
    fn one_slow_launch_among_many_is_not_a_stratum() {
        let mut d = vec![10.0; 40];
        d.push(30.0);
        assert!(Strata::of(&d).is_one(), "1 of 41 is under MIN_SHARE");
        assert!(
            Strata::of(&[30.0, 10.0, 10.0, 10.0]).is_one(),
            "a cold first launch"
        );
        let mut d = vec![10.0; 10];
        d.extend([30.0; 3]);
        assert_eq!(Strata::of(&d).count(), 2, "3 of 13 is a group");
    }

    #[test]
    fn at_most_max_strata_the_widest_gaps_first() {
        let d = [1.0, 1.0, 2.0, 2.0, 4.0, 4.0, 8.0, 8.0, 16.0, 16.0];
        let strata = Strata::of(&d);
        assert_eq!(strata.count(), MAX_STRATA);
        let groups: Vec<usize> = d.iter().map(|x| strata.of_duration(*x)).collect();
        // Every gap is ×2: the first ones (in duration order) win the tie.
        assert_eq!(groups, [0, 0, 1, 1, 2, 2, 3, 3, 3, 3]);
    }

    #[test]
    fn the_count_reaches_each_stratum_in_launch_order() {
        let strata = Strata::of(&[48.0, 48.0, 73.0, 73.0]);
        // attn, attn, attn, then mlp: one sample of each needs four launches.
        let process = [48.0, 48.2, 47.9, 73.0, 72.8];
        assert_eq!(covering_count(&[&process], &strata, 0, |_| 1, (1, 16)), 4);
        assert_eq!(covering_count(&[&process], &strata, 0, |_| 2, (1, 16)), 5);
        assert_eq!(
            covering_count(&[&process], &strata, 0, |_| 2, (1, 3)),
            3,
            "capped"
        );
        // The skipped first launch is not profiled.
        assert_eq!(covering_count(&[&process], &strata, 1, |_| 1, (1, 16)), 3);
        // Pooled over processes: the second process's first launch is an mlp one.
        let other = [73.1, 48.0];
        assert_eq!(
            covering_count(&[&process, &other], &strata, 0, |_| 1, (1, 16)),
            1
        );
        // A stratum with fewer launches than it needs takes them all.
        assert_eq!(
            covering_count(&[&process], &strata, 0, |s| [1, 9][s], (1, 16)),
            5
        );
    }
}
