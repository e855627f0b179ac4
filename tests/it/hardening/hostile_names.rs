//! Hostile range and kernel names (path traversal, Markdown and HTML syntax, line breaks, control
//! characters, 10,000 characters, non-Latin scripts): nothing is written outside the output
//! directory, report.md escapes them with its tables intact, report.json keeps them exactly (range
//! names up to 4096 bytes, past which they are cut).

use std::collections::BTreeSet;

use super::{column, entries, fixture_records, report_on, to_csv, Workspace};

fn hostile_names() -> Vec<String> {
    [
        "../../etc/x",
        "/abs/path",
        "a|b",
        "`tick` ``x``",
        "<script>alert(1)</script>",
        "line1\nline2",
        "cr\r\nlf",
        "ctl\u{1}\u{1b}[31mred\u{7f}",
        "tab\there",
        "# heading *b* _i_ [l](http://x) ![i](y)",
        "\u{202e}reversed",
        "前向き パス",
        "Прямой проход",
        "مرحبا",
        "😀 emoji",
        "back\\slash",
        "&amp; entity",
        "--- | --- |",
    ]
    .iter()
    .map(|s| s.to_string())
    .chain(std::iter::once("L".repeat(10_000)))
    .collect()
}

/// The real export with one result per hostile name, used as both its range and its kernel name.
fn hostile_export() -> Vec<u8> {
    let records = fixture_records();
    let kernel = column(&records, "Kernel Name");
    let push_pop = records[0]
        .iter()
        .position(|h| h.contains("Push/Pop_Range"))
        .unwrap();
    let mut out = vec![records[0].clone(), records[1].clone()];
    for (i, name) in hostile_names().iter().enumerate() {
        let mut row = records[2 + i % (records.len() - 2)].clone();
        row[0] = i.to_string();
        row[kernel] = name.clone();
        row[push_pop] = format!("1606  \"<default domain>:{name}:none:none:none:none:none:none\" ");
        out.push(row);
    }
    to_csv(&out)
}

/// Cells of a GFM table row: `|` not escaped with a backslash separates them.
fn cell_count(row: &str) -> usize {
    let mut cells = 0;
    let mut escaped = false;
    for ch in row.chars() {
        match ch {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            '|' => cells += 1,
            _ => {}
        }
    }
    cells
}

fn assert_markdown_is_safe(md: &str) {
    let lines: Vec<&str> = md.lines().collect();
    let mut i = 0;
    while i < lines.len() {
        // A table: header, `| --- |` separator, rows; every row keeps the header's cell count.
        if lines[i].starts_with('|') && lines.get(i + 1).is_some_and(|l| l.starts_with("| ---")) {
            let width = cell_count(lines[i]);
            let mut j = i + 1;
            while j < lines.len() && lines[j].starts_with('|') {
                assert_eq!(
                    cell_count(lines[j]),
                    width,
                    "row breaks its table: {}",
                    lines[j]
                );
                j += 1;
            }
            i = j;
        } else {
            i += 1;
        }
    }
    // A `<` opens a tag only without a backslash before it.
    assert!(
        !md.replace("\\<", "").contains("<script"),
        "HTML passes through"
    );
    assert!(!md.contains("\u{202e}"), "bidi override passes through");
    assert!(
        !md.chars().any(|c| c.is_control() && c != '\n'),
        "a control character passes through"
    );
    for line in &lines {
        assert!(
            !line.starts_with("line2") && !line.starts_with("lf"),
            "a name broke out of its line: {line}"
        );
    }
}

#[test]
fn report_escapes_hostile_names_keeps_them_in_json_and_writes_only_its_two_files() {
    let r = report_on(&hostile_export(), &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        entries(r.dir.path()),
        ["export.csv", "out"],
        "nothing outside --out"
    );
    assert_eq!(
        entries(&r.out()),
        [".profile-run-outputs", "report.json", "report.md"]
    );

    let json = r.json();
    let regions = json["scopes"][0]["regions"].as_array().unwrap();
    let names: BTreeSet<String> = regions
        .iter()
        .map(|r| {
            let segments = r["segments"].as_array().unwrap();
            assert_eq!(segments.len(), 1, "a `/` in a name does not nest: {r}");
            assert_eq!(r["name"], segments[0]);
            r["name"].as_str().unwrap().to_string()
        })
        .collect();
    // Range names are kept exactly up to 4096 bytes; the 10,000-character one is cut there.
    let cut = |n: String| match n.len() > 4096 {
        true => format!("{}… ({} more bytes)", &n[..4096], n.len() - 4096),
        false => n,
    };
    let ranges: BTreeSet<String> = hostile_names().into_iter().map(cut).collect();
    assert_eq!(names, ranges, "range names kept exactly up to the cut");
    let expected: BTreeSet<String> = hostile_names().into_iter().collect();
    let kernels: BTreeSet<String> = regions
        .iter()
        .flat_map(|r| r["kernels"].as_array().unwrap().iter())
        .map(|k| k["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(kernels, expected, "kernel names kept exactly");

    assert_markdown_is_safe(&r.markdown());
}

#[test]
fn a_profile_run_with_hostile_names_writes_only_the_run_files() {
    let ws = Workspace::new();
    let export = ws.dir.path().join("hostile.csv");
    std::fs::write(&export, hostile_export()).unwrap();
    ws.cmd()
        .env("FAKE_NCU_RAW", &export)
        .args(super::CSV_READER)
        .args(["-q", "--", "true"])
        .assert()
        .success();
    assert_eq!(
        entries(ws.dir.path()),
        ["argv.log", "hostile.csv", "out"],
        "nothing outside output.root"
    );
    let runs = ws.run_dirs();
    assert_eq!(runs.len(), 1);
    assert_eq!(
        entries(&runs[0]),
        [
            ".profile-run-outputs",
            "command.txt",
            "config.yaml",
            "export_details.csv",
            "export_raw.csv",
            "ncu.log",
            "profile.ncu-rep",
            "report.json",
            "report.md",
            "run.json"
        ]
    );
    assert_markdown_is_safe(&std::fs::read_to_string(runs[0].join("report.md")).unwrap());
}
