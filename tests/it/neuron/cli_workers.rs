//! Neuron runs end to end against the fake tool, continued: several workers of one node, and a
//! run without HOME.

use crate::common::repo;

use super::cli::{assert_mlp_scope, report_json, strings, Env, MLP};

#[test]
fn several_workers_give_one_scope_per_rank() {
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
