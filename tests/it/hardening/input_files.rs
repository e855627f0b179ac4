//! Every file `report` and `diff` read from a run directory is checked before it is read: a trace
//! that links to `/dev/zero` or is a FIFO, a small `.trace.gz` that inflates past the limit, a
//! report.json that links to `/dev/zero` or is a FIFO, a sparse 3 GB `run.json`. Each is refused at
//! once naming the file; none hangs (every command runs under a timeout) or is read whole.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use assert_cmd::Command;

use crate::trace::trace_run;

fn profile_run(dir: &Path) -> Command {
    let mut cmd = Command::cargo_bin("profile-run").unwrap();
    cmd.current_dir(dir).timeout(Duration::from_secs(30));
    cmd
}

/// What stands where a file is expected (made at the path given).
type Make = fn(&Path);

fn mkfifo(path: &Path) {
    nix::unistd::mkfifo(path, nix::sys::stat::Mode::S_IRWXU).unwrap();
}

/// A traced run of the fake workload in `tmp/runs/run`, and its first trace file.
fn traced_run(tmp: &Path) -> (PathBuf, PathBuf) {
    trace_run(tmp, "gpt2", &["regions.include=[train_step]"])
        .assert()
        .success();
    let run = tmp.join("runs/run");
    let mut traces: Vec<PathBuf> = std::fs::read_dir(run.join("trace"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".trace"))
        .collect();
    traces.sort();
    (run, traces.remove(0))
}

fn code_and_stderr(cmd: &mut Command) -> (i32, String) {
    let output = cmd.output().unwrap();
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// `report RUN` and `diff RUN RUN` on a run directory whose trace was swapped for `make(trace)`:
/// both refuse it, naming the trace and `what` it is, within the timeout.
fn refused_by_report_and_diff(make: Make, what: &str) {
    let tmp = tempfile::tempdir().unwrap();
    let (run, trace) = traced_run(tmp.path());
    std::fs::remove_file(&trace).unwrap();
    make(&trace);
    // Without report.json `diff` analyses the capture, reading the traces as `report` does.
    std::fs::remove_file(run.join("report.json")).unwrap();
    let name = trace.file_name().unwrap().to_string_lossy().into_owned();
    let commands: [&[&str]; 2] = [
        &["report", "runs/run", "--out", "o"],
        &["diff", "runs/run", "runs/run"],
    ];
    for args in commands {
        let (code, stderr) = code_and_stderr(profile_run(tmp.path()).args(args));
        assert_ne!(code, 0, "{args:?}: {stderr}");
        assert!(
            stderr.contains(&name) && stderr.contains(what),
            "{args:?}: {stderr}"
        );
    }
    assert!(!tmp.path().join("o/report.json").exists());
}

#[test]
fn a_trace_that_links_to_dev_zero_is_refused_unread() {
    refused_by_report_and_diff(
        |trace| std::os::unix::fs::symlink("/dev/zero", trace).unwrap(),
        "is a symbolic link to /dev/zero, outside",
    );
}

#[test]
fn a_trace_that_is_a_fifo_is_refused_without_hanging() {
    refused_by_report_and_diff(mkfifo, "is a FIFO");
}

/// A trace that links to a file elsewhere (the user's own) is not read through the run directory.
#[test]
fn a_trace_that_links_out_of_the_run_directory_is_refused() {
    refused_by_report_and_diff(
        |trace| {
            let elsewhere = trace.parent().unwrap().join("../../../elsewhere.trace");
            std::fs::write(&elsewhere, "private\n").unwrap();
            std::os::unix::fs::symlink(&elsewhere, trace).unwrap();
        },
        "outside",
    );
}

/// 64 MiB of zeros in about 64 KiB of gzip: 64 members of 1 MiB each.
fn write_bomb(path: &Path) {
    let mut member = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    member.write_all(&vec![0u8; 1 << 20]).unwrap();
    let member = member.finish().unwrap();
    std::fs::write(path, member.repeat(64)).unwrap();
    assert!(std::fs::metadata(path).unwrap().len() < 1 << 17);
}

/// 64 MiB of zeros in a 64 KiB `.trace.gz` (64 gzip members of 1 MiB each): refused once 16 MiB
/// have come out (`pipeline.ncu.trace.max_mib=16`), not inflated whole.
#[test]
fn a_small_trace_gz_that_inflates_past_the_limit_is_refused_at_the_limit() {
    let tmp = tempfile::tempdir().unwrap();
    write_bomb(&tmp.path().join("cupti.7.trace.gz"));
    let (code, stderr) = code_and_stderr(profile_run(tmp.path()).args([
        "report",
        "-c",
        "ncu/trace",
        "cupti.7.trace.gz",
        "--out",
        "o",
        "pipeline.ncu.trace.max_mib=16",
    ]));
    assert_eq!(code, 5, "{stderr}");
    assert!(
        stderr.contains("cupti.7.trace.gz")
            && stderr.contains("inflates to more than 16777216 bytes")
            && stderr.contains("pipeline.ncu.trace.max_mib"),
        "{stderr}"
    );
}

/// A run directory holding only `report.json`, made by `make`; `diff` of it against itself.
fn diff_of_report_json(make: Make, what: &str) {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    std::fs::create_dir(&run).unwrap();
    make(&run.join("report.json"));
    let (code, stderr) = code_and_stderr(profile_run(tmp.path()).args(["diff", "run", "run"]));
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("run/report.json: ") && stderr.contains(what),
        "{stderr}"
    );
}

