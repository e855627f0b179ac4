//! Adaptive deep samples per launch key (`pipeline.ncu.sampling.adaptive`): the deep pass's workers
//! (one per sample count, all at once) sized from the real first-pass durations of `tests/manual/ncu/train_step.py 2 3` (ncu's timing
//! pass, tests/fixtures/ncu/h100-2025.3.1-sampled, and the CUPTI trace of the same workload,
//! tests/fixtures/ncu/h100-2025.3.1-cupti), the runs that need one worker, a failing worker, and a
//! top-up pass's file left out of a re-render. Each key's n is computed here from the files, with the
//! formula written out, independently of profile-run's own code.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use predicates::prelude::*;
use serde_json::Value;

use crate::common::fixture;
use crate::sampled::{fake_sampled, profile_invocations, read_json, render};
use profile_run::profiler::ncu::observe::trace::attribute::{attribute, PushPopScope};
use profile_run::profiler::ncu::readers::report_file::{ReportFile, ReportFileError};
use profile_run::region::Renames;

const SAMPLED: &str = "ncu/h100-2025.3.1-sampled";

/// A launch key: mangled name, grid, block, (registers, static and dynamic shared memory).
pub(crate) type Key = (String, [u64; 3], [u64; 3], [u64; 3]);

/// One first-pass launch: its key, process and duration.
pub(crate) struct Launch {
    pub(crate) key: Key,
    pub(crate) process: u32,
    duration: f64,
}

/// The timing pass's launches, read straight from the report file.
pub(crate) fn timing_launches() -> Vec<Launch> {
    let mut report = ReportFile::open(&fixture(&format!("{SAMPLED}/train.ncu-rep.gz"))).unwrap();
    let mut launches = Vec::new();
    report
        .for_each_result(|r| {
            let number = |name: &str| r.metric(name).unwrap().unwrap().value.as_f64().unwrap();
            let shared = [
                "launch__registers_per_thread",
                "launch__shared_mem_per_block_static",
                "launch__shared_mem_per_block_dynamic",
            ]
            .map(|m| number(m) as u64);
            launches.push(Launch {
                key: (
                    r.kernel.as_ref().unwrap().mangled.to_string(),
                    r.grid_size.unwrap(),
                    r.block_size.unwrap(),
                    shared,
                ),
                process: r.process.id,
                duration: number("gpu__time_duration.sum"),
            });
            Ok::<(), ReportFileError>(())
        })
        .unwrap();
    launches
}

/// The trace's launches inside `train_step` (what regions.include=[train_step] counts).
fn trace_launches() -> Vec<Launch> {
    let path = &crate::trace::traces("train")[0];
    let trace = profile_run::profiler::ncu::readers::trace::read(path).unwrap();
    let mut launches = Vec::new();
    attribute(
        &trace,
        PushPopScope::Process,
        &Renames::default(),
        256,
        |a| {
            let in_step = a
                .stacks
                .iter()
                .any(|s| s.first().is_some_and(|r| r == "train_step"));
            if !in_step {
                return;
            }
            let k = a.kernel;
            let launch = trace.shape(k);
            launches.push(Launch {
                key: (
                    trace.names[launch.name].clone(),
                    launch.grid.map(u64::from),
                    launch.block.map(u64::from),
                    [
                        u64::from(launch.registers),
                        launch.static_shared,
                        launch.dynamic_shared,
                    ],
                ),
                process: trace.pid,
                duration: k.duration_ns(),
            });
        },
    )
    .unwrap();
    launches
}

/// Each key's n = min(⌈(1.96·CV/ε)²⌉ (at least 1), max_samples, launches in its process − 0 skipped).
pub(crate) struct Expected {
    pub(crate) n: BTreeMap<Key, u32>,
    /// Keys whose n, before max_samples, exceeds it.
    capped: usize,
}

/// The rule [`expected`] computes is `error_scope: key`'s (the default is `region`, tested on its
/// own below).
const KEY_SCOPE: &str = "pipeline.ncu.sampling.error_scope=key";

