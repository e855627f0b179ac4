//! The capture/view builders, the inspect environment, NEFF/NTFF discovery and input recognition, on temp
//! directories and against tests/support/fake-neuron-explorer.

use std::ffi::OsStr;
use std::fs;
use std::path::{Path, PathBuf};

use profile_run::profiler::neuron::capture::cli::{
    capture_outputs, resolve_program, view_output, NeuronCli, ViewInput,
};
use profile_run::profiler::neuron::capture::inspect::{discover, inspect_env};
use profile_run::profiler::neuron::capture::pipeline::{
    DeviceProfile, Framework, InspectOptions, NeuronPipeline, ViewFormat,
};
use profile_run::profiler::neuron::{load, recognise, InputKind, NeuronError};

use super::decoder_json;
use super::parquet_gen::{generate, GenOptions};
use crate::common::{fixture, repo};

fn fake() -> PathBuf {
    repo().join("tests/support/fake-neuron-explorer")
}

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

#[test]
fn capture_argv_profiles_the_second_execution() {
    let mut p = NeuronPipeline::default();
    let cli = NeuronCli::capture(
        Path::new("neuron-explorer"),
        &p,
        Path::new("model.neff"),
        Path::new("out/profile.ntff"),
    );
    assert_eq!(
        cli.argv(),
        strings(&[
            "capture",
            "-n",
            "model.neff",
            "-s",
            "out/profile.ntff",
            "--profile-nth-exec",
            "2"
        ])
    );
    p.capture.num_exec = Some(5);
    p.capture.workers_per_node = Some(2);
    p.capture.worker_count = Some(4);
    p.capture.ignore_exec_errors = true;
    p.capture.extra_args = strings(&["--flag with space"]);
    let cli = NeuronCli::capture(
        Path::new("neuron-explorer"),
        &p,
        Path::new("m.neff"),
        Path::new("p.ntff"),
    );
    assert_eq!(
        cli.argv(),
        strings(&[
            "capture",
            "-n",
            "m.neff",
            "-s",
            "p.ntff",
            "--profile-nth-exec",
            "2",
            "--num-exec",
            "5",
            "-r",
            "2",
            "--collectives-worker-count",
            "4",
            "--ignore-exec-errors",
            "--flag with space",
        ])
    );
    assert!(
        cli.shell_line()
            .ends_with("--ignore-exec-errors '--flag with space'"),
        "{}",
        cli.shell_line()
    );
    assert_eq!(
        capture_outputs(Path::new("out/profile.ntff"), Some(2), Some(2)),
        [
            PathBuf::from("out/profile_rank_0_exec_2.ntff"),
            PathBuf::from("out/profile_rank_1_exec_2.ntff")
        ]
    );
    assert_eq!(
        capture_outputs(Path::new("out/p.ntff"), Some(2), None),
        [PathBuf::from("out/p_exec_2.ntff")]
    );
    assert_eq!(
        capture_outputs(Path::new("out/p.ntff"), None, Some(1)),
        [PathBuf::from("out/p.ntff")]
    );
}

#[test]
fn view_argv_and_environment() {
    let p = NeuronPipeline::default();
    let input = ViewInput::Pair {
        neff: "a.neff".into(),
        ntff: "a.ntff".into(),
    };
    let home = Some(OsStr::new("/home/u"));
    let cli = NeuronCli::view(
        Path::new("neuron-explorer"),
        &p,
        &input,
        ViewFormat::SummaryJson,
        Path::new("s.json"),
        home,
        Some(OsStr::new("/usr/bin")),
    )
    .unwrap();
    assert_eq!(
        cli.argv(),
        strings(&[
            "view",
            "-n",
            "a.neff",
            "-s",
            "a.ntff",
            "--output-format",
            "summary-json",
            "--output-file",
            "s.json"
        ])
    );
    assert_eq!(cli.env()[0], ("HOME".into(), "/home/u".into()));
    // the tools call each other from /opt/aws/neuron/bin
    assert_eq!(
        cli.env()[1],
        ("PATH".into(), "/usr/bin:/opt/aws/neuron/bin".into())
    );
    let session = ViewInput::Session("sess".into());
    let cli = NeuronCli::view(
        Path::new("x"),
        &p,
        &session,
        ViewFormat::Parquet,
        Path::new("o"),
        home,
        None,
    )
    .unwrap();
    assert_eq!(cli.argv()[..3], strings(&["view", "-d", "sess"]));
    let err = NeuronCli::view(
        Path::new("x"),
        &p,
        &session,
        ViewFormat::Json,
        Path::new("o"),
        None,
        None,
    )
    .unwrap_err();
    assert!(matches!(err, NeuronError::NoHome));
}

fn install(dir: &Path, name: &str) {
    fs::copy(fake(), dir.join(name)).unwrap();
}

