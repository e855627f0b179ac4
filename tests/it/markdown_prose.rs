//! report.md keeps the `code spans` of the prose profile-run writes (notes, findings' messages and
//! actions) as code, on real captures of both profilers, while names stay escaped.

use serde_json::Value;

use crate::common::render_fixture_copy;

/// Every note and finding text in report.json that quotes something in backticks.
fn quoting_texts(report: &Value) -> Vec<String> {
    let mut texts = Vec::new();
    let mut visit = |v: &Value| {
        if let Some(text) = v.as_str() {
            if text.contains('`') {
                texts.push(text.to_string());
            }
        }
    };
    let mut stack = vec![report];
    while let Some(v) = stack.pop() {
        match v {
            Value::Object(map) => {
                for (key, value) in map {
                    match (key.as_str(), value) {
                        ("notes", Value::Array(notes)) => notes.iter().for_each(&mut visit),
                        ("message" | "action", text) => visit(text),
                        _ => stack.push(value),
                    }
                }
            }
            Value::Array(items) => stack.extend(items),
            _ => {}
        }
    }
    texts
}

/// The code spans of `text` (single-backtick spans: what profile-run's own texts use).
fn code_spans(text: &str) -> Vec<&str> {
    text.split('`').skip(1).step_by(2).collect()
}

#[test]
fn notes_keep_their_code_spans_on_real_captures_of_both_profilers() {
    for (rel, quoted) in [
        (
            "ncu/h100-2025.3.1-cupti/gpt2.ncu-rep.gz",
            "`sm__throughput.avg.pct_of_peak_sustained_elapsed`",
        ),
        (
            "ncu/h100-2025.3.1-cupti/gpt2.cupti.545.trace.gz",
            "`sm__throughput.avg.pct_of_peak_sustained_elapsed`",
        ),
        (
            "neuron/llama_tp_decoder.json",
            "set `neuron.hardware.peak_flops` to override",
        ),
        (
            "neuron/summary.txt",
            "use `regions.auto.method=hierarchy` or",
        ),
    ] {
        let (_dir, out, report) = render_fixture_copy(rel, &[]);
        let md = std::fs::read_to_string(out.join("report.md")).unwrap();
        assert!(md.contains(quoted), "{rel}: no {quoted} in report.md");
        // No backtick of these texts is shown as a literal character.
        assert!(
            !md.contains("\\`"),
            "{rel}: an escaped backtick in report.md"
        );
        let texts = quoting_texts(&report);
        assert!(!texts.is_empty(), "{rel}: no text quotes anything");
        for text in &texts {
            for span in code_spans(text) {
                assert!(
                    md.contains(&format!("`{span}`")),
                    "{rel}: `{span}` is not a code span in report.md"
                );
            }
        }
    }
}
