//! The ranks a merged report cannot speak for in full: those its launcher started but whose run
//! directory was not given, those whose capture is partial, those whose run records a world size
//! the others do not, and those past the world size; and the one refusal, a rank two run
//! directories both name, whose results would be counted twice. One check for every recipe: each
//! rank's `run.json` fills `RunContext::ranks`, and traces add the ranks they name.

use std::collections::{BTreeMap, BTreeSet};

use super::RankRun;
use crate::report::model::FlaggedRank;

/// The ranks read: the run records' (`records`, which say whether a rank's run is partial; a
/// record without a world size takes its trace's), then those only the inputs name (`traced`: one
/// profile-run around each node's launcher records no rank, its traces do), each once.
pub fn read(records: &[RankRun], traced: &[RankRun]) -> Vec<RankRun> {
    let traced_world: BTreeMap<u32, Option<u32>> =
        traced.iter().map(|t| (t.rank, t.world_size)).collect();
    let recorded = records.iter().map(|r| RankRun {
        world_size: r
            .world_size
            .or_else(|| traced_world.get(&r.rank).copied().flatten()),
        ..r.clone()
    });
    let known: BTreeSet<u32> = records.iter().map(|r| r.rank).collect();
    let only_traced = traced.iter().filter(|t| !known.contains(&t.rank)).cloned();
    recorded.chain(only_traced).collect()
}

/// A rank that two run records name: refused, since one job has one run per rank and the two
/// captures' results would be summed as one rank's. The message names both run directories.
pub fn check_once(records: &[RankRun]) -> Result<(), String> {
    let mut first: BTreeMap<u32, &RankRun> = BTreeMap::new();
    for record in records {
        let Some(earlier) = first.insert(record.rank, record) else {
            continue;
        };
        let shown = |r: &RankRun| {
            r.run
                .as_ref()
                .map_or("a run".to_string(), |p| format!("`{}`", p.display()))
        };
        return Err(format!(
            "rank {} is named by the run.json of both {} and {}: one job has one run per rank, so one of them belongs to another job or attempt and its results would be counted as this rank's twice; give one run directory per rank",
            record.rank,
            shown(earlier),
            shown(record)
        ));
    }
    Ok(())
}

/// Missing ranks (below the recorded world size, or below the highest rank read), partial ones,
/// ranks whose world size disagrees with the most common one, and ranks at or past their world
/// size, by rank.
pub fn flagged(ranks: &[RankRun]) -> Vec<FlaggedRank> {
    if ranks.is_empty() {
        return Vec::new();
    }
    let read: BTreeSet<u32> = ranks.iter().map(|r| r.rank).collect();
    // The largest world size counts the missing ranks, so a disagreement never hides one.
    let world = ranks.iter().filter_map(|r| r.world_size).max();
    let expected = world.unwrap_or_else(|| read.iter().max().map_or(0, |m| m + 1));
    let said = match world {
        Some(w) => format!("its launcher started {w} ranks"),
        None => format!("ranks up to {} were read", expected.saturating_sub(1)),
    };
    let mut flagged: Vec<FlaggedRank> = (0..expected)
        .filter(|r| !read.contains(r))
        .map(|rank| FlaggedRank {
            rank,
            why: format!(
                "missing: neither a run directory nor a trace of rank {rank} was read, but {said}"
            ),
        })
        .collect();
    flagged.extend(ranks.iter().filter_map(|r| {
        Some(FlaggedRank {
            rank: r.rank,
            why: format!("partial: {}", r.partial.as_ref()?),
        })
    }));
    flagged.extend(disagreeing(ranks));
    flagged.extend(past_the_world(ranks, world));
    flagged.sort_by_key(|f| f.rank);
    flagged
}

/// Ranks whose run recorded another world size than most ranks': one of the runs may belong to
/// another job.
fn disagreeing(ranks: &[RankRun]) -> Vec<FlaggedRank> {
    let mut sizes: BTreeMap<u32, usize> = BTreeMap::new();
    for size in ranks.iter().filter_map(|r| r.world_size) {
        *sizes.entry(size).or_default() += 1;
    }
    if sizes.len() < 2 {
        return Vec::new();
    }
    // The most common size; a tie goes to the larger.
    let (&common, _) = sizes.iter().max_by_key(|(size, n)| (**n, **size)).unwrap();
    let all: Vec<String> = sizes.keys().map(u32::to_string).collect();
    ranks
        .iter()
        .filter(|r| r.world_size.is_some_and(|w| w != common))
        .map(|r| FlaggedRank {
            rank: r.rank,
            why: format!(
                "world size conflict: its run recorded {} ranks where most runs recorded {common} (the runs recorded {}), so it may belong to another job",
                r.world_size.unwrap_or_default(),
                all.join(", ")
            ),
        })
        .collect()
}