#[test]
fn the_program_falls_back_to_neuron_profile() {
    let tmp = tempfile::tempdir().unwrap();
    let p = NeuronPipeline::default();
    let path = tmp.path().as_os_str();
    assert!(matches!(
        resolve_program(&p, Some(path)),
        Err(NeuronError::ToolNotFound { .. })
    ));
    install(tmp.path(), "neuron-profile");
    assert_eq!(
        resolve_program(&p, Some(path)).unwrap(),
        tmp.path().join("neuron-profile")
    );
    install(tmp.path(), "neuron-explorer");
    assert_eq!(
        resolve_program(&p, Some(path)).unwrap(),
        tmp.path().join("neuron-explorer")
    );
}

#[test]
fn capture_then_view_against_the_fake_tool() {
    let tmp = tempfile::tempdir().unwrap();
    let bin = tmp.path().join("bin");
    fs::create_dir(&bin).unwrap();
    install(&bin, "neuron-profile");
    let log = tmp.path().join("argv.log");
    let neff = tmp.path().join("model.neff");
    fs::write(&neff, "neff").unwrap();
    let mut p = NeuronPipeline::default();
    p.capture.workers_per_node = Some(2);
    let program = resolve_program(&p, Some(bin.as_os_str())).unwrap();
    // the fake needs the usual tools; view appends /opt/aws/neuron/bin to this PATH
    let path = std::env::var_os("PATH");

    let session = tmp.path().join("profile.ntff");
    let cap = NeuronCli::capture(&program, &p, &neff, &session);
    cap.expression()
        .env("FAKE_NEURON_ARGV_LOG", &log)
        .stdout_null()
        .run()
        .unwrap();
    let ntffs = capture_outputs(
        &session,
        p.capture.profile_nth_exec,
        p.capture.workers_per_node,
    );
    assert!(ntffs.iter().all(|f| f.is_file()), "{ntffs:?}");

    let input = ViewInput::Pair {
        neff: neff.clone(),
        ntff: ntffs[1].clone(),
    };
    let out = tmp.path().join(ViewFormat::Json.file_name("rank1"));
    let view = NeuronCli::view(
        &program,
        &p,
        &input,
        ViewFormat::Json,
        &out,
        Some(tmp.path().as_os_str()),
        path.as_deref(),
    )
    .unwrap();
    // installed outside the repository, the fake is told where the fixtures are
    view.expression()
        .env("FAKE_NEURON_FIXTURES", fixture("neuron"))
        .env("FAKE_NEURON_ARGV_LOG", &log)
        .stdout_null()
        .run()
        .unwrap();
    assert_eq!(recognise(&out).unwrap(), InputKind::ProfileJson);
    assert_eq!(load(&out).unwrap().instructions.len(), 44);

    let logged = fs::read_to_string(&log).unwrap();
    let runs: Vec<&str> = logged
        .split("--END--\n")
        .filter(|s| !s.is_empty())
        .collect();
    assert_eq!(runs.len(), 2);
    assert!(
        runs[0].starts_with("capture\n-n\n") && runs[0].contains("--profile-nth-exec\n2\n-r\n2\n")
    );
    assert!(runs[1].contains(&format!("-s\n{}\n", ntffs[1].display())));
    assert!(runs[1].contains(&format!("HOME={}\n", tmp.path().display())));

    parquet_views_are_found_and_read(&program, &p, &input, tmp.path(), path.as_deref());
}

/// A Parquet view of `input`: the fake copies a generated directory, found where the tool wrote it
/// and read.
fn parquet_views_are_found_and_read(
    program: &Path,
    p: &NeuronPipeline,
    input: &ViewInput,
    tmp: &Path,
    path: Option<&OsStr>,
) {
    // Parquet: the fake copies a generated directory; recognised by content and read.
    let pq = tmp.join("generated@latest");
    generate(&decoder_json(), &pq, &GenOptions::default());
    let out = tmp
        .join("view-out")
        .join(ViewFormat::Parquet.file_name("rank1"));
    fs::create_dir_all(out.parent().unwrap()).unwrap();
    let view = NeuronCli::view(
        program,
        p,
        input,
        ViewFormat::Parquet,
        &out,
        Some(tmp.as_os_str()),
        path,
    )
    .unwrap();
    view.expression()
        .env("FAKE_NEURON_PARQUET", &pq)
        .stdout_null()
        .run()
        .unwrap();
    let written = view_output(&out).unwrap();
    assert_eq!(written, out);
    assert_eq!(
        recognise(&written).unwrap(),
        InputKind::ParquetDir(out.clone())
    );
    assert_eq!(load(&written).unwrap().collectives.len(), 8);

    // Should the tool name the directory `<OUT>@latest` itself, the output is still found.
    fs::remove_dir_all(&out).unwrap();
    view.expression()
        .env("FAKE_NEURON_PARQUET", &pq)
        .env("FAKE_NEURON_APPEND_LATEST", "1")
        .stdout_null()
        .run()
        .unwrap();
    let written = view_output(&out).unwrap();
    assert_eq!(written, tmp.join("view-out/rank1@latest"));
    assert_eq!(
        recognise(out.parent().unwrap()).unwrap(),
        InputKind::ParquetDir(written.clone())
    );
    assert_eq!(load(&written).unwrap().instructions.len(), 44);
}