#[test]
fn diff_refuses_a_report_json_that_links_to_dev_zero() {
    diff_of_report_json(
        |at| std::os::unix::fs::symlink("/dev/zero", at).unwrap(),
        "is a symbolic link to /dev/zero, outside",
    );
}

#[test]
fn diff_refuses_a_report_json_that_is_a_fifo_without_hanging() {
    diff_of_report_json(mkfifo, "is a FIFO");
}

/// A sparse 3 GB `run.json` beside a real export: refused by its size, never read (under a 1 GiB
/// address-space limit, reading it whole would abort).
#[test]
fn a_sparse_3_gb_run_json_is_refused_by_its_size() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    std::fs::create_dir(&run).unwrap();
    std::fs::write(run.join("export_raw.csv"), super::fixture_bytes()).unwrap();
    let record = std::fs::File::create(run.join("run.json")).unwrap();
    record.set_len(3 << 30).unwrap();
    let bin = assert_cmd::cargo::cargo_bin("profile-run");
    let script = format!(
        "ulimit -v 1048576 && exec '{}' report run --out o {}",
        bin.display(),
        super::CSV_READER.join(" ")
    );
    let (code, stderr) = code_and_stderr(
        Command::new("sh")
            .current_dir(tmp.path())
            .timeout(Duration::from_secs(30))
            .args(["-c", &script]),
    );
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("run/run.json: holds 3221225472 bytes (at most 16777216 expected)"),
        "{stderr}"
    );
}

/// A Neuron run's list of views (`neuron-views.json`) that is a FIFO or a link to `/dev/zero`:
/// refused naming it, at once.
#[test]
fn a_neuron_runs_list_of_views_that_is_no_file_is_refused_without_hanging() {
    let makes: [(Make, &str); 2] = [
        (mkfifo, "is a FIFO"),
        (
            |at| std::os::unix::fs::symlink("/dev/zero", at).unwrap(),
            "is a symbolic link",
        ),
    ];
    for (make, what) in makes {
        let tmp = tempfile::tempdir().unwrap();
        let run = tmp.path().join("run");
        std::fs::create_dir(&run).unwrap();
        make(&run.join("neuron-views.json"));
        let (code, stderr) =
            code_and_stderr(profile_run(tmp.path()).args(["report", "run", "--out", "o"]));
        assert_eq!(code, 2, "{stderr}");
        assert!(
            stderr.contains("run/neuron-views.json: ") && stderr.contains(what),
            "{stderr}"
        );
    }
}

/// The same bomb as a `.csv.gz` export: refused once 16 MiB have been inflated
/// (`pipeline.ncu.max_export_mib=16`), the partial file removed.
#[test]
fn a_small_csv_gz_that_inflates_past_the_limit_is_refused_at_the_limit() {
    let tmp = tempfile::tempdir().unwrap();
    write_bomb(&tmp.path().join("x_raw.csv.gz"));
    let (code, stderr) = code_and_stderr(profile_run(tmp.path()).args([
        "report",
        "x_raw.csv.gz",
        "--out",
        "o",
        "pipeline.ncu.max_export_mib=16",
    ]));
    assert_eq!(code, 5, "{stderr}");
    assert!(
        stderr.contains("x_raw.csv.gz")
            && stderr.contains("inflates to more than 16777216 bytes")
            && stderr.contains("pipeline.ncu.max_export_mib"),
        "{stderr}"
    );
    assert!(!tmp.path().join("o/x_raw.csv").exists());
}
