//! A sampled run whose deep metrics the injection library collects inside the traced process
//! (`pipeline.ncu.sampling.deep_engine`): one launch of the workload, no ncu, the metrics handed
//! to the library in the trace pass's environment, and the engine named in run.json.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use predicates::prelude::*;
use serde_json::Value;

use crate::common::{fixture, repo};

const DIR: &str = "ncu/h200-2025.3.1-inprocess";

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// A fake ncu that logs every invocation: any line in its log means ncu ran.
fn ncu_overrides(tmp: &Path) -> Vec<String> {
    vec![
        format!(
            "pipeline.ncu.executable={}",
            repo().join("tests/support/fake-ncu").display()
        ),
        format!(
            "pipeline.ncu.trace.library={}",
            crate::trace::library(tmp).display()
        ),
        "pipeline.ncu.sampling.enabled=true".into(),
        // What `--config ncu/sampled` shows on top of the trace preset.
        "report.sections=[time, speed_of_light, launch]".into(),
        format!("output.root={}", tmp.join("runs").display()),
        "output.run_name=run".into(),
    ]
}

fn in_process_run(tmp: &Path, engine: &str) -> Command {
    let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("profile-run"));
    with_in_process_run(&mut cmd, tmp, engine);
    Command::from_std(cmd)
}

/// [`in_process_run`]'s environment and arguments, on `cmd`: profile-run itself, or a tool that
/// runs it (strace). The fake workload writes the two-size GEMM's in-process trace as
/// `cupti.625.trace`.
pub(crate) fn with_in_process_run<'c>(
    cmd: &'c mut std::process::Command,
    tmp: &Path,
    engine: &str,
) -> &'c mut std::process::Command {
    let trace: PathBuf = fixture(DIR).join("two_sizes.inprocess.cupti.625.trace.gz");
    cmd.env("FAKE_TRACES", trace)
        .env("FAKE_EXPECT_DEEP", "1")
        .env("FAKE_NCU_ARGV_LOG", tmp.join("argv.log"))
        .args(["-q", "--config", "ncu/trace"])
        .args(ncu_overrides(tmp))
        .arg(format!("pipeline.ncu.sampling.deep_engine={engine}"))
        .arg("regions.include=[train_step]")
        .arg("--")
        .arg(repo().join("tests/support/fake-traced-workload"))
}

