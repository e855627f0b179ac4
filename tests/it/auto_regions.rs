//! Automatic regions (`regions.auto`) on real exports: each method gives the regions worked out by
//! hand below from the workload's source and the export's rows.

use std::collections::BTreeMap;

use profile_run::analysis::RunContext;
use profile_run::config::{load, ConfigSources};
use profile_run::report::model::Report;

use crate::common::{analyze, fixture};

fn report(export: &str, overrides: &[&str]) -> profile_run::error::Result<Report> {
    let config = load(&ConfigSources {
        files: vec![],
        overrides: overrides.iter().map(|s| s.to_string()).collect(),
        env: vec![],
    })?
    .config;
    analyze(&config, &[fixture(export)], &RunContext::default())
}

fn counts(report: &Report) -> BTreeMap<String, u64> {
    report.scopes[0]
        .regions
        .iter()
        .map(|r| (r.path.clone(), r.kernel_count))
        .collect()
}

#[test]
fn hierarchy_cuts_the_range_tree_at_a_depth_without_moving_results() {
    // train_step.py 4 2: train_step/{forward/layer0..3, backward, optimizer}, 64 results.
    let export = "ncu/h200-2025.3.1/train_process_raw.csv";
    let own = counts(&report(export, &[]).unwrap());
    let top = report(
        export,
        &["regions.auto.method=hierarchy", "regions.auto.depth=1"],
    )
    .unwrap();
    assert_eq!(
        counts(&top),
        BTreeMap::from([("train_step".to_string(), 64)])
    );
    assert!(top.scopes[0]
        .regions
        .iter()
        .all(|r| r.origin == "hierarchy"));
    let two = counts(
        &report(
            export,
            &["regions.auto.method=hierarchy", "regions.auto.depth=2"],
        )
        .unwrap(),
    );
    // Depth 2 keeps train_step and its children with their own counts; the layers fold into forward.
    let expected: BTreeMap<String, u64> = own
        .into_iter()
        .filter(|(path, _)| path.split('/').count() <= 2)
        .collect();
    assert_eq!(two, expected);
    assert_eq!(two["train_step/forward"], 20);
}

#[test]
fn collectives_cut_launch_order_into_segments_worked_out_by_hand() {
    // manual_nvtx_regions.py, kernel replay, 100 results in launch order: 24 elementwise kernels in A,
    // then 11 × (GEMM, ReLU) in A/A1, 4 more in A, 50 in B. Taking the GEMMs as the cuts (a stand-in
    // for collectives: no capture here has profiled NCCL kernels, see docs/attribution.md):
    // segment[0] = the 24 kernels before the first GEMM; segment[1..=10] = the ReLU after each of the
    // first ten GEMMs; segment[11] = the last ReLU + 4 + 50 = 55; `collectives` = the 11 GEMMs.
    let cuts = r#"regions.auto.collectives.kernels=["*gemm*", "*Kernel2*"]"#;
    let r = report(
        "ncu/h200-2025.3.1/manual_raw.csv",
        &["regions.auto.method=collectives", cuts],
    )
    .unwrap();
    let c = counts(&r);
    assert_eq!(c["segment[0]"], 24);
    for i in 1..=10 {
        assert_eq!(c[&format!("segment[{i}]")], 1, "segment[{i}]");
    }
    assert_eq!(c["segment[11]"], 55);
    assert_eq!(c["collectives"], 11);
    assert_eq!(c.len(), 13);
    assert_eq!(c.values().sum::<u64>(), r.scopes[0].total.kernel_count);
    assert!(r.scopes[0]
        .regions
        .iter()
        .all(|g| g.origin == "collectives"));

    // Named by position: skip the first cut, two cuts per segment, three segments.
    let r = report(
        "ncu/h200-2025.3.1/manual_raw.csv",
        &[
            "regions.auto.method=collectives",
            cuts,
            "regions.auto.collectives.name=MLP",
            "regions.auto.collectives.offset=1",
            "regions.auto.collectives.stride=2",
            "regions.auto.collectives.count=3",
        ],
    )
    .unwrap();
    let c = counts(&r);
    // After cut 1: ReLU 1 | cut 2 | ReLU 2 → MLP[0] = 2; MLP[1] = ReLUs 3, 4; MLP[2] = ReLUs 5, 6.
    assert_eq!(
        c,
        BTreeMap::from([
            ("MLP[0]".to_string(), 2),
            ("MLP[1]".to_string(), 2),
            ("MLP[2]".to_string(), 2),
            ("collectives".to_string(), 11),
        ])
    );
    assert_eq!(r.scopes[0].outside_regions.kernel_count, 100 - 11 - 6);
}

