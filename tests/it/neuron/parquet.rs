//! The Parquet reader against the JSON reader on the same timeline: the generator writes the tables from
//! the JSON fixture as plain values, so both readers must agree on every instruction, collective and
//! DMA transfer.

use profile_run::profiler::neuron::readers::parquet::{self, list_tables};
use profile_run::profiler::neuron::readers::profile_json;
use profile_run::profiler::neuron::NeuronError;

use super::parquet_gen::{generate, write_table, Col, GenOptions};
use super::{decoder_json, BASE_NS};

fn dir_with(opts: &GenOptions) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    generate(&decoder_json(), &tmp.path().join("profile@latest"), opts);
    tmp
}

#[test]
fn parquet_and_json_give_the_same_profile() {
    let tmp = dir_with(&GenOptions::default());
    let dir = tmp.path().join("profile@latest");
    // 44 instructions in parts of 30: Instruction_0 and Instruction_1 are one table
    let tables = list_tables(&dir).unwrap();
    assert_eq!(tables["Instruction"].files.len(), 2);
    let pq = parquet::read(&dir).unwrap();
    let js = profile_json::read(&decoder_json()).unwrap();
    assert_eq!(pq.schema_version.as_deref(), Some("7.4.0"));
    assert_eq!(pq.origin_ns, Some(BASE_NS));
    assert_eq!(pq.instructions, js.instructions);
    assert_eq!(pq.collectives, js.collectives);
    assert_eq!(pq.dma, js.dma);
    assert_eq!(pq.stack_frames, js.stack_frames);
    assert_eq!(pq.summaries[0].profile_id, "n_7cf2c3ef5a1e4d0b");
    assert_eq!(pq.summaries[0].get("total_time"), Some(0.000408));
    assert_eq!(
        pq.summaries[0].metrics.get("weight_size_bytes"),
        Some(&None)
    );
}

#[test]
fn key_value_metadata_and_schema_12_are_read() {
    let opts = GenOptions {
        version: "12.0.1".into(),
        metadata_long: true,
        with_collectives: false,
        ..GenOptions::default()
    };
    let tmp = dir_with(&opts);
    let p = parquet::read(&tmp.path().join("profile@latest")).unwrap();
    assert_eq!(p.schema_version.as_deref(), Some("12.0.1"));
    assert_eq!(p.instructions.len(), 44);
    // no CcOp file: no collectives, and no error
    assert!(p.collectives.is_empty());
    assert_eq!(
        p.metadata.get("tools_version").map(String::as_str),
        Some("2.29.18.0%kaena-tools/2.29@d5fe7ba")
    );
}

#[test]
fn an_unknown_schema_version_is_refused_by_name() {
    let opts = GenOptions {
        version: "9.1.0".into(),
        ..GenOptions::default()
    };
    let tmp = dir_with(&opts);
    let err = parquet::read(&tmp.path().join("profile@latest")).unwrap_err();
    assert!(matches!(&err, NeuronError::UnsupportedSchema { version, .. } if version == "9.1.0"));
    let msg = err.to_string();
    assert!(
        msg.contains("Metadata.parquet") && msg.contains("7.4.0, 12.0.1"),
        "{msg}"
    );
}

#[test]
fn a_missing_needed_column_names_table_column_and_version() {
    let tmp = dir_with(&GenOptions::default());
    let dir = tmp.path().join("profile@latest");
    write_table(
        &dir.join("CcOp.parquet"),
        "CcOp",
        &[
            Col::I64("start_ts", vec![Some(1)]),
            Col::I64("end_ts", vec![Some(2)]),
        ],
    );
    let msg = parquet::read(&dir).unwrap_err().to_string();
    assert!(
        msg.contains("CcOp.parquet") && msg.contains("table CcOp"),
        "{msg}"
    );
    assert!(
        msg.contains("`operation`") && msg.contains("schema 7.4.0"),
        "{msg}"
    );
}

#[test]
fn a_bad_value_names_table_row_and_column() {
    let tmp = dir_with(&GenOptions::default());
    let dir = tmp.path().join("profile@latest");
    write_table(
        &dir.join("DmaPacket.parquet"),
        "DmaPacket",
        &[
            Col::I64("start_ts", vec![Some(1), Some(5)]),
            Col::Str("queue_name", vec![Some("q0".into()), Some("q0".into())]),
            Col::Str(
                "transfer_bytes",
                vec![Some("64".into()), Some("lots".into())],
            ),
        ],
    );
    let msg = parquet::read(&dir).unwrap_err().to_string();
    assert!(
        msg.contains("table DmaPacket, row 1, column `transfer_bytes`"),
        "{msg}"
    );
    assert!(msg.contains("\"lots\""), "{msg}");
}

#[test]
fn a_directory_without_metadata_says_what_it_expected() {
    let tmp = tempfile::tempdir().unwrap();
    let msg = parquet::read(tmp.path()).unwrap_err().to_string();
    assert!(msg.contains("no Metadata.parquet"), "{msg}");
}

#[test]
fn framework_tables_drive_the_hierarchy_without_instruction_layers() {
    use profile_run::profiler::neuron::observe::regions::{generate as regions, Selection};
    use profile_run::profiler::neuron::settings::{RegionMethod, RegionSettings};
    let tmp = dir_with(&GenOptions::default());
    let mut p = parquet::read(&tmp.path().join("profile@latest")).unwrap();
    // FrameworkNode: model, 4 layers, 8 blocks, and the ops under them
    let layer1 = p
        .layers
        .iter()
        .find(|l| l.name == "NeuronLlamaModel/NeuronLlamaDecoderLayer[1]")
        .unwrap();
    assert_eq!(layer1.parent.as_deref(), Some("NeuronLlamaModel"));
    assert_eq!(layer1.children.len(), 2);
    p.instructions.iter_mut().for_each(|i| i.layer = None);
    let settings = RegionSettings {
        method: RegionMethod::Hierarchy,
        ..RegionSettings::default()
    };
    let r = regions(&p, &settings);
    assert_eq!(r.spans.len(), 4);
    // Layer 0's framework intervals: attention ops 0–40 µs (merged), MLP ops 48–88 µs.
    assert_eq!(
        r.spans[0].name,
        "NeuronLlamaModel/NeuronLlamaDecoderLayer[0]"
    );
    assert_eq!(
        r.spans[0].selection,
        Selection::Time(vec![(0, 40_000), (48_000, 88_000)])
    );
    assert_eq!((r.spans[3].start_ns, r.spans[3].end_ns), (288_000, 400_000));
}

#[test]
fn files_written_by_pyarrow_read_like_the_json() {
    // tests/fixtures/neuron/make_pyarrow_profile.py: dictionary-encoded strings, unsigned and 32-bit
    // integers, float32 transposes, list<int64> frames, v2 data pages, key/value Metadata.
    let dir = crate::common::fixture("neuron/pyarrow_profile@latest");
    let pq = parquet::read(&dir).unwrap();
    let js = profile_json::read(&decoder_json()).unwrap();
    assert_eq!(pq.schema_version.as_deref(), Some("7.4.0"));
    assert_eq!(pq.instructions, js.instructions);
    assert_eq!(pq.collectives, js.collectives);
    assert_eq!(pq.dma, js.dma);
    assert_eq!(pq.stack_frames, js.stack_frames);
    assert_eq!(pq.summaries[0].get("mfu_estimated_percent"), Some(0.2477));
}
