//! The JSON and text readers on the fixtures; expected values are read off the fixture files by hand.

use std::path::Path;

use profile_run::profiler::neuron::readers::model::Engine;
use profile_run::profiler::neuron::readers::{profile_json, summary_json, summary_text};
use profile_run::profiler::neuron::NeuronError;

use super::{decoder_json, BASE_NS, MIB};
use crate::common::fixture;

#[test]
fn summary_json_keeps_each_profile_id_in_order_with_nulls() {
    let s = summary_json::read(&fixture("neuron/summary_two_subgraphs.json")).unwrap();
    assert_eq!(s.len(), 2);
    assert_eq!(s[0].profile_id, "n_7cf2c3ef5a1e4d0b");
    assert_eq!(s[1].profile_id, "n_91d04b7e22c8f613");
    assert_eq!(s[0].get("total_time"), Some(0.2138));
    assert_eq!(s[0].get("hbm_read_bytes"), Some(6_582_249_472.0));
    assert_eq!(s[0].get("dma_transfer_average_bytes"), Some(446_679.58));
    // a throttle percent above 1 is kept as written
    assert_eq!(
        s[0].get("throttle_avg_util_limit_nc0_percent"),
        Some(1.0734)
    );
    // `null` is recorded as present-but-unknown; a key the tool left out is absent
    assert_eq!(s[1].metrics.get("dma_transfer_count"), Some(&None));
    assert_eq!(s[1].metrics.get("mbu_estimated_percent"), Some(&None));
    assert!(!s[1].metrics.contains_key("dma_transfer_total_bytes"));
    assert_eq!(
        s[1].text.get("sw_version").map(String::as_str),
        Some("2.29.18.0%kaena-tools/2.29@d5fe7ba")
    );
}

#[test]
fn summary_json_errors_name_the_line_counting_log_lines_and_the_key() {
    let text =
        "INFO one\nINFO two\n{\n  \"n_1\": {\n    \"total_time\": 0.2,\n    \"x\": 1.2.3\n  }\n}\n";
    let err = summary_json::parse(Path::new("s.json"), text)
        .unwrap_err()
        .to_string();
    // the document starts on line 3; `1.2.3` is on line 6 of the file
    assert!(err.starts_with("s.json: line 6, column 13"), "{err}");
    assert!(err.contains("key `n_1"), "{err}");

    let err = summary_json::parse(Path::new("s.json"), "log\n{\"n_1\": 3}")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("key `n_1`") && err.contains("found a number"),
        "{err}"
    );

    let err = summary_json::parse(Path::new("s.json"), "only log lines\n")
        .unwrap_err()
        .to_string();
    assert!(err.contains("no JSON object found"), "{err}");
}

#[test]
fn summary_text_converts_units_and_repairs_syncill() {
    let t = summary_text::read(&fixture("neuron/summary.txt")).unwrap();
    let m = |k: &str| t.summary.get(k).unwrap_or_else(|| panic!("{k} missing"));
    assert!((m("total_time") - 0.05378).abs() < 1e-12);
    assert!((m("dma_active_time") - 322.1e-6).abs() < 1e-15);
    assert_eq!(m("model_flops"), 654.344e9);
    assert!((m("mfu_estimated_percent") - 0.1287).abs() < 1e-12);
    assert_eq!(m("mm_arithmetic_intensity"), 69.75);
    assert_eq!(m("hbm_read_bytes"), 4.334 * 1024.0 * 1024.0 * 1024.0);
    assert_eq!(m("dma_transfer_average_bytes"), 340.347 * 1024.0);
    assert_eq!(m("dma_transfer_count"), 18935.0);
    // "Syncill" is the tool's spelling of "spill": the JSON summary's field names come back
    assert_eq!(m("spill_reload_bytes"), 1.5 * 1024.0 * 1024.0 * 1024.0);
    assert_eq!(m("spill_save_bytes"), 96.0 * 1024.0);
    assert!(!t.summary.metrics.keys().any(|k| k.contains("Syncill")));
    // above 100 % stays above 1; N/A is unknown
    assert!((m("throttle_avg_util_limit_nc0_percent") - 1.0734).abs() < 1e-12);
    assert_eq!(
        t.summary
            .metrics
            .get("throttle_avg_power_limit_nc0_percent"),
        Some(&None)
    );
    // an unknown unit is kept as text, with a note naming the line
    assert_eq!(
        t.summary
            .text
            .get("host_memory_bandwidth")
            .map(String::as_str),
        Some("12.5 GB/s")
    );
    assert_eq!(t.notes.len(), 1);
    assert!(
        t.notes[0].contains("line 27") && t.notes[0].contains("GB/s"),
        "{:?}",
        t.notes
    );
    // the memory-usage table after the metrics is not read
    assert!(!t.summary.metrics.contains_key("sbuf"));
    assert_eq!(
        t.summary.text.get("sw_version").map(String::as_str),
        Some("2.29.18.0")
    );
}

