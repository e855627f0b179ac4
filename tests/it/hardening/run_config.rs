//! A recorded configuration is data: `report`, `merge` and `diff` of a run directory someone else
//! made take no program, argument, template, rules file or directory from its config.yaml. Each
//! recorded value left out is named on stderr, and `--trust-run-config` reads the file whole.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use assert_cmd::Command;

use super::{code_and_stderr, fake_ncu, read_json};
use crate::common::fixture;

/// A run directory as a stranger might hand it over: a real capture (`profile.ncu-rep`) and a
/// config.yaml that points the CSV reader's ncu at a script in the directory, the report template at
/// /etc/passwd and the rules at a private file. The script leaves `ran` beside the directory when
/// anything runs it.
struct Hostile {
    dir: tempfile::TempDir,
}

impl Hostile {
    fn new() -> Hostile {
        let dir = tempfile::tempdir().unwrap();
        let hostile = Hostile { dir };
        hostile.make_run(&hostile.run());
        std::fs::write(hostile.secret(), "TOPSECRET first line of a private file\n").unwrap();
        hostile
    }

    fn make_run(&self, run: &Path) {
        std::fs::create_dir_all(run).unwrap();
        let capture =
            std::fs::read(fixture("ncu/h100-2025.3.1-pytorch/rep_kernel.ncu-rep.gz")).unwrap();
        let mut plain = Vec::new();
        std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&capture[..]), &mut plain)
            .unwrap();
        std::fs::write(run.join("profile.ncu-rep"), plain).unwrap();
        let script = run.join("ncu");
        std::fs::write(
            &script,
            format!("#!/bin/sh\ntouch '{}'\nexit 1\n", self.marker().display()),
        )
        .unwrap();
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        let config = format!(
            "pipeline:\n  ncu:\n    executable: {}\n    reader: csv\n    export:\n      pages: [raw]\n\
             report:\n  template: /etc/passwd\n  rules: {}\n",
            script.display(),
            self.secret().display()
        );
        std::fs::write(run.join("config.yaml"), config).unwrap();
    }

    fn run(&self) -> PathBuf {
        self.dir.path().join("run")
    }

    fn marker(&self) -> PathBuf {
        self.dir.path().join("ran")
    }

    fn secret(&self) -> PathBuf {
        self.dir.path().join("secret.yaml")
    }

    fn out(&self) -> PathBuf {
        self.dir.path().join("out")
    }
}

fn profile_run() -> Command {
    Command::cargo_bin("profile-run").unwrap()
}

#[test]
fn report_of_a_run_directory_runs_no_program_and_reads_no_file_its_config_names() {
    let hostile = Hostile::new();
    let ncu = format!("pipeline.ncu.executable={}", fake_ncu().display());
    for command in ["report", "merge"] {
        let out = hostile.out().join(command);
        let (code, stderr) = code_and_stderr(
            profile_run()
                .arg(command)
                .arg(hostile.run())
                .arg("--out")
                .arg(&out)
                .arg(&ncu),
        );
        assert_eq!(code, 0, "{command}: {stderr}");
        assert!(!hostile.marker().exists(), "{command}: the script ran");
        // Each ignored value is named, with the way to set it.
        for key in [
            "records pipeline.ncu.executable: ",
            "records report.template: /etc/passwd",
            "records report.rules: ",
        ] {
            assert!(stderr.contains(key), "{command}: {key}: {stderr}");
        }
        assert!(stderr.contains("--trust-run-config"), "{stderr}");
        assert!(!stderr.contains("TOPSECRET"), "{stderr}");
        let md = std::fs::read_to_string(out.join("report.md")).unwrap();
        assert!(!md.contains("root:"), "/etc/passwd copied into report.md");
        // The data keys still apply: the recorded reader exported the capture with the fake ncu.
        assert_eq!(
            read_json(&out.join("report.json"))["scopes"][0]["regions"][0]["kernel_count"],
            6
        );
        // Exported under --out, never into the run directory read.
        assert!(out.join("export_raw.csv").is_file());
        assert!(!hostile.run().join("export_raw.csv").exists());
    }
}

