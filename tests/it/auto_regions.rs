//! Automatic regions (`regions.auto`) on real exports: each method gives the regions worked out by
//! hand below from the workload's source and the export's rows.

use std::collections::BTreeMap;

use profile_run::analysis::RunContext;
use profile_run::config::{load, ConfigSources};
use profile_run::report::model::Report;

use crate::common::{analyze, fixture, render_fixture_copy};

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
    let (_dir, _out, report) = render_fixture_copy(
        "ncu/h100-2025.3.1-pytorch/rep_pystack.ncu-rep.gz",
        &["regions.auto.method=stack_frames", "regions.auto.depth=2"],
    );
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

/// `profile-run report` on a copy of a fixture report file with `overrides`; report.json.
fn report_json(export: &str, overrides: &[&str]) -> serde_json::Value {
    let dir = tempfile::tempdir().unwrap();
    let name = std::path::Path::new(export).file_name().unwrap();
    let report_file = dir.path().join(name);
    std::fs::copy(fixture(export), &report_file).unwrap();
    let out = dir.path().join("out");
    assert_cmd::Command::cargo_bin("profile-run")
        .unwrap()
        .arg("report")
        .arg(&report_file)
        .arg("--out")
        .arg(&out)
        .args(overrides)
        .assert()
        .success();
    serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap()
}

