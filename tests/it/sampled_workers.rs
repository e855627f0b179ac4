//! The deep pass spread over GPUs (`pipeline.ncu.sampling.deep_gpus`): one ncu worker per GPU with
//! its own launch keys and `CUDA_VISIBLE_DEVICES`, joined as one deep pass, and the settings that
//! cannot work refused with the key before anything runs.

use predicates::prelude::*;
use serde_json::Value;

use crate::common::fixture;
use crate::report_schema::schema;
use crate::sampled::{fake_sampled, profile_invocations, read_json};

/// A run with the fake ncu's GPUs logged, not adaptive (every key one sample), and `more`.
fn run(tmp: &std::path::Path, more: &[&str]) -> Value {
    fake_sampled(tmp)
        .env_remove("CUDA_VISIBLE_DEVICES")
        .env("FAKE_NCU_ENV_LOG", tmp.join("env.log"))
        .arg("pipeline.ncu.sampling.adaptive=false")
        .args(more)
        .args(["--", "true"])
        .assert()
        .success();
    read_json(&tmp.join("out/run/report.json"))
}

/// Each deep worker's mangled-name pattern, from the fake ncu's argv log.
fn worker_patterns(tmp: &std::path::Path) -> Vec<String> {
    profile_invocations(tmp)
        .into_iter()
        .filter(|p| p.iter().any(|a| a == "per-launch-config"))
        .map(|p| {
            p.windows(2)
                .find(|w| w[0] == "--kernel-name")
                .map(|w| w[1].clone())
                .unwrap_or_default()
        })
        .collect()
}

#[test]
fn two_gpus_split_the_keys_and_join_as_the_one_worker_deep_pass() {
    let one = tempfile::tempdir().unwrap();
    let alone = run(one.path(), &[]);
    assert_eq!(
        worker_patterns(one.path()),
        [""],
        "one worker, no name filter"
    );

    let two = tempfile::tempdir().unwrap();
    let spread = run(two.path(), &["pipeline.ncu.sampling.deep_gpus=2"]);
    let mut gpus: Vec<String> = std::fs::read_to_string(two.path().join("env.log"))
        .unwrap()
        .lines()
        .filter(|l| l.starts_with("profile.deep"))
        .map(String::from)
        .collect();
    gpus.sort();
    assert_eq!(gpus, ["profile.deep 0", "profile.deep.1 1"]);
    // Each name goes to exactly one worker, and every one of the first pass's names to some.
    let patterns = worker_patterns(two.path());
    assert_eq!(patterns.len(), 2);
    let names: Vec<Vec<String>> = patterns
        .iter()
        .map(|p| {
            p.strip_prefix("regex:^(?:")
                .and_then(|p| p.strip_suffix(")$"))
                .unwrap_or_else(|| panic!("{p}"))
                .split('|')
                .map(String::from)
                .collect()
        })
        .collect();
    assert!(!names[0].is_empty() && !names[1].is_empty());
    assert!(names[0].iter().all(|n| !names[1].contains(n)));
    let record = read_json(&two.path().join("out/run/run.json"));
    let workers = record["deep_workers"].as_array().unwrap();
    assert_eq!(workers.len(), 2);
    assert_eq!(workers[0]["gpu"], "0");
    assert_eq!(workers[1]["gpu"], "1");
    assert_eq!(workers[1]["report"], "profile.deep.1.ncu-rep");
    let keys: u64 = workers.iter().map(|w| w["keys"].as_u64().unwrap()).sum();
    assert_eq!(keys, 13, "every key of the first pass, once");
    // The fake gives every worker the same results: joined, they are the one worker's.
    assert_eq!(spread["scopes"], alone["scopes"]);
    for field in [
        "deep_results",
        "measured_results",
        "estimated_results",
        "unmatched_results",
    ] {
        assert_eq!(
            spread["sampling"][field], alone["sampling"][field],
            "{field}"
        );
    }
    let sources = spread["sampling"]["deep_sources"].to_string();
    assert!(sources.contains("profile.deep.1.ncu-rep"), "{sources}");
    // What each worker was planned to take and took, in report.json.
    let reported = spread["sampling"]["deep_workers"].as_array().unwrap();
    assert_eq!(reported.len(), 2);
    assert_eq!(reported[1]["source"], "profile.deep.1.ncu-rep");
    assert_eq!(reported[1]["gpu"], "1");
    for (worker, recorded) in reported.iter().zip(workers) {
        assert_eq!(worker["keys"], recorded["keys"]);
        assert_eq!(
            worker["results"], worker["keys"],
            "one result per key, its own names only"
        );
        assert_eq!(worker["ended_well"], true);
    }
    assert!(
        alone["sampling"].get("deep_workers").is_none(),
        "one worker: as before"
    );
    let (schemas, index) = schema();
    if let Err(e) = schemas.validate(&spread, index) {
        panic!("report.json does not match docs/report.schema.json:\n{e:#}");
    }
}