#[test]
fn without_an_ncu_of_the_users_own_the_recorded_one_is_still_not_run() {
    let hostile = Hostile::new();
    let (code, stderr) = code_and_stderr(
        profile_run()
            .arg("report")
            .arg(hostile.run())
            .arg("--out")
            .arg(hostile.out())
            .env("PATH", "/usr/bin:/bin"),
    );
    assert_eq!(code, 3, "ncu not found: {stderr}");
    assert!(!hostile.marker().exists(), "the script ran");
    assert!(
        stderr.contains("records pipeline.ncu.executable"),
        "{stderr}"
    );
}

/// A run the user named (`output.run_name=...`) re-renders without a note about that name: it is
/// left out like every place to write, but no reading command uses it. A recorded `output.root`
/// still gets its note.
#[test]
fn a_recorded_run_name_is_left_out_without_a_note() {
    let hostile = Hostile::new();
    let config = hostile.run().join("config.yaml");
    let mut text = std::fs::read_to_string(&config).unwrap();
    text.push_str("output:\n  run_name: my-run\n  root: /somewhere/else\n");
    std::fs::write(&config, text).unwrap();
    let (code, stderr) = code_and_stderr(
        profile_run()
            .arg("report")
            .arg(hostile.run())
            .arg("--out")
            .arg(hostile.out())
            .arg(format!("pipeline.ncu.executable={}", fake_ncu().display())),
    );
    assert_eq!(code, 0, "{stderr}");
    assert!(!stderr.contains("output.run_name"), "{stderr}");
    assert!(
        stderr.contains("records output.root: /somewhere/else"),
        "{stderr}"
    );
    assert!(hostile.out().join("report.md").is_file());
}

#[test]
fn trust_run_config_reads_the_recorded_configuration_whole() {
    let hostile = Hostile::new();
    let (code, stderr) = code_and_stderr(
        profile_run()
            .args(["report", "--trust-run-config"])
            .arg(hostile.run())
            .arg("--out")
            .arg(hostile.out()),
    );
    // The recorded rules file is read (and is no rules file), so the command fails before any
    // program starts.
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("report.rules"), "{stderr}");
    assert!(!stderr.contains("records "), "nothing is ignored: {stderr}");
    // Rules put right on the command line: the recorded ncu is the one run.
    let (code, stderr) = code_and_stderr(
        profile_run()
            .args(["report", "--trust-run-config", "report.rules=null"])
            .arg(hostile.run())
            .arg("--out")
            .arg(hostile.out()),
    );
    assert_ne!(code, 0, "{stderr}");
    assert!(hostile.marker().exists(), "the recorded executable ran");
}

#[test]
fn a_value_the_user_sets_again_is_used_and_not_reported_as_ignored() {
    let hostile = Hostile::new();
    let preset = hostile.dir.path().join("mine.yaml");
    std::fs::write(
        &preset,
        format!(
            "pipeline:\n  ncu:\n    executable: {}\n",
            fake_ncu().display()
        ),
    )
    .unwrap();
    let (code, stderr) = code_and_stderr(
        profile_run()
            .arg("report")
            .arg("--config")
            .arg(&preset)
            .arg(hostile.run())
            .arg("--out")
            .arg(hostile.out()),
    );
    assert_eq!(code, 0, "{stderr}");
    assert!(!hostile.marker().exists());
    // The user's preset set the executable: the recorded one is still left out and named, since it
    // differs from the one used; the template and rules likewise.
    assert!(
        stderr.contains("records pipeline.ncu.executable"),
        "{stderr}"
    );
    // A recorded value equal to the one used is not noise on stderr.
    std::fs::write(
        hostile.run().join("config.yaml"),
        "pipeline:\n  ncu:\n    executable: ncu\n",
    )
    .unwrap();
    let (code, stderr) = code_and_stderr(
        profile_run()
            .arg("report")
            .arg(hostile.run())
            .arg("--out")
            .arg(hostile.dir.path().join("again")),
    );
    assert_eq!(code, 0, "{stderr}");
    assert!(!stderr.contains("records "), "{stderr}");
}

