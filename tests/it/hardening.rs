//! Hardening: bad exports, fuzzed input, hostile names, profiler faults, interrupts, atomic outputs,
//! configuration mistakes, shell metacharacters, CUPTI traces of hostile shapes, and run directories from strangers (a recorded
//! configuration is data, nothing leaves `--out`, a claim is held once). Each case checks what the user sees (message and
//! exit code) and that nothing is lost or written where it should not be. docs/reliability.md lists
//! every case with its outcome.

mod bad_exports;
mod claims;
mod config_cli;
mod confinement;
mod faults;
mod fuzz;
mod fuzz_diff;
mod fuzz_trace;
mod hostile_names;
mod input_files;
mod kinds_notes;
mod limits;
mod outputs;
mod partial_runs;
mod report_outputs;
mod run_config;
mod streams_signals;
mod traces;

use std::path::{Path, PathBuf};

use assert_cmd::Command;

use crate::common::{fixture, repo};

/// The real kernel-replay export most cases start from: header, units row, six `decode` kernels.
pub const FIXTURE: &str = "ncu/h100-2025.3.1/kreplay_raw.csv";

/// Overrides that read captures through ncu's CSV pages (`pipeline.ncu.reader=csv`), for the cases about
/// that path: the fake ncu exports [`FIXTURE`] for every report file.
pub const CSV_READER: [&str; 2] = [
    "pipeline.ncu.reader=csv",
    "pipeline.ncu.export.pages=[raw,details]",
];

pub fn fixture_bytes() -> Vec<u8> {
    std::fs::read(fixture(FIXTURE)).unwrap()
}

/// The fixture as records: header, units row, results.
pub fn fixture_records() -> Vec<Vec<String>> {
    csv::ReaderBuilder::new()
        .has_headers(false)
        .from_path(fixture(FIXTURE))
        .unwrap()
        .records()
        .map(|r| r.unwrap().iter().map(String::from).collect())
        .collect()
}

/// Records as ncu writes them: every field quoted, `\n` line ends.
pub fn to_csv(records: &[Vec<String>]) -> Vec<u8> {
    let mut writer = csv::WriterBuilder::new()
        .quote_style(csv::QuoteStyle::Always)
        .flexible(true)
        .from_writer(Vec::new());
    for record in records {
        writer.write_record(record).unwrap();
    }
    writer.into_inner().unwrap()
}

pub fn column(records: &[Vec<String>], name: &str) -> usize {
    records[0].iter().position(|h| h == name).unwrap()
}

pub fn fake_ncu() -> PathBuf {
    repo().join("tests/support/fake-ncu")
}

pub fn read_json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Names of the entries of a directory, sorted.
pub fn entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// What `profile-run report` did with one export.
pub struct Rendered {
    pub code: i32,
    pub stderr: String,
    pub dir: tempfile::TempDir,
}

impl Rendered {
    pub fn out(&self) -> PathBuf {
        self.dir.path().join("out")
    }

    pub fn json(&self) -> serde_json::Value {
        read_json(&self.out().join("report.json"))
    }

    pub fn markdown(&self) -> String {
        std::fs::read_to_string(self.out().join("report.md")).unwrap()
    }
}

/// Writes `bytes` to `export.csv` in a fresh directory and runs `profile-run report export.csv
/// --out out ARGS…` there.
pub fn report_on(bytes: &[u8], args: &[&str]) -> Rendered {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("export.csv"), bytes).unwrap();
    let output = Command::cargo_bin("profile-run")
        .unwrap()
        .current_dir(dir.path())
        .args(["report", "export.csv", "--out", "out"])
        .args(args)
        .output()
        .unwrap();
    Rendered {
        code: output.status.code().unwrap_or(-1),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        dir,
    }
}

/// A private output root and argv log for profile runs against the fake ncu.
pub struct Workspace {
    pub dir: tempfile::TempDir,
}

impl Workspace {
    pub fn new() -> Workspace {
        Workspace {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    pub fn root(&self) -> PathBuf {
        self.dir.path().join("out")
    }

    pub fn argv_log(&self) -> PathBuf {
        self.dir.path().join("argv.log")
    }

    /// `profile-run` with the fake ncu (or `ncu`) and this workspace's output root.
    pub fn std_cmd_with(&self, ncu: &Path) -> std::process::Command {
        let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("profile-run"));
        cmd.current_dir(self.dir.path())
            .env("FAKE_NCU_ARGV_LOG", self.argv_log())
            .env_remove("FAKE_NCU_MODE")
            .arg(format!("pipeline.ncu.executable={}", ncu.display()))
            .arg(format!("output.root={}", self.root().display()));
        cmd
    }

    pub fn cmd(&self) -> Command {
        Command::from_std(self.std_cmd_with(&fake_ncu()))
    }

    pub fn cmd_with(&self, ncu: &Path) -> Command {
        Command::from_std(self.std_cmd_with(ncu))
    }

    pub fn run_dirs(&self) -> Vec<PathBuf> {
        entries(&self.root())
            .into_iter()
            .map(|name| self.root().join(name))
            .collect()
    }

    /// The argv of every profile (not import) invocation of the fake ncu.
    pub fn profile_argvs(&self) -> Vec<Vec<String>> {
        let text = std::fs::read_to_string(self.argv_log()).unwrap_or_default();
        text.split("--END--\n")
            .map(|block| block.lines().map(String::from).collect::<Vec<_>>())
            .filter(|args| !args.is_empty() && args[0] != "--import")
            .collect()
    }
}

/// Runs an assert_cmd command and returns (exit code, stderr).
pub fn code_and_stderr(cmd: &mut Command) -> (i32, String) {
    let output = cmd.output().unwrap();
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}
