//! `pipeline.ncu.sampling.deep_ranks` end to end with the fake ncu: around a launcher (the real
//! 4 × H200 GPT-2 DDP traces, each process's rank and device recorded) the deep pass gets
//! `--devices` of the chosen ranks and every rank's coverage is reported; one profile-run per rank,
//! a rank that is not chosen runs its deep-pass step unprofiled; ranks that share a device index
//! are refused with the per-rank recipe; per-rank runs merge with deep results joined by key.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use predicates::prelude::*;
use serde_json::Value;

use crate::common::{fixture, repo};
use crate::report_schema::schema;
use crate::trace::library;
use crate::trace_format::gunzip;

const GPT2_DDP: &str = "ncu/h200x4-cupti-straggle/gpt2-ddp-even/trace";

fn traces(dir: &str) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(fixture(dir))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    found.sort();
    found
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// A sampled run timed by the trace of the fake workload writing `traces`, the fake ncu as the deep
/// pass (GPT-2's deep results, from one H100), under `--config ncu/distributed --config ncu/sampled`.
fn sampled_run(tmp: &Path, traces: &[PathBuf], overrides: &[&str]) -> Command {
    Command::from_std(sampled_command(tmp, traces, overrides))
}

/// [`sampled_run`]'s command, to spawn.
fn sampled_command(tmp: &Path, traces: &[PathBuf], overrides: &[&str]) -> std::process::Command {
    let joined: Vec<String> = traces.iter().map(|p| p.display().to_string()).collect();
    let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("profile-run"));
    cmd.env("FAKE_TRACES", joined.join(" "))
        .env(
            "FAKE_NCU_DEEP_REPORT",
            fixture("ncu/h100-2025.3.1-gpt2/gpt2_pystack.ncu-rep.gz"),
        )
        .env("FAKE_NCU_ARGV_LOG", tmp.join("argv.log"))
        .args([
            "-q",
            "--config",
            "ncu/distributed",
            "--config",
            "ncu/sampled",
            "pipeline.ncu.timing=trace",
            // ncu's deep pass, whose ranks take turns (in process each rank profiles its own).
            "pipeline.ncu.sampling.deep_engine=ncu",
            "pipeline.ncu.sampling.adaptive=false",
            "report.sections=[time, speed_of_light, launch]",
        ])
        .arg(format!(
            "pipeline.ncu.executable={}",
            repo().join("tests/support/fake-ncu").display()
        ))
        .arg(format!(
            "pipeline.ncu.trace.library={}",
            library(tmp).display()
        ))
        .arg(format!("output.root={}", tmp.join("runs").display()))
        .args(overrides)
        .arg("--")
        .arg(repo().join("tests/support/fake-traced-workload"));
    cmd
}

/// The argv of every ncu run that profiled (not `--version`), in order.
fn ncu_runs(tmp: &Path) -> Vec<Vec<String>> {
    let argv = std::fs::read_to_string(tmp.join("argv.log")).unwrap_or_default();
    argv.split("--END--\n")
        .map(|b| b.lines().map(String::from).collect::<Vec<_>>())
        .filter(|b| b.iter().any(|l| l == "-o"))
        .collect()
}

fn devices_of(argv: &[String]) -> Option<&str> {
    let at = argv.iter().position(|a| a == "--devices")?;
    argv.get(at + 1).map(String::as_str)
}

