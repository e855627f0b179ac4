//! A sampled run's deep pass and top-up pass ending once covered
//! (`pipeline.ncu.sampling.stop_when_covered`): the fake ncu prints its `==PROF== Profiling` lines
//! first, then keeps the rest of the workload (a `sleep`) running until it ends or is signalled, and
//! writes its report either way. The expected counts come from the real first passes of
//! `tests/manual/ncu/train_step.py 2 3` (tests/fixtures/ncu/h100-2025.3.1-sampled, and the CUPTI
//! trace in tests/fixtures/ncu/h100-2025.3.1-cupti), counted here from the files.

use std::collections::BTreeSet;
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::{fixture, repo};
use crate::sampled::{fake_sampled, read_json};
use profile_run::profiler::ncu::readers::report_file::{ReportFile, ReportFileError};

const SAMPLED: &str = "ncu/h100-2025.3.1-sampled";

/// How long the rest of the workload runs when nothing stops it.
const SHORT_LINGER: u64 = 4;
/// A rest of the workload a stopped pass must not wait for.
const LONG_LINGER: u64 = 120;

/// The results the real deep pass of the fixture's workload profiled (`--launch-count 1`).
fn deep_results() -> u64 {
    let mut n = 0;
    ReportFile::open(&fixture(&format!("{SAMPLED}/train.deep.ncu-rep.gz")))
        .unwrap()
        .for_each_result(|_| {
            n += 1;
            Ok::<(), ReportFileError>(())
        })
        .unwrap();
    n
}

/// A non-adaptive sampled run of the fake ncu whose deep pass prints `prof` Profiling lines and
/// whose workload then runs on for `linger` seconds; its output and how long it took.
fn deep_run(tmp: &Path, prof: u64, linger: u64, more: &[&str]) -> (std::process::Output, Duration) {
    let start = Instant::now();
    let output = fake_sampled(tmp)
        .env("FAKE_NCU_DEEP_PROF", prof.to_string())
        .env("FAKE_NCU_LINGER", linger.to_string())
        .arg("pipeline.ncu.sampling.adaptive=false")
        .args(more)
        .args(["--", "true"])
        .output()
        .unwrap();
    (output, start.elapsed())
}

fn run_json(tmp: &Path, dir: &str) -> Value {
    read_json(&tmp.join(dir).join("run/run.json"))
}

fn report_json(tmp: &Path, dir: &str) -> Value {
    read_json(&tmp.join(dir).join("run/report.json"))
}

/// A complete run: exit 0, no partial report, the deep pass's results all joined.
fn assert_complete(output: &std::process::Output, report: &Value, deep: u64) {
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{:?}: {stderr}", output.status);
    assert!(!stderr.contains("Partial"), "{stderr}");
    assert_eq!(report["run"]["partial"], Value::Null);
    assert_eq!(report["sampling"]["deep_results"], deep);
}

#[test]
fn a_covered_deep_pass_ends_its_workload_and_the_run_is_complete() {
    let tmp = tempfile::tempdir().unwrap();
    let deep = deep_results();
    let (output, took) = deep_run(tmp.path(), deep, LONG_LINGER, &[]);
    assert!(
        took < Duration::from_secs(LONG_LINGER / 2),
        "took {took:?}: the deep pass waited for the rest of the workload"
    );
    let report = report_json(tmp.path(), "out");
    assert_complete(&output, &report, deep);
    let pass = &run_json(tmp.path(), "out")["deep_pass"];
    assert_eq!(pass["stopped_when_covered"], true);
    assert_eq!(pass["covered_results"], deep);
    assert_eq!(pass["signal"], Value::Null, "ncu itself was not signalled");
    // The workload got SIGTERM (128 + 15), and ncu said so, as it does of a workload that fails.
    let log = std::fs::read_to_string(tmp.path().join("out/run/ncu.deep.log")).unwrap();
    assert!(log.contains("returned an error code (143)"), "{log}");
    assert!(log.contains("==PROF== Report:"), "{log}");
    assert_eq!(pass["exit_code"], 1);
    assert_eq!(report["sampling"]["measured_results"], deep);
}

#[test]
fn without_stop_when_covered_or_short_of_the_count_the_workload_runs_to_its_end() {
    let deep = deep_results();
    for (prof, more) in [
        (deep, vec!["pipeline.ncu.sampling.stop_when_covered=false"]),
        (deep - 1, vec![]),
    ] {
        let tmp = tempfile::tempdir().unwrap();
        let (output, took) = deep_run(tmp.path(), prof, SHORT_LINGER, &more);
        assert!(
            took >= Duration::from_secs(SHORT_LINGER),
            "{prof} lines, {more:?}: took {took:?}, the workload was stopped"
        );
        assert_complete(&output, &report_json(tmp.path(), "out"), deep);
        let pass = &run_json(tmp.path(), "out")["deep_pass"];
        assert_eq!(pass.get("stopped_when_covered"), None, "{pass}");
        assert_eq!(pass["exit_code"], 0);
    }
}