#[test]
fn the_in_process_engine_runs_the_workload_once_and_never_starts_ncu() {
    for engine in ["in_process", "auto"] {
        let tmp = tempfile::tempdir().unwrap();
        in_process_run(tmp.path(), engine).assert().success();
        assert!(
            !tmp.path().join("argv.log").exists(),
            "{engine}: ncu never runs"
        );
        let dir = tmp.path().join("runs/run");
        let record = read_json(&dir.join("run.json"));
        assert_eq!(record["deep_engine"], "in-process (CUPTI Range Profiler)");
        assert!(record["deep_pass"].is_null(), "no deep pass: {record}");
        let command = std::fs::read_to_string(dir.join("command.txt")).unwrap();
        assert_eq!(command.lines().count(), 1, "one pass: {command}");
        assert!(
            command.contains("PROFILE_RUN_DEEP_METRICS=")
                && command.contains("sm__throughput.avg.pct_of_peak_sustained_elapsed"),
            "{command}"
        );
        assert!(
            !command.contains("PROFILE_RUN_DEEP_METRICS=gpu__time_duration")
                && command.contains(",gpu__time_duration.sum' ")
                && !command.contains("launch__grid_size"),
            "the time metric goes last (the replayed duration), launch attributes not at all: {command}"
        );
        assert!(
            command.contains("PROFILE_RUN_DEEP_FIRST=1"),
            "each stratum's first launch profiled: {command}"
        );
        let log = std::fs::read_to_string(dir.join("trace.log")).unwrap();
        assert!(log.contains("deep metrics in process:"), "{log}");
        // The one launch's report: sampled from the trace's own counters, the engine named.
        let report = read_json(&dir.join("report.json"));
        let sampling = &report["sampling"];
        assert_eq!(sampling["engine"], "in-process (CUPTI Range Profiler)");
        let measured = sampling["measured_results"].as_u64().unwrap();
        assert!(measured > 0, "{sampling}");
        let layer = report["scopes"][0]["regions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["path"] == "train_step/forward/layer0/mlp")
            .expect("the mlp region");
        let sm = &layer["inclusive"]["sm__throughput.avg.pct_of_peak_sustained_elapsed"];
        assert!(sm["value"].as_f64().unwrap() > 10.0, "{sm}");
    }
}

/// The real trace of a process whose counters could not run (`graph_fallback/`: its environment
/// named a counter the H200 lacks), written by the fake workload with the library's
/// `cupti.<pid>.no-counters` beside it; ncu (fake) writes that run's real deep report.
fn counters_unavailable_run(tmp: &Path, settings: &[&str]) -> Command {
    let from = fixture(DIR).join("graph_fallback");
    let trace = gzipped(&from.join("trace/cupti.522.trace"), tmp);
    let mut cmd = Command::cargo_bin("profile-run").unwrap();
    cmd.env("FAKE_TRACES", &trace)
        .env("FAKE_NO_COUNTERS", from.join("trace/cupti.522.no-counters"))
        .env("FAKE_NCU_DEEP_REPORT", from.join("profile.deep.ncu-rep.gz"))
        .env("FAKE_NCU_ARGV_LOG", tmp.join("argv.log"))
        .args(["-q", "--config", "ncu/trace"])
        .args(ncu_overrides(tmp))
        .args(settings)
        .arg("regions.include=[step]")
        .arg("--")
        .arg(repo().join("tests/support/fake-traced-workload"));
    cmd
}

/// `file` gzipped into `dir` under its own name: what the fake workload copies.
fn gzipped(file: &Path, dir: &Path) -> PathBuf {
    let name = file.file_name().unwrap().to_string_lossy();
    let path = dir.join(format!("{name}.gz"));
    let mut gz = flate2::write::GzEncoder::new(
        std::fs::File::create(&path).unwrap(),
        flate2::Compression::fast(),
    );
    std::io::Write::write_all(&mut gz, &std::fs::read(file).unwrap()).unwrap();
    gz.finish().unwrap();
    path
}

/// The fallback needs every traced process to say its counters cannot run: beside a process that
/// did not say so, `auto` keeps what the traces hold. One
/// profile-run per rank does not fall back alone, since its peers would have to launch the job
/// again with it: it warns and keeps the trace's times.
#[test]
fn counters_missing_in_some_process_or_in_one_rank_of_a_job_start_no_ncu() {
    let tmp = tempfile::tempdir().unwrap();
    let from = fixture(DIR).join("graph_fallback/trace/cupti.522.trace");
    let failed = gzipped(&from, tmp.path());
    // The same process again as process 523, which wrote no such file (it never tried: no launch
    // the rule chose, or it profiled some).
    let text = std::fs::read_to_string(&from).unwrap();
    let other = tmp.path().join("other");
    std::fs::create_dir(&other).unwrap();
    let again = other.join("cupti.523.trace");
    std::fs::write(&again, text.replacen("process\t522\t", "process\t523\t", 1)).unwrap();
    let traces = format!(
        "{} {}",
        failed.display(),
        gzipped(&again, tmp.path()).display()
    );
    let auto = "pipeline.ncu.sampling.deep_engine=auto";
    let unmeasured = "pipeline.ncu.sampling.graph_kernels=unmeasured";
    counters_unavailable_run(tmp.path(), &[auto, unmeasured])
        .env("FAKE_TRACES", traces)
        .env("FAKE_NO_COUNTERS_PIDS", "522")
        .assert()
        .success();
    let argv = std::fs::read_to_string(tmp.path().join("argv.log")).unwrap_or_default();
    assert!(argv.is_empty(), "process 523 said nothing: no ncu: {argv}");
    let record = read_json(&tmp.path().join("runs/run/run.json"));
    assert!(record["counters_unavailable"].is_null(), "{record}");
    assert_eq!(record["deep_engine"], "in-process (CUPTI Range Profiler)");

    let tmp = tempfile::tempdir().unwrap();
    counters_unavailable_run(tmp.path(), &[auto])
        .env("RANK", "1")
        .env("WORLD_SIZE", "2")
        .assert()
        .success()
        .stderr(predicate::str::contains(
            "ncu's deep pass cannot measure the deep metrics instead: this is one profile-run per rank",
        ));
    let argv = std::fs::read_to_string(tmp.path().join("argv.log")).unwrap_or_default();
    assert!(argv.is_empty(), "one rank of a job: no ncu: {argv}");
    let record = read_json(&tmp.path().join("runs/run/rank1/run.json"));
    assert!(record["counters_unavailable"].is_null(), "{record}");
}

/// Where no traced process could collect counters, `auto` has ncu's deep pass measure the deep
/// metrics after the trace pass and says why in run.json and the report; `in_process`, asked for
/// by name, keeps the trace's times with the library's reason as a note (and starts no ncu, its
/// CUDA graph kernels left unmeasured here).
#[test]
fn counters_that_cannot_run_go_to_ncus_deep_pass_under_auto_alone() {
    let tmp = tempfile::tempdir().unwrap();
    let why =
        std::fs::read_to_string(fixture(DIR).join("graph_fallback/trace/cupti.522.no-counters"))
            .unwrap();
    counters_unavailable_run(tmp.path(), &["pipeline.ncu.sampling.deep_engine=auto"])
        .assert()
        .success()
        .stderr(predicate::str::contains(
            "ncu's deep pass measures the deep metrics instead",
        ));
    let argv = std::fs::read_to_string(tmp.path().join("argv.log")).expect("ncu ran");
    assert!(argv.contains("per-launch-config"), "its deep pass: {argv}");
    let dir = tmp.path().join("runs/run");
    let record = read_json(&dir.join("run.json"));
    assert_eq!(record["deep_engine"], "ncu");
    assert_eq!(record["counters_unavailable"], why.trim());
    assert!(!record["deep_pass"].is_null(), "{record}");
    let report = read_json(&dir.join("report.json"));
    assert_eq!(report["sampling"]["engine"], "ncu");
    let measured = report["sampling"]["measured_results"].as_u64().unwrap();
    assert!(measured > 0, "{}", report["sampling"]);
    let notes = report["notes"].to_string();
    assert!(
        notes.contains("The in-process counters collected nothing"),
        "{notes}"
    );

    // ncu's deep pass crashes: the trace's times stand, and the note says so.
    let tmp = tempfile::tempdir().unwrap();
    let out = counters_unavailable_run(tmp.path(), &["pipeline.ncu.sampling.deep_engine=auto"])
        .env("FAKE_NCU_DEEP_MODE", "crash")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(4), "a deep pass that failed");
    let report = read_json(&tmp.path().join("runs/run/report.json"));
    let notes = report["notes"].to_string();
    assert!(
        notes.contains("did not end well, so the report has the trace's times alone"),
        "{notes}"
    );

    let tmp = tempfile::tempdir().unwrap();
    let engine = "pipeline.ncu.sampling.deep_engine=in_process";
    counters_unavailable_run(
        tmp.path(),
        &[engine, "pipeline.ncu.sampling.graph_kernels=unmeasured"],
    )
    .assert()
    .success();
    let argv = std::fs::read_to_string(tmp.path().join("argv.log")).unwrap_or_default();
    assert!(argv.is_empty(), "in_process: ncu never runs: {argv}");
    let dir = tmp.path().join("runs/run");
    let record = read_json(&dir.join("run.json"));
    assert_eq!(record["deep_engine"], "in-process (CUPTI Range Profiler)");
    assert!(record["counters_unavailable"].is_null(), "{record}");
    let report = read_json(&dir.join("report.json"));
    assert_eq!(report["sampling"]["measured_results"], 0);
    let notes = report["notes"].to_string();
    assert!(
        notes.contains("could not collect every counter")
            && notes.contains("sm__no_such_counter.sum")
            && notes.contains("No launch was profiled in process"),
        "{notes}"
    );
}

