//! Around one node's launcher of a job whose other ranks run on another host: the traces' world
//! size tells, and the node's deep pass neither ends early nor runs again alone.

use std::time::{Duration, Instant};

use super::{read_json, sampled_run, traces};

/// Node 0 of the two simulated nodes (2 × H200): torchrun's agent and rank 0 of 2.
const NODE0: &str = "ncu/h200x2-cupti-two-nodes/node0/trace";

#[test]
fn one_node_of_a_job_across_hosts_runs_its_deep_pass_to_the_end() {
    let tmp = tempfile::tempdir().unwrap();
    let start = Instant::now();
    // The fake deep pass prints more results than the node's launches give, then its workload
    // runs on 4 s: on one host the run would stop it then, covered.
    sampled_run(
        tmp.path(),
        &traces(NODE0),
        &[
            "output.run_name=node0",
            "pipeline.ncu.ncu_cli.kernel_name=null",
        ],
    )
    .env("FAKE_NCU_DEEP_PROF", "5000")
    .env("FAKE_NCU_LINGER", "4")
    .assert()
    .success();
    assert!(
        start.elapsed() >= Duration::from_secs(4),
        "the workload was stopped"
    );
    let dir = tmp.path().join("runs/node0");
    let record = read_json(&dir.join("run.json"));
    assert_eq!(record["job_world_size"], 2, "{record}");
    // Ended with the workload, not stopped once covered: node 1's rank would wait for it.
    let deep = &record["deep_pass"];
    assert_eq!(deep["exit_code"], 0, "{deep}");
    assert!(deep.get("stopped_when_covered").is_none(), "{deep}");
    let report = read_json(&dir.join("report.json"));
    let flagged = report["run"]["flagged_ranks"].as_array().unwrap();
    assert_eq!(flagged.len(), 1, "{flagged:?}");
    assert_eq!(flagged[0]["rank"], 1);
}

#[test]
fn one_node_of_a_job_across_hosts_refuses_a_list_of_deep_ranks_with_the_fix() {
    let tmp = tempfile::tempdir().unwrap();
    let out = sampled_run(
        tmp.path(),
        &traces(NODE0),
        &[
            "output.run_name=node0",
            "pipeline.ncu.sampling.deep_ranks=[0]",
        ],
    )
    .output()
    .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("the job has 2 ranks and ranks 0 alone"),
        "{stderr}"
    );
    assert!(
        stderr.contains("set deep_ranks=signature or all"),
        "{stderr}"
    );
}
