//! The deep pass as several ncu workers (one per adaptive sample count) joined as one deep pass:
//! reruns, failures, coverage and signals with workers running at once; and
//! `pipeline.ncu.sampling.deep_gpus` refused, while a run directory that recorded it still renders.

use predicates::prelude::*;

use crate::common::fixture;
use crate::sampled::{fake_sampled, profile_invocations, read_json};

/// Adaptive sample counts sized for each key's own mean: the fixture's keys take several counts,
/// so the deep pass runs as several workers at once.
const WORKERS: &str = "pipeline.ncu.sampling.error_scope=key";

#[test]
fn deep_gpus_is_refused_with_why_and_what_to_do() {
    let tmp = tempfile::tempdir().unwrap();
    let preset = tmp.path().join("gpus.yaml");
    std::fs::write(
        &preset,
        "pipeline:\n  ncu:\n    sampling:\n      deep_gpus: 2\n",
    )
    .unwrap();
    let from_file = ["--config".to_string(), preset.display().to_string()];
    for settings in [
        vec!["pipeline.ncu.sampling.deep_gpus=2".to_string()],
        vec!["pipeline.ncu.sampling.deep_gpus=1".to_string()],
        vec!["pipeline.ncu.sampling.deep_gpus=all".to_string()],
        from_file.to_vec(),
    ] {
        fake_sampled(tmp.path())
            .args(&settings)
            .args(["--", "true"])
            .assert()
            .code(2)
            .stderr(predicate::str::contains(
                "pipeline.ncu.sampling.deep_gpus is not a setting",
            ))
            .stderr(predicate::str::contains("1.06× the one-GPU time"))
            .stderr(predicate::str::contains("remove the key"));
    }
    fake_sampled(tmp.path())
        .args(&from_file)
        .args(["--", "true"])
        .assert()
        .stderr(predicate::str::contains("gpus.yaml"));
    assert!(profile_invocations(tmp.path()).is_empty(), "nothing ran");
}

#[test]
fn a_run_directory_that_recorded_deep_gpus_still_renders() {
    let tmp = tempfile::tempdir().unwrap();
    fake_sampled(tmp.path())
        .args(["--", "true"])
        .assert()
        .success();
    let run = tmp.path().join("out/run");
    let config = run.join("config.yaml");
    let mut recorded: serde_yaml::Value =
        serde_yaml::from_str(&std::fs::read_to_string(&config).unwrap()).unwrap();
    recorded["pipeline"]["ncu"]["sampling"]["deep_gpus"] = serde_yaml::Value::from(2);
    std::fs::write(&config, serde_yaml::to_string(&recorded).unwrap()).unwrap();
    let profiled = read_json(&run.join("report.json"));
    for trust in [false, true] {
        let out = tmp.path().join(format!("again-{trust}"));
        let mut cmd = crate::sampled::profile_run();
        cmd.arg("report").arg(&run).arg("--out").arg(&out);
        if trust {
            cmd.arg("--trust-run-config");
        }
        cmd.assert()
            .success()
            .stderr(predicate::str::contains("deep_gpus").not());
        let again = read_json(&out.join("report.json"));
        assert_eq!(again["scopes"], profiled["scopes"], "trusted: {trust}");
        assert_eq!(again["sampling"], profiled["sampling"], "trusted: {trust}");
    }
}

#[test]
fn names_a_worker_never_profiled_run_once_more_as_a_worker_of_their_own() {
    let tmp = tempfile::tempdir().unwrap();
    // Worker 1 writes another workload's capture: none of its names' launch keys are in it.
    let other = fixture("ncu/h100-2025.3.1-pytorch/rep_kernel.ncu-rep.gz");
    fake_sampled(tmp.path())
        .env(
            "FAKE_NCU_WORKER_REPORT",
            format!("profile.deep.1={}", other.display()),
        )
        .args([WORKERS, "--", "true"])
        .assert()
        .success()
        .stderr(predicate::str::contains(
            "worker 1 of ncu's deep pass profiled none",
        ));
    let record = read_json(&tmp.path().join("out/run/run.json"));
    let workers = record["deep_workers"].as_array().unwrap();
    let planned = workers.iter().filter(|w| w["rerun_of"].is_null()).count();
    assert!(planned > 1, "{record}");
    assert_eq!(workers.len(), planned + 1, "one rerun");
    let rerun = workers.last().unwrap();
    assert_eq!(rerun["rerun_of"], 1);
    assert_eq!(rerun["keys"], workers[1]["keys"]);
    assert_eq!(rerun["count"], workers[1]["count"]);
    let file = rerun["report"].as_str().unwrap();
    assert_eq!(file, format!("profile.deep.{planned}.ncu-rep"));
    assert!(tmp.path().join("out/run").join(file).is_file(), "{file}");
    let report = read_json(&tmp.path().join("out/run/report.json"));
    assert_eq!(report["sampling"]["unmatched_results"], 0);
}

#[test]
fn a_run_whose_first_worker_fails_twice_stands_on_the_others() {
    let tmp = tempfile::tempdir().unwrap();
    fake_sampled(tmp.path())
        .env("FAKE_NCU_FAIL_WORKER", "profile.deep")
        .env("FAKE_NCU_WORKER_FAILS", "2")
        .args([WORKERS, "report.outputs=[md, json, html]", "--", "true"])
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
            "| `profile.deep.ncu-rep` | the workload's own | 1 | {} | {} | failed on its second try, alone |",
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
        // Every worker's ncu prints more results than it takes, while its workload would go on 60 s.
        .env("FAKE_NCU_DEEP_PROF", "1000")
        .env("FAKE_NCU_LINGER", "60")
        .args([WORKERS, "--", "true"])
        .assert()
        .success();
    let took = start.elapsed();
    assert!(took < std::time::Duration::from_secs(30), "took {took:?}");
    let record = read_json(&tmp.path().join("out/run/run.json"));
    let workers = record["deep_workers"].as_array().unwrap();
    assert!(workers.len() > 1, "several workers at once: {record}");
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
        .env("FAKE_NCU_WORKER_EXIT", "profile.deep.1=3")
        .args([WORKERS, "--", "true"])
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
        .args([WORKERS, "--", "true"])
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let run = tmp.path().join("out/run");
    let slow = |log: &str| {
        std::fs::read_to_string(run.join(log)).is_ok_and(|text| text.contains("slow_kernel"))
    };
    // Every worker run.json plans is inside its slow kernel (its SIGTERM trap set) before the
    // signal: one still starting would die of the signal itself, before it could end on it.
    let planned = || -> Vec<String> {
        let Ok(text) = std::fs::read_to_string(run.join("run.json")) else {
            return Vec::new();
        };
        let record: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
        let workers = record["deep_workers"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        workers
            .iter()
            .filter_map(|w| w["log"].as_str().map(str::to_string))
            .collect()
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let logs = planned();
        if logs.len() >= 2 && logs.iter().all(|log| slow(log)) {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "every worker starts");
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
