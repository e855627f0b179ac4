//! Inputs that are not regular files, fallbacks that used to be silent, and terminal control
//! sequences in names: FIFOs, devices and directories are refused by kind without opening them, every
//! sampled-run fallback gets a note, and ESC/BEL from names never reach the terminal raw.

use std::path::Path;
use std::time::{Duration, Instant};

use assert_cmd::Command;

use super::{code_and_stderr, column, fixture_records, to_csv};
use crate::common::fixture;

fn profile_run(dir: &Path) -> Command {
    let mut cmd = Command::cargo_bin("profile-run").unwrap();
    cmd.current_dir(dir).timeout(Duration::from_secs(20));
    cmd
}

fn mkfifo(path: &Path) {
    nix::unistd::mkfifo(path, nix::sys::stat::Mode::S_IRWXU).unwrap();
}

#[test]
fn a_fifo_or_a_device_input_is_refused_by_kind_without_hanging() {
    let dir = tempfile::tempdir().unwrap();
    mkfifo(&dir.path().join("export.csv"));
    // No extension: the Neuron reader, which sniffs content, looks at it before ncu's would.
    mkfifo(&dir.path().join("profile"));
    for (input, kind) in [
        ("/dev/zero", "/dev/zero is a character device"),
        ("export.csv", "export.csv is a FIFO (named pipe)"),
        ("profile", "profile is a FIFO (named pipe)"),
    ] {
        let started = Instant::now();
        let (code, stderr) =
            code_and_stderr(profile_run(dir.path()).args(["report", input, "--out", "out"]));
        assert_eq!(code, 2, "{input}: {stderr}");
        assert!(stderr.contains(kind), "{input}: {stderr}");
        assert!(!stderr.contains("does not exist"), "{stderr}");
        assert!(started.elapsed() < Duration::from_secs(10), "{input}");
    }
    // diff reads a report.json (or a capture) per side: the same refusal, not a hang.
    let report = fixture("ncu/h200-2025.3.1/manual_raw.csv");
    let (code, stderr) = code_and_stderr(
        profile_run(dir.path())
            .args(["report"])
            .arg(&report)
            .args(["--out", "a"]),
    );
    assert_eq!(code, 0, "{stderr}");
    let started = Instant::now();
    let (code, stderr) =
        code_and_stderr(profile_run(dir.path()).args(["diff", "a/report.json", "profile"]));
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("profile is a FIFO (named pipe)"),
        "{stderr}"
    );
    assert!(started.elapsed() < Duration::from_secs(10));
}

#[test]
fn a_fifo_config_file_or_run_record_is_refused_by_kind() {
    let dir = tempfile::tempdir().unwrap();
    mkfifo(&dir.path().join("preset.yaml"));
    let (code, stderr) = code_and_stderr(profile_run(dir.path()).args([
        "config",
        "show",
        "--config",
        "preset.yaml",
    ]));
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("config file `preset.yaml` is a FIFO (named pipe), not a YAML file"),
        "{stderr}"
    );
    std::fs::create_dir(dir.path().join("config-dir")).unwrap();
    let (code, stderr) =
        code_and_stderr(profile_run(dir.path()).args(["config", "show", "--config", "config-dir"]));
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("is a directory, not a YAML file"),
        "{stderr}"
    );

    // A run directory whose run.json is a FIFO: named, never opened.
    let run = dir.path().join("run");
    std::fs::create_dir(&run).unwrap();
    std::fs::copy(
        fixture("ncu/h100-2025.3.1/kreplay_raw.csv"),
        run.join("export_raw.csv"),
    )
    .unwrap();
    mkfifo(&run.join("run.json"));
    let (code, stderr) =
        code_and_stderr(profile_run(dir.path()).args(["report", "run", "--out", "out"]));
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("run.json: is a FIFO, not the run record"),
        "{stderr}"
    );
}

#[test]
fn a_deep_sibling_that_is_not_a_file_is_named_and_the_timing_pass_reported() {
    let timing_fixture = fixture("ncu/h100-2025.3.1-sampled/train.ncu-rep.gz");
    for (what, kind) in [
        ("fifo", "is a FIFO (named pipe)"),
        ("dir", "is a directory"),
        ("device", "is a character device"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        std::fs::copy(&timing_fixture, dir.path().join("train.ncu-rep.gz")).unwrap();
        let deep = dir.path().join("train.deep.ncu-rep.gz");
        match what {
            "fifo" => mkfifo(&deep),
            "dir" => std::fs::create_dir(&deep).unwrap(),
            _ => std::os::unix::fs::symlink("/dev/zero", &deep).unwrap(),
        }
        let output = profile_run(dir.path())
            .args(["report", "train.ncu-rep.gz", "--out", "out"])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(0), "{what}: {stderr}");
        assert!(
            stderr.contains(&format!("train.deep.ncu-rep.gz {kind}, not a report file"))
                && stderr.contains("reported from its timing pass alone"),
            "{what}: {stderr}"
        );
        let json = super::read_json(&dir.path().join("out/report.json"));
        assert_eq!(json["sampling"], serde_json::Value::Null, "{what}");
    }
}