pub(crate) fn expected(launches: &[Launch], error: f64, max_samples: u32) -> Expected {
    let mut by_key: BTreeMap<Key, Vec<&Launch>> = BTreeMap::new();
    for l in launches {
        by_key.entry(l.key.clone()).or_default().push(l);
    }
    let mut n = BTreeMap::new();
    let mut capped = 0;
    for (key, ls) in by_key {
        let count = ls.len() as f64;
        let mean = ls.iter().map(|l| l.duration).sum::<f64>() / count;
        let cv = if ls.len() < 2 {
            0.0
        } else {
            let variance =
                ls.iter().map(|l| (l.duration - mean).powi(2)).sum::<f64>() / (count - 1.0);
            variance.sqrt() / mean
        };
        let needed = ((1.96 * cv / error).powi(2).ceil() as u32).max(1);
        let mut per_process: BTreeMap<u32, u32> = BTreeMap::new();
        for l in &ls {
            *per_process.entry(l.process).or_default() += 1;
        }
        let wanted = needed.min(*per_process.values().max().unwrap());
        capped += usize::from(wanted > max_samples);
        n.insert(key, wanted.min(max_samples));
    }
    Expected { n, capped }
}

/// Each deep worker's --launch-count and names (`None`: every name), from the fake ncu's argv log.
pub(crate) type Workers = BTreeMap<u32, Option<BTreeSet<String>>>;

fn deep_workers(tmp: &Path) -> Workers {
    let mut workers = Workers::new();
    for pass in profile_invocations(tmp) {
        if !pass.iter().any(|a| a == "per-launch-config") {
            continue;
        }
        let after = |flag: &str| pass.windows(2).find(|w| w[0] == flag).map(|w| w[1].clone());
        let names = after("--kernel-name").map(|pattern| {
            pattern
                .strip_prefix("regex:^(?:")
                .and_then(|p| p.strip_suffix(")$"))
                .unwrap_or_else(|| panic!("{pattern}"))
                .split('|')
                .map(String::from)
                .collect()
        });
        let count = after("--launch-count").unwrap().parse().unwrap();
        assert!(
            workers.insert(count, names).is_none(),
            "one worker per count"
        );
    }
    workers
}

/// The workers these n ask for, K = 1, no cold start skipped: each name takes the largest n of its
/// keys, one worker per count; a single worker profiles every name.
pub(crate) fn workers_of(expected: &Expected) -> Workers {
    let mut count_of: BTreeMap<&str, u32> = BTreeMap::new();
    for (key, n) in &expected.n {
        let count = count_of.entry(key.0.as_str()).or_default();
        *count = (*count).max(*n);
    }
    let mut workers = Workers::new();
    for (name, count) in count_of {
        workers
            .entry(count)
            .or_insert_with(|| Some(BTreeSet::new()))
            .as_mut()
            .unwrap()
            .insert(regex::escape(name));
    }
    if workers.len() == 1 {
        for names in workers.values_mut() {
            *names = None;
        }
    }
    workers
}

fn topped_up(expected: &Expected) -> usize {
    expected.n.values().filter(|n| **n > 1).count()
}

#[test]
fn the_timing_passs_durations_size_the_deep_workers_with_no_topup_pass() {
    let launches = timing_launches();
    assert_eq!(launches.len(), 54);
    for (max_samples, more) in [
        (4, vec![]),
        (2, vec!["pipeline.ncu.sampling.max_samples=2"]),
    ] {
        let tmp = tempfile::tempdir().unwrap();
        fake_sampled(tmp.path())
            .arg(KEY_SCOPE)
            .args(more)
            .args(["--", "true"])
            .assert()
            .success();
        let want = expected(&launches, 0.05, max_samples);
        assert_eq!(want.n.len(), 13);
        let (up, capped) = (topped_up(&want), want.capped);
        assert!(up > 0 && up < 13, "some keys need more, some not: {up}");
        assert_eq!(
            capped > 0,
            max_samples == 2,
            "the budget holds some keys at 2"
        );
        let workers = workers_of(&want);
        assert!(workers.len() > 1, "the keys' counts differ");
        assert_eq!(
            deep_workers(tmp.path()),
            workers,
            "max_samples={max_samples}"
        );
        let run = tmp.path().join("out/run");
        assert!(
            !run.join("profile.topup.ncu-rep").exists(),
            "no top-up pass"
        );
        let record = read_json(&run.join("run.json"));
        assert_eq!(record["adaptive"]["keys"], 13);
        assert_eq!(record["adaptive"]["keys_topped_up"], up);
        assert_eq!(record["adaptive"]["keys_capped"], capped);
        assert!(record.get("topup_pass").is_none());
        let recorded = record["deep_workers"].as_array().unwrap();
        assert_eq!(recorded.len(), workers.len());
        for (worker, count) in recorded.iter().zip(workers.keys()) {
            assert_eq!(worker["count"], *count);
            assert_eq!(worker["exit_code"], 0);
            assert_eq!(worker["gpu"], Value::Null, "one GPU: the workload's own");
        }
        let sampling = &read_json(&run.join("report.json"))["sampling"];
        assert_eq!(sampling["adaptive"], true);
        assert_eq!(sampling["error"], 0.05);
        assert_eq!(sampling["max_samples"], max_samples);
        assert_eq!(sampling["keys_topped_up"], up);
        // Every fake worker writes the deep fixture's 13 results; each is read for its own names.
        assert!(sampling.get("topup_results").is_none());
        assert_eq!(sampling["deep_results"], 13);
        assert_eq!(sampling["measured_results"], 13);
        assert_eq!(sampling["estimated_results"], 41);
        assert_eq!(sampling["unmatched_results"], 0);
        let command = std::fs::read_to_string(run.join("command.txt")).unwrap();
        assert_eq!(
            command.lines().count(),
            1 + workers.len(),
            "timing, then each worker: {command}"
        );
    }
    let tmp = tempfile::tempdir().unwrap();
    fake_sampled(tmp.path())
        .args([KEY_SCOPE, "--", "true"])
        .assert()
        .success();
    let notes = read_json(&tmp.path().join("out/run/report.json"))["notes"].to_string();
    let want = expected(&launches, 0.05, 4);
    assert!(
        notes.contains(&format!(
            "{} of 13 keys needed more deep samples",
            topped_up(&want)
        )),
        "{notes}"
    );
}