/// `--dry-run`'s output for a traced sampled run with deep engine `engine`.
fn dry_run(tmp: &Path, engine: &str) -> String {
    let out = Command::cargo_bin("profile-run")
        .unwrap()
        .args(["--dry-run", "--config", "ncu/trace"])
        .args(ncu_overrides(tmp))
        .arg(format!("pipeline.ncu.sampling.deep_engine={engine}"))
        .arg("--")
        .arg(repo().join("tests/support/fake-traced-workload"))
        .assert()
        .success();
    String::from_utf8_lossy(&out.get_output().stdout).into_owned()
}

#[test]
fn ncus_deep_engine_keeps_the_second_launch_under_ncu() {
    let tmp = tempfile::tempdir().unwrap();
    let text = dry_run(tmp.path(), "ncu");
    assert!(text.contains("# ncu's deep pass"), "{text}");
    assert!(!text.contains("PROFILE_RUN_DEEP_METRICS"), "{text}");
}

#[test]
fn the_dry_run_shows_the_metrics_the_trace_pass_collects_and_no_ncu_pass() {
    let tmp = tempfile::tempdir().unwrap();
    let text = dry_run(tmp.path(), "in_process");
    // No ncu pass but the one for CUDA graph kernels, made only if the trace finds some.
    assert!(!text.contains("# ncu's deep pass\n"), "{text}");
    assert!(
        text.contains("# ncu's deep pass for kernels inside CUDA graphs\n# only if"),
        "{text}"
    );
    assert!(text.contains("PROFILE_RUN_DEEP_METRICS="), "{text}");
    assert!(
        text.contains("the trace pass collects the deep metrics in process")
            && text.contains("launch(es) 0 of each launch key")
            && text.contains("runs of digits folded"),
        "{text}"
    );
    assert!(
        text.contains("launch__grid_size") && text.contains("not measured in process"),
        "the launch attributes it cannot count are named: {text}"
    );
    // Only `auto` turns to ncu where the counters cannot run.
    let instead = "# ncu's deep pass where the counters cannot run\n# only if no traced process";
    assert!(!text.contains(instead), "{text}");
    let text = dry_run(tmp.path(), "auto");
    assert!(!text.contains("is not found here"), "{text}");
    let after = text
        .split(instead)
        .nth(1)
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        after.contains("per-launch-config"),
        "the deep pass's command follows: {text}"
    );
}

