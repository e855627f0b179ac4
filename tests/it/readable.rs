//! Numbers that are possible and reports that read the same everywhere, on real captures: regions
//! that overlap in time are marked and never dropped from the summary silently, every value carries
//! its own unit, report.md is plain text without HTML entities, table lines stay short (the full
//! text is in report.json), and a sampled run explains itself once.

use regex::Regex;

use crate::common::{fixture, render_fixture_copy};

/// Real captures whose report.md the checks read: kernel, range, multi-process, emit_nvtx,
/// start/end, sampled, Python stacks, a CSV of 362 results.
const CAPTURES: &[&str] = &[
    "ncu/h100-2025.3.1-pytorch/rep_kernel.ncu-rep.gz",
    "ncu/h100-2025.3.1-pytorch/rep_range.ncu-rep.gz",
    "ncu/h100-2025.3.1-pytorch/rep_multiproc.ncu-rep.gz",
    "ncu/h100-2025.3.1-pytorch/emit_nvtx.ncu-rep.gz",
    "ncu/h100-2025.3.1-pytorch/rep_start_end.ncu-rep.gz",
    "ncu/h100-2025.3.1-sampled/train.ncu-rep.gz",
    "ncu/h100-2025.3.1-gpt2/gpt2_pystack.ncu-rep.gz",
    "ncu/h200-2025.3.1/ovh_all_raw.csv",
];

fn report_md(rel: &str) -> (String, serde_json::Value) {
    let (_dir, out, json) = render_fixture_copy(rel, &[]);
    (
        std::fs::read_to_string(out.join("report.md")).unwrap(),
        json,
    )
}

#[test]
fn start_end_ranges_are_marked_as_overlapping_and_named_in_the_summary() {
    let (md, json) = report_md("ncu/h100-2025.3.1-pytorch/rep_start_end.ncu-rep.gz");
    // `epoch` and `phase` are start/end ranges beside the push/pop range `step`.
    for name in ["epoch", "phase"] {
        let row = md
            .lines()
            .find(|l| l.starts_with(&format!("| [{name}](")))
            .unwrap_or_else(|| panic!("no row for {name}"));
        assert!(row.contains("(start/end, overlaps)"), "{row}");
    }
    assert!(md.contains("need not add up to 100%"));
    let step = md.lines().find(|l| l.starts_with("| [step](")).unwrap();
    assert!(!step.contains("overlaps"), "{step}");
    // The summary lists self time of push/pop ranges only, and says where the others went.
    let summary = &json["scopes"][0]["summary"];
    let left_out: Vec<&str> = summary["overlapping_regions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["path"].as_str().unwrap())
        .collect();
    assert_eq!(left_out, ["epoch", "phase"]);
    assert!(md.contains(
        "Start/end ranges overlap the ranges above in time, so they are not in that list and their \
         shares do not add up with them: epoch (44.35 µs, 35.6% of the scope), phase (29.54 µs, \
         23.7% of the scope)."
    ));
}

#[test]
fn report_html_says_when_start_end_ranges_overlap_and_only_then() {
    let overlap = "their results are counted again in them";
    let (_dir, out, _) = render_fixture_copy(
        "ncu/h100-2025.3.1-pytorch/rep_start_end.ncu-rep.gz",
        &["report.outputs=[md, json, html]"],
    );
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(html.contains(overlap));
    // rep_kernel has push/pop ranges only: nothing to say.
    let (_dir, out, _) = render_fixture_copy(
        "ncu/h100-2025.3.1-pytorch/rep_kernel.ncu-rep.gz",
        &["report.outputs=[md, json, html]"],
    );
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(!html.contains(overlap));
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(!md.contains("start/end, overlaps"));
}

#[test]
fn report_md_of_real_captures_is_plain_text_with_units_on_every_value() {
    // A value shown as zero in a larger unit, or two different values both given as 0.00.
    let zero_in_large_unit = Regex::new(r"\b0\.00 (ms|s|µs)\b").unwrap();
    let entity = Regex::new(r"&(nbsp|lt|gt|amp|quot|#\d+);").unwrap();
    for rel in CAPTURES {
        let (md, _) = report_md(rel);
        assert!(!entity.is_match(&md), "{rel}: an HTML entity in report.md");
        assert!(
            !zero_in_large_unit.is_match(&md),
            "{rel}: {}",
            zero_in_large_unit.find(&md).unwrap().as_str()
        );
        for line in md.lines().filter(|l| l.starts_with('|')) {
            assert!(
                line.chars().count() <= 400,
                "{rel}: a table line of {} characters: {line}",
                line.chars().count()
            );
        }
    }
}

#[test]
fn per_result_statistics_carry_their_own_unit() {
    // Region A of rep_kernel: 245.66 µs in all, single results of 2.78–6.88 µs.
    let (md, _) = report_md("ncu/h100-2025.3.1-pytorch/rep_kernel.ncu-rep.gz");
    let row = md
        .lines()
        .find(|l| l.starts_with("| Duration | µs | 245.66 |"))
        .unwrap();
    assert!(row.ends_with("| 2.78 µs / 4.03 µs / 6.88 µs |"), "{row}");
    // The launch-overhead finding speaks the tables' units.
    assert!(md.contains("61 kernels averaging 4.03 µs each"));
}

#[test]
fn a_sampled_run_explains_itself_once() {
    // The timing pass is read with its deep twin beside it.
    let dir = tempfile::tempdir().unwrap();
    for name in ["train.ncu-rep.gz", "train.deep.ncu-rep.gz"] {
        std::fs::copy(
            fixture(&format!("ncu/h100-2025.3.1-sampled/{name}")),
            dir.path().join(name),
        )
        .unwrap();
    }
    let out = dir.path().join("out");
    assert_cmd::Command::cargo_bin("profile-run")
        .unwrap()
        .arg("report")
        .arg(dir.path().join("train.ncu-rep.gz"))
        .arg("--out")
        .arg(&out)
        .assert()
        .success();
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert_eq!(md.matches("come from the timing pass").count(), 1);
    assert_eq!(md.matches("come from the deep pass").count(), 1);
}

#[test]
fn what_saves_means_is_explained_once_however_many_scopes_and_regions() {
    // Two processes and their aggregate, each with regions and findings.
    let (md, _) = report_md("ncu/h100-2025.3.1-pytorch/rep_multiproc.ncu-rep.gz");
    assert_eq!(
        md.matches("**Saves**: an estimate of the time acting on a finding would save")
            .count(),
        1
    );
    assert!(md.matches("**What would save the most:**").count() >= 2);
    assert!(md.matches("**Insights** for this region").count() >= 4);
    assert!(!md.contains("Saves: the estimated time saved"));
    assert!(!md.contains("summed over the kernels the finding covers"));
}