#[test]
fn stack_frames_nest_inside_the_requested_ranges() {
    // rep_pystack again, now with the ranges asked for: the Python frames that launched each kernel go
    // below the NVTX range it ran in (`train_step/forward/layer0/…`), results without a Python stack
    // (the 20 of backward's autograd thread) stay in their range.
    let time = "gpu__time_duration.sum";
    let export = "ncu/h100-2025.3.1-pytorch/rep_pystack.ncu-rep.gz";
    let nvtx = report_json(export, &["regions.include=[train_step]"]);
    let nested = report_json(
        export,
        &[
            "regions.include=[train_step]",
            "regions.auto.method=stack_frames",
        ],
    );
    let value = |r: &serde_json::Value, which: &str| r[which][time]["value"].as_f64().unwrap();
    let scope = &nested["scopes"][0];
    let regions = scope["regions"].as_array().unwrap();
    let path = |r: &serde_json::Value| r["path"].as_str().unwrap().to_string();
    // The ranges keep their results and times: frames never move a result across ranges.
    for range in nvtx["scopes"][0]["regions"].as_array().unwrap() {
        let same = regions
            .iter()
            .find(|r| r["path"] == range["path"])
            .unwrap_or_else(|| panic!("{} is missing", range["path"]));
        assert_eq!(same["origin"], "nvtx");
        assert_eq!(
            same["kernel_count"], range["kernel_count"],
            "{}",
            range["path"]
        );
        assert!(
            close(value(same, "inclusive"), value(range, "inclusive")),
            "{}",
            range["path"]
        );
    }
    // Every frame region sits under a requested range; no frame region is a single-child link
    // without results of its own (those chains are collapsed into their innermost frame).
    let frames: Vec<&serde_json::Value> = regions
        .iter()
        .filter(|r| r["origin"] == "stack_frames")
        .collect();
    assert!(!frames.is_empty());
    for f in &frames {
        assert!(path(f).starts_with("train_step/"), "{}", path(f));
        let children = regions.iter().filter(|c| c["parent"] == f["path"]).count();
        assert!(
            f["self_kernel_count"].as_u64().unwrap() > 0 || children > 1,
            "{}",
            path(f)
        );
    }
    assert!(frames
        .iter()
        .any(|f| path(f) == "train_step/optimizer/_multi_tensor_sgd (sgd.py:473)"));
    // Independent sum: each result is either in its range's self time or in a frame region, so the
    // ranges' self times plus the outermost frame regions' times give the scope's time.
    let is_frame = |p: &serde_json::Value| frames.iter().any(|f| f["path"] == *p);
    let self_of_ranges: f64 = regions
        .iter()
        .filter(|r| r["origin"] == "nvtx")
        .map(|r| value(r, "exclusive"))
        .sum();
    let outer_frames: f64 = frames
        .iter()
        .filter(|f| !is_frame(&f["parent"]))
        .map(|f| value(f, "inclusive"))
        .sum();
    let total = scope["total"]["metrics"][time]["value"].as_f64().unwrap();
    assert!(
        close(self_of_ranges + outer_frames, total),
        "{self_of_ranges} + {outer_frames} vs {total}"
    );
    // The 20 results without a Python stack are backward's own, and a note counts them.
    let backward = regions
        .iter()
        .find(|r| r["path"] == "train_step/backward")
        .unwrap();
    assert_eq!(backward["self_kernel_count"], 20);
    let notes = nested["notes"].to_string();
    assert!(
        notes.contains("20 of 36 results carry no Python call stack: they stay in their range"),
        "{notes}"
    );
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

#[test]
fn gpu_segments_get_the_same_distribution_as_neuron_regions() {
    let cuts = r#"regions.auto.collectives.kernels=["*gemm*", "*Kernel2*"]"#;
    let r = report(
        "ncu/h200-2025.3.1/manual_raw.csv",
        &["regions.auto.method=collectives", cuts],
    )
    .unwrap();
    let scope = &r.scopes[0];
    let time = r.time_metric.as_deref().unwrap();
    let mut values: Vec<f64> = scope
        .regions
        .iter()
        .filter(|r| r.name.starts_with("segment["))
        .filter_map(|r| r.inclusive.get(time).and_then(|v| v.value))
        .collect();
    values.sort_by(f64::total_cmp);
    assert!(values.len() >= 2);
    let mid = values.len() / 2;
    let median = if values.len().is_multiple_of(2) {
        (values[mid - 1] + values[mid]) / 2.0
    } else {
        values[mid]
    };
    let d = scope
        .distributions
        .iter()
        .find(|d| d.base == "segment")
        .expect("a distribution of the segments");
    assert_eq!(d.spread.count as usize, values.len());
    assert_eq!(
        (d.spread.min, d.spread.max),
        (values[0], values[values.len() - 1])
    );
    assert!(close(d.spread.median, median));
    for e in &d.regions {
        let outlier = e.value > 1.5 * median || e.value < median / 1.5;
        assert_eq!(e.outlier, outlier, "{}", e.path);
    }
    // The collectives' own region is alone under its name: no distribution.
    assert!(scope.distributions.iter().all(|d| d.base != "collectives"));
}

#[test]
fn gpu_hierarchy_without_a_depth_cuts_at_the_layer_level() {
    // emit_nvtx's autograd ranges, `aten::mul, op_id = N` renamed to `mul[N]`: under
    // `PowBackward0, seq = 12, op_id = 31` the siblings mul[36] and mul[38] repeat at depth 4 (the first
    // level where siblings share a base name), and mul[37] nested in mul[36] lies deeper. Without a
    // depth, hierarchy must give exactly the report of depth 4.
    let rename =
        r#"regions.rename=[{pattern: "^aten::mul, op_id = ([0-9]+)$", replace: "mul[$1]"}]"#;
    let export = "ncu/h100-2025.3.1-pytorch/emit_nvtx.ncu-rep.gz";
    let layer = report_json(export, &["regions.auto.method=hierarchy", rename]);
    let four = report_json(
        export,
        &[
            "regions.auto.method=hierarchy",
            "regions.auto.depth=4",
            rename,
        ],
    );
    let plain = report_json(export, &[rename]);
    assert_eq!(layer["scopes"], four["scopes"]);
    let regions = layer["scopes"][0]["regions"].as_array().unwrap();
    assert!(regions
        .iter()
        .all(|r| r["segments"].as_array().unwrap().len() <= 4));
    assert!(regions.iter().any(|r| r["name"] == "mul[36]"));
    // mul[36] now owns its nested range's results: its self count is its whole count, the same as
    // the program's own ranges give it inclusively.
    let own = |report: &serde_json::Value| {
        report["scopes"][0]["regions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["name"] == "mul[36]")
            .unwrap()
            .clone()
    };
    let (cut, full) = (own(&layer), own(&plain));
    assert_eq!(cut["self_kernel_count"], full["kernel_count"]);
    assert_eq!(cut["kernel_count"], full["kernel_count"]);
    assert!(full["self_kernel_count"].as_u64() < full["kernel_count"].as_u64());
}