#[test]
fn around_a_launcher_the_deep_pass_profiles_one_rank_per_signature() {
    let tmp = tempfile::tempdir().unwrap();
    sampled_run(tmp.path(), &traces(GPT2_DDP), &["output.run_name=run"])
        .assert()
        .success()
        .stderr(predicate::str::contains(
            "the deep pass runs on rank(s) 0 of 4",
        ));
    let runs = ncu_runs(tmp.path());
    assert_eq!(runs.len(), 1, "only the deep pass runs under ncu");
    assert_eq!(devices_of(&runs[0]), Some("0"), "{:?}", runs[0]);
    let dir = tmp.path().join("runs/run");
    let record = read_json(&dir.join("run.json"));
    assert_eq!(record["deep_ranks"]["chosen"], serde_json::json!([0]));
    assert_eq!(record["deep_ranks"]["devices"], "0");
    assert!(
        record["deep_pass"]["command"]
            .to_string()
            .contains("--devices"),
        "run.json keeps the command that ran"
    );
    let commands = std::fs::read_to_string(dir.join("command.txt")).unwrap();
    assert!(commands.contains("--devices 0"), "{commands}");

    let report = read_json(&dir.join("report.json"));
    let ranks = report["sampling"]["ranks"].as_array().unwrap();
    assert_eq!(ranks.len(), 4, "{ranks:?}");
    for (at, rank) in ranks.iter().enumerate() {
        assert_eq!(rank["rank"], at);
        assert_eq!(rank["deep_rank"], at == 0);
        let shares = ["on_itself_share", "on_another_rank_share", "none_share"]
            .map(|k| rank[k].as_f64().unwrap());
        assert!((shares.iter().sum::<f64>() - 1.0).abs() < 1e-9, "{rank}");
        if at == 0 {
            assert_eq!(shares[1], 0.0);
            assert!(shares[0] > 0.0, "rank 0 measured some keys itself: {rank}");
        } else {
            assert_eq!(shares[0], 0.0, "rank {at} ran no deep pass: {rank}");
            assert!(shares[1] > 0.0, "rank {at} takes rank 0's results: {rank}");
        }
    }
    let (schemas, index) = schema();
    if let Err(e) = schemas.validate(&report, index) {
        panic!("report.json does not match docs/report.schema.json:\n{e:#}");
    }
    // No kernel of a rank that ran no deep pass counts as measured on itself.
    assert!(report["sampling"]["measured_results"].as_u64().unwrap() > 0);
    for scope in report["scopes"].as_array().unwrap() {
        let measured: f64 = scope["regions"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|r| r["coverage"]["measured_time_share"].as_f64())
            .sum();
        match scope["rank"].as_u64() {
            Some(0) => assert!(measured > 0.0, "rank 0 measured itself"),
            Some(rank) => assert_eq!(measured, 0.0, "rank {rank} measured nothing itself"),
            None => panic!("every scope has its rank: {}", scope["label"]),
        }
    }
    let md = std::fs::read_to_string(dir.join("report.md")).unwrap();
    assert!(
        md.contains("Deep metrics per rank"),
        "report.md shows coverage per rank"
    );
}

/// deep_ranks=all around a launcher: the ranks take turns, one launch of the job each on its own
/// device (ranks of one job profiled at once stall in their collectives under ncu), and every rank
/// is measured on itself.
#[test]
fn around_a_launcher_several_deep_ranks_take_turns() {
    let all = tempfile::tempdir().unwrap();
    let spans = all.path().join("spans.log");
    sampled_run(
        all.path(),
        &traces(GPT2_DDP),
        &[
            "output.run_name=run",
            "pipeline.ncu.sampling.deep_ranks=all",
            "report.outputs=[md, json, html]",
            // The preset's default: the first pass's launches are read, so each turn's are known.
            "pipeline.ncu.sampling.adaptive=true",
        ],
    )
    .env("FAKE_NCU_SPAN_LOG", &spans)
    .assert()
    .success()
    .stderr(predicate::str::contains(
        "one rank at a time (ncu --devices 0, then 1, then 2, then 3",
    ));
    let runs = ncu_runs(all.path());
    let devices: Vec<Option<&str>> = runs.iter().map(|r| devices_of(r)).collect();
    assert_eq!(devices, [Some("0"), Some("1"), Some("2"), Some("3")]);
    let dir = all.path().join("runs/run");
    let record = read_json(&dir.join("run.json"));
    assert_eq!(
        record["deep_ranks"]["turns"],
        serde_json::json!(["0", "1", "2", "3"])
    );
    assert_turn_workers(&dir, &record, 4);
    // One after another: each turn's ncu exits before the next one starts.
    let spans = std::fs::read_to_string(&spans).unwrap();
    let spans: Vec<&str> = spans.lines().collect();
    assert_eq!(
        spans,
        [
            "start profile.deep",
            "end profile.deep",
            "start profile.deep.1",
            "end profile.deep.1",
            "start profile.deep.2",
            "end profile.deep.2",
            "start profile.deep.3",
            "end profile.deep.3",
        ]
    );
    let report = read_json(&dir.join("report.json"));
    for rank in report["sampling"]["ranks"].as_array().unwrap() {
        assert_eq!(rank["on_another_rank_share"], 0.0, "{rank}");
    }
    let (schemas, index) = schema();
    if let Err(e) = schemas.validate(&report, index) {
        panic!("report.json does not match docs/report.schema.json:\n{e:#}");
    }
    // Each turn is a worker with its own file and the device it profiled, in report.html and
    // report.md too, beside every rank's coverage.
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    let md = std::fs::read_to_string(dir.join("report.md")).unwrap();
    for rank in 0..4 {
        assert_eq!(
            report["sampling"]["deep_workers"][rank]["devices"],
            rank.to_string()
        );
        let row = format!("<tr><td class=\"num\">{rank}</td><td>ran</td>");
        assert!(html.contains(&row), "{row} in {html}");
        let device = format!("the workload's own, profiling device {rank} |");
        assert!(md.contains(&device), "{device} in {md}");
    }
    assert!(
        html.contains("<code>profile.deep.3.ncu-rep</code>"),
        "{html}"
    );
    assert!(html.contains("profiling device 3</td>"), "{html}");
}

