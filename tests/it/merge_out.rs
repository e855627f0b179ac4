//! Where `merge` writes: under `--out`, or a fresh directory under `output.root`; never into the
//! run directories it reads (the four ranks of tests/fixtures/ncu/h200x4-cupti-straggle/ddp-per-rank).

use assert_cmd::Command;

use crate::common::{copy_tree, fixture};

#[test]
fn merge_without_out_writes_a_fresh_directory_and_leaves_its_inputs_as_they_were() {
    let tmp = tempfile::tempdir().unwrap();
    let job = tmp.path().join("job");
    copy_tree(&fixture("ncu/h200x4-cupti-straggle/ddp-per-rank"), &job);
    let listing = |dir: &std::path::Path| {
        let mut names: Vec<String> = walk(dir);
        names.sort();
        names
    };
    let before = listing(&job);
    let out = Command::cargo_bin("profile-run")
        .unwrap()
        .current_dir(tmp.path())
        .args(["merge", "job"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_eq!(listing(&job), before, "merge wrote into its input");
    let printed = std::path::PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    assert!(printed.ends_with("report.md"), "{printed:?}");
    let written = tmp.path().join(&printed);
    assert!(
        written.starts_with(tmp.path().join("profile-output")) && written.is_file(),
        "{written:?}"
    );
}

fn walk(dir: &std::path::Path) -> Vec<String> {
    let mut all = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            all.extend(walk(&path));
        } else {
            all.push(path.display().to_string());
        }
    }
    all
}
