//! The summary tables' "Mostly in" column (report.json's `mostly_in`) on real captures, as
//! docs/outputs.md explains it: for a kernel, the innermost region running at least half of its
//! function's time; for a finding, the innermost region nested in the finding's region where the same
//! rule saves at least half as much; `null` (`—` in report.md) when there is none.

use serde_json::Value;

use crate::common::fixture;
use crate::sampled::render;

fn regions(scope: &Value) -> &Vec<Value> {
    scope["regions"].as_array().unwrap()
}

fn nested_in(outer: &Value, inner: &Value) -> bool {
    let (o, i) = (
        outer["segments"].as_array().unwrap(),
        inner["segments"].as_array().unwrap(),
    );
    inner["depth"].as_u64() > outer["depth"].as_u64()
        && inner["kind"] == outer["kind"]
        && i.len() > o.len()
        && i[..o.len()] == o[..]
}

/// The finding's `mostly_in` as docs/outputs.md defines it, computed from the regions' own findings.
fn expected_finding_home(scope: &Value, finding: &Value) -> Option<String> {
    let outer = regions(scope)
        .iter()
        .find(|r| r["path"] == finding["region"])
        .unwrap();
    let own = finding["own_saving_ns"].as_f64().unwrap();
    regions(scope)
        .iter()
        .filter(|r| nested_in(outer, r))
        .filter_map(|r| {
            let saving = r["insights"]
                .as_array()
                .unwrap()
                .iter()
                .find(|i| i["source"] == finding["source"] && i["rule"] == finding["rule"])?
                ["estimated_saving_ns"]
                .as_f64()?;
            (saving >= own / 2.0).then_some((r["depth"].as_u64().unwrap(), saving, r))
        })
        .max_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)))
        .map(|(_, _, r)| r["path"].as_str().unwrap().to_string())
}

/// Every finding's `mostly_in` in every scope of `report` is the one the rule gives; returns them.
fn checked_finding_homes(report: &Value) -> Vec<(String, Option<String>)> {
    let mut homes = Vec::new();
    for scope in report["scopes"].as_array().unwrap() {
        for finding in scope["summary"]["top_insights"].as_array().unwrap() {
            let shown = finding["mostly_in"].as_str().map(str::to_string);
            assert_eq!(shown, expected_finding_home(scope, finding), "{finding}");
            homes.push((finding["region"].as_str().unwrap().to_string(), shown));
        }
    }
    homes
}

#[test]
fn a_finding_is_mostly_in_a_sub_region_only_where_one_holds_half_its_saving() {
    let tmp = tempfile::tempdir().unwrap();
    // The documented example: every finding names a region without sub-regions, so the findings'
    // column would be `—` throughout and is left out, while the kernels' column names a region for
    // each kernel.
    let example = render(
        &fixture("ncu/h200-2025.3.1/manual_raw.csv"),
        &tmp.path().join("example"),
        &[],
    );
    let homes = checked_finding_homes(&example);
    assert_eq!(homes.len(), 3);
    let scope = &example["scopes"][0];
    for (region, home) in &homes {
        assert_eq!(*home, None, "{region}");
        let outer = regions(scope)
            .iter()
            .find(|r| r["path"] == *region)
            .unwrap();
        assert!(
            !regions(scope).iter().any(|r| nested_in(outer, r)),
            "{region} has sub-regions"
        );
    }
    let kernel_homes: Vec<&str> = scope["summary"]["top_kernels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k["mostly_in"].as_str().unwrap())
        .collect();
    assert_eq!(kernel_homes, ["A/A1", "B", "A"]);
    let md = std::fs::read_to_string(tmp.path().join("example/report.md")).unwrap();
    assert!(
        md.contains("| Share of scope | Kernel-local speedup |"),
        "{md}"
    );
    assert!(md.contains("| Time | Share of scope | Mostly in |"), "{md}");

    // The sampled H100 capture: a finding of the whole step is mostly in its backward pass, and
    // the findings' table has the column.
    let out = tmp.path().join("sampled");
    let sampled = render(
        &fixture("ncu/h100-2025.3.1-sampled/train.ncu-rep.gz"),
        &out,
        &[],
    );
    let homes = checked_finding_homes(&sampled);
    assert!(
        homes.contains(&("train_step".into(), Some("train_step/backward".into()))),
        "{homes:?}"
    );
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.contains("| Share of scope | Mostly in |"), "{md}");
}