/// Each of `turns` deep workers in run.json `record` ended well with its own report file in `dir`,
/// expected its own rank's results (at most one per key), and was stamped when it ended.
fn assert_turn_workers(dir: &Path, record: &Value, turns: usize) {
    let workers = record["deep_workers"].as_array().unwrap();
    assert_eq!(workers.len(), turns, "one deep worker per turn");
    for worker in workers {
        assert_eq!(worker["exit_code"], 0, "{worker}");
        assert!(
            dir.join(worker["report"].as_str().unwrap()).is_file(),
            "{worker}"
        );
        // A turn expects its own rank's results, not every rank's: at most one per key.
        let (expected, keys) = (&worker["expected_results"], &worker["keys"]);
        assert_eq!(worker["count"], 1, "{worker}");
        assert!(
            expected.as_u64().unwrap() > 0 && expected.as_u64() <= keys.as_u64(),
            "{worker}"
        );
    }
    // Each turn is stamped when it ended (each fake pass lasts at least 0.2 s).
    let ended: Vec<time::OffsetDateTime> = workers
        .iter()
        .map(|w| {
            let at = w["finished"].as_str().unwrap();
            time::OffsetDateTime::parse(at, &time::format_description::well_known::Rfc3339).unwrap()
        })
        .collect();
    for pair in ended.windows(2) {
        assert!(
            pair[1] - pair[0] >= time::Duration::milliseconds(200),
            "{ended:?}"
        );
    }
    // The deep pass ended with its last turn.
    assert_eq!(
        record["deep_pass"]["finished"],
        workers[turns - 1]["finished"]
    );
}

