//! Neuron runs end to end against the fake tool, continued: several workers of one node, and a
//! run without HOME.

use crate::common::repo;

use super::cli::{assert_mlp_scope, report_json, strings, Env, MLP};

/// A NEFF run with two workers of one node, viewed as JSON by the fake tool: the environment and
/// the NEFF it ran.
fn two_workers_run() -> (Env, std::path::PathBuf) {
    let env = Env::new();
    let neff = env.path("model.neff");
    std::fs::write(&neff, "fake neff").unwrap();
    env.cmd("neuron/neff")
        .args(MLP)
        .arg(format!("pipeline.neuron.neff={}", neff.display()))
        .args([
            "pipeline.neuron.capture.workers_per_node=2",
            "pipeline.neuron.view.format=json",
        ])
        .assert()
        .success();
    (env, neff)
}

#[test]
fn several_workers_give_one_scope_per_rank() {
    let (env, _) = two_workers_run();
    let run = env.run_dir();
    let calls = env.invocations();
    assert_eq!(calls.len(), 3, "{calls:?}");
    assert_eq!(
        calls[0][5..9],
        strings(&["--profile-nth-exec", "2", "-r", "2"])
    );
    for (rank, call) in calls[1..].iter().enumerate() {
        let ntff = run.join(format!("profile_rank_{rank}_exec_2.ntff"));
        assert_eq!(call[4], ntff.display().to_string());
    }
    let report = report_json(&run);
    let scopes = report["scopes"].as_array().unwrap();
    assert_eq!(scopes.len(), 2);
    for (rank, scope) in scopes.iter().enumerate() {
        assert_eq!(scope["rank"], rank);
        assert!(scope["label"]
            .as_str()
            .unwrap()
            .ends_with(&format!("rank {rank}")));
        assert_mlp_scope(scope);
    }
}

#[test]
fn view_without_home_is_a_usage_error_naming_home() {
    let env = Env::new();
    let output = env
        .cmd("neuron/default")
        .env_remove("HOME")
        .arg("--")
        .arg(repo().join("tests/support/fake-neuron-workload"))
        .assert()
        .code(2)
        .get_output()
        .clone();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("needs HOME set"), "{stderr}");
    assert!(env.invocations().is_empty());
}

#[test]
fn a_worker_late_to_a_collective_is_named_the_straggler() {
    let (env, neff) = two_workers_run();
    let run = env.run_dir();
    let across =
        |dir: &std::path::Path| -> serde_json::Value { report_json(dir)["cross_rank"].clone() };
    // both ranks are the same fixture: they arrive together
    let x = across(&run);
    assert!(x["straggler"].is_null(), "{x}");
    assert!(
        x["finding"]
            .as_str()
            .unwrap()
            .starts_with("No rank stands out"),
        "{x}"
    );
    // rank 1 reaches its first AllReduce 5 µs late (still before its second)
    let views = std::fs::read_dir(&run)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .flat_map(|d| std::fs::read_dir(d).unwrap().map(|e| e.unwrap().path()))
        .collect::<Vec<_>>();
    let rank1 = views
        .iter()
        .find(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            name.contains("rank_1") && name.ends_with(".json")
        })
        .unwrap_or_else(|| panic!("rank 1's view output among {views:?}"));
    let text = std::fs::read_to_string(rank1).unwrap();
    let late = text
        .replacen(
            "\"timestamp\": 1763800000000040000",
            "\"timestamp\": 1763800000000045000",
            1,
        )
        .replacen(
            "\"cc_trigger\": 1763800000000038000",
            "\"cc_trigger\": 1763800000000043000",
            1,
        );
    assert_ne!(late, text);
    std::fs::write(rank1, late).unwrap();
    let out = env.path("again");
    assert_cmd::Command::cargo_bin("profile-run")
        .unwrap()
        .env("HOME", env.path(""))
        .arg("report")
        .arg(&run)
        .arg(format!("pipeline.neuron.neff={}", neff.display()))
        .arg("--out")
        .arg(&out)
        .assert()
        .success();
    let x = across(&out);
    let s = &x["straggler"];
    assert!(s["scope"].as_str().unwrap().ends_with(" rank 1"), "{x}");
    assert_eq!(s["last"], 1, "{x}");
    assert_eq!(s["wait_ns"], 5000.0, "{x}");
    assert_eq!(x["collectives"], 8, "{x}");
    assert_eq!(x["ranks"][0]["wait_ns"], 5000.0, "{x}");
}