/// Launch keys per process in a trace, every kernel: what a deep pass with no filter takes once each.
fn trace_keys(workload: &str) -> u64 {
    let mut keys = BTreeSet::new();
    for path in crate::trace::traces(workload) {
        let trace = profile_run::profiler::ncu::readers::trace::read(&path).unwrap();
        for k in &trace.kernels {
            let launch = trace.shape(k);
            keys.insert((
                trace.pid,
                trace.names[launch.name].clone(),
                launch.grid,
                launch.block,
                [
                    u64::from(launch.registers),
                    launch.static_shared,
                    launch.dynamic_shared,
                ],
            ));
        }
    }
    keys.len() as u64
}

#[test]
fn a_traced_deep_pass_stops_unless_raw_nvtx_expressions_filter_it() {
    let ncu = format!(
        "pipeline.ncu.executable={}",
        repo().join("tests/support/fake-ncu").display()
    );
    let keys = trace_keys("train");
    // regions.include selects in the trace as ncu's converted expression does: the count is the
    // keys of train_step, the 13 the real deep pass profiled. A kernel_name filter is ncu's own
    // matching (raw NVTX expressions are refused under timing: trace): no count, so even as many
    // lines as the trace's keys do not stop it.
    let kernel_name: &[&str] = &[
        "pipeline.ncu.ncu_cli.kernel_name=regex:.*",
        "pipeline.ncu.ncu_cli.kernel_name_base=mangled",
    ];
    for (include, linger, stops) in [
        (&[][..], LONG_LINGER, Some(keys)),
        (&["regions.include=[train_step]"][..], LONG_LINGER, Some(13)),
        (kernel_name, SHORT_LINGER, None),
    ] {
        let tmp = tempfile::tempdir().unwrap();
        let mut overrides = vec![
            "pipeline.ncu.sampling.enabled=true",
            "report.sections=[time, speed_of_light, launch]",
            ncu.as_str(),
        ];
        overrides.extend(include.iter().copied());
        let start = Instant::now();
        let output = crate::trace::trace_run(tmp.path(), "train", &overrides)
            .env("FAKE_NCU_DEEP_PROF", keys.to_string())
            .env("FAKE_NCU_LINGER", linger.to_string())
            .env(
                "FAKE_NCU_DEEP_REPORT",
                fixture(&format!("{SAMPLED}/train.deep.ncu-rep.gz")),
            )
            .output()
            .unwrap();
        let took = start.elapsed();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(output.status.success(), "{include:?}: {stderr}");
        let pass = &run_json(tmp.path(), "runs")["deep_pass"];
        if let Some(count) = stops {
            assert!(took < Duration::from_secs(linger / 2), "took {took:?}");
            assert_eq!(pass["covered_results"], count);
        } else {
            assert!(took >= Duration::from_secs(linger), "took {took:?}");
            assert_eq!(pass.get("stopped_when_covered"), None, "{pass}");
        }
        assert_eq!(
            report_json(tmp.path(), "runs")["run"]["partial"],
            Value::Null
        );
    }
}

#[test]
fn dry_run_says_when_a_pass_may_end_early() {
    let early = "the deep pass (each of its workers) may end early";
    for (more, says) in [
        (None, true),
        (Some("pipeline.ncu.sampling.stop_when_covered=false"), false),
        (Some("pipeline.ncu.timing=trace"), true),
        (Some("pipeline.ncu.ncu_cli.nvtx.include=[step/]"), true),
    ] {
        let tmp = tempfile::tempdir().unwrap();
        // A trace pass needs its injection library, an ELF shared object; a fresh build has none
        // beside the test binary, so a stand-in ELF header is named (the dry run never loads it).
        let library = format!(
            "pipeline.ncu.trace.library={}",
            crate::trace::library(tmp.path()).display()
        );
        let output = fake_sampled(tmp.path())
            .arg("pipeline.ncu.sampling.deep_engine=ncu")
            .args(more)
            .arg(library)
            .args(["--dry-run", "--", "true"])
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{more:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert_eq!(stdout.contains(early), says, "{more:?}: {stdout}");
    }
}

/// A deep pass ended once covered whose run launched other kernels than the first pass saw (here:
/// a deep capture of another workload) leaves launches without a twin: the report says why and how
/// to run to the end instead.
#[test]
fn launches_left_without_a_twin_after_a_stop_are_explained() {
    let tmp = tempfile::tempdir().unwrap();
    let start = Instant::now();
    let output = fake_sampled(tmp.path())
        .env("FAKE_NCU_DEEP_PROF", deep_results().to_string())
        .env("FAKE_NCU_LINGER", LONG_LINGER.to_string())
        .env(
            "FAKE_NCU_DEEP_REPORT",
            fixture("ncu/h100-2025.3.1-cupti/graph.ncu-rep.gz"),
        )
        .arg("pipeline.ncu.sampling.adaptive=false")
        .args(["--", "true"])
        .output()
        .unwrap();
    assert!(start.elapsed() < Duration::from_secs(LONG_LINGER / 2));
    assert!(output.status.success());
    let report = report_json(tmp.path(), "out");
    assert!(report["sampling"]["unmatched_results"].as_u64().unwrap() > 0);
    let notes = report["notes"].to_string();
    assert!(notes.contains("stop_when_covered=false"), "{notes}");
}
