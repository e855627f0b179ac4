//! A summary JSON of more subgraphs than scopes apart (issue 35, item 5): past the eighth, the
//! subgraphs are rows of one table beside the profile's scope, report.json keeps every row's values
//! and findings, and report.md shows their spread, the slowest and the findings by count instead of a
//! section (and a page) each. Up to eight, each is a scope as before.

use std::path::Path;

use assert_cmd::Command;
use serde_json::Value;

use super::cli::report_json;

/// A summary JSON of `n` subgraphs `n_0` … : subgraph `i` runs `(i + 1)` ms, with the low MFU and
/// high tensor-engine share that fire `low_mfu_while_active`.
fn summary(dir: &Path, n: usize) -> std::path::PathBuf {
    let body = |i: usize| {
        format!(
            r#""n_{i}": {{"total_time": {t}, "total_active_time": {t}, "mfu_estimated_percent": 0.003,
                "tensor_engine_active_time_percent": 0.82, "hbm_read_bytes": {b}, "sbuf_write_bytes": null,
                "sw_version": "2.29.18.0%kaena-tools/2.29@d5fe7ba"}}"#,
            t = (i + 1) as f64 * 1e-3,
            b = 4096 * (i + 1),
        )
    };
    let objects: Vec<String> = (0..n).map(body).collect();
    let path = dir.join(format!("summary-{n}.json"));
    let text = format!("INFO view: {n} subgraphs\n{{{}}}\n", objects.join(",\n"));
    std::fs::write(&path, text).unwrap();
    path
}

/// `profile-run report INPUT --out DIR`: report.json (checked against the schema) and report.md.
fn report(input: &Path) -> (Value, String) {
    let out = input.with_extension("out");
    Command::cargo_bin("profile-run")
        .unwrap()
        .env("HOME", input.parent().unwrap())
        .args(["report", "-q"])
        .arg(input)
        .arg("--out")
        .arg(&out)
        .assert()
        .success();
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    (report_json(&out), md)
}

#[test]
fn subgraphs_past_the_eighth_are_rows_of_one_table() {
    let tmp = tempfile::tempdir().unwrap();
    let (json, md) = report(&summary(tmp.path(), 12));
    let scopes = json["scopes"].as_array().unwrap();
    assert_eq!(scopes.len(), 1, "one scope, the profile's first subgraph");
    let label = scopes[0]["label"].as_str().unwrap();
    assert!(label.ends_with(" · n_0"), "{label}");
    let tables = json["scope_tables"].as_array().unwrap();
    assert_eq!(tables.len(), 1);
    let table = &tables[0];
    assert_eq!(table["summary"]["scope"], label);
    assert_eq!(table["summary"]["count"], 11);
    assert_eq!(table["units"]["total_time"], "ns");
    // every row, in file order, every value in report units, null where the tool wrote null
    let rows = table["rows"].as_array().unwrap();
    let labels: Vec<&str> = rows.iter().map(|r| r["label"].as_str().unwrap()).collect();
    assert_eq!(
        labels,
        (1..12).map(|i| format!("n_{i}")).collect::<Vec<_>>()
    );
    let last = &rows[10]["total"];
    assert!(
        (last["total_time"].as_f64().unwrap() - 12e6).abs() < 1e-3,
        "{last}"
    );
    assert_eq!(last["hbm_read_bytes"], 4096.0 * 12.0);
    assert!((last["mfu_estimated_percent"].as_f64().unwrap() - 0.3).abs() < 1e-9);
    assert!(last["sbuf_write_bytes"].is_null(), "{last}");
    assert_eq!(rows[0]["findings"][0], "low_mfu_while_active");
    // the spread, the slowest and the findings by count
    let spread = table["summary"]["spread"].as_array().unwrap();
    let time = spread.iter().find(|s| s["metric"] == "total_time").unwrap();
    assert_eq!(time["count"], 11);
    assert!((time["min"].as_f64().unwrap() - 2e6).abs() < 1e-3, "{time}");
    assert!(
        (time["median"].as_f64().unwrap() - 7e6).abs() < 1e-3,
        "{time}"
    );
    assert!(
        (time["max"].as_f64().unwrap() - 12e6).abs() < 1e-3,
        "{time}"
    );
    let slowest = table["summary"]["slowest"].as_array().unwrap();
    assert_eq!(slowest.len(), 10);
    assert_eq!(slowest[0][0], "n_11");
    assert_eq!(slowest[9][0], "n_2");
    let finding = &table["summary"]["findings"][0];
    assert_eq!(finding["rule"], "low_mfu_while_active");
    assert_eq!(finding["rows"], 11);
    assert_eq!(finding["example"], "n_11");
    // report.md: a section of the table, no section or page per subgraph
    // (names escaped for Markdown: `n\_11`)
    assert!(md.contains(" · n\\_0: 11 more subgraphs\n"), "{md}");
    assert!(
        md.contains("| total\\_time | 11 | 2.00 ms | 7.00 ms | 11.00 ms | 12.00 ms |"),
        "{md}"
    );
    assert!(
        md.contains("The slowest by `total_time`: n\\_11 (12.00 ms), n\\_10 (11.00 ms),"),
        "{md}"
    );
    assert!(
        md.contains("| low\\_mfu\\_while\\_active | opportunity | 11 | n\\_11: MFU 0.300%"),
        "{md}"
    );
    assert!(!md.contains("scopes/"), "{md}");
    assert!(!md.contains("· n\\_5"), "{md}");
}

#[test]
fn eight_subgraphs_are_still_a_scope_each() {
    let tmp = tempfile::tempdir().unwrap();
    let (json, _) = report(&summary(tmp.path(), 8));
    assert_eq!(json["scopes"].as_array().unwrap().len(), 8);
    assert!(
        json.get("scope_tables").is_none(),
        "{}",
        json["scope_tables"]
    );
}

#[test]
fn report_html_shows_the_table_of_subgraphs_as_report_md_does() {
    let tmp = tempfile::tempdir().unwrap();
    let input = summary(tmp.path(), 12);
    let out = tmp.path().join("html-out");
    Command::cargo_bin("profile-run")
        .unwrap()
        .env("HOME", tmp.path())
        .args(["report", "-q"])
        .arg(&input)
        .arg("--out")
        .arg(&out)
        .arg("report.outputs=[html]")
        .assert()
        .success();
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    let at = html
        .find("<section class=\"scope-table\">")
        .expect("a section for the table");
    let section = &html[at..];
    let section = &section[..section.find("</section>").unwrap()];
    assert!(section.contains("11 more"), "{section}");
    assert!(section.contains("<code>total_time</code>"), "{section}");
    // the slowest first, named with its time; the finding with how many subgraphs it fired on
    assert!(section.contains("The slowest: n_11 (12"), "{section}");
    assert!(
        section.contains("<td>low_mfu_while_active</td>"),
        "{section}"
    );
    assert!(section.contains("<td class=\"num\">11</td>"), "{section}");
    // no section per subgraph past the first
    assert!(
        !html.contains("· n_5</h2>"),
        "a subgraph past the eighth got a section"
    );
}
