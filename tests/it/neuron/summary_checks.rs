//! Hostile summary values (issue 35, item 5): NaN, negative, infinite and wrong-typed values, nested
//! values and repeated keys are refused with the key path and the byte offset; the names of a
//! many-subgraph summary are held once.

use std::path::Path;
use std::sync::Arc;

use profile_run::profiler::neuron::readers::{profile_json, summary_json};

/// The error of reading `body` as the summary of one profile id `n_1`, after a log line.
fn refusal(body: &str) -> String {
    let text = format!("INFO view: 1 subgraph\n{{\n  \"n_1\": {{ {body} }}\n}}\n");
    match summary_json::parse(Path::new("s.json"), &text) {
        Ok(s) => panic!("accepted {body}: {s:?}"),
        Err(e) => e.to_string(),
    }
}

fn assert_names(err: &str, key: &str, words: &str) {
    assert!(err.contains(&format!("key `{key}`")), "{err}");
    assert!(err.contains(words), "{err}");
    // the byte offset, counted from the start of the file (the log line included)
    assert!(err.contains(", byte "), "{err}");
}

#[test]
fn a_negative_value_is_refused_with_its_key() {
    let err = refusal(r#""total_time": 0.2, "hbm_read_bytes": -4096"#);
    assert_names(&err, "n_1.hbm_read_bytes", "can be negative");
    assert!(err.starts_with("s.json: line 3"), "{err}");
    // a value with no unit in its name is no exception
    let err = refusal(r#""nc_idx": -1"#);
    assert_names(&err, "n_1.nc_idx", "negative");
}

#[test]
fn nan_and_infinity_are_refused_however_they_are_written() {
    let err = refusal(r#""total_time": "NaN""#);
    assert_names(&err, "n_1.total_time", "not a number");
    let err = refusal(r#""total_active_time": "-inf""#);
    assert_names(&err, "n_1.total_active_time", "not a finite number");
    // bare NaN is no JSON at all
    let err = refusal(r#""mfu_estimated_percent": NaN"#);
    assert_names(&err, "n_1.mfu_estimated_percent", "expected value");
}

#[test]
fn a_measure_of_the_wrong_type_is_refused() {
    let err = refusal(r#""total_time": "fast""#);
    assert_names(&err, "n_1.total_time", "must be a number");
    let err = refusal(r#""dma_transfer_count": true"#);
    assert_names(&err, "n_1.dma_transfer_count", "must be a number");
    let err = refusal(r#""hbm_write_bytes": [1, 2]"#);
    assert_names(&err, "n_1.hbm_write_bytes", "flat map of metrics");
    // nested values are refused under any name, not kept as text
    let err = refusal(r#""sw_version": {"major": 2}"#);
    assert_names(&err, "n_1.sw_version", "flat map of metrics");
}

#[test]
fn keys_given_twice_are_refused() {
    let err = refusal(r#""total_time": 0.2, "total_time": 0.3"#);
    assert_names(&err, "n_1.total_time", "given twice");
    let text = r#"{"n_1": {"total_time": 1}, "n_1": {"total_time": 2}}"#;
    let err = summary_json::parse(Path::new("s.json"), text)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("key `n_1`") && err.contains("given twice"),
        "{err}"
    );
}

#[test]
fn numeric_text_versions_and_nulls_are_still_read() {
    let text = r#"{"n_1": {"total_time": "0.25", "total_active_time": "", "mbu_estimated_percent": null,
                   "instance_type": "inf2.xlarge", "driver_version": "2.25.0 ()", "verbose": false},
                   "n_2": {"total_time": 0.5}}"#;
    let s = summary_json::parse(Path::new("s.json"), text).unwrap();
    assert_eq!(s[0].get("total_time"), Some(0.25));
    assert_eq!(s[0].metrics.get("total_active_time"), Some(&None));
    assert_eq!(s[0].metrics.get("mbu_estimated_percent"), Some(&None));
    assert_eq!(s[0].text["instance_type"], "inf2.xlarge");
    assert_eq!(s[0].text["verbose"], "false");
    // one name, held once for every subgraph
    let key = |i: usize| Arc::clone(s[i].metrics.keys().find(|k| &***k == "total_time").unwrap());
    assert!(Arc::ptr_eq(&key(0), &key(1)));
}

#[test]
fn the_full_profiles_summary_is_checked_the_same_way() {
    let text = r#"{"summary": [{"total_time": 0.002, "dma_transfer_count": -3}]}"#;
    let err = profile_json::parse(Path::new("p.json"), text)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("key `summary[0].dma_transfer_count`") && err.contains("negative"),
        "{err}"
    );
}
