//! `merge` of more ranks than a report shows side by side, from the real per-rank traces of
//! tests/fixtures/ncu/h200x4-cupti-straggle/ddp-per-rank (each synthetic rank a copy of a real one,
//! one of them the real straggler): under an open-file limit below the rank count, each scope kept to
//! its region totals unless `report.scope_trees` asks for trees, and the straggler still named.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use serde_json::Value;

use crate::common::fixture;

const SOURCE: &str = "ncu/h200x4-cupti-straggle/ddp-per-rank";
/// The rank of the source run that was made slow (its `delays.jsonl`).
const SOURCE_STRAGGLER: usize = 2;

/// `ranks` rank run directories under `root`: rank `straggler` copies the real straggler's run, every
/// other rank one of the real even ranks' runs in turn, each with its own rank in `run.json`.
fn rank_runs(root: &Path, ranks: usize, straggler: usize) -> PathBuf {
    let even: Vec<usize> = (0..4).filter(|r| *r != SOURCE_STRAGGLER).collect();
    for rank in 0..ranks {
        let from = match rank == straggler {
            true => SOURCE_STRAGGLER,
            false => even[rank % even.len()],
        };
        let source = fixture(&format!("{SOURCE}/rank{from}"));
        let to = root.join(format!("rank{rank}"));
        std::fs::create_dir_all(to.join("trace")).unwrap();
        for file in ["config.yaml", "command.txt"] {
            std::fs::copy(source.join(file), to.join(file)).unwrap();
        }
        for entry in std::fs::read_dir(source.join("trace")).unwrap() {
            let entry = entry.unwrap();
            std::fs::copy(entry.path(), to.join("trace").join(entry.file_name())).unwrap();
        }
        // A process of its own: a byte copy of a rank's run is refused.
        crate::common::retag_traces(&to, 100_000 + rank as u64);
        let text = std::fs::read_to_string(source.join("run.json")).unwrap();
        let mut record: Value = serde_json::from_str(&text).unwrap();
        record["rank"] = serde_json::json!({"rank": rank, "source": "RANK", "world_size": ranks});
        std::fs::write(to.join("run.json"), record.to_string()).unwrap();
    }
    root.to_path_buf()
}

/// `profile-run merge ROOT --out OUT OVERRIDES…` with at most `files` open files (`ulimit -n`):
/// report.json and report.md.
fn merge(root: &Path, out: &Path, files: u32, overrides: &[&str]) -> (Value, String) {
    let bin = assert_cmd::cargo::cargo_bin("profile-run");
    Command::new("sh")
        .arg("-c")
        .arg(format!("ulimit -n {files} && exec \"$@\""))
        .arg("sh")
        .arg(bin)
        .arg("-q")
        .arg("merge")
        .arg(root)
        .arg("--out")
        .arg(out)
        .args(overrides)
        .assert()
        .success();
    let json = std::fs::read_to_string(out.join("report.json")).unwrap();
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    (serde_json::from_str(&json).unwrap(), md)
}

fn regions(scope: &Value) -> &Vec<Value> {
    scope["regions"].as_array().unwrap()
}

/// 72 ranks under a limit of 32 open files: the old writer held one descriptor per staged scope page
/// and failed with "Too many open files"; now each folder is opened once.
#[test]
fn more_ranks_than_open_files_merge_keep_totals_and_name_the_straggler() {
    let tmp = tempfile::tempdir().unwrap();
    let (ranks, straggler) = (72, 27);
    let root = rank_runs(&tmp.path().join("job"), ranks, straggler);
    let out = tmp.path().join("out");
    let (report, md) = merge(&root, &out, 32, &[]);

    let scopes = report["scopes"].as_array().unwrap();
    assert_eq!(scopes.len(), ranks);
    assert_eq!(
        std::fs::read_dir(out.join("scopes")).unwrap().count(),
        ranks
    );
    assert_eq!(report["scope_trees"], false);
    for scope in scopes {
        assert!(!regions(scope).is_empty(), "{}", scope["label"]);
        for region in regions(scope) {
            // A scope cut to its totals leaves out its regions' empty members: their kernels
            // are the aggregate's alone.
            assert_eq!(region.get("kernels"), None, "{}", region["path"]);
            assert!(
                region["inclusive"]["gpu__time_duration.sum"]["value"]
                    .as_f64()
                    .unwrap()
                    > 0.0
            );
        }
        // A scope cut to its totals leaves its summary's regions to its own regions list, and its
        // kernels to the aggregate.
        let summary = scope["summary"].as_object().unwrap();
        assert!(summary.contains_key("time"), "{summary:?}");
        assert!(!summary.contains_key("top_regions") && !summary.contains_key("top_kernels"));
    }
    let aggregate = &report["aggregate"];
    assert!(regions(aggregate)
        .iter()
        .all(|r| !r["kernels"].as_array().unwrap().is_empty()));
    let notes = report["notes"].as_array().unwrap();
    assert!(notes
        .iter()
        .any(|n| n.as_str().unwrap().contains("report.scope_trees=true")));

    let bytes = std::fs::metadata(out.join("report.json")).unwrap().len();
    assert!(
        bytes / ranks as u64 <= 16 * 1024,
        "{bytes} bytes for {ranks} ranks"
    );

    let s = &report["cross_rank"]["straggler"];
    assert!(
        s["scope"]
            .as_str()
            .unwrap()
            .ends_with(&format!("rank {straggler}")),
        "{s}"
    );
    assert_eq!(s["cause"]["region"], "train_step/forward", "{s}");
    assert!(md.contains(&format!("rank {straggler} is late")), "{md}");
}

/// Nine ranks (one above what report.md shows side by side): region totals by default, whole trees
/// with `report.scope_trees=true`.
#[test]
fn scope_trees_keeps_every_scopes_whole_tree_on_request() {
    let tmp = tempfile::tempdir().unwrap();
    let root = rank_runs(&tmp.path().join("job"), 9, 4);
    let kernels = |report: &Value| -> usize {
        report["scopes"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(regions)
            // A cut scope's regions leave out their empty `kernels`.
            .map(|r| r.get("kernels").map_or(0, |k| k.as_array().unwrap().len()))
            .sum()
    };
    let (totals, _) = merge(&root, &tmp.path().join("totals"), 1024, &[]);
    assert_eq!(
        (totals["scope_trees"].clone(), kernels(&totals)),
        (false.into(), 0)
    );
    let (trees, _) = merge(
        &root,
        &tmp.path().join("trees"),
        1024,
        &["report.scope_trees=true"],
    );
    assert_eq!(trees["scope_trees"], true);
    assert!(kernels(&trees) > 9 * 4, "{}", kernels(&trees));
    let per_result = &regions(&trees["scopes"][0])[0]["per_result"];
    assert!(
        per_result.as_object().is_some_and(|m| !m.is_empty()),
        "{per_result}"
    );
}