#[test]
fn segments_are_counted_per_process() {
    // Two processes run manual_nvtx_regions.py one after the other: each starts at segment[0].
    let cuts = r#"regions.auto.collectives.kernels=["*gemm*", "*Kernel2*"]"#;
    let r = report(
        "ncu/h200-2025.3.1/multiproc_raw.csv",
        &["regions.auto.method=collectives", cuts],
    )
    .unwrap();
    assert_eq!(r.scopes.len(), 2);
    for scope in &r.scopes {
        let first = scope
            .regions
            .iter()
            .find(|g| g.path == "segment[0]")
            .unwrap();
        assert_eq!(first.kernel_count, 24, "{}", scope.label);
    }
}

#[test]
fn stack_frames_without_call_stacks_say_so_and_methods_refuse_bad_settings() {
    let r = report(
        "ncu/h200-2025.3.1/manual_raw.csv",
        &["regions.auto.method=stack_frames"],
    )
    .unwrap();
    assert!(r.scopes[0].regions.is_empty());
    assert!(
        r.notes
            .iter()
            .any(|n| n.contains("no result carries a call stack")),
        "{:?}",
        r.notes
    );

    let err = |overrides: &[&str]| {
        report("ncu/h200-2025.3.1/manual_raw.csv", overrides)
            .unwrap_err()
            .to_string()
    };
    let msg = err(&["regions.auto.method=hierarchy", "regions.auto.depth=0"]);
    assert!(msg.contains("regions.auto.depth"), "{msg}");
    let msg = err(&[
        "regions.auto.method=collectives",
        "regions.auto.collectives.stride=0",
    ]);
    assert!(msg.contains("regions.auto.collectives.stride"), "{msg}");
    let msg = err(&["regions.auto.method=hierarchy", "regions.include=[A]"]);
    assert!(msg.contains("regions.include"), "{msg}");
}

#[test]
fn stack_frames_follow_the_python_lines_that_launched_the_kernels() {
    // rep_pystack: train_step.py 2 2 captured with --call-stack --call-stack-type python, read from
    // its report file. The loop at line 46 calls step(); in step, line 28 runs each layer and its ReLU
    // (2 layers x 2 steps x (GEMM + ReLU) = 8 kernels, the GEMMs through nn.Module's call: 4), line 30
    // the MSE loss (4), line 34 backward() (2 kernels launched from Python; the rest run on the
    // autograd thread, which has no Python stack), line 37 the optimizer step (2). 16 of the 36
    // results carry a Python stack.
    let dir = tempfile::tempdir().unwrap();
    let report_file = dir.path().join("rep_pystack.ncu-rep.gz");
    std::fs::copy(
        fixture("ncu/h100-2025.3.1-pytorch/rep_pystack.ncu-rep.gz"),
        &report_file,
    )
    .unwrap();
    let out = dir.path().join("out");
    assert_cmd::Command::cargo_bin("profile-run")
        .unwrap()
        .arg("report")
        .arg(&report_file)
        .arg("--out")
        .arg(&out)
        .args(["regions.auto.method=stack_frames", "regions.auto.depth=2"])
        .assert()
        .success();
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    let scope = &report["scopes"][0];
    let counts: BTreeMap<String, u64> = scope["regions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            assert_eq!(r["origin"], "stack_frames");
            (
                r["path"].as_str().unwrap().to_string(),
                r["kernel_count"].as_u64().unwrap(),
            )
        })
        .collect();
    let top = "<module> (train_step.py:46)";
    assert_eq!(
        counts,
        BTreeMap::from([
            (top.to_string(), 16),
            (format!("{top}/step (train_step.py:28)"), 8),
            (format!("{top}/step (train_step.py:30)"), 4),
            (format!("{top}/step (train_step.py:34)"), 2),
            (format!("{top}/step (train_step.py:37)"), 2),
        ])
    );
    assert_eq!(scope["total"]["kernel_count"], 36);
    let notes = report["notes"].to_string();
    assert!(
        notes.contains("20 of 36 results carry no Python call stack"),
        "{notes}"
    );
}
