//! The ranks a merged report cannot speak for in full: those its launcher started but whose run
//! directory was not given, and those whose capture is partial.

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

/// Missing ranks (below the recorded world size, or below the highest rank read) and partial ones,
/// by rank.
pub fn flagged(ranks: &[RankRun]) -> Vec<FlaggedRank> {
    if ranks.is_empty() {
        return Vec::new();
    }
    let read: BTreeSet<u32> = ranks.iter().map(|r| r.rank).collect();
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
    flagged.sort_by_key(|f| f.rank);
    flagged
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(rank: u32, world_size: Option<u32>, partial: Option<&str>) -> RankRun {
        RankRun {
            rank,
            world_size,
            partial: partial.map(String::from),
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
}