/// A sampled, adaptive run of the committed trace (`train`) with the fake ncu, its deep pass given
/// the committed deep report; `settings` are added to the sampling and report settings.
fn traced_adaptive_run(tmp: &Path, settings: &[&str]) -> assert_cmd::Command {
    let ncu = format!(
        "pipeline.ncu.executable={}",
        crate::common::repo()
            .join("tests/support/fake-ncu")
            .display()
    );
    let mut all = vec![
        "pipeline.ncu.sampling.enabled=true",
        "pipeline.ncu.sampling.adaptive=true",
        KEY_SCOPE,
        "report.sections=[time, speed_of_light, launch]",
        "regions.include=[train_step]",
        &ncu,
    ];
    all.extend_from_slice(settings);
    let mut cmd = crate::trace::trace_run(tmp, "train", &all);
    cmd.env(
        "FAKE_NCU_DEEP_REPORT",
        fixture(&format!("{SAMPLED}/train.deep.ncu-rep.gz")),
    )
    .env("FAKE_NCU_ARGV_LOG", tmp.join("argv.log"));
    cmd
}

#[test]
fn the_traces_durations_size_the_deep_workers() {
    let launches = trace_launches();
    assert_eq!(launches.len(), 54, "ncu's count of train_step");
    let tmp = tempfile::tempdir().unwrap();
    traced_adaptive_run(tmp.path(), &["pipeline.ncu.sampling.max_samples=3"])
        .assert()
        .success();
    let want = expected(&launches, 0.05, 3);
    let up = topped_up(&want);
    assert!(up > 0, "the in-place durations vary too");
    assert_eq!(deep_workers(tmp.path()), workers_of(&want));
    let run = tmp.path().join("runs/run");
    let report = read_json(&run.join("report.json"));
    assert_eq!(report["sampling"]["keys_topped_up"], up);
    assert!(report["sampling"].get("topup_results").is_none());
    assert_eq!(report["sampling"]["measured_results"], 13);
    assert_eq!(report["sampling"]["unmatched_results"], 0);
    let sources = report["sampling"]["deep_sources"].to_string();
    assert!(
        sources.contains("profile.deep.ncu-rep") && sources.contains("profile.deep.1.ncu-rep"),
        "{sources}"
    );

    // Re-rendered from the run directory with no ncu on hand: the workers' files join again.
    let out = tmp.path().join("again");
    crate::sampled::profile_run()
        .arg("report")
        .arg(&run)
        .arg("--out")
        .arg(&out)
        .env("PATH", "/nonexistent")
        .assert()
        .success();
    let again = read_json(&out.join("report.json"));
    assert_eq!(again["sampling"], report["sampling"]);
    assert_eq!(again["scopes"], report["scopes"]);
}