#[test]
fn inspect_environment_for_pytorch_and_jax() {
    let opts = InspectOptions::default();
    let plan = inspect_env(&opts, Path::new("/runs/r1/neuron"));
    let env: Vec<(&str, &str)> = plan
        .env
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    assert_eq!(
        env,
        [
            ("NEURON_RT_INSPECT_ENABLE", "1"),
            ("NEURON_RT_INSPECT_DEVICE_PROFILE", "1"),
            ("NEURON_RT_INSPECT_OUTPUT_DIR", "/runs/r1/neuron"),
            ("XLA_IR_DEBUG", "1"),
            ("XLA_HLO_DEBUG", "1"),
            ("NEURON_FRAMEWORK_DEBUG", "1"),
        ]
    );
    assert!(plan.warnings.is_empty());
    let opts = InspectOptions {
        framework: Framework::Jax,
        device_profile: DeviceProfile::Session,
        system_profile: true,
        event_filter_nc: Some("0,1".into()),
        event_filter_type: None,
        debug_info: false,
        nki_debug: false,
    };
    let plan = inspect_env(&opts, Path::new("out"));
    let keys: Vec<&str> = plan.env.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(
        keys,
        [
            "NEURON_RT_INSPECT_OUTPUT_DIR",
            "NEURON_RT_INSPECT_SYSTEM_PROFILE",
            "NEURON_RT_INSPECT_EVENT_FILTER_NC"
        ]
    );
    assert!(plan.warnings[0].contains("jax.profiler.trace"));
}

fn touch(p: &Path) {
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(p, "x").unwrap();
}

#[test]
fn discovery_pairs_neff_and_ntff_by_hash_per_process() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let p1 = d.join("i-0a1b2c3d4e5f_pid_4242");
    touch(&p1.join("neff_7cf2c3ef.neff"));
    touch(&p1.join("7cf2c3ef_instid_0_vnc_1.ntff"));
    touch(&p1.join("7cf2c3ef_instid_0_vnc_0.ntff"));
    let p2 = d.join("i-0a1b2c3d4e5f_pid_4243").join("20261122T234000");
    touch(&p2.join("neff_91d04b7e.neff"));
    touch(&p2.join("91d04b7e_instid_0_vnc_0.ntff"));
    touch(&p2.join("deadbeef_instid_0_vnc_0.ntff")); // its NEFF is missing
    touch(&d.join("notes.txt"));
    touch(&d.join("unrelated").join("7cf2c3ef_instid_0_vnc_0.ntff"));
    let found = discover(d).unwrap();
    let got: Vec<(u32, Option<&str>, &str, u32)> = found
        .pairs
        .iter()
        .map(|p| (p.pid, p.timestamp.as_deref(), p.hash.as_str(), p.vnc))
        .collect();
    assert_eq!(
        got,
        [
            (4242, None, "7cf2c3ef", 0),
            (4242, None, "7cf2c3ef", 1),
            (4243, Some("20261122T234000"), "91d04b7e", 0)
        ]
    );
    assert_eq!(found.pairs[0].instance_id, "i-0a1b2c3d4e5f");
    assert_eq!(found.pairs[2].neff, p2.join("neff_91d04b7e.neff"));
    assert_eq!(found.unpaired, [p2.join("deadbeef_instid_0_vnc_0.ntff")]);
    assert_eq!(recognise(d).unwrap(), InputKind::InspectDir);
}

#[test]
fn inputs_are_recognised_by_content_not_extension() {
    let tmp = tempfile::tempdir().unwrap();
    let copy = |src: &str, name: &str| {
        let to = tmp.path().join(name);
        fs::copy(fixture(src), &to).unwrap();
        to
    };
    assert_eq!(
        recognise(&copy("neuron/llama_tp_decoder.json", "a.txt")).unwrap(),
        InputKind::ProfileJson
    );
    assert_eq!(
        recognise(&copy("neuron/summary_two_subgraphs.json", "b.out")).unwrap(),
        InputKind::SummaryJson
    );
    assert_eq!(
        recognise(&copy("neuron/summary.txt", "c.json")).unwrap(),
        InputKind::SummaryText
    );
    assert_eq!(
        recognise(&copy("neuron/mismatch.json", "d")).unwrap(),
        InputKind::ProfileJson
    );
    assert!(matches!(
        load(&tmp.path().join("d")),
        Err(NeuronError::NeffMismatch { .. })
    ));
    let summary = load(&tmp.path().join("c.json")).unwrap();
    assert_eq!(
        summary.summaries[0].get("dma_transfer_count"),
        Some(18935.0)
    );
    let ncu = copy("ncu/h100-2025.3.1/kreplay_raw.csv", "raw.json");
    let err = recognise(&ncu).unwrap_err().to_string();
    assert!(err.contains("not a Neuron profile"), "{err}");
}

#[test]
fn a_lone_ntff_says_it_needs_view() {
    let tmp = tempfile::tempdir().unwrap();
    let ntff = tmp.path().join("7cf2c3ef_instid_0_vnc_0.ntff");
    fs::write(&ntff, [0u8, 1, 2]).unwrap();
    let err = recognise(&ntff).unwrap_err().to_string();
    assert!(
        err.contains("neuron-explorer view -n NEFF -s NTFF"),
        "{err}"
    );
}
