//! A signal during one profile-run per rank's signature wait (`deep_ranks=signature`, a rank whose
//! peers never write theirs) ends the wait at once: no deep pass runs, run.json records the
//! signal, and the timing pass's report says it is partial.

use std::time::{Duration, Instant};

use super::{ncu_runs, read_json, sampled_command, traces, GPT2_DDP};

#[test]
fn a_sigterm_during_the_signature_wait_ends_the_run_within_the_grace_and_is_recorded() {
    let tmp = tempfile::tempdir().unwrap();
    let found = traces(GPT2_DDP);
    // Rank 1 of 2 alone, waiting up to 120 s for rank 0's signature.
    let child = sampled_command(
        tmp.path(),
        &found[2..3],
        &[
            "output.run_name=job",
            "pipeline.ncu.sampling.deep_ranks_wait_seconds=120",
        ],
    )
    .env("RANK", "1")
    .env("WORLD_SIZE", "2")
    .stdout(std::process::Stdio::null())
    .stderr(std::process::Stdio::piped())
    .spawn()
    .unwrap();
    let signature = tmp.path().join("runs/job/deep-ranks/rank1.signature");
    let started = Instant::now();
    while !signature.is_file() {
        assert!(started.elapsed() < Duration::from_secs(60), "no signature");
        std::thread::sleep(Duration::from_millis(50));
    }
    // Well into the wait.
    std::thread::sleep(Duration::from_millis(500));
    let sent = Instant::now();
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    let out = child.wait_with_output().unwrap();
    let took = sent.elapsed();
    let stderr = String::from_utf8_lossy(&out.stderr);
    // The wait polls every 200 ms; what follows is the timing pass's report, rendered from the
    // traces: far less than the 120 s wait.
    assert!(took < Duration::from_secs(30), "took {took:?}: {stderr}");
    assert_eq!(out.status.code(), Some(143), "{stderr}");
    assert!(
        ncu_runs(tmp.path()).is_empty(),
        "no deep pass ran: {stderr}"
    );
    let dir = tmp.path().join("runs/job/rank1");
    let record = read_json(&dir.join("run.json"));
    assert_eq!(record["interrupted_by"], 15, "{record}");
    let md = std::fs::read_to_string(dir.join("report.md")).unwrap();
    assert!(md.contains("**Partial report:**"), "{md}");
}
