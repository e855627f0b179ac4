//! The Parquet `Summary` table and summary-text checked as summary-json is (issue 35, item 5): a
//! value that is NaN, infinite, negative, or not a number under a measure's name, is refused naming the
//! file, the row or line, and the key; numbers, text versions and `N/A` still read.

use std::path::Path;

use profile_run::profiler::neuron::readers::{parquet, summary_text};

use super::decoder_json;
use super::parquet_gen::{generate, write_table, Col, GenOptions};

/// A Parquet profile of the decoder fixture whose `Summary` table is `cols`, read.
fn read_with_summary(cols: &[Col]) -> Result<(), String> {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("profile@latest");
    generate(&decoder_json(), &dir, &GenOptions::default());
    write_table(&dir.join("Summary.parquet"), "Summary", cols);
    parquet::read(&dir).map(drop).map_err(|e| e.to_string())
}

/// A wide `Summary` table of two rows: `n_1` fine, `n_2` with `column`'s value.
fn wide(column: Col) -> Result<(), String> {
    let ids = vec![Some("n_1".to_string()), Some("n_2".to_string())];
    read_with_summary(&[
        Col::Str("profile_id", ids),
        Col::F64("total_active_time", vec![Some(0.1), Some(0.2)]),
        column,
    ])
}

/// A long `Summary` table (`name`, `value`) holding one row: `name` = `value`.
fn long(name: &str, value: &str) -> Result<(), String> {
    read_with_summary(&[
        Col::Str("name", vec![Some(name.to_string())]),
        Col::Str("value", vec![Some(value.to_string())]),
    ])
}

fn assert_refused(result: Result<(), String>, at: &str, key: &str, words: &str) {
    let err = result.expect_err("accepted");
    assert!(err.contains(at), "{err}");
    assert!(err.contains(&format!("key `{key}`")), "{err}");
    assert!(err.contains(words), "{err}");
}

#[test]
fn parquet_summary_refuses_nan_infinite_and_negative_numbers_naming_row_and_key() {
    let at = "Summary.parquet: table Summary, row 1, column `total_time`";
    let nan = wide(Col::F64("total_time", vec![Some(0.3), Some(f64::NAN)]));
    assert_refused(nan, at, "total_time", "not a number");
    let inf = wide(Col::F64("total_time", vec![Some(0.3), Some(f64::INFINITY)]));
    assert_refused(inf, at, "total_time", "not a finite number");
    let negative = wide(Col::I64("hbm_read_bytes", vec![Some(64), Some(-4096)]));
    assert_refused(
        negative,
        "row 1, column `hbm_read_bytes`",
        "hbm_read_bytes",
        "can be negative",
    );
    // numbers written as text are checked as numbers
    let text = wide(Col::Str(
        "total_time",
        vec![Some("0.3".into()), Some("-0.5".into())],
    ));
    assert_refused(text, at, "total_time", "negative");
}

#[test]
fn parquet_summary_refuses_a_measure_of_the_wrong_type() {
    let words = wide(Col::Str(
        "total_time",
        vec![Some("0.3".into()), Some("fast".into())],
    ));
    assert_refused(
        words,
        "row 1, column `total_time`",
        "total_time",
        "must be a number",
    );
    let nested = wide(Col::IdList("dma_transfer_count", vec![vec![1], vec![2, 3]]));
    assert_refused(
        nested,
        "row 0, column `dma_transfer_count`",
        "dma_transfer_count",
        "nested value",
    );
}

#[test]
fn parquet_long_summary_names_the_key_of_the_row() {
    let at = "table Summary, row 0, column `value`";
    assert_refused(long("total_time", "NaN"), at, "total_time", "not a number");
    assert_refused(long("cc_op_count", "-2"), at, "cc_op_count", "negative");
    assert_refused(
        long("hbm_write_bytes", "lots"),
        at,
        "hbm_write_bytes",
        "must be a number",
    );
    // versions stay text, numbers stay numbers
    long("sw_version", "2.29.18.0%kaena-tools/2.29@d5fe7ba").unwrap();
    long("total_time", "0.25").unwrap();
}

/// The error of reading a summary-text table whose one row is `name` = `value`.
fn text_refusal(name: &str, value: &str) -> String {
    let text = format!(
        "| Group | Name | Value |\n|---|---|---|\n| overall_stats | total_time | 1 ms |\n\
         | | {name} | {value} |\n"
    );
    match summary_text::parse(Path::new("s.txt"), &text) {
        Ok(s) => panic!("accepted {name} = {value}: {s:?}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn summary_text_refuses_nan_negative_and_words_naming_line_and_key() {
    let err = text_refusal("total_active_time", "NaN");
    assert!(
        err.starts_with("s.txt: line 4, key `total_active_time`"),
        "{err}"
    );
    assert!(err.contains("not a number"), "{err}");
    let err = text_refusal("hbm_read_bytes", "-4.5 GiB");
    assert!(
        err.starts_with("s.txt: line 4, key `hbm_read_bytes`"),
        "{err}"
    );
    assert!(err.contains("can be negative"), "{err}");
    let err = text_refusal("model_flops", "inf GFLOPS");
    assert!(
        err.contains("key `model_flops`") && err.contains("must be a number"),
        "{err}"
    );
    let err = text_refusal("dma_transfer_count", "many");
    assert!(
        err.contains("key `dma_transfer_count`") && err.contains("must be a number"),
        "{err}"
    );
    // a negative number in an unknown unit is no way round the check
    let err = text_refusal("host_memory_bandwidth", "-12.5 GB/s");
    assert!(
        err.contains("key `host_memory_bandwidth`") && err.contains("negative"),
        "{err}"
    );
}

#[test]
fn summary_text_still_reads_versions_missing_values_and_unknown_units() {
    let text = "| Group | Name | Value |\n|---|---|---|\n| system | sw_version | 2.29.18.0 |\n\
                | | total_time | N/A |\n| | host_memory_bandwidth | 12.5 GB/s |\n";
    let t = summary_text::parse(Path::new("s.txt"), text).unwrap();
    assert_eq!(t.summary.text["sw_version"], "2.29.18.0");
    assert_eq!(t.summary.metrics.get("total_time"), Some(&None));
    assert_eq!(t.summary.text["host_memory_bandwidth"], "12.5 GB/s");
    assert_eq!(t.notes.len(), 1, "{:?}", t.notes);
}