#[test]
fn ranks_that_share_a_device_index_are_refused_around_the_launcher() {
    let tmp = tempfile::tempdir().unwrap();
    // Two ranks' traces, the second's kernels moved to device 0 as CUDA_VISIBLE_DEVICES per rank
    // would number them.
    let found = traces(GPT2_DDP);
    let ranks: Vec<&PathBuf> = found.iter().skip(1).take(2).collect();
    let mut written = Vec::new();
    for (at, trace) in ranks.iter().enumerate() {
        let text = gunzip(trace);
        let text = match at {
            0 => text,
            _ => on_device_zero(&text),
        };
        let path = tmp.path().join(trace.file_name().unwrap());
        gzip(&path, &text);
        written.push(path);
    }
    sampled_run(tmp.path(), &written, &["output.run_name=run"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("both ran on device 0"))
        .stderr(predicate::str::contains("one profile-run per rank"));
    assert!(ncu_runs(tmp.path()).is_empty(), "no deep pass ran");
}

fn gzip(path: &Path, text: &str) {
    use std::io::Write;
    let mut out = flate2::write::GzEncoder::new(
        std::fs::File::create(path).unwrap(),
        flate2::Compression::fast(),
    );
    out.write_all(text.as_bytes()).unwrap();
    out.finish().unwrap();
}

/// A trace's kernels all on device 0 (the fifth field of a `kernel` line).
fn on_device_zero(text: &str) -> String {
    text.lines()
        .map(|line| {
            let mut fields: Vec<&str> = line.split('\t').collect();
            if fields.first() == Some(&"kernel") && fields.len() > 4 {
                fields[4] = "0";
            }
            fields.join("\t") + "\n"
        })
        .collect()
}

/// One profile-run per rank of a 2-rank launch (`RANK`, `WORLD_SIZE`), both started at once, rank
/// `r` writing the GPT-2 DDP trace of rank `r`; each one's stderr.
fn per_rank_runs(tmp: &Path, overrides: &[&str]) -> Vec<String> {
    let found = traces(GPT2_DDP);
    // The torchrun agent's trace comes first (lowest pid); ranks 0 and 1 follow.
    let ranks: Vec<Vec<PathBuf>> = (0..2).map(|r| found[1 + r..2 + r].to_vec()).collect();
    launch(tmp, &ranks, overrides)
}

/// `profile-run merge` of the per-rank run directories under `job` into `out`: its report.json.
fn merged(job: &Path, out: &Path) -> Value {
    Command::cargo_bin("profile-run")
        .unwrap()
        .args(["-q", "merge"])
        .arg(job)
        .arg("--out")
        .arg(out)
        .assert()
        .success();
    read_json(&out.join("report.json"))
}

/// One profile-run per rank, all started at once, rank `r` writing `traces[r]`; each one's stderr.
fn launch(tmp: &Path, traces: &[Vec<PathBuf>], overrides: &[&str]) -> Vec<String> {
    let world = traces.len().to_string();
    let children: Vec<_> = traces
        .iter()
        .enumerate()
        .map(|(rank, traces)| {
            let mut cmd = sampled_command(tmp, traces, overrides);
            cmd.env("RANK", rank.to_string())
                .env("WORLD_SIZE", &world)
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    children
        .into_iter()
        .map(|child| {
            let out = child.wait_with_output().unwrap();
            let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
            assert!(out.status.success(), "{stderr}");
            stderr
        })
        .collect()
}

#[test]
fn one_profile_run_per_rank_runs_the_deep_pass_on_one_rank_and_merges_by_key() {
    let tmp = tempfile::tempdir().unwrap();
    let stderr = per_rank_runs(tmp.path(), &["output.run_name=job"]);
    assert!(
        stderr[0].contains("rank 0 runs the deep pass"),
        "{}",
        stderr[0]
    );
    assert!(
        stderr[1].contains("rank 1 is not a deep rank"),
        "{}",
        stderr[1]
    );
    let runs = ncu_runs(tmp.path());
    assert_eq!(
        runs.len(),
        1,
        "one deep pass for two ranks of one signature"
    );
    assert!(
        runs[0].iter().any(|a| a.contains("/job/rank0/")),
        "{:?}",
        runs[0]
    );
    let job = tmp.path().join("runs/job");
    assert!(job.join("deep-ranks/rank0.signature").is_file());
    let signatures = ["rank0", "rank1"]
        .map(|r| std::fs::read_to_string(job.join(format!("deep-ranks/{r}.signature"))).unwrap());
    assert_eq!(
        signatures[0], signatures[1],
        "data-parallel ranks launch alike"
    );

    let rank1 = read_json(&job.join("rank1/run.json"));
    assert!(rank1["deep_pass"].is_null(), "{rank1}");
    let unprofiled = &rank1["deep_ranks"]["unprofiled"];
    assert_eq!(unprofiled["exit_code"], 0, "{rank1}");
    assert!(unprofiled["command"]
        .to_string()
        .contains("fake-traced-workload"));
    assert_eq!(rank1["deep_ranks"]["chosen"], serde_json::json!([0]));
    let log = std::fs::read_to_string(job.join("rank1/unprofiled.log")).unwrap();
    assert!(log.contains("workload running"), "the workload ran: {log}");
    assert!(!job.join("rank1/profile.deep.ncu-rep").exists());
    let own = read_json(&job.join("rank1/report.json"));
    assert_eq!(own["sampling"]["ranks"][0]["none_share"], 1.0);
    assert!(own["notes"].to_string().contains("not a deep rank"));

    // merge joins rank 0's deep results into rank 1's kernels by launch key.
    let merged = merged(&job, &tmp.path().join("merged"));
    let ranks = merged["sampling"]["ranks"].as_array().unwrap();
    assert_eq!(ranks.len(), 2, "{ranks:?}");
    assert_eq!(ranks[0]["deep_rank"], true);
    assert_eq!(ranks[1]["deep_rank"], false);
    // Every key rank 0 measured is one rank 1 launched; rank 1's time outside them is mostly its
    // all-reduces (NCCL kernels, which ncu/distributed leaves out of the deep pass), waiting longer.
    assert!(
        ranks[0]["on_itself_share"].as_f64().unwrap() > 0.8,
        "{ranks:?}"
    );
    assert!(
        ranks[1]["on_another_rank_share"].as_f64().unwrap() > 0.4,
        "{ranks:?}"
    );
    assert_eq!(ranks[1]["on_itself_share"], 0.0);
}

#[test]
fn a_rank_that_waits_in_vain_chooses_from_what_it_has_and_says_so() {
    let tmp = tempfile::tempdir().unwrap();
    let found = traces(GPT2_DDP);
    // Rank 1 of 2 alone: rank 0 never writes its signature.
    let out = sampled_run(
        tmp.path(),
        &found[2..3],
        &[
            "output.run_name=job",
            "pipeline.ncu.sampling.deep_ranks_wait_seconds=1",
        ],
    )
    .env("RANK", "1")
    .env("WORLD_SIZE", "2")
    .assert()
    .success();
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(stderr.contains("rank(s) 0 did not write one"), "{stderr}");
    assert!(stderr.contains("deep_ranks_wait_seconds"), "{stderr}");
    assert!(stderr.contains("rank 1 runs the deep pass"), "{stderr}");
    let record = read_json(&tmp.path().join("runs/job/rank1/run.json"));
    assert!(record["deep_ranks"]["warning"].is_string(), "{record}");

    // A listed rank the launcher never started is refused, naming the key.
    let beyond = tempfile::tempdir().unwrap();
    sampled_run(
        beyond.path(),
        &found[1..2],
        &[
            "output.run_name=job",
            "pipeline.ncu.sampling.deep_ranks=[5]",
        ],
    )
    .env("RANK", "0")
    .env("WORLD_SIZE", "2")
    .assert()
    .code(2)
    .stderr(predicate::str::contains(
        "pipeline.ncu.sampling.deep_ranks names rank 5, but the launcher started 2 rank(s)",
    ));
    assert!(ncu_runs(beyond.path()).is_empty());
}

/// profile-run's `--dry-run` with `args` before `--`: its exit code, stdout and stderr.
fn dry_run(args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::cargo_bin("profile-run")
        .unwrap()
        .arg("--dry-run")
        .args(args)
        .arg(format!(
            "pipeline.ncu.executable={}",
            repo().join("tests/support/fake-ncu").display()
        ))
        .args(["pipeline.ncu.timing=ncu", "--", "true"])
        .output()
        .unwrap();
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.code(), text(&out.stdout), text(&out.stderr))
}

#[test]
fn deep_ranks_takes_its_words_or_rank_numbers_and_refuses_the_rest_by_key() {
    let presets = ["--config", "ncu/distributed", "--config", "ncu/sampled"];
    for good in ["signature", "all", "[0, 4]"] {
        let value = format!("pipeline.ncu.sampling.deep_ranks={good}");
        let (code, _, err) = dry_run(&[&presets[..], &[value.as_str()]].concat());
        assert_eq!(code, Some(0), "{good}: {err}");
    }
    let (code, out, _) = dry_run(&presets);
    assert_eq!(code, Some(0));
    assert!(
        out.contains("deep_ranks=signature chooses the ranks"),
        "{out}"
    );
    for (bad, says) in [
        ("signatures", "(did you mean `signature`?)"),
        ("[]", "pipeline.ncu.sampling.deep_ranks"),
        ("[-1]", "pipeline.ncu.sampling.deep_ranks"),
        ("3", "pipeline.ncu.sampling.deep_ranks"),
    ] {
        let value = format!("pipeline.ncu.sampling.deep_ranks={bad}");
        let (code, _, err) = dry_run(&[value.as_str()]);
        assert_eq!(code, Some(2), "{bad}: {err}");
        assert!(err.contains(says), "{bad}: {err}");
    }
    let (code, _, err) = dry_run(&["pipeline.ncu.sampling.deep_ranks_wait_seconds=soon"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("deep_ranks_wait_seconds"), "{err}");
}

#[test]
fn a_rank_that_launches_other_kernels_is_a_group_of_its_own() {
    // The real 4 × H200 DDP run with STRAGGLE=2, one profile-run per rank: rank 2's extra matrix
    // products in `forward` are launch keys no other rank launched.
    let tmp = tempfile::tempdir().unwrap();
    let ranks: Vec<Vec<PathBuf>> = (0..4)
        .map(|r| {
            traces(&format!(
                "ncu/h200x4-cupti-straggle/ddp-per-rank/rank{r}/trace"
            ))
        })
        .collect();
    let stderr = launch(tmp.path(), &ranks, &["output.run_name=job"]);
    for (rank, err) in stderr.iter().enumerate() {
        let deep = rank == 0 || rank == 2;
        let says = match deep {
            true => format!("rank {rank} runs the deep pass (deep ranks: 0,2;"),
            false => format!("rank {rank} is not a deep rank"),
        };
        assert!(err.contains(&says), "{err}");
    }
    let job = tmp.path().join("runs/job");
    let signature = |r: u32| {
        std::fs::read_to_string(job.join(format!("deep-ranks/rank{r}.signature"))).unwrap()
    };
    assert_eq!(signature(0), signature(1));
    assert_eq!(signature(0), signature(3));
    assert_ne!(signature(0), signature(2));
    assert_eq!(ncu_runs(tmp.path()).len(), 2, "one deep pass per signature");
}

/// Adaptive counts run one ncu worker per count, several copies of the workload at once: around a
/// launcher those would be several copies of the whole job, joining each other's collectives, so
/// the deep pass stays one worker at `launch_count` and says why.
#[test]
fn around_a_launcher_adaptive_samples_stay_one_worker() {
    let tmp = tempfile::tempdir().unwrap();
    sampled_run(
        tmp.path(),
        &traces(GPT2_DDP),
        &["output.run_name=run", "pipeline.ncu.sampling.adaptive=true"],
    )
    .assert()
    .success()
    .stderr(predicate::str::contains(
        "adaptive counts need one worker per count (two copies of the job at once would join each other's collectives): each launch key takes pipeline.ncu.sampling.launch_count=1",
    ));
    let runs = ncu_runs(tmp.path());
    assert_eq!(runs.len(), 1, "one deep worker: {runs:?}");
    assert_eq!(devices_of(&runs[0]), Some("0"), "{:?}", runs[0]);
    let record = read_json(&tmp.path().join("runs/run/run.json"));
    assert!(record.get("deep_workers").is_none(), "{record}");
    // The report says the samples were not sized, and why, rather than "0 keys needed more".
    let report = read_json(&tmp.path().join("runs/run/report.json"));
    let notes = report["notes"].to_string();
    assert!(
        notes.contains(
            "could not be sized (a job of several processes runs its deep pass as one ncu worker"
        ),
        "{notes}"
    );
}

mod damaged;
mod interrupted;
mod nodes;
mod rounds;