/// Without an ncu to start, `--dry-run` says that a run whose counters cannot run keeps the trace's
/// times alone.
#[test]
fn the_dry_run_says_what_a_missing_ncu_leaves_where_the_counters_cannot_run() {
    let tmp = tempfile::tempdir().unwrap();
    let out = Command::cargo_bin("profile-run")
        .unwrap()
        .args(["--dry-run", "--config", "ncu/trace"])
        .args(ncu_overrides(tmp.path()))
        .arg("pipeline.ncu.sampling.deep_engine=auto")
        .arg(format!(
            "pipeline.ncu.executable={}",
            tmp.path().join("no-ncu").display()
        ))
        .arg("--")
        .arg(repo().join("tests/support/fake-traced-workload"))
        .assert()
        .success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert!(
        text.contains(
            "no-ncu is not found here: the run would warn and keep the trace's times alone"
        ),
        "{text}"
    );
}

/// The passes of the in-process metrics on each GPU `nvidia-smi` names (a fake one here), by
/// CUPTI's host API where a libcupti loads, else why not, naming the libcupti set.
#[test]
fn the_dry_run_counts_the_replay_passes_on_each_local_gpu() {
    let tmp = tempfile::tempdir().unwrap();
    let bin = tmp.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let smi = bin.join("nvidia-smi");
    std::fs::write(
        &smi,
        "#!/bin/sh\nprintf '0, GPU-a, NVIDIA H200\\n1, GPU-b, NVIDIA H200\\n2, GPU-c, NVIDIA GeForce RTX 4090\\n'\n",
    )
    .unwrap();
    std::fs::set_permissions(&smi, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    let missing = tmp.path().join("no-such-libcupti.so");
    let out = Command::cargo_bin("profile-run")
        .unwrap()
        .env("PATH", path)
        .env_remove("CUDA_VISIBLE_DEVICES")
        .args(["--dry-run", "--config", "ncu/trace"])
        .args(ncu_overrides(tmp.path()))
        .arg("pipeline.ncu.sampling.deep_engine=in_process")
        .arg(format!("pipeline.ncu.trace.libcupti={}", missing.display()))
        .arg("--")
        .arg(repo().join("tests/support/fake-traced-workload"))
        .assert()
        .success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    let line = text
        .lines()
        .skip_while(|l| *l != "# the in-process metrics' replay passes")
        .nth(1)
        .unwrap_or_else(|| panic!("no passes line: {text}"));
    assert_eq!(
        line.matches("NVIDIA H200 (GH100): ").count(),
        1,
        "each GPU once: {line}"
    );
    assert!(
        line.contains("NVIDIA GeForce RTX 4090 (?): a chip profile-run does not know"),
        "{line}"
    );
    let not_counted = line.contains("GH100): not counted");
    let looked = format!("{} ($PROFILE_RUN_LIBCUPTI)", missing.display());
    assert!(
        !line.contains("could not load libcupti") || line.contains(&looked),
        "where no libcupti loads, the one set is among the places looked: {line}"
    );
    assert!(
        !not_counted || line.contains("), by CUPTI's host API"),
        "a count not made says why: {line}"
    );
    assert!(
        !not_counted
            || line.contains(
                "this count alone: in the run the counters use the workload's own libcupti"
            ),
        "and that the run itself does not depend on it: {line}"
    );
    assert!(not_counted || line.contains(" passes, "), "{line}");
}

#[test]
fn in_process_without_the_trace_is_refused_before_anything_runs() {
    let tmp = tempfile::tempdir().unwrap();
    Command::cargo_bin("profile-run")
        .unwrap()
        .args(["--dry-run", "--config", "ncu/sampled"])
        .args(ncu_overrides(tmp.path()))
        .args([
            "pipeline.ncu.timing=ncu",
            "pipeline.ncu.sampling.deep_engine=in_process",
        ])
        .args(["--", "python3", "train.py"])
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains("deep_engine is `in_process`")
                .and(predicate::str::contains("pipeline.ncu.timing=trace")),
        );
    Command::cargo_bin("profile-run")
        .unwrap()
        .args(["--dry-run", "--config", "ncu/trace"])
        .args(ncu_overrides(tmp.path()))
        .args([
            "pipeline.ncu.sampling.deep_engine=in_process",
            "report.sections=[time, launch]",
        ])
        .args(["--", "python3", "train.py"])
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains("launch__grid_size")
                .and(predicate::str::contains("deep_engine=ncu")),
        );
}

/// The injection library's variables a user sets in the shell to debug a traced run are the traced
/// process's and never taken for profile-run settings; a misspelt one still is, and refused.
#[test]
fn the_librarys_variables_in_the_shell_are_not_settings() {
    let tmp = tempfile::tempdir().unwrap();
    let dry_run = |name: &str| {
        let mut cmd = Command::cargo_bin("profile-run").unwrap();
        cmd.env(name, "1")
            .args(["--dry-run", "--config", "ncu/trace"])
            .args(ncu_overrides(tmp.path()))
            .arg("--")
            .arg(repo().join("tests/support/fake-traced-workload"));
        cmd.assert()
    };
    dry_run("PROFILE_RUN_DEEP_DEBUG").success();
    dry_run("PROFILE_RUN_DEEP_GRAPHS").success();
    // The run's own settings make these: one left in the shell would act behind them.
    dry_run("PROFILE_RUN_DEEP_METRICS")
        .code(2)
        .stderr(predicate::str::contains("unknown key `deep_metrics`"));
    dry_run("PROFILE_RUN_DEEP_DEBGU")
        .code(2)
        .stderr(predicate::str::contains(
            "unknown key `deep_debgu` in env PROFILE_RUN_DEEP_DEBGU",
        ));
}