#[test]
fn summary_text_malformed_row_names_the_line() {
    let text = "| Group | Name | Value |\n|---|---|---|\n| overall_stats | total_time | 1 ms |\n| x | y |\n";
    let err = summary_text::parse(Path::new("s.txt"), text)
        .unwrap_err()
        .to_string();
    assert!(err.starts_with("s.txt: line 4: expected 3 cells"), "{err}");
    let err = summary_text::parse(Path::new("s.txt"), "nothing here\n")
        .unwrap_err()
        .to_string();
    assert!(err.contains("no `| Group | Name | Value |` table"), "{err}");
}

#[test]
fn full_json_reads_every_list_and_rebases_to_the_first_timestamp() {
    let p = profile_json::read(&decoder_json()).unwrap();
    // 4 layers × 11 instructions, 2 AllReduce and 4 DMA transfers per layer (make_profile.py)
    assert_eq!(p.instructions.len(), 44);
    assert_eq!(p.collectives.len(), 8);
    assert_eq!(p.dma.len(), 16);
    assert_eq!(p.origin_ns, Some(BASE_NS));
    assert_eq!(p.instructions[0].start_ns, 0);
    assert_eq!(p.bounds(), Some((0, 408_000)));

    let first = &p.instructions[0];
    assert_eq!(first.engine, Some(Engine::TensorMatrix));
    assert_eq!(first.opcode, "MATMUL");
    assert_eq!(first.hlo_name.as_deref(), Some("%dot.1 = dot(%p0, %wqkv)"));
    assert_eq!(
        first.layer.as_deref(),
        Some("NeuronLlamaModel/NeuronLlamaDecoderLayer[0]/NeuronLlamaAttention/aten.mm")
    );
    assert_eq!(first.hbm_read_bytes, Some(4.0 * MIB));
    assert_eq!(first.raw_flops, Some(0.6e9));

    // layer 0's NKI instruction: empty hlo_name becomes None, source location and frames kept
    let nki = p
        .instructions
        .iter()
        .find(|i| i.start_ns == 64_000)
        .unwrap();
    assert_eq!(nki.hlo_name, None);
    assert_eq!(nki.nki_source_location.as_deref(), Some("mlp_kernel.py:41"));
    assert_eq!(nki.stack_frame_ids, vec![3]);
    assert!(p
        .instructions
        .iter()
        .filter(|i| !i.is_busy())
        .all(|i| i.opcode.starts_with("EVENT_SEMAPHORE")));
    assert_eq!(p.instructions.iter().filter(|i| !i.is_busy()).count(), 8);

    // cc_trigger on layers 0 and 2 only; rebased like the starts
    let c = &p.collectives;
    assert_eq!(
        (c[0].start_ns, c[0].end_ns, c[0].trigger_ns),
        (40_000, 48_000, Some(38_000))
    );
    assert_eq!((c[2].start_ns, c[2].trigger_ns), (136_000, None));
    assert_eq!(c[7].start_ns, 288_000 + 88_000 + 24_000);
    assert_eq!(c[0].operation, "AllReduce");

    assert_eq!(p.dma[3].queue, "qScalarSpillReload0-Q1-E64");
    assert_eq!(p.dma[3].bytes, MIB);
    assert_eq!(p.summaries[0].get("total_time"), Some(0.000408));
    assert_eq!(
        p.metadata.get("neff_name").map(String::as_str),
        Some("neff_7cf2c3ef.neff")
    );
    assert_eq!(p.stack_frames.len(), 3);
    assert_eq!(p.stack_frames[1].function, "mlp_kernel.gate_up");
    assert_eq!(p.stack_frames[1].parent, Some(1));
}

#[test]
fn full_json_with_only_profile_info_is_a_neff_ntff_mismatch() {
    let err = profile_json::read(&fixture("neuron/mismatch.json")).unwrap_err();
    assert!(matches!(err, NeuronError::NeffMismatch { .. }), "{err}");
    assert!(err.to_string().contains("mismatch.json") && err.to_string().contains("NEFF"));
}

#[test]
fn full_json_errors_name_the_key_and_line() {
    let text = "log\n{\"instruction\": [\n {\"timestamp\": 5, \"duration\": 1},\n {\"timestamp\": \"soon\"}\n]}";
    let err = profile_json::parse(Path::new("p.json"), text)
        .unwrap_err()
        .to_string();
    assert!(err.contains("p.json: line 4"), "{err}");
    assert!(
        err.contains("instruction[1].timestamp") && err.contains("\"soon\""),
        "{err}"
    );

    let text = "{\"cc_ops\": [{\"duration\": 4}]}";
    let err = profile_json::parse(Path::new("p.json"), text)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("cc_ops[0]") && err.contains("timestamp"),
        "{err}"
    );
}

#[test]
fn full_json_keys_are_all_optional_and_numbers_may_be_text() {
    let text = r#"{"dma": [{"timestamp": "1000", "duration": "20", "transfer_size": "4096"}]}"#;
    let p = profile_json::parse(Path::new("p.json"), text).unwrap();
    assert!(p.instructions.is_empty() && p.collectives.is_empty());
    assert_eq!(
        (p.dma[0].start_ns, p.dma[0].end_ns, p.dma[0].bytes),
        (0, 20, 4096.0)
    );
    assert_eq!(p.origin_ns, Some(1000));
    let p = profile_json::parse(Path::new("p.json"), "{}").unwrap();
    assert_eq!(p.bounds(), None);
}