#[test]
fn a_deep_capture_of_another_workload_gets_a_note_that_says_so() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        fixture("ncu/h100-2025.3.1-sampled/train.ncu-rep.gz"),
        dir.path().join("train.ncu-rep.gz"),
    )
    .unwrap();
    std::fs::copy(
        fixture("ncu/h100-2025.3.1-pytorch/rep_kernel.ncu-rep.gz"),
        dir.path().join("train.deep.ncu-rep.gz"),
    )
    .unwrap();
    let output = profile_run(dir.path())
        .args(["report", "train.ncu-rep.gz", "--out", "out"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
    // Said on stderr too: a CI log shows it without anyone opening the report.
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("note: The deep pass") && stderr.contains("matches none of the 54"),
        "{stderr}"
    );
    let json = super::read_json(&dir.path().join("out/report.json"));
    let notes: Vec<&str> = json["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect();
    assert!(
        notes
            .iter()
            .any(|n| n.contains("matches none of the 54 timing results")
                && n.contains("train.deep.ncu-rep.gz")
                && n.contains("another workload")),
        "{notes:#?}"
    );
}

/// The real export with its one range renamed `name`.
fn export_with_range(name: &str) -> Vec<u8> {
    let records = fixture_records();
    let push_pop = records[0]
        .iter()
        .position(|h| h.contains("Push/Pop_Range"))
        .unwrap();
    let kernel = column(&records, "Kernel Name");
    let mut row = records[2].clone();
    row[push_pop] = format!("1606  \"<default domain>:{name}:none:none:none:none:none:none\" ");
    row[kernel] = format!("kernel{name}");
    to_csv(&[records[0].clone(), records[1].clone(), row])
}

/// Two reports (`a`, `b`) in `dir` of an export with a range named `hostile`, and the diff table of
/// them on stdout.
fn diff_of_a_range_named(dir: &std::path::Path, hostile: &str) -> String {
    std::fs::write(dir.join("a.csv"), export_with_range(hostile)).unwrap();
    for out in ["a", "b"] {
        profile_run(dir)
            .args(["report", "a.csv", "--out", out])
            .assert()
            .success();
    }
    let output = profile_run(dir).args(["diff", "a", "b"]).output().unwrap();
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn escape_and_bell_from_names_and_arguments_never_reach_the_terminal_raw() {
    let dir = tempfile::tempdir().unwrap();
    // The diff table on stdout.
    let stdout = diff_of_a_range_named(dir.path(), "evil\u{1b}]0;pwned\u{7}\u{1b}[2J");
    assert!(
        stdout.contains("evil\\u{1b}]0;pwned\\u{7}\\u{1b}[2J"),
        "{stdout}"
    );
    assert!(!stdout.contains('\u{1b}') && !stdout.contains('\u{7}'));
    // An error quoting a hostile argument, and a note quoting a hostile pattern.
    let (code, stderr) = code_and_stderr(profile_run(dir.path()).args([
        "report",
        "no\u{1b}[31msuch\u{7}.csv",
        "--out",
        "o",
    ]));
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("no\\u{1b}[31msuch\\u{7}.csv"), "{stderr}");
    let output = profile_run(dir.path())
        .args(["report", "a.csv", "--out", "c"])
        // YAML's own escapes: the name holds ESC and BEL once parsed.
        .arg("report.compare=[\"x\\e[5m\\a\"]")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("note:") && stderr.contains("x\\u{1b}[5m\\u{7}"),
        "{stderr}"
    );
    for text in [&stderr, &String::from_utf8_lossy(&output.stdout)] {
        assert!(
            !text.contains('\u{1b}') && !text.contains('\u{7}'),
            "{text}"
        );
    }
}

#[test]
fn the_workloads_own_output_passes_through_as_it_is() {
    // Colours and carriage returns are the program's own (a progress bar, say): only what profile-run
    // itself says is escaped.
    let ws = super::Workspace::new();
    let output = ws
        .cmd()
        .args([
            "--",
            "sh",
            "-c",
            "printf '\\033[31mred\\033[0m 50%%\\r100%%\\n'",
        ])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("\u{1b}[31mred\u{1b}[0m 50%\r100%"),
        "{stderr}"
    );
}

/// A name with ESC and a bidi override (U+202E, which shows the rest of a line reversed): shown
/// escaped in the diff table and in report.md, never raw.
#[test]
fn a_bidi_override_in_a_name_reaches_neither_the_terminal_nor_report_md_raw() {
    let dir = tempfile::tempdir().unwrap();
    let stdout = diff_of_a_range_named(dir.path(), "step\u{202e}gnp.exe\u{1b}[2J");
    assert!(
        stdout.contains("step\\u{202e}gnp.exe\\u{1b}[2J"),
        "{stdout}"
    );
    let md = std::fs::read_to_string(dir.path().join("a/report.md")).unwrap();
    for text in [stdout.as_ref(), md.as_str()] {
        assert!(!text.contains('\u{202e}') && !text.contains('\u{1b}'));
    }
}
