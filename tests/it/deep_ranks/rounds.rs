//! One profile-run per rank with several deep ranks: rounds, one launch of the job per deep rank.

use std::path::PathBuf;

use super::{launch, merged, ncu_runs, per_rank_runs, read_json, traces, GPT2_DDP};

/// One profile-run per rank with `deep_ranks=all`: the ranks take turns in rounds, one launch of
/// the job per deep rank, each rank under ncu in its own round only and unprofiled in the others,
/// so that no two deep passes of one host run at once; merge then has both ranks' own results.
#[test]
fn one_profile_run_per_rank_with_several_deep_ranks_takes_rounds() {
    let tmp = tempfile::tempdir().unwrap();
    let stderr = per_rank_runs(
        tmp.path(),
        &[
            "output.run_name=job",
            "pipeline.ncu.sampling.deep_ranks=all",
        ],
    );
    for (rank, err) in stderr.iter().enumerate() {
        assert!(
            err.contains(&format!(
                "rank {rank} runs the workload 2 times, once per deep rank (0,1)"
            )),
            "{err}"
        );
    }
    let runs = ncu_runs(tmp.path());
    assert_eq!(runs.len(), 2, "one deep pass per rank");
    let job = tmp.path().join("runs/job");
    for rank in 0..2u32 {
        let dir = job.join(format!("rank{rank}"));
        let record = read_json(&dir.join("run.json"));
        assert_eq!(record["deep_pass"]["exit_code"], 0, "{record}");
        assert!(dir.join("profile.deep.ncu-rep").is_file());
        let rounds = record["deep_ranks"]["rounds"].as_array().unwrap();
        assert_eq!(rounds.len(), 2, "{record}");
        for (round, entry) in rounds.iter().enumerate() {
            assert_eq!(entry["deep_rank"], round);
            // Its own round is its deep pass; in the other it ran the workload unprofiled.
            let own = round == rank as usize;
            assert_eq!(entry["unprofiled"].is_null(), own, "{entry}");
            let log = dir.join(format!("unprofiled.round{round}.log"));
            assert_eq!(log.is_file(), !own, "{}", log.display());
            if !own {
                assert_eq!(entry["unprofiled"]["exit_code"], 0, "{entry}");
                let text = std::fs::read_to_string(&log).unwrap();
                assert!(text.contains("workload running"), "{text}");
            }
        }
    }
    let merged = merged(&job, &tmp.path().join("merged"));
    for rank in merged["sampling"]["ranks"].as_array().unwrap() {
        assert_eq!(rank["deep_rank"], true, "{rank}");
        assert_eq!(rank["on_another_rank_share"], 0.0, "{rank}");
    }
}

/// A rank that is no deep rank among several takes every round unprofiled, has no deep pass, and
/// its report says so (its run counts none of its kernels as measured on itself).
#[test]
fn a_rank_that_is_no_deep_rank_runs_every_round_unprofiled() {
    let tmp = tempfile::tempdir().unwrap();
    let found = traces(GPT2_DDP);
    // Three ranks of the 4-GPU fixture (after the torchrun agent's trace); ranks 0 and 2 are deep.
    let ranks: Vec<Vec<PathBuf>> = (0..3).map(|r| found[1 + r..2 + r].to_vec()).collect();
    launch(
        tmp.path(),
        &ranks,
        &[
            "output.run_name=job",
            "pipeline.ncu.sampling.deep_ranks=[0, 2]",
        ],
    );
    assert_eq!(ncu_runs(tmp.path()).len(), 2, "one deep pass per deep rank");
    let rank1 = tmp.path().join("runs/job/rank1");
    let record = read_json(&rank1.join("run.json"));
    assert!(record["deep_pass"].is_null(), "{record}");
    let rounds = record["deep_ranks"]["rounds"].as_array().unwrap();
    let deep: Vec<u64> = rounds
        .iter()
        .map(|r| r["deep_rank"].as_u64().unwrap())
        .collect();
    assert_eq!(deep, [0, 2]);
    assert!(
        rounds.iter().all(|r| r["unprofiled"]["exit_code"] == 0),
        "{record}"
    );
    let report = read_json(&rank1.join("report.json"));
    assert_eq!(
        report["sampling"]["ranks"][0]["deep_rank"], false,
        "{report}"
    );
    assert!(report["notes"].to_string().contains("not a deep rank"));
    let rank2 = read_json(&tmp.path().join("runs/job/rank2/run.json"));
    assert_eq!(rank2["deep_pass"]["exit_code"], 0, "{rank2}");
    assert!(
        rank2["deep_ranks"]["rounds"][1]["unprofiled"].is_null(),
        "its own round"
    );
}
