//! A report directory's claim (`.profile-run.lock`) is held once, everywhere: liveness is an OS lock
//! on the file, not a process id, so a takeover is atomic and a holder in another PID namespace or on
//! another host is respected; a claim nobody holds (empty, junk, a recycled pid) never locks a
//! directory for good; a claim that is a FIFO, a device or a link is refused, never read or hung on.

use std::path::Path;
use std::time::{Duration, Instant};

use super::read_json;
use crate::common::{fixture, refused_as_claimed};

const CLAIM: &str = ".profile-run.lock";
const MANUAL: &str = "ncu/h200-2025.3.1/manual_raw.csv";

/// `profile-run report MANUAL --out OUT ARGS…`, failed after 20 s instead of hanging.
fn report_into(out: &Path, args: &[&str]) -> (i32, String) {
    let started = Instant::now();
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("profile-run"))
        .arg("report")
        .arg(fixture(MANUAL))
        .arg("--out")
        .arg(out)
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > Duration::from_secs(20) {
            child.kill().unwrap();
            panic!("profile-run report --out {} {args:?} hung", out.display());
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let output = child.wait_with_output().unwrap();
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// A claim file as another writer would leave it, locked by this test process for as long as the
/// returned file is open: a writer in another container or on another host, as far as profile-run
/// can tell.
fn held_claim(out: &Path, text: &str) -> std::fs::File {
    std::fs::create_dir_all(out).unwrap();
    std::fs::write(out.join(CLAIM), text).unwrap();
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(out.join(CLAIM))
        .unwrap();
    file.try_lock().unwrap();
    file
}

#[test]
fn a_held_claim_is_refused_naming_its_host_and_pid_even_with_force() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    // pid 1 of another host: alive or not here means nothing; the lock says it is held.
    let holder = held_claim(&out, "pid 1 on node-b\n");
    for args in [&[][..], &["--force"][..]] {
        let (code, stderr) = report_into(&out, args);
        assert_eq!(code, 2, "{args:?}: {stderr}");
        assert!(
            stderr.contains("another profile-run (pid 1 on node-b) is writing a report into"),
            "{stderr}"
        );
        assert!(!out.join("report.md").exists(), "nothing written");
    }
    // Once its holder lets go (exits, is killed), the claim is taken over.
    drop(holder);
    let (code, stderr) = report_into(&out, &["--force"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("took over the claim"), "{stderr}");
    assert!(stderr.contains("pid 1 on node-b"), "{stderr}");
    assert!(!out.join(CLAIM).exists());
}

#[test]
fn empty_junk_and_recycled_pid_claims_never_lock_a_directory_for_good() {
    let dir = tempfile::tempdir().unwrap();
    // The test process is alive: its pid in a claim nobody holds is a recycled pid.
    let recycled = format!("{}\n", std::process::id());
    for (i, text) in ["", "\u{1b}[31mjunk\u{7}\0\n", &recycled]
        .iter()
        .enumerate()
    {
        let out = dir.path().join(format!("out{i}"));
        std::fs::create_dir_all(&out).unwrap();
        std::fs::write(out.join(CLAIM), text).unwrap();
        let (code, stderr) = report_into(&out, &[]);
        assert_eq!(code, 0, "{text:?}: {stderr}");
        assert!(!stderr.contains('\u{1b}'), "control characters kept out");
        assert!(out.join("report.md").is_file());
        assert!(!out.join(CLAIM).exists());
    }
}

#[test]
fn a_claim_that_is_a_fifo_a_device_or_a_link_is_refused_not_read() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo");
    std::fs::create_dir_all(&fifo).unwrap();
    nix::unistd::mkfifo(&fifo.join(CLAIM), nix::sys::stat::Mode::S_IRWXU).unwrap();
    let (code, stderr) = report_into(&fifo, &["--force"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("is a FIFO") && stderr.contains("remove it"),
        "{stderr}"
    );
    let link = dir.path().join("link");
    std::fs::create_dir_all(&link).unwrap();
    std::os::unix::fs::symlink("/dev/zero", link.join(CLAIM)).unwrap();
    let (code, stderr) = report_into(&link, &["--force"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("is a symbolic link"), "{stderr}");
    // /dev/zero itself, as a device node in the directory (needs the right to make one: root).
    let device = dir.path().join("device");
    std::fs::create_dir_all(&device).unwrap();
    let made = nix::sys::stat::mknod(
        &device.join(CLAIM),
        nix::sys::stat::SFlag::S_IFCHR,
        nix::sys::stat::Mode::S_IRUSR | nix::sys::stat::Mode::S_IWUSR,
        nix::sys::stat::makedev(1, 5),
    );
    if made.is_ok() {
        let (code, stderr) = report_into(&device, &["--force"]);
        assert_eq!(code, 2, "{stderr}");
        assert!(stderr.contains("is a device"), "{stderr}");
    }
}

/// `count` writers started together on `out`, each `report MANUAL --out OUT ARGS…`.
fn racing(out: &Path, count: usize) -> Vec<(i32, String)> {
    let children: Vec<_> = (0..count)
        .map(|_| {
            std::process::Command::new(assert_cmd::cargo::cargo_bin("profile-run"))
                .arg("report")
                .arg(fixture(MANUAL))
                .arg("--out")
                .arg(out)
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    children
        .into_iter()
        .map(|child| {
            let output = child.wait_with_output().unwrap();
            (
                output.status.code().unwrap_or(-1),
                String::from_utf8_lossy(&output.stderr).into_owned(),
            )
        })
        .collect()
}

#[test]
fn forty_racing_takeovers_of_a_dead_writers_claim_never_make_two_holders() {
    // Without --force a writer that holds the claim writes only into a directory with no report,
    // so two holders at once would show as two writers that both succeeded.
    let dir = tempfile::tempdir().unwrap();
    for trial in 0..40 {
        let out = dir.path().join(format!("trial{trial}"));
        std::fs::create_dir_all(&out).unwrap();
        std::fs::write(out.join(CLAIM), "pid 999999 on a-killed-writer\n").unwrap();
        let results = racing(&out, 3);
        let winners = results.iter().filter(|(code, _)| *code == 0).count();
        assert_eq!(winners, 1, "trial {trial}: {results:?}");
        for (code, stderr) in &results {
            assert!(
                *code == 0
                    || (*code == 2
                        && (refused_as_claimed(stderr)
                            || stderr.contains("already exists and is not replaced")
                            || stderr.contains("holds an earlier report"))),
                "trial {trial}: {code}: {stderr}"
            );
        }
        read_json(&out.join("report.json"));
        assert!(!out.join(CLAIM).exists(), "trial {trial}");
    }
}
