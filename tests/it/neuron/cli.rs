//! The profile-run binary driving Neuron end to end: inspect and NEFF modes against
//! tests/support/fake-neuron-explorer (argv and environment checked, outputs from the fixtures),
//! `--dry-run` and the exit codes; report.json against docs/report.schema.json and the hand-computed
//! MLP values of tests/it/neuron/analysis.rs (shared with cli_report.rs).

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use serde_json::Value;

use crate::common::{fixture, repo};

/// The Region Highlighter's MLP blocks (AllReduce to AllReduce, stride 2, offset 1), as overrides.
pub(super) const MLP: &[&str] = &[
    "neuron.regions.collectives.name=MLP",
    "neuron.regions.collectives.op_type_1=AllReduce",
    "neuron.regions.collectives.op_type_2=AllReduce",
    "neuron.regions.collectives.stride=2",
    "neuron.regions.collectives.offset=1",
];

pub(super) struct Env {
    pub(super) dir: tempfile::TempDir,
}

impl Env {
    pub(super) fn new() -> Env {
        Env {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    pub(super) fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    /// profile-run with the fake tool, a private output root and the argument/environment logs.
    pub(super) fn cmd(&self, preset: &str) -> Command {
        let mut cmd = Command::cargo_bin("profile-run").unwrap();
        cmd.current_dir(self.dir.path())
            .env("HOME", self.dir.path())
            .env("FAKE_NEURON_ARGV_LOG", self.path("argv.log"))
            .env("FAKE_NEURON_ENV_LOG", self.path("env.log"))
            .env(
                "FAKE_NEURON_PARQUET",
                fixture("neuron/pyarrow_profile@latest"),
            )
            .args(["--config", preset])
            .arg(format!(
                "pipeline.neuron.executable={}",
                repo().join("tests/support/fake-neuron-explorer").display()
            ))
            .arg(format!("output.root={}", self.path("out").display()));
        cmd
    }

    pub(super) fn run_dir(&self) -> PathBuf {
        let mut dirs: Vec<PathBuf> = std::fs::read_dir(self.path("out"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        assert_eq!(dirs.len(), 1, "{dirs:?}");
        dirs.pop().unwrap()
    }

    /// Each invocation of the fake tool: its arguments, then `HOME=…`.
    pub(super) fn invocations(&self) -> Vec<Vec<String>> {
        std::fs::read_to_string(self.path("argv.log"))
            .unwrap_or_default()
            .split("--END--\n")
            .filter(|b| !b.is_empty())
            .map(|b| b.lines().map(String::from).collect())
            .collect()
    }
}

pub(super) fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

pub(super) fn report_json(dir: &Path) -> Value {
    let value: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("report.json")).unwrap()).unwrap();
    let (schemas, index) = crate::report_schema::schema();
    if let Err(e) = schemas.validate(&value, index) {
        panic!("report.json does not match docs/report.schema.json:\n{e:#}");
    }
    value
}

pub(super) fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

pub(super) fn metric(region: &Value, name: &str) -> f64 {
    region["inclusive"][name]["value"]
        .as_f64()
        .unwrap_or_else(|| panic!("{name} in {region}"))
}

pub(super) fn rules(v: &Value) -> Vec<String> {
    v["insights"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["rule"].as_str().unwrap().to_string())
        .collect()
}

/// The four MLP blocks of tests/fixtures/neuron/llama_tp_decoder.json, as analysis.rs computes them by
/// hand, in report units (ns, %).
pub(super) fn assert_mlp_scope(scope: &Value) {
    let regions = scope["regions"].as_array().unwrap();
    let names: Vec<&str> = regions
        .iter()
        .map(|r| r["path"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["MLP[0]", "MLP[1]", "MLP[2]", "MLP[3]"]);
    let r0 = &regions[0];
    assert_eq!(
        (r0["kind"].as_str(), r0["origin"].as_str()),
        (Some("mark"), Some("collectives"))
    );
    for (r, ns) in regions.iter().zip([38_000.0, 40_000.0, 38_000.0, 64_000.0]) {
        assert!(close(metric(r, "total_time"), ns), "{}", r["path"]);
        assert!(close(r["time_share"].as_f64().unwrap(), ns / 408_000.0));
    }
    assert!(close(
        metric(r0, "tensor_engine_active_time_percent"),
        100.0 * 28.0 / 38.0
    ));
    assert!(close(metric(r0, "dma_wait_percent"), 100.0 * 12.0 / 38.0));
    assert!(close(metric(r0, "hbm_read_bytes"), 10.0 * super::MIB));
    assert!(close(
        metric(r0, "mm_arithmetic_intensity"),
        1.4e9 / (11.0 * super::MIB)
    ));
    assert!(close(
        metric(r0, "dma_transfer_average_bytes"),
        2.5 * super::MIB
    ));
    assert_eq!(r0["inclusive"]["total_time"]["unit"], "ns");
    assert_eq!(
        rules(r0),
        ["dma_wait", "memory_bound", "low_mfu_while_active"]
    );
    assert_eq!(
        rules(&regions[3]),
        [
            "dma_wait",
            "memory_bound",
            "low_mfu_while_active",
            "slow_instance"
        ]
    );
    let dma = &r0["insights"][0];
    assert_eq!(dma["source"], "profile-run");
    assert_eq!(dma["message"], "Engines wait on DMA for 31.6% of the time");
    assert!(close(
        dma["evidence"]["metrics"]["dma_wait_percent"]
            .as_f64()
            .unwrap(),
        100.0 * 12.0 / 38.0 // evidence in the metric's report unit (%), as the tables show it
    ));
    // the whole profile's summary
    assert_eq!(
        rules(scope),
        [
            "memory_bound",
            "tensor_engine_underused",
            "low_mfu_while_active"
        ]
    );
    assert!(close(
        scope["total"]["metrics"]["total_time"]["value"]
            .as_f64()
            .unwrap(),
        408_000.0
    ));
    // durations 38, 40, 38, 64 µs: median 39, p90 56.8, outlier MLP[3]
    let d = &scope["distributions"][0];
    assert_eq!(
        (d["base"].as_str(), d["count"].as_u64()),
        (Some("MLP"), Some(4))
    );
    for (key, ns) in [
        ("min", 38_000.0),
        ("median", 39_000.0),
        ("p90", 56_800.0),
        ("max", 64_000.0),
    ] {
        assert!(close(d[key].as_f64().unwrap(), ns), "{key}");
    }
    let outliers: Vec<&str> = d["regions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["outlier"] == true)
        .map(|e| e["path"].as_str().unwrap())
        .collect();
    assert_eq!(outliers, ["MLP[3]"]);
}

#[test]
fn inspect_mode_runs_the_workload_views_each_core_and_reports() {
    let env = Env::new();
    env.cmd("neuron/default")
        .args(MLP)
        .args([
            "pipeline.neuron.view.format=json",
            "report.compare=[MLP[0], MLP[1], MLP[3]]",
            "--",
        ])
        .arg(repo().join("tests/support/fake-neuron-workload"))
        .arg("--steps=2")
        .assert()
        .success();
    let run = env.run_dir();
    let inspect = run.join("inspect");
    let workload_env = std::fs::read_to_string(env.path("env.log")).unwrap();
    let expected = format!(
        "NEURON_FRAMEWORK_DEBUG=1\nNEURON_RT_INSPECT_DEVICE_PROFILE=1\nNEURON_RT_INSPECT_ENABLE=1\n\
         NEURON_RT_INSPECT_OUTPUT_DIR={}\nXLA_HLO_DEBUG=1\nXLA_IR_DEBUG=1\n",
        inspect.display()
    );
    assert_eq!(workload_env, expected);
    let proc = inspect.join("i-0abc123_pid_4242");
    let calls = env.invocations();
    assert_eq!(calls.len(), 2, "{calls:?}");
    for (n, call) in calls.iter().enumerate() {
        let stem = format!("pid4242_7cf2c3ef_instid0_vnc{n}");
        let want = [
            "view".to_string(),
            "-n".into(),
            proc.join("neff_7cf2c3ef.neff").display().to_string(),
            "-s".into(),
            proc.join(format!("7cf2c3ef_instid_0_vnc_{n}.ntff"))
                .display()
                .to_string(),
            "--output-format".into(),
            "json".into(),
            "--output-file".into(),
            run.join("views")
                .join(format!("{stem}.json"))
                .display()
                .to_string(),
            format!("HOME={}", env.dir.path().display()),
        ];
        assert_eq!(call, &want);
    }
    let report = report_json(&run);
    assert_eq!(report["run"]["profiler"]["name"], "neuron-explorer");
    assert_eq!(
        report["run"]["profiler"]["version"],
        "2.29.18.0%kaena-tools/2.29@d5fe7ba"
    );
    assert_eq!(
        report["run"]["profiler"]["settings"]["method"],
        "collectives"
    );
    assert_eq!(report["run"]["profiler"]["settings"]["view_format"], "json");
    assert_eq!(report["run"]["command"][1], "--steps=2");
    let scopes = report["scopes"].as_array().unwrap();
    let labels: Vec<&str> = scopes
        .iter()
        .map(|s| s["label"].as_str().unwrap())
        .collect();
    assert_eq!(labels, ["pid 4242, NeuronCore 0", "pid 4242, NeuronCore 1"]);
    assert_eq!(scopes[1]["process_id"], 4242);
    assert_eq!(scopes[1]["device"], "NeuronCore 1");
    for scope in scopes {
        assert_mlp_scope(scope);
    }
    assert_mlp_blocks_compared(&report, &run);
    assert!(run.join("run.json").is_file() && run.join("neuron.log").is_file());
    assert!(std::fs::read_to_string(run.join("neuron.log"))
        .unwrap()
        .contains("training step 1"));

    // the run directory reports again, under another region method
    Command::cargo_bin("profile-run")
        .unwrap()
        .args(["report", "--force"])
        .arg(&run)
        .arg("neuron.regions.method=hierarchy")
        .assert()
        .success();
    let again = report_json(&run);
    let r = &again["scopes"][0]["regions"][1];
    assert_eq!(r["path"], "NeuronLlamaModel/NeuronLlamaDecoderLayer[1]");
    assert_eq!(
        (r["kind"].as_str(), r["origin"].as_str()),
        (Some("stack"), Some("hierarchy"))
    );
    assert_eq!(again["run"]["command"][1], "--steps=2");
}

/// report.compare of three MLP blocks, in report.json and report.md, with the blocks' distribution
/// and its outlier.
fn assert_mlp_blocks_compared(report: &Value, run: &Path) {
    // report.compare: the regions side by side, as for any profiler.
    let compared = &report["compare"][0];
    assert_eq!(compared["scope"], "pid 4242, NeuronCore 0");
    let paths: Vec<&str> = compared["regions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths, ["MLP[0]", "MLP[1]", "MLP[3]"]);
    for (r, ns) in compared["regions"]
        .as_array()
        .unwrap()
        .iter()
        .zip([38_000.0, 40_000.0, 64_000.0])
    {
        let total = &r["inclusive"]["total_time"];
        assert_eq!(total["unit"], "ns");
        assert!(close(total["value"].as_f64().unwrap(), ns), "{total}");
    }

    let md = std::fs::read_to_string(run.join("report.md")).unwrap();
    assert!(
        md.contains("| Metric | `MLP[0]` | `MLP[1]` | `MLP[3]` |"),
        "{md}"
    );
    assert!(
        md.contains("| Time | 38.00 µs | 40.00 µs | 64.00 µs |"),
        "{md}"
    );
    assert!(
        md.contains(
            "| MLP | 4 | 38.00 µs | 39.00 µs | 56.80 µs | 64.00 µs | MLP\\[3\\] (factor 1.5) |"
        ),
        "{md}"
    );
    assert!(
        md.contains("| **MLP\\[3\\]** (outlier) | MLP | 64.00 µs | 1.641× |"),
        "{md}"
    );
}

#[test]
fn neff_mode_captures_the_second_execution_then_views_it() {
    let env = Env::new();
    let neff = env.path("model.neff");
    std::fs::write(&neff, "fake neff").unwrap();
    env.cmd("neuron/neff")
        .args(MLP)
        .arg(format!("pipeline.neuron.neff={}", neff.display()))
        .assert()
        .success();
    let run = env.run_dir();
    let calls = env.invocations();
    let home = format!("HOME={}", env.dir.path().display());
    let capture = [
        "capture",
        "-n",
        &neff.display().to_string(),
        "-s",
        &run.join("profile.ntff").display().to_string(),
        "--profile-nth-exec",
        "2",
        &home,
    ];
    assert_eq!(calls[0], strings(&capture));
    let view = [
        "view",
        "-n",
        &neff.display().to_string(),
        "-s",
        &run.join("profile_exec_2.ntff").display().to_string(),
        "--output-format",
        "parquet",
        "--output-file",
        &run.join("views/profile_exec_2").display().to_string(),
        &home,
    ];
    assert_eq!(calls[1], strings(&view));
    assert_eq!(calls.len(), 2);
    // the pyarrow Parquet profile holds the same timeline as the JSON
    let report = report_json(&run);
    assert_eq!(
        report["run"]["profiler"]["settings"]["view_format"],
        "parquet"
    );
    assert_eq!(report["run"]["profiler_command"][1], "capture");
    let scope = &report["scopes"][0];
    let names: Vec<&str> = scope["regions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["path"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["MLP[0]", "MLP[1]", "MLP[2]", "MLP[3]"]);
    assert!(close(metric(&scope["regions"][3], "total_time"), 64_000.0));
    assert_eq!(
        rules(&scope["regions"][0]),
        ["dma_wait", "memory_bound", "low_mfu_while_active"]
    );
}

#[test]
fn dry_runs_print_the_commands_and_start_nothing() {
    let env = Env::new();
    // --dry-run checks that the script exists.
    std::fs::write(env.path("train.py"), "").unwrap();
    let out = env
        .cmd("neuron/default")
        .env("PATH", crate::common::path_with_python(&env.path("")))
        .args(["--dry-run", "--", "python", "train.py"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    let planned = text
        .lines()
        .last()
        .unwrap()
        .strip_prefix("run directory: ")
        .unwrap();
    let first = text.lines().next().unwrap();
    assert_eq!(
        first,
        format!(
            "NEURON_RT_INSPECT_ENABLE=1 NEURON_RT_INSPECT_DEVICE_PROFILE=1 NEURON_RT_INSPECT_OUTPUT_DIR={planned}/inspect XLA_IR_DEBUG=1 XLA_HLO_DEBUG=1 NEURON_FRAMEWORK_DEBUG=1 python train.py"
        )
    );
    assert!(
        text.contains("then, for each NEFF/NTFF pair written: "),
        "{text}"
    );
    assert!(text.contains(" view -n "), "{text}");
    assert!(
        text.contains("--output-format parquet --output-file"),
        "{text}"
    );

    let neff = env.path("model.neff");
    std::fs::write(&neff, "fake neff").unwrap();
    let out = env
        .cmd("neuron/neff")
        .arg(format!("pipeline.neuron.neff={}", neff.display()))
        .arg("--dry-run")
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    assert!(text.lines().next().unwrap().contains(&format!(
        "fake-neuron-explorer capture -n {} -s ",
        neff.display()
    )));
    assert!(text.contains("profile.ntff --profile-nth-exec 2"), "{text}");
    assert!(
        text.contains("profile_exec_2.ntff --output-format parquet"),
        "{text}"
    );
    assert!(!env.path("out").exists());
    assert!(env.invocations().is_empty());
}

fn fails_with(args: &[&str], code: i32, needles: &[&str]) {
    let env = Env::new();
    let output = env
        .cmd("neuron/default")
        .args(args)
        .assert()
        .code(code)
        .get_output()
        .clone();
    let stderr = String::from_utf8_lossy(&output.stderr);
    for needle in needles {
        assert!(stderr.contains(needle), "{needle:?} not in {stderr}");
    }
    assert!(
        !env.path("out").exists(),
        "nothing is created before the checks pass"
    );
}

#[test]
fn mistakes_exit_before_anything_starts() {
    fn with(extra: &str) -> Vec<&str> {
        vec![extra, "--", "python", "train.py"]
    }
    fails_with(
        &with("report.compare=[MLP[0], MLP[1], MLP[2], MLP[3]]"),
        2,
        &["report.compare names 4 regions", "at most 3"],
    );
    fails_with(
        &with("neuron.regions.method=layers"),
        2,
        &["neuron.regions.method", "layers"],
    );
    fails_with(
        &with("neuron.insights.rules=/nonexistent/rules.yaml"),
        2,
        &["neuron.insights.rules", "/nonexistent/rules.yaml"],
    );
    fails_with(
        &with("neuron.distribution.outlier_factor=0.5"),
        2,
        &["outlier_factor"],
    );
    fails_with(
        &["pipeline.neuron.mode=neff"],
        2,
        &["pipeline.neuron.neff is not set"],
    );
}

#[test]
fn a_missing_tool_is_exit_3_naming_both_names() {
    let env = Env::new();
    let output = env
        .cmd("neuron/default")
        .args([
            "pipeline.neuron.executable=no-such-neuron-explorer",
            "pipeline.neuron.fallback_executable=no-such-neuron-profile",
            "--",
            "python",
            "train.py",
        ])
        .assert()
        .code(3)
        .get_output()
        .clone();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("no-such-neuron-explorer, no-such-neuron-profile"),
        "{stderr}"
    );
    assert!(stderr.contains("pipeline.neuron.executable"), "{stderr}");
}

#[test]
fn a_failing_workload_is_exit_4_with_its_log() {
    let env = Env::new();
    let output = env
        .cmd("neuron/default")
        .env("FAKE_NEURON_EXIT", "7")
        .arg("--")
        .arg(repo().join("tests/support/fake-neuron-workload"))
        .assert()
        .code(4)
        .get_output()
        .clone();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("exit code 7"), "{stderr}");
    assert!(stderr.contains("training step 1"), "{stderr}");
    assert!(
        env.invocations().is_empty(),
        "nothing is viewed after a failed workload"
    );
    // In inspect mode the program run is the workload itself: its exit code is recorded as such.
    let text = std::fs::read_to_string(env.run_dir().join("run.json")).unwrap();
    let record: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(record["workload_exit_code"], 7);
    assert_eq!(record["workload_signal"], serde_json::Value::Null);
}

#[test]
fn a_workload_that_cannot_start_says_which_and_where_it_is_named() {
    let env = Env::new();
    let output = env
        .cmd("neuron/default")
        .args(["--", "no-such-workload-binary", "--flag"])
        .assert()
        .code(4)
        .get_output()
        .clone();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("starting `no-such-workload-binary` failed"),
        "{stderr}"
    );
    assert!(stderr.contains("check the command after `--`"), "{stderr}");
    assert!(!stderr.contains("pipeline.ncu"), "{stderr}");
}
