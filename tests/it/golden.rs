//! report.json of real GPU captures, byte for byte against the files kept in tests/it/golden/:
//! refactors of the readers, the spine, the region core or the renderers must leave every number,
//! region and note of these reports as it was. A change that means to alter a report re-blesses
//! them (`GOLDEN_BLESS=1 cargo test --test it golden`) and the diff shows in review.

use assert_cmd::Command;

use crate::common::repo;

/// (golden file, capture, overrides): CSV and report-file readers, kernel, range and
/// multi-process captures, emit_nvtx names merged by the PyTorch preset, a sampled capture, and a
/// Neuron profile.
const CASES: &[(&str, &str, &[&str])] = &[
    (
        "manual_raw",
        "tests/fixtures/ncu/h200-2025.3.1/manual_raw.csv",
        &[],
    ),
    (
        "rep_kernel",
        "tests/fixtures/ncu/h100-2025.3.1-pytorch/rep_kernel.ncu-rep.gz",
        &[],
    ),
    (
        "rep_range",
        "tests/fixtures/ncu/h100-2025.3.1-pytorch/rep_range.ncu-rep.gz",
        &[],
    ),
    (
        "rep_multiproc",
        "tests/fixtures/ncu/h100-2025.3.1-pytorch/rep_multiproc.ncu-rep.gz",
        &[],
    ),
    (
        "emit_nvtx_pytorch",
        "tests/fixtures/ncu/h100-2025.3.1-pytorch/emit_nvtx.ncu-rep.gz",
        &["--config", "ncu/pytorch", "regions.include=[step]"],
    ),
    (
        "sampled_train",
        "tests/fixtures/ncu/h100-2025.3.1-sampled/train.ncu-rep.gz",
        &[],
    ),
    (
        "neuron_llama",
        "tests/fixtures/neuron/llama_tp_decoder.json",
        &[],
    ),
];

#[test]
fn report_json_of_real_captures_is_unchanged() {
    let bless = std::env::var_os("GOLDEN_BLESS").is_some();
    let tmp = tempfile::tempdir().unwrap();
    let mut changed = Vec::new();
    for (name, capture, overrides) in CASES {
        let out = tmp.path().join(name);
        Command::cargo_bin("profile-run")
            .unwrap()
            .current_dir(repo())
            .args(["report", capture, "--out"])
            .arg(&out)
            .args(*overrides)
            .assert()
            .success();
        let written = std::fs::read_to_string(out.join("report.json")).unwrap();
        let golden = repo().join(format!("tests/it/golden/{name}.report.json"));
        if bless {
            std::fs::write(&golden, &written).unwrap();
            continue;
        }
        let kept = std::fs::read_to_string(&golden)
            .unwrap_or_else(|e| panic!("{}: {e}; bless it first", golden.display()));
        if kept != written {
            let line = kept
                .lines()
                .zip(written.lines())
                .position(|(a, b)| a != b)
                .map_or(kept.lines().count().min(written.lines().count()), |l| l);
            changed.push(format!(
                "{name}: first difference at line {}:\n  kept:    {}\n  written: {}",
                line + 1,
                kept.lines().nth(line).unwrap_or("<end>"),
                written.lines().nth(line).unwrap_or("<end>")
            ));
        }
    }
    assert!(
        changed.is_empty(),
        "report.json changed:\n{}",
        changed.join("\n")
    );
}