/// `error_scope: region` on the committed trace: each key's n scaled by the largest share of a
/// region's time it holds. Every name's count is at most what `key` gives it, and fewer keys need
/// more than one sample; the note says how n was sized.
#[test]
fn region_scope_asks_the_trace_for_fewer_samples_than_key_scope() {
    let run = |scope: &str| {
        let tmp = tempfile::tempdir().unwrap();
        let scope = format!("pipeline.ncu.sampling.error_scope={scope}");
        traced_adaptive_run(tmp.path(), &[&scope])
            .assert()
            .success();
        let report = read_json(&tmp.path().join("runs/run/report.json"));
        let count_of: BTreeMap<String, u32> = deep_workers(tmp.path())
            .into_iter()
            .flat_map(|(count, names)| {
                names
                    .unwrap_or_default()
                    .into_iter()
                    .map(move |n| (n, count))
            })
            .collect();
        (report, count_of)
    };
    let (key, key_counts) = run("key");
    let (region, region_counts) = run("region");
    let up = |r: &serde_json::Value| r["sampling"]["keys_topped_up"].as_u64().unwrap();
    assert!(up(&key) > 0, "{}", key["sampling"]);
    assert!(
        up(&region) < up(&key),
        "{} against {}",
        up(&region),
        up(&key)
    );
    for (name, count) in &region_counts {
        let under_key = key_counts.get(name).copied().unwrap_or(1);
        assert!(*count <= under_key, "{name}: {count} > {under_key}");
    }
    let notes = region["notes"].to_string();
    assert!(
        notes.contains("times the largest share of a region's time the key holds"),
        "{notes}"
    );
    assert!(!key["notes"].to_string().contains("largest share"));
}

#[test]
fn no_topup_pass_runs_when_adaptive_is_off_or_no_key_needs_more() {
    let launches = timing_launches();
    let calm = expected(&launches, 0.99, 4);
    assert_eq!(topped_up(&calm), 0, "at ±99% one sample of each key does");
    for (setting, adaptive) in [
        ("pipeline.ncu.sampling.adaptive=false", false),
        ("pipeline.ncu.sampling.error=0.99", true),
    ] {
        let tmp = tempfile::tempdir().unwrap();
        fake_sampled(tmp.path())
            .args([setting, "--", "true"])
            .assert()
            .success();
        assert_eq!(profile_invocations(tmp.path()).len(), 2, "{setting}");
        let run = tmp.path().join("out/run");
        assert!(!run.join("profile.topup.ncu-rep").exists());
        let record = read_json(&run.join("run.json"));
        assert!(record.get("topup_pass").is_none());
        assert!(
            record.get("deep_workers").is_none(),
            "one worker: today's deep pass"
        );
        let sampling = &read_json(&run.join("report.json"))["sampling"];
        assert_eq!(sampling["adaptive"], adaptive, "{setting}");
        assert!(sampling.get("topup_results").is_none());
        assert_eq!(sampling["deep_results"], 13);
        if adaptive {
            assert_eq!(record["adaptive"]["keys_topped_up"], 0);
            assert_eq!(sampling["keys_topped_up"], 0);
        } else {
            assert!(record.get("adaptive").is_none());
            assert_eq!(sampling["keys_topped_up"], Value::Null);
        }
    }
}

#[test]
fn a_failing_worker_is_run_again_alone_and_twice_leaves_its_keys_unmatched() {
    let tmp = tempfile::tempdir().unwrap();
    fake_sampled(tmp.path())
        .env("FAKE_NCU_FAIL_WORKER", "profile.deep.1")
        .args([KEY_SCOPE, "--", "true"])
        .assert()
        .success()
        .stderr(predicate::str::contains(
            "worker 1 of ncu's deep pass failed",
        ));
    let run = tmp.path().join("out/run");
    assert!(run.join("profile.deep.1.ncu-rep").is_file(), "its rerun's");
    assert!(
        run.join("ncu.deep.1.failed.log").is_file(),
        "the failed try's log kept aside"
    );
    let record = read_json(&run.join("run.json"));
    let worker = &record["deep_workers"][1];
    assert_eq!(worker["failed_try"]["exit_code"], 1);
    assert_eq!(worker["exit_code"], 0);
    let report = read_json(&run.join("report.json"));
    assert_eq!(report["sampling"]["unmatched_results"], 0);
    assert_eq!(report["sampling"]["deep_results"], 13);

    // Failing twice: its keys have no deep values, never another key's.
    let twice = tempfile::tempdir().unwrap();
    fake_sampled(twice.path())
        .env("FAKE_NCU_FAIL_WORKER", "profile.deep.1")
        .env("FAKE_NCU_WORKER_FAILS", "2")
        .args([KEY_SCOPE, "--", "true"])
        .assert()
        .success()
        .stderr(predicate::str::contains("failed again"));
    let report = read_json(&twice.path().join("out/run/report.json"));
    let unmatched = report["sampling"]["unmatched_results"].as_u64().unwrap();
    assert!(unmatched > 0, "worker 1's keys are unmatched");
    assert!(report["sampling"]["deep_results"].as_u64().unwrap() < 13);
}

