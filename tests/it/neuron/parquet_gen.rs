//! Writes a Neuron Explorer Parquet profile directory (tables and columns of profile schema 7.4.0) from a
//! full-JSON profile, reading the JSON as plain values so the Parquet reader is checked against the JSON
//! reader, not against itself. Used by the tests and by `cargo run --example gen-neuron-parquet`.

#![allow(dead_code)]

use std::fs::File;
use std::path::Path;
use std::sync::Arc;

use parquet::basic::Compression;
use parquet::data_type::{ByteArray, ByteArrayType, DoubleType, Int64Type};
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::parser::parse_message_type;
use serde_json::Value;

/// One column of a table.
pub enum Col {
    I64(&'static str, Vec<Option<i64>>),
    F64(&'static str, Vec<Option<f64>>),
    Str(&'static str, Vec<Option<String>>),
    /// A Parquet LIST of INT64.
    IdList(&'static str, Vec<Vec<i64>>),
}

/// Options: which schema version `Metadata` names, and what to leave out.
pub struct GenOptions {
    pub version: String,
    pub with_collectives: bool,
    /// `Metadata` as `key`/`value` rows instead of one wide row.
    pub metadata_long: bool,
    /// Rows per `Instruction_<n>.parquet` part.
    pub part_rows: usize,
}

impl Default for GenOptions {
    fn default() -> Self {
        GenOptions {
            version: "7.4.0".into(),
            with_collectives: true,
            metadata_long: false,
            part_rows: 30,
        }
    }
}

fn decl(c: &Col) -> String {
    match c {
        Col::I64(n, _) => format!("optional int64 {n};"),
        Col::F64(n, _) => format!("optional double {n};"),
        Col::Str(n, _) => format!("optional binary {n} (UTF8);"),
        Col::IdList(n, _) => {
            format!(
                "optional group {n} (LIST) {{ repeated group list {{ required int64 element; }} }}"
            )
        }
    }
}

/// Write one table file (Snappy-compressed, like pyarrow's default).
pub fn write_table(path: &Path, table: &str, cols: &[Col]) {
    let decls: Vec<String> = cols.iter().map(decl).collect();
    let schema = parse_message_type(&format!("message {table} {{ {} }}", decls.join(" "))).unwrap();
    let props = WriterProperties::builder()
        .set_compression(Compression::SNAPPY)
        .build();
    let file = File::create(path).unwrap();
    let mut writer = SerializedFileWriter::new(file, Arc::new(schema), Arc::new(props)).unwrap();
    let mut rg = writer.next_row_group().unwrap();
    let mut i = 0;
    while let Some(mut w) = rg.next_column().unwrap() {
        let col = &cols[i];
        i += 1;
        match col {
            Col::I64(_, v) => {
                let (vals, defs) = split(v);
                w.typed::<Int64Type>()
                    .write_batch(&vals, Some(&defs), None)
                    .unwrap();
            }
            Col::F64(_, v) => {
                let (vals, defs) = split(v);
                w.typed::<DoubleType>()
                    .write_batch(&vals, Some(&defs), None)
                    .unwrap();
            }
            Col::Str(_, v) => {
                let v: Vec<Option<ByteArray>> = v
                    .iter()
                    .map(|s| s.as_deref().map(ByteArray::from))
                    .collect();
                let (vals, defs) = split(&v);
                w.typed::<ByteArrayType>()
                    .write_batch(&vals, Some(&defs), None)
                    .unwrap();
            }
            Col::IdList(_, rows) => {
                let (mut vals, mut defs, mut reps) = (Vec::new(), Vec::new(), Vec::new());
                for r in rows {
                    if r.is_empty() {
                        defs.push(1); // the list is there, with no element
                        reps.push(0);
                    }
                    for (k, id) in r.iter().enumerate() {
                        vals.push(*id);
                        defs.push(2);
                        reps.push(if k == 0 { 0 } else { 1 });
                    }
                }
                w.typed::<Int64Type>()
                    .write_batch(&vals, Some(&defs), Some(&reps))
                    .unwrap();
            }
        }
        w.close().unwrap();
    }
    rg.close().unwrap();
    writer.close().unwrap();
}

fn split<T: Clone>(v: &[Option<T>]) -> (Vec<T>, Vec<i16>) {
    let vals = v.iter().flatten().cloned().collect();
    let defs = v.iter().map(|x| i16::from(x.is_some())).collect();
    (vals, defs)
}

fn int(v: &Value, k: &str) -> Option<i64> {
    v.get(k).and_then(Value::as_i64)
}
fn float(v: &Value, k: &str) -> Option<f64> {
    v.get(k).and_then(Value::as_f64)
}
fn text(v: &Value, k: &str) -> Option<String> {
    v.get(k)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}
fn list<'a>(doc: &'a Value, k: &str) -> Vec<&'a Value> {
    doc.get(k)
        .and_then(Value::as_array)
        .map(|a| a.iter().collect())
        .unwrap_or_default()
}

/// Convert a full-JSON profile (log lines before the first `{` allowed) into a Parquet directory.
pub fn generate(json_path: &Path, dir: &Path, opts: &GenOptions) {
    let text = std::fs::read_to_string(json_path).unwrap();
    let doc: Value = serde_json::from_str(&text[text.find('{').unwrap()..]).unwrap();
    std::fs::create_dir_all(dir).unwrap();
    metadata(dir, &doc, opts);
    let ins = list(&doc, "instruction");
    for (part, chunk) in ins.chunks(opts.part_rows.max(1)).enumerate() {
        instructions(&dir.join(format!("Instruction_{part}.parquet")), chunk);
    }
    if opts.with_collectives {
        collectives(dir, &list(&doc, "cc_ops"));
    }
    dma(dir, &list(&doc, "dma"));
    frames(dir, &list(&doc, "stack_frame_function_name"));
    framework(dir, &ins);
    summary(dir, &list(&doc, "summary"));
}

fn metadata(dir: &Path, doc: &Value, opts: &GenOptions) {
    let tools = list(doc, "metadata")
        .first()
        .and_then(|m| text(m, "tools_version"))
        .unwrap_or_default();
    let path = dir.join("Metadata.parquet");
    if opts.metadata_long {
        let keys = ["profile_schema_version", "tools_version"];
        write_table(
            &path,
            "Metadata",
            &[
                Col::Str("key", keys.iter().map(|k| Some(k.to_string())).collect()),
                Col::Str("value", vec![Some(opts.version.clone()), Some(tools)]),
            ],
        );
    } else {
        write_table(
            &path,
            "Metadata",
            &[
                Col::Str("profile_schema_version", vec![Some(opts.version.clone())]),
                Col::Str("tools_version", vec![Some(tools)]),
            ],
        );
    }
}

fn instructions(path: &Path, ins: &[&Value]) {
    let ts = |v: &Value| int(v, "timestamp");
    let end = |v: &Value| Some(int(v, "timestamp")? + int(v, "duration").unwrap_or(0));
    let f = |k: &'static str| Col::F64(k, ins.iter().map(|v| float(v, k)).collect());
    write_table(
        path,
        "Instruction",
        &[
            Col::I64("start_ts", ins.iter().map(|v| ts(v)).collect()),
            Col::I64("end_ts", ins.iter().map(|v| end(v)).collect()),
            Col::I64(
                "duration_ns",
                ins.iter().map(|v| int(v, "duration")).collect(),
            ),
            Col::Str(
                "engine",
                ins.iter()
                    .map(|v| text(v, "subgroup").map(|s| s.to_lowercase()))
                    .collect(),
            ),
            Col::Str("opcode", ins.iter().map(|v| text(v, "opcode")).collect()),
            Col::Str(
                "hlo_name",
                ins.iter().map(|v| text(v, "hlo_name")).collect(),
            ),
            Col::Str("layer", ins.iter().map(|v| text(v, "layer")).collect()),
            Col::IdList(
                "stack_frame_ids",
                ins.iter()
                    .map(|v| {
                        list(v, "stack_frame_ids")
                            .iter()
                            .filter_map(|x| x.as_i64())
                            .collect()
                    })
                    .collect(),
            ),
            Col::Str(
                "nki_source_location",
                ins.iter().map(|v| text(v, "nki_source_location")).collect(),
            ),
            f("hbm_read_bytes"),
            f("hbm_write_bytes"),
            f("sbuf_read_bytes"),
            f("sbuf_write_bytes"),
            f("spill_save_bytes"),
            f("spill_reload_bytes"),
            Col::F64(
                "dma_wait_time_ns",
                ins.iter().map(|v| float(v, "dma_wait_time_ns")).collect(),
            ),
            f("raw_flops"),
            f("adjusted_flops"),
            Col::F64(
                "flops_transpose",
                ins.iter().map(|v| float(v, "flops_transpose")).collect(),
            ),
        ],
    );
}

fn collectives(dir: &Path, cc: &[&Value]) {
    let end = |v: &Value| Some(int(v, "timestamp")? + int(v, "duration").unwrap_or(0));
    write_table(
        &dir.join("CcOp.parquet"),
        "CcOp",
        &[
            Col::I64("start_ts", cc.iter().map(|v| int(v, "timestamp")).collect()),
            Col::I64("end_ts", cc.iter().map(|v| end(v)).collect()),
            Col::I64(
                "duration_ns",
                cc.iter().map(|v| int(v, "duration")).collect(),
            ),
            Col::Str(
                "operation",
                cc.iter().map(|v| text(v, "operation")).collect(),
            ),
            Col::Str(
                "algorithm",
                cc.iter().map(|v| text(v, "algorithm")).collect(),
            ),
            Col::F64(
                "input_size",
                cc.iter().map(|v| float(v, "input_size")).collect(),
            ),
            Col::F64(
                "output_size",
                cc.iter().map(|v| float(v, "output_size")).collect(),
            ),
            Col::I64(
                "trigger_start_ts",
                cc.iter().map(|v| int(v, "cc_trigger")).collect(),
            ),
            Col::I64(
                "cc_trigger_start_delay",
                cc.iter()
                    .map(|v| int(v, "cc_trigger_start_delay"))
                    .collect(),
            ),
            Col::Str(
                "replica_group",
                cc.iter().map(|v| text(v, "replica_group")).collect(),
            ),
        ],
    );
}

fn dma(dir: &Path, d: &[&Value]) {
    let end = |v: &Value| Some(int(v, "timestamp")? + int(v, "duration").unwrap_or(0));
    write_table(
        &dir.join("DmaPacket.parquet"),
        "DmaPacket",
        &[
            Col::I64("start_ts", d.iter().map(|v| int(v, "timestamp")).collect()),
            Col::I64("end_ts", d.iter().map(|v| end(v)).collect()),
            Col::Str(
                "queue_type",
                d.iter().map(|_| Some("dma".to_string())).collect(),
            ),
            Col::Str(
                "queue_name",
                d.iter().map(|v| text(v, "subgroup")).collect(),
            ),
            Col::I64(
                "transfer_bytes",
                d.iter().map(|v| int(v, "transfer_size")).collect(),
            ),
        ],
    );
}

fn frames(dir: &Path, f: &[&Value]) {
    write_table(
        &dir.join("KernelStackFrames.parquet"),
        "KernelStackFrames",
        &[
            Col::I64(
                "stack_frame_id",
                f.iter().map(|v| int(v, "stack_frame_id")).collect(),
            ),
            Col::Str(
                "fully_qualified_function_name",
                f.iter()
                    .map(|v| text(v, "fully_qualified_function_name"))
                    .collect(),
            ),
            Col::I64(
                "parent_stack_frame_id",
                f.iter().map(|v| int(v, "parent_stack_frame_id")).collect(),
            ),
        ],
    );
}

fn summary(dir: &Path, s: &[&Value]) {
    let Some(first) = s.first().and_then(|v| v.as_object()) else {
        return;
    };
    let mut cols = vec![Col::Str(
        "profile_id",
        vec![Some("n_7cf2c3ef5a1e4d0b".into())],
    )];
    for (k, v) in first {
        // Column names are `'static`; a helper's few summary names may live for the whole run.
        let k: &'static str = Box::leak(k.clone().into_boxed_str());
        cols.push(Col::F64(k, vec![v.as_f64()]));
    }
    write_table(&dir.join("Summary.parquet"), "Summary", &cols);
}

/// `FrameworkInstruction` (one row per layer path: first start, last end, merged intervals as text) and
/// `FrameworkNode` (every path prefix, with parent and children).
fn framework(dir: &Path, ins: &[&Value]) {
    use std::collections::BTreeMap;
    let mut spans: BTreeMap<String, Vec<(i64, i64)>> = BTreeMap::new();
    for v in ins {
        let (Some(layer), Some(t)) = (text(v, "layer"), int(v, "timestamp")) else {
            continue;
        };
        spans
            .entry(layer)
            .or_default()
            .push((t, t + int(v, "duration").unwrap_or(0)));
    }
    let mut names = Vec::new();
    let (mut starts, mut ends, mut intervals) = (Vec::new(), Vec::new(), Vec::new());
    for (path, mut ivs) in spans.clone() {
        ivs.sort();
        let mut merged: Vec<(i64, i64)> = Vec::new();
        for (s, e) in ivs {
            match merged.last_mut() {
                Some(last) if s <= last.1 => last.1 = last.1.max(e),
                _ => merged.push((s, e)),
            }
        }
        names.push(Some(path));
        starts.push(merged.first().map(|i| i.0));
        ends.push(merged.last().map(|i| i.1));
        let text: Vec<String> = merged.iter().map(|(s, e)| format!("[{s}, {e}]")).collect();
        intervals.push(Some(format!("[{}]", text.join(", "))));
    }
    write_table(
        &dir.join("FrameworkInstruction.parquet"),
        "FrameworkInstruction",
        &[
            Col::Str("framework_name", names),
            Col::I64("start_ts", starts),
            Col::I64("end_ts", ends),
            Col::Str("time_intervals", intervals),
        ],
    );
    let mut nodes: BTreeMap<String, (Option<String>, Vec<String>)> = BTreeMap::new();
    for path in spans.keys() {
        let parts: Vec<&str> = path.split('/').collect();
        for depth in 1..=parts.len() {
            let node = parts[..depth].join("/");
            let parent = (depth > 1).then(|| parts[..depth - 1].join("/"));
            nodes
                .entry(node.clone())
                .or_insert((parent.clone(), Vec::new()));
            if let Some(p) = parent {
                let children = &mut nodes.get_mut(&p).expect("parent inserted first").1;
                if !children.contains(&node) {
                    children.push(node);
                }
            }
        }
    }
    write_table(
        &dir.join("FrameworkNode.parquet"),
        "FrameworkNode",
        &[
            Col::Str("node_name", nodes.keys().map(|k| Some(k.clone())).collect()),
            Col::Str("parent_name", nodes.values().map(|v| v.0.clone()).collect()),
            Col::Str(
                "children_names",
                nodes
                    .values()
                    .map(|v| Some(serde_json::to_string(&v.1).unwrap()))
                    .collect(),
            ),
            Col::F64("hfu", nodes.values().map(|_| None).collect()),
            Col::F64("mfu", nodes.values().map(|_| None).collect()),
        ],
    );
}
