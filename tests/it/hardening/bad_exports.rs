//! Bad exports: each reads correctly or fails with exit 5 and a message naming the file (and the line
//! for a row), never a panic.

use super::{column, fixture_bytes, fixture_records, report_on, to_csv, Rendered};

fn assert_export_error(r: &Rendered, expected: &[&str]) {
    assert_eq!(r.code, 5, "exit code; stderr: {}", r.stderr);
    assert!(
        r.stderr.contains("export.csv"),
        "names the file: {}",
        r.stderr
    );
    for text in expected {
        assert!(
            r.stderr.contains(text),
            "expected {text:?} in: {}",
            r.stderr
        );
    }
    assert!(!r.stderr.contains("panicked"), "{}", r.stderr);
}

fn region_paths(r: &Rendered) -> Vec<String> {
    r.json()["scopes"][0]["regions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["path"].as_str().unwrap().to_string())
        .collect()
}

fn decode_time(r: &Rendered) -> f64 {
    r.json()["scopes"][0]["regions"][0]["inclusive"]["gpu__time_duration.sum"]["value"]
        .as_f64()
        .unwrap()
}

#[test]
fn an_empty_file_is_an_error_naming_it() {
    assert_export_error(&report_on(b"", &[]), &["no CSV header", "--page raw"]);
}

#[test]
fn a_header_without_results_reads_with_a_note() {
    let bytes = fixture_bytes();
    let lines: Vec<&[u8]> = bytes.split_inclusive(|&b| b == b'\n').collect();
    for keep in [1, 2] {
        let r = report_on(&lines[..keep].concat(), &[]);
        assert_eq!(r.code, 0, "{keep} line(s): {}", r.stderr);
        let notes = r.json()["notes"].to_string();
        assert!(notes.contains("input holds no results"), "{notes}");
        assert!(r.markdown().contains("input holds no results"));
    }
}

#[test]
fn a_truncated_last_line_names_file_and_line() {
    let bytes = fixture_bytes();
    let last_line_start = bytes[..bytes.len() - 1]
        .iter()
        .rposition(|&b| b == b'\n')
        .unwrap()
        + 1;
    // Cut in the middle of the last row, inside a quoted field and right after a delimiter.
    let inside_quotes = last_line_start + 200;
    let after_comma = last_line_start
        + bytes[last_line_start..]
            .windows(2)
            .position(|w| w == b"\",")
            .unwrap()
        + 2;
    for cut in [inside_quotes, after_comma, bytes.len() - 10] {
        let r = report_on(&bytes[..cut], &[]);
        assert_export_error(&r, &["export.csv:8:", "truncated"]);
    }
    // Only the final newline missing: nothing is lost.
    let r = report_on(&bytes[..bytes.len() - 1], &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.json()["scopes"][0]["regions"][0]["kernel_count"], 6);
}

#[test]
fn rows_with_the_wrong_number_of_fields_name_the_line() {
    let mut records = fixture_records();
    records[4].push("extra".into());
    assert_export_error(
        &report_on(&to_csv(&records), &[]),
        &["export.csv:5:", "516 fields, the header has 515"],
    );
    let mut records = fixture_records();
    records[6].truncate(100);
    assert_export_error(
        &report_on(&to_csv(&records), &[]),
        &["export.csv:7:", "100 fields"],
    );
    // A bad units row too.
    let mut records = fixture_records();
    records[1].pop();
    assert_export_error(&report_on(&to_csv(&records), &[]), &["export.csv:2:"]);
}

#[test]
fn line_numbers_count_the_lines_skipped_before_the_header() {
    let mut records = fixture_records();
    records[4].push("extra".into());
    let mut bytes = b"program output\n==PROF== Connected to process 1\n".to_vec();
    bytes.extend(to_csv(&records));
    assert_export_error(&report_on(&bytes, &[]), &["export.csv:7:"]);
}

fn replace_bytes(haystack: &[u8], from: &[u8], to: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(haystack.len());
    let mut rest = haystack;
    while let Some(at) = rest.windows(from.len()).position(|w| w == from) {
        out.extend_from_slice(&rest[..at]);
        out.extend_from_slice(to);
        rest = &rest[at + from.len()..];
    }
    out.extend_from_slice(rest);
    out
}

#[test]
fn non_utf8_names_are_read_with_replacement_characters() {
    let bytes = replace_bytes(&fixture_bytes(), b":decode:", b":dec\xff\xfeode:");
    let bytes = replace_bytes(&bytes, b"reduce_kernel", b"reduce_\xc3\x28kernel");
    let r = report_on(&bytes, &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(region_paths(&r), ["dec\u{fffd}\u{fffd}ode"]);
    let kernels = r.json()["scopes"][0]["regions"][0]["kernels"].to_string();
    assert!(kernels.contains("reduce_\u{fffd}(kernel"), "{kernels}");
}

#[test]
fn a_file_of_only_error_lines_shows_them() {
    let bytes =
        b"==ERROR== Failed to open report profile.ncu-rep\n==ERROR== The report is corrupted.\n";
    assert_export_error(
        &report_on(bytes, &[]),
        &[
            "==ERROR== Failed to open report profile.ncu-rep",
            "==ERROR== The report is corrupted.",
        ],
    );
}

#[test]
fn program_output_and_prof_lines_before_the_header_are_skipped() {
    let plain = report_on(&fixture_bytes(), &[]);
    let mut bytes =
        b"loading model...\n==PROF== Connected to process 1606\n==WARNING== something\n\n".to_vec();
    bytes.extend(fixture_bytes());
    let r = report_on(&bytes, &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        r.json()["scopes"][0]["regions"],
        plain.json()["scopes"][0]["regions"]
    );
}

#[test]
fn unknown_future_columns_are_ignored() {
    let plain = report_on(&fixture_bytes(), &[]);
    let records: Vec<Vec<String>> = fixture_records()
        .into_iter()
        .enumerate()
        .map(|(i, mut r)| {
            let (first, last) = match i {
                0 => ("future__metric.sum", "Future Column, with comma"),
                1 => ("zunit", ""),
                _ => ("1,234", "x \"quoted\"\nnewline"),
            };
            r.insert(1, first.to_string());
            r.push(last.to_string());
            r
        })
        .collect();
    let r = report_on(&to_csv(&records), &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        r.json()["scopes"][0]["regions"],
        plain.json()["scopes"][0]["regions"]
    );
}

/// The fixture with every `gpu__time_duration.sum` set to `value`, in nanoseconds.
fn with_time(value: &str) -> Vec<u8> {
    let mut records = fixture_records();
    let col = column(&records, "gpu__time_duration.sum");
    records[1][col] = "ns".into();
    for record in &mut records[2..] {
        record[col] = value.to_string();
    }
    to_csv(&records)
}

#[test]
fn numbers_in_c_and_unambiguous_groupings_are_read() {
    for value in ["1,234.5", "1'234.5", "1 234.5", "1\u{a0}234.5", "1234.5"] {
        let r = report_on(&with_time(value), &[]);
        assert_eq!(r.code, 0, "{value}: {}", r.stderr);
        assert_eq!(decode_time(&r), 6.0 * 1234.5, "{value}");
    }
}

#[test]
fn numbers_with_a_decimal_comma_are_refused_naming_cell_and_fix() {
    for value in ["1.234,5", "1 234,5", "0,5", "1.234.567"] {
        let r = report_on(&with_time(value), &[]);
        assert_export_error(
            &r,
            &[
                "export.csv:3:",
                "gpu__time_duration.sum",
                value,
                "decimal comma",
                "LC_ALL=C",
            ],
        );
    }
}

#[test]
fn a_details_export_given_as_raw_says_which_page_to_export() {
    let bytes = std::fs::read(crate::common::fixture(
        "ncu/h100-2025.3.1/kreplay_details.csv",
    ))
    .unwrap();
    assert_export_error(
        &report_on(&bytes, &[]),
        &["`--page details` export", "--page raw"],
    );
}

#[test]
fn a_csv_without_the_required_columns_names_the_column() {
    let r = report_on(b"ID,Foo\n,\n1,2\n", &[]);
    assert_export_error(&r, &["Kernel Name"]);
}

#[test]
fn an_export_cut_inside_its_header_is_an_error_not_an_empty_profile() {
    let bytes = fixture_bytes();
    let header_end = bytes.iter().position(|&b| b == b'\n').unwrap();
    for cut in [300, header_end / 2, header_end] {
        let r = report_on(&bytes[..cut], &[]);
        assert_export_error(&r, &["header is incomplete", &format!("after {cut} bytes")]);
        assert!(!r.stderr.contains("profiled nothing"), "{}", r.stderr);
        assert!(!r.out().exists(), "no report for a cut header");
    }
    // The whole header line and the units row, but no results: still the "no results" report.
    let units_end = header_end
        + 1
        + bytes[header_end + 1..]
            .iter()
            .position(|&b| b == b'\n')
            .unwrap();
    let r = report_on(&bytes[..=units_end], &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.json()["notes"].to_string().contains("holds no results"));
}

#[test]
fn a_real_export_cut_inside_its_header_names_the_file() {
    // The first 300 bytes of a real PyTorch capture's export, as a partial copy leaves it.
    let real = crate::common::fixture("ncu/h100-2025.3.1-pytorch/emit_nvtx_raw.csv");
    let bytes = std::fs::read(real).unwrap();
    let r = report_on(&bytes[..300], &[]);
    assert_export_error(&r, &["export.csv: the header is incomplete"]);
}
