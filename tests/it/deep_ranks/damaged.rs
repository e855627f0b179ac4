//! `merge` of per-rank runs in which one rank's deep report file is damaged (cut in half, empty,
//! random, zero-filled): that rank's file is left out with a note naming it and the byte offset,
//! and the other rank's deep results still give the job its deep metrics.

use super::{merged, per_rank_runs};
use crate::sampled_damaged::damaged_deep_reports;

#[test]
fn one_ranks_damaged_deep_report_costs_only_its_own_deep_results() {
    let tmp = tempfile::tempdir().unwrap();
    per_rank_runs(
        tmp.path(),
        &[
            "output.run_name=job",
            "pipeline.ncu.sampling.deep_ranks=all",
        ],
    );
    let job = tmp.path().join("runs/job");
    let whole = merged(&job, &tmp.path().join("whole"));
    let whole_results = whole["sampling"]["deep_results"].as_u64().unwrap();
    assert!(whole_results > 0, "{}", whole["sampling"]);
    for (what, bytes) in damaged_deep_reports() {
        std::fs::write(job.join("rank1/profile.deep.ncu-rep"), &bytes).unwrap();
        let out = tmp.path().join(what.replace(' ', "-"));
        let report = merged(&job, &out);
        let notes = report["notes"].to_string();
        assert!(
            notes.contains("rank1/profile.deep.ncu-rep cannot be read (at byte "),
            "{what}: {notes}"
        );
        assert!(
            !notes.contains("rank0/profile.deep.ncu-rep cannot"),
            "{what}"
        );
        // Rank 0's deep results are all still read: each rank ran the same deep pass.
        let results = report["sampling"]["deep_results"].as_u64().unwrap();
        assert_eq!(results * 2, whole_results, "{what}");
        assert_eq!(report["scopes"].as_array().unwrap().len(), 2, "{what}");
    }
}
