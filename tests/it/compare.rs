//! `report.compare`: regions of the PyTorch capture rep_kernel side by side in report.json and
//! report.md, names that match nothing or several regions, and more than three entries.

use profile_run::config::{Config, DEFAULT_PRESET};
use profile_run::report::model::Report;

use crate::common::{analyze, fixture};

fn report_with(compare: &[&str]) -> profile_run::error::Result<Report> {
    let mut config: Config = serde_yaml::from_str(DEFAULT_PRESET).unwrap();
    config.report.compare = compare.iter().map(|s| s.to_string()).collect();
    let raw = fixture("ncu/h100-2025.3.1-pytorch/rep_kernel_raw.csv");
    analyze(&config, &[raw], &Default::default())
}

#[test]
fn regions_named_by_path_or_name_sit_side_by_side_in_every_scope() {
    let report = report_with(&["A", "A1", "nope"]).unwrap();
    // One process: its scope and the aggregate.
    assert_eq!(report.compare.len(), 2);
    let c = &report.compare[0];
    assert_eq!(c.scope, report.scopes[0].label);
    let paths: Vec<&str> = c.regions.iter().map(|r| r.path.as_str()).collect();
    assert_eq!(paths, ["A", "A/A1"]);
    assert_eq!(c.regions[1].requested, "A1");
    assert_eq!(c.missing, ["nope"]);
    let a1 = report.scopes[0]
        .regions
        .iter()
        .find(|r| r.path == "A/A1")
        .unwrap();
    assert_eq!(c.regions[1].inclusive, a1.inclusive);
    assert_eq!(c.regions[1].kernel_count, 33);
    assert_eq!(report.compare[1].scope, "aggregate");
    assert!(report
        .notes
        .iter()
        .any(|n| n.starts_with("report.compare: `nope` names no region in any scope")));
}

#[test]
fn report_md_shows_the_comparison_table() {
    let report = report_with(&["A", "A/A1"]).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let config: Config = serde_yaml::from_str(DEFAULT_PRESET).unwrap();
    let plan = profile_run::plan::Plan::new(&config).unwrap();
    let md = profile_run::commands::write_reports(&report, &plan, dir.path()).unwrap();
    let text = std::fs::read_to_string(md).unwrap();
    assert!(text.contains("## Compared regions"), "{text}");
    assert!(text.contains("| Metric | `A` | `A/A1` |"), "{text}");
    assert!(text.contains("| Kernel results | 61 | 33 |"), "{text}");
    assert!(
        text.contains("| Duration | 245.66 µs | 163.65 µs |"),
        "{text}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("report.json")).unwrap())
            .unwrap();
    assert_eq!(json["compare"][0]["regions"][1]["path"], "A/A1");
}

#[test]
fn more_than_three_regions_is_a_usage_error() {
    let err = report_with(&["A", "B", "A/A1", "C"]).err().unwrap();
    assert_eq!(err.exit_code(), 2);
    assert!(
        err.to_string().contains("report.compare names 4 regions"),
        "{err}"
    );
}