/// Ranks numbered at or past the world size (their own run's, else the job's): a launcher of `w`
/// ranks numbers them 0 to `w` − 1.
fn past_the_world(ranks: &[RankRun], job_world: Option<u32>) -> Vec<FlaggedRank> {
    ranks
        .iter()
        .filter_map(|r| {
            let world = r.world_size.or(job_world)?;
            (r.rank >= world).then(|| FlaggedRank {
                rank: r.rank,
                why: format!(
                    "beyond the world size: a launcher of {world} ranks numbers them 0 to {}, so this run belongs to another job or recorded the wrong rank",
                    world.saturating_sub(1)
                ),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(rank: u32, world_size: Option<u32>, partial: Option<&str>) -> RankRun {
        RankRun {
            rank,
            world_size,
            partial: partial.map(String::from),
            run: None,
        }
    }

    #[test]
    fn gaps_and_ranks_past_the_last_read_are_missing_and_partial_ranks_say_why() {
        let ranks = [
            run(0, Some(4), None),
            run(1, Some(4), Some("the workload exited with code 1")),
            run(3, Some(4), None),
        ];
        let flagged = flagged(&ranks);
        let got: Vec<(u32, &str)> = flagged.iter().map(|f| (f.rank, f.why.as_str())).collect();
        assert_eq!(got[0], (1, "partial: the workload exited with code 1"));
        assert_eq!(got[1].0, 2);
        assert!(got[1].1.starts_with("missing:"), "{}", got[1].1);
        assert!(got[1].1.contains("started 4 ranks"), "{}", got[1].1);
        assert_eq!(got.len(), 2);
        // Without a world size, only gaps below the highest rank read can be told.
        let flagged = super::flagged(&[run(0, None, None), run(2, None, None)]);
        assert_eq!(flagged.len(), 1);
        assert_eq!(flagged[0].rank, 1);
        assert!(super::flagged(&[run(0, None, None), run(1, None, None)]).is_empty());
        assert!(super::flagged(&[]).is_empty());
    }

    #[test]
    fn ranks_only_traces_name_join_the_recorded_ones_and_a_record_wins() {
        let records = [run(0, None, Some("the workload exited with code 1"))];
        let traced = [run(0, Some(3), None), run(1, Some(3), None)];
        let read = read(&records, &traced);
        let rank0 = run(0, Some(3), Some("the workload exited with code 1"));
        assert_eq!(read, [rank0, traced[1].clone()]);
        // The traces' world size flags rank 2, which neither names; the record keeps rank 0 partial.
        let flagged: Vec<u32> = flagged(&read).iter().map(|f| f.rank).collect();
        assert_eq!(flagged, [0, 2]);
    }

    #[test]
    fn disagreeing_world_sizes_and_ranks_past_the_world_are_flagged() {
        let flagged = flagged(&[
            run(0, Some(4), None),
            run(1, Some(8), None),
            run(2, Some(2), None),
            run(3, Some(4), None),
        ]);
        let why = |rank: u32| -> Vec<&str> {
            flagged
                .iter()
                .filter(|f| f.rank == rank)
                .map(|f| f.why.as_str())
                .collect()
        };
        assert!(why(1)[0].starts_with("world size conflict: its run recorded 8"));
        // Rank 2 of a world of 2 is past it, and disagrees with the others.
        assert_eq!(why(2).len(), 2, "{:?}", why(2));
        assert!(why(0).is_empty() && why(3).is_empty());
        // Missing ranks are counted against the largest size.
        assert!(why(7)[0].starts_with("missing:"));
        let past = super::flagged(&[run(0, Some(4), None), run(7, Some(4), None)]);
        let past: Vec<u32> = past
            .iter()
            .filter(|f| f.why.starts_with("beyond"))
            .map(|f| f.rank)
            .collect();
        assert_eq!(past, [7]);
    }

    #[test]
    fn a_rank_named_twice_is_refused_with_both_runs() {
        let named = |rank, dir: &str| RankRun {
            run: Some(dir.into()),
            ..run(rank, Some(2), None)
        };
        assert!(check_once(&[named(0, "a"), named(1, "b")]).is_ok());
        let err = check_once(&[named(1, "a"), named(0, "b"), named(1, "c")]).unwrap_err();
        assert!(
            err.starts_with("rank 1 is named by the run.json of both `a` and `c`"),
            "{err}"
        );
    }
}