#[test]
fn deep_gpus_that_cannot_work_are_refused_with_the_key() {
    let tmp = tempfile::tempdir().unwrap();
    let cases: [(&[&str], Option<&str>, &str); 4] = [
        (&["pipeline.ncu.sampling.deep_gpus=0"], None, "deep_gpus"),
        (
            &["pipeline.ncu.sampling.deep_gpus=4"],
            Some("0,1"),
            "deep_gpus is 4, but this host shows 2 GPU(s) (CUDA_VISIBLE_DEVICES)",
        ),
        (
            &[
                "pipeline.ncu.sampling.deep_gpus=2",
                "pipeline.ncu.ncu_cli.replay_mode=application",
            ],
            None,
            "set replay_mode=kernel, or deep_gpus=1",
        ),
        (&["pipeline.ncu.sampling.deep_gpus=many"], None, "deep_gpus"),
    ];
    for (settings, visible, named) in cases {
        let mut cmd = fake_sampled(tmp.path());
        match visible {
            Some(v) => cmd.env("CUDA_VISIBLE_DEVICES", v),
            None => cmd.env_remove("CUDA_VISIBLE_DEVICES"),
        };
        cmd.args(settings)
            .args(["--", "true"])
            .assert()
            .code(2)
            .stderr(predicate::str::contains(named));
    }
    assert!(profile_invocations(tmp.path()).is_empty(), "nothing ran");
    // A launcher that places its ranks itself.
    fake_sampled(tmp.path())
        .env_remove("CUDA_VISIBLE_DEVICES")
        .args([
            "pipeline.ncu.sampling.deep_gpus=2",
            "--",
            "torchrun",
            "x.py",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("multi-process launcher"));
    assert!(profile_invocations(tmp.path()).is_empty(), "nothing ran");
}

#[test]
fn names_a_worker_never_profiled_run_once_more_on_the_other_gpu() {
    let tmp = tempfile::tempdir().unwrap();
    // Worker 1 writes another workload's capture: none of its names' launch keys are in it.
    let other = fixture("ncu/h100-2025.3.1-pytorch/rep_kernel.ncu-rep.gz");
    fake_sampled(tmp.path())
        .env_remove("CUDA_VISIBLE_DEVICES")
        .env("FAKE_NCU_ENV_LOG", tmp.path().join("env.log"))
        .env(
            "FAKE_NCU_WORKER_REPORT",
            format!("profile.deep.1={}", other.display()),
        )
        .args([
            "pipeline.ncu.sampling.adaptive=false",
            "pipeline.ncu.sampling.deep_gpus=2",
            "--",
            "true",
        ])
        .assert()
        .success()
        .stderr(predicate::str::contains(
            "worker 1 of ncu's deep pass profiled none",
        ));
    let record = read_json(&tmp.path().join("out/run/run.json"));
    let workers = record["deep_workers"].as_array().unwrap();
    assert_eq!(workers.len(), 3);
    assert_eq!(workers[2]["rerun_of"], 1);
    assert_eq!(workers[2]["gpu"], "0", "on the other GPU");
    assert_eq!(workers[2]["keys"], workers[1]["keys"]);
    let env = std::fs::read_to_string(tmp.path().join("env.log")).unwrap();
    assert!(env.lines().any(|l| l == "profile.deep.2 0"), "{env}");
    let report = read_json(&tmp.path().join("out/run/report.json"));
    assert_eq!(report["sampling"]["unmatched_results"], 0);
}

#[test]
fn a_run_whose_first_worker_fails_twice_stands_on_the_others() {
    let tmp = tempfile::tempdir().unwrap();
    fake_sampled(tmp.path())
        .env_remove("CUDA_VISIBLE_DEVICES")
        .env("FAKE_NCU_FAIL_WORKER", "profile.deep")
        .env("FAKE_NCU_WORKER_FAILS", "2")
        .args([
            "pipeline.ncu.sampling.adaptive=false",
            "pipeline.ncu.sampling.deep_gpus=2",
            "report.outputs=[md, json, html]",
            "--",
            "true",
        ])
        .assert()
        .success()
        .stderr(predicate::str::contains(
            "worker 0 of ncu's deep pass failed again",
        ));
    let report = read_json(&tmp.path().join("out/run/report.json"));
    let sampling = &report["sampling"];
    assert!(
        sampling["unmatched_results"].as_u64().unwrap() > 0,
        "worker 0's keys"
    );
    assert!(
        sampling["deep_results"].as_u64().unwrap() > 0,
        "worker 1's stand"
    );
    assert_eq!(sampling["deep_workers"][0]["ended_well"], false);
    assert_eq!(sampling["deep_workers"][0]["rerun"], true);
    assert_eq!(sampling["deep_workers"][1]["ended_well"], true);

    // report.md and report.html show each worker, what it took, and how it ended.
    let taken = |at: usize| {
        let w = &sampling["deep_workers"][at];
        format!("{} of {}", w["results"], w["expected_results"])
    };
    let md = std::fs::read_to_string(tmp.path().join("out/run/report.md")).unwrap();
    let html = std::fs::read_to_string(tmp.path().join("out/run/report.html")).unwrap();
    assert!(md.contains("## Deep pass workers"), "{md}");
    assert!(
        md.contains(&format!(
            "| `profile.deep.ncu-rep` | {} | 1 | {} | {} | failed on its second try, alone |",
            sampling["deep_workers"][0]["gpu"].as_str().unwrap(),
            sampling["deep_workers"][0]["keys"],
            taken(0)
        )),
        "{md}"
    );
    assert!(
        md.contains(&format!("| {} | ended well |", taken(1))),
        "{md}"
    );
    assert!(html.contains("<h2>Deep pass</h2>"), "{html}");
    assert!(
        html.contains("<td>failed on its second try, alone</td>"),
        "{html}"
    );
    assert!(
        html.contains(&format!(
            "<td class=\"num\">{}</td><td>ended well</td>",
            taken(1)
        )),
        "{html}"
    );
}

#[test]
fn each_worker_ends_its_workload_once_it_has_its_results() {
    let tmp = tempfile::tempdir().unwrap();
    let start = std::time::Instant::now();
    fake_sampled(tmp.path())
        .env_remove("CUDA_VISIBLE_DEVICES")
        // Every worker's ncu prints more results than it takes, while its workload would go on 60 s.
        .env("FAKE_NCU_DEEP_PROF", "1000")
        .env("FAKE_NCU_LINGER", "60")
        .args([
            "pipeline.ncu.sampling.adaptive=false",
            "pipeline.ncu.sampling.deep_gpus=2",
            "--",
            "true",
        ])
        .assert()
        .success();
    let took = start.elapsed();
    assert!(took < std::time::Duration::from_secs(30), "took {took:?}");
    let record = read_json(&tmp.path().join("out/run/run.json"));
    let workers = record["deep_workers"].as_array().unwrap();
    assert_eq!(workers.len(), 2);
    for worker in workers {
        assert_eq!(worker["stopped_when_covered"], true, "{worker}");
        assert_eq!(
            worker["covered_results"], worker["expected_results"],
            "{worker}"
        );
    }
}

#[test]
fn a_worker_that_fails_after_writing_its_report_whole_is_said_to_be_used() {
    let tmp = tempfile::tempdir().unwrap();
    let out = fake_sampled(tmp.path())
        .env_remove("CUDA_VISIBLE_DEVICES")
        .env("FAKE_NCU_WORKER_EXIT", "profile.deep.1=3")
        .args([
            "pipeline.ncu.sampling.adaptive=false",
            "pipeline.ncu.sampling.deep_gpus=2",
            "--",
            "true",
        ])
        .assert()
        .success();
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    let report = read_json(&tmp.path().join("out/run/report.json"));
    let results = &report["sampling"]["deep_workers"][1]["results"];
    assert!(results.as_u64().unwrap() > 0, "{}", report["sampling"]);
    assert!(
        stderr.contains("worker 1 of ncu's deep pass failed again (exit code 3; see ")
            && stderr.contains(&format!(
                "was written whole all the same and is read: its {results} result(s) are used"
            )),
        "{stderr}"
    );
    assert!(!stderr.contains("no deep results"), "{stderr}");
}

/// Deep workers running at once each get the signal profile-run forwards: a SIGTERM ends them all
/// at once (each writes its report and exits), not the last one started alone while the others
/// wait out `pipeline.signal_grace_seconds` to be killed.
#[test]
fn a_sigterm_reaches_every_deep_worker_running_at_once() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = crate::common::fixture("ncu/h100-2025.3.1-sampled");
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("profile-run"))
        .current_dir(tmp.path())
        .env_remove("FAKE_NCU_MODE")
        .env_remove("CUDA_VISIBLE_DEVICES")
        .env("FAKE_NCU_DEEP_MODE", "slow")
        .env("FAKE_NCU_REPORT", dir.join("train.ncu-rep.gz"))
        .env("FAKE_NCU_DEEP_REPORT", dir.join("train.deep.ncu-rep.gz"))
        .args(["-q", "--config", "ncu/sampled", "pipeline.ncu.timing=ncu"])
        .arg(format!(
            "pipeline.ncu.executable={}",
            crate::common::repo()
                .join("tests/support/fake-ncu")
                .display()
        ))
        .arg(format!("output.root={}", tmp.path().join("out").display()))
        .args(["output.run_name=run", "regions.include=[train_step]"])
        .args(["pipeline.ncu.sampling.adaptive=false"])
        .args(["pipeline.ncu.sampling.deep_gpus=2", "--", "true"])
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let run = tmp.path().join("out/run");
    let slow = |log: &str| {
        std::fs::read_to_string(run.join(log)).is_ok_and(|text| text.contains("slow_kernel"))
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !(slow("ncu.deep.log") && slow("ncu.deep.1.log")) {
        assert!(std::time::Instant::now() < deadline, "both workers start");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let sent = std::time::Instant::now();
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    let status = child.wait().unwrap();
    let took = sent.elapsed();
    assert_eq!(status.code(), Some(143));
    // The grace is 10 s; each worker ends within 50 ms of its SIGTERM.
    assert!(took < std::time::Duration::from_secs(8), "took {took:?}");
    let record = read_json(&run.join("run.json"));
    assert_eq!(record["interrupted_by"], 15, "{record}");
    for worker in record["deep_workers"].as_array().unwrap() {
        assert_eq!(worker["exit_code"], 143, "ended on its SIGTERM: {record}");
    }
}