#[test]
fn report_re_renders_a_run_and_leaves_a_topup_capture_out_with_a_note() {
    let tmp = tempfile::tempdir().unwrap();
    fake_sampled(tmp.path())
        .args(["--", "true"])
        .assert()
        .success();
    let run = tmp.path().join("out/run");
    let profiled = read_json(&run.join("report.json"));
    let again = render(&run, &tmp.path().join("again"), &[]);
    assert_eq!(again["sampling"], profiled["sampling"]);
    assert_eq!(again["scopes"], profiled["scopes"]);

    // A run directory that holds a top-up pass (its file and its record) renders from the deep
    // pass alone, the file named in a note.
    std::fs::copy(
        run.join("profile.deep.ncu-rep"),
        run.join("profile.topup.ncu-rep"),
    )
    .unwrap();
    let mut record = read_json(&run.join("run.json"));
    record["topup_pass"] = record["deep_pass"].clone();
    record["adaptive"]["topup_failed"] = Value::Bool(false);
    std::fs::write(run.join("run.json"), record.to_string()).unwrap();
    let topped = render(&run, &tmp.path().join("topped"), &[]);
    assert_eq!(topped["sampling"], profiled["sampling"]);
    assert_eq!(topped["scopes"], profiled["scopes"]);
    let notes = topped["notes"].to_string();
    assert!(
        notes.contains(
            "profile.topup.ncu-rep is a top-up pass's report file, which profile-run does not read"
        ),
        "{notes}"
    );
    assert!(
        notes.contains("were to take them in a top-up pass"),
        "{notes}"
    );

    // Bare files: the top-up capture beside the deep one is left out the same way.
    let bare = tmp.path().join("bare");
    std::fs::create_dir(&bare).unwrap();
    for (from, to) in [
        ("train.ncu-rep.gz", "train.ncu-rep.gz"),
        ("train.deep.ncu-rep.gz", "train.deep.ncu-rep.gz"),
        ("train.deep.ncu-rep.gz", "train.topup.ncu-rep.gz"),
    ] {
        std::fs::copy(fixture(&format!("{SAMPLED}/{from}")), bare.join(to)).unwrap();
    }
    let report = render(&bare.join("train.ncu-rep.gz"), &tmp.path().join("r"), &[]);
    let sampling = &report["sampling"];
    assert_eq!(sampling["deep_results"], 13, "the deep pass's alone");
    assert_eq!(sampling["adaptive"], false, "not recorded");
    assert_eq!(sampling["keys"], 13);
    let topup = bare.join("train.topup.ncu-rep.gz").display().to_string();
    assert!(!sampling["deep_sources"].to_string().contains(&topup));
    assert!(report["notes"]
        .to_string()
        .contains(&format!("{topup} is a top-up pass's report file")));
    // Every file the numbers come from is a source, and report.md says which pass each one was.
    let files = ["train.ncu-rep.gz", "train.deep.ncu-rep.gz"]
        .map(|name| bare.join(name).display().to_string());
    assert_eq!(report["run"]["sources"], serde_json::json!(files));
    let md = std::fs::read_to_string(tmp.path().join("r/report.md")).unwrap();
    let line = md
        .lines()
        .find(|l| l.starts_with("- **Sources:**"))
        .unwrap();
    for (file, part) in files.iter().zip(["(timing pass", "(deep pass"]) {
        assert!(line.contains(&format!("`{file}` {part}")), "{line}");
    }
}

#[test]
fn dry_run_says_the_deep_pass_may_run_as_workers_and_bad_settings_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    fake_sampled(tmp.path())
        .args(["--dry-run", "--", "true"])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "the deep pass may run as several workers",
        ));
    for (setting, named) in [
        (
            "pipeline.ncu.sampling.error=0",
            "pipeline.ncu.sampling.error is 0",
        ),
        (
            "pipeline.ncu.sampling.max_samples=0",
            "pipeline.ncu.sampling.max_samples is 0",
        ),
    ] {
        fake_sampled(tmp.path())
            .args([setting, "--", "true"])
            .assert()
            .code(2)
            .stderr(predicate::str::contains(named));
    }
    assert!(profile_invocations(tmp.path()).is_empty());
}