#[test]
fn diff_of_hostile_run_directories_runs_nothing_they_name() {
    let hostile = Hostile::new();
    let other = hostile.dir.path().join("other");
    hostile.make_run(&other);
    // The user's own configuration reads captures through CSV pages, with the user's ncu.
    let mine = hostile.dir.path().join("mine.yaml");
    std::fs::write(
        &mine,
        format!(
            "pipeline:\n  ncu:\n    executable: {}\n    reader: csv\n    export:\n      pages: [raw]\n",
            fake_ncu().display()
        ),
    )
    .unwrap();
    let (code, stderr) = code_and_stderr(
        profile_run()
            .arg("diff")
            .arg("--config")
            .arg(&mine)
            .arg(hostile.run())
            .arg(&other),
    );
    assert_eq!(code, 0, "{stderr}");
    assert!(!hostile.marker().exists(), "the script ran");
    assert!(!stderr.contains("TOPSECRET"), "{stderr}");
    for run in [hostile.run(), other] {
        assert!(
            !run.join("report.md").exists(),
            "no report written into the run"
        );
        assert!(
            !run.join("export_raw.csv").exists(),
            "no export written into the run"
        );
    }
}

#[test]
fn a_recorded_config_that_is_a_link_is_refused_without_quoting_what_it_points_at() {
    let hostile = Hostile::new();
    // A one-line private file: read as YAML it is a string, which an error would quote.
    std::fs::write(hostile.secret(), "TOPSECRET-token\n").unwrap();
    let config = hostile.run().join("config.yaml");
    std::fs::remove_file(&config).unwrap();
    std::os::unix::fs::symlink(hostile.secret(), &config).unwrap();
    let (code, stderr) = code_and_stderr(
        profile_run()
            .arg("report")
            .arg(hostile.run())
            .arg("--out")
            .arg(hostile.out()),
    );
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains(
            "config.yaml: is a symbolic link, not the configuration profile-run recorded"
        ) && stderr.contains("--trust-run-config"),
        "{stderr}"
    );
    assert!(!stderr.contains("TOPSECRET"), "{stderr}");
    assert!(!hostile.out().exists(), "nothing written");
}

#[test]
fn a_neuron_runs_list_of_views_names_nothing_outside_its_directory() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    std::fs::create_dir_all(&run).unwrap();
    std::fs::write(dir.path().join("secret.json"), "{\"TOPSECRET\": 1}").unwrap();
    for output in ["../secret.json", "/etc/passwd"] {
        let manifest = serde_json::json!({"profiles": [{
            "label": "x", "rank": null, "process_id": null, "device": null,
            "output": output, "command": []
        }]});
        std::fs::write(run.join("neuron-views.json"), manifest.to_string()).unwrap();
        let (code, stderr) = code_and_stderr(
            profile_run()
                .arg("report")
                .arg(&run)
                .arg("--out")
                .arg(dir.path().join("out")),
        );
        assert_eq!(code, 2, "{stderr}");
        assert!(
            stderr.contains(&format!(
                "lists `{output}`, which is not inside the run directory"
            )),
            "{stderr}"
        );
        assert!(
            !stderr.contains("TOPSECRET") && !stderr.contains("root:"),
            "{stderr}"
        );
    }
}

/// A run directory whose config.yaml raises every limit on what is read: a 300-level stack is still
/// refused at the user's limit (256), each raised limit named as left out; the user's own override
/// raises it.
#[test]
fn a_recorded_config_cannot_raise_a_limit() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    std::fs::create_dir(&run).unwrap();
    std::fs::write(
        run.join("export_raw.csv"),
        super::limits::deep_stack_export(300),
    )
    .unwrap();
    std::fs::write(
        run.join("config.yaml"),
        "regions:\n  max_depth: 100000\npipeline:\n  ncu:\n    max_block_mib: 100000\n    max_export_mib: 100000\n    trace:\n      max_mib: 100000\n",
    )
    .unwrap();
    let report = |extra: &[&str]| {
        code_and_stderr(
            profile_run()
                .current_dir(tmp.path())
                .args(["report", "run", "--out", "o"])
                .args(extra),
        )
    };
    let (code, stderr) = report(&[]);
    assert_eq!(code, 5, "{stderr}");
    assert!(
        stderr.contains("300 levels deep, past regions.max_depth (256)"),
        "{stderr}"
    );
    for key in [
        "regions.max_depth: 100000",
        "pipeline.ncu.max_block_mib: 100000",
        "pipeline.ncu.max_export_mib: 100000",
        "pipeline.ncu.trace.max_mib: 100000",
    ] {
        assert!(
            stderr.contains(&format!("run/config.yaml records {key} (a limit on"))
                && stderr.contains("limits come from your own configuration"),
            "{key}: {stderr}"
        );
    }
    let (code, stderr) = report(&["regions.max_depth=400"]);
    assert_eq!(code, 0, "{stderr}");
}
