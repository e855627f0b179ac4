//! One profile-run per rank with several deep ranks: rounds, one launch of the job per deep rank.

use assert_cmd::Command;

use super::{ncu_runs, per_rank_runs, read_json};

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
    let out = tmp.path().join("merged");
    Command::cargo_bin("profile-run")
        .unwrap()
        .args(["-q", "merge"])
        .arg(&job)
        .arg("--out")
        .arg(&out)
        .assert()
        .success();
    let merged = read_json(&out.join("report.json"));
    for rank in merged["sampling"]["ranks"].as_array().unwrap() {
        assert_eq!(rank["deep_rank"], true, "{rank}");
        assert_eq!(rank["on_another_rank_share"], 0.0, "{rank}");
    }
}
