//! Real PyTorch captures (tests/fixtures/ncu/h100-2025.3.1-pytorch): several threads' stacks in one
//! NVTX cell, per-call operator names and NCCL's never-popped range, each checked against a plain count
//! of the CSV rows.

use std::collections::BTreeMap;

use crate::common::analyze;
use profile_run::analysis::RunContext;
use profile_run::config::{load, Config, ConfigSources};
use profile_run::report::model::{Region, Report};

use crate::common::fixture;

const DIR: &str = "ncu/h100-2025.3.1-pytorch";

fn config(files: &[&str], overrides: &[&str]) -> Config {
    load(&ConfigSources {
        files: files.iter().map(|f| f.into()).collect(),
        overrides: overrides.iter().map(|s| s.to_string()).collect(),
        env: vec![],
    })
    .unwrap()
    .config
}

fn report(export: &str, files: &[&str], overrides: &[&str]) -> Report {
    let path = fixture(&format!("{DIR}/{export}"));
    analyze(&config(files, overrides), &[path], &RunContext::default()).unwrap()
}

fn by_path(report: &Report) -> BTreeMap<&str, &Region> {
    report.scopes[0]
        .regions
        .iter()
        .map(|r| (r.path.as_str(), r))
        .collect()
}

/// Result rows of a raw export whose push/pop cell mentions `text`, by a plain substring test.
fn rows_mentioning(export: &str, text: &str) -> u64 {
    let mut reader = csv::Reader::from_path(fixture(&format!("{DIR}/{export}"))).unwrap();
    let headers = reader.headers().unwrap().clone();
    let nvtx = headers
        .iter()
        .position(|h| h.contains("Push/Pop_Range"))
        .unwrap();
    reader
        .records()
        .skip(1) // units row
        .filter(|r| r.as_ref().unwrap()[nvtx].contains(text))
        .count() as u64
}

#[test]
fn the_users_range_keeps_every_kernel_of_both_threads() {
    // 38 results, every one under `step`; 18 of them were launched by the autograd thread, whose
    // ranges used to swallow `step` into names like `step:none:…" 6774  "…`.
    let report = report("emit_nvtx_raw.csv", &[], &["regions.include=[step]"]);
    let regions = by_path(&report);
    let step = regions["step"];
    assert_eq!(
        step.kernel_count,
        rows_mentioning("emit_nvtx_raw.csv", ":step:")
    );
    assert_eq!(step.kernel_count, 38);
    assert_eq!(report.scopes[0].total.kernel_count, 38);
    let autograd = rows_mentioning("emit_nvtx_raw.csv", "autograd::engine");
    assert!(autograd > 0);
    let nested_autograd: u64 = regions
        .values()
        .filter(|r| r.depth == 1 && r.name.starts_with("autograd::engine::evaluate_function"))
        .map(|r| r.kernel_count)
        .sum();
    assert_eq!(
        nested_autograd, autograd,
        "the autograd thread's ranges nest in `step`"
    );
}

#[test]
fn no_region_name_holds_a_quote_a_thread_id_or_empty_fields() {
    for export in [
        "emit_nvtx_raw.csv",
        "nccl_one_rank_raw.csv",
        "rep_pystack_raw.csv",
    ] {
        for overrides in [&[][..], &["regions.unrequested=show"][..]] {
            let report = report(export, &[], overrides);
            for region in &report.scopes[0].regions {
                for segment in &region.segments {
                    assert!(!segment.contains('"'), "{export}: {segment}");
                    assert!(!segment.contains(":none:"), "{export}: {segment}");
                    assert!(!segment.contains("  "), "{export}: {segment}");
                    assert!(
                        !segment.starts_with(|c: char| c.is_ascii_digit()),
                        "{export}: {segment}"
                    );
                }
            }
        }
    }
}

#[test]
fn the_pytorch_preset_merges_per_call_names_into_one_region_per_operator() {
    let plain = report("emit_nvtx_raw.csv", &[], &["regions.include=[step]"]);
    let merged = report(
        "emit_nvtx_raw.csv",
        &["ncu/pytorch"],
        &["regions.include=[step]"],
    );
    let regions = by_path(&merged);
    // Two `nn.Linear` calls per step, two steps, two kernels each (GEMM + split-K reduce).
    assert_eq!(regions["step/aten::linear"].kernel_count, 8);
    assert_eq!(
        regions["step/aten::linear/aten::addmm"].self_kernel_count,
        8
    );
    assert_eq!(
        regions["step/aten::linear"].kernel_count,
        rows_mentioning("emit_nvtx_raw.csv", ":aten::linear, seq = ")
    );
    assert!(merged.scopes[0].regions.len() < plain.scopes[0].regions.len());
    assert!(merged.scopes[0]
        .regions
        .iter()
        .all(|r| !r.path.contains("seq =") && !r.path.contains("op_id =")));
    // Merging renames regions, it never moves results between them.
    assert_eq!(
        regions["step"].kernel_count,
        by_path(&plain)["step"].kernel_count
    );
}

#[test]
fn nccls_never_popped_range_is_set_aside_with_a_note_unless_asked_for() {
    let report = report(
        "nccl_one_rank_raw.csv",
        &[],
        &["regions.include=[train_step]"],
    );
    let scope = &report.scopes[0];
    let paths: Vec<&str> = scope.regions.iter().map(|r| r.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            "train_step",
            "train_step/forward",
            "train_step/backward",
            "train_step/optimizer"
        ]
    );
    let nccl = rows_mentioning("nccl_one_rank_raw.csv", "NCCL:ncclCommInitRankConfig");
    assert_eq!(nccl, 34);
    let note = scope
        .notes
        .iter()
        .find(|n| n.contains("NCCL@ncclCommInitRankConfig"))
        .expect("a note names NCCL's range");
    assert!(
        note.contains("(34 results)") && note.contains("regions.unrequested=show"),
        "{note}"
    );

    let shown = report_shown();
    let regions: Vec<&str> = shown.scopes[0]
        .regions
        .iter()
        .map(|r| r.path.as_str())
        .collect();
    assert!(regions.contains(&"NCCL@ncclCommInitRankConfig"));
    assert!(shown.scopes[0]
        .notes
        .iter()
        .all(|n| !n.contains("left out")));
}

fn report_shown() -> Report {
    report(
        "nccl_one_rank_raw.csv",
        &[],
        &["regions.include=[train_step]", "regions.unrequested=show"],
    )
}

#[test]
fn without_an_include_every_range_stays() {
    let report = report("nccl_one_rank_raw.csv", &[], &[]);
    assert!(report.scopes[0]
        .regions
        .iter()
        .any(|r| r.path == "NCCL@ncclCommInitRankConfig"));
}
