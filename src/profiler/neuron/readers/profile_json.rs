//! `view --output-format json`: the full profile. Every top-level key is optional; times are
//! nanoseconds and are rebased to the first timestamp. An output holding only `profile_info` means the
//! NEFF and NTFF did not match and is an error. Unknown keys are ignored (they vary by release).

use std::path::Path;

use serde::Deserialize;
use serde_json::{Map, Value};

use crate::profiler::neuron::error::{NeuronError, Result};
use crate::profiler::neuron::readers::json_text::{
    ids, opt_f64, opt_text, opt_u64, parse_after_log,
};
use crate::profiler::neuron::readers::model::{
    ActivePeriod, Collective, DmaTransfer, Engine, Instruction, LayerNode, NeuronProfile,
    StackFrame,
};
use crate::profiler::neuron::readers::summary_json::summary;

#[derive(Deserialize, Default)]
#[serde(default)]
struct Document {
    summary: Vec<Map<String, Value>>,
    instruction: Vec<RawInstruction>,
    cc_ops: Vec<RawCollective>,
    dma: Vec<RawDma>,
    active_time: Vec<RawActive>,
    metadata: Vec<Map<String, Value>>,
    layer_summary: Value,
    stack_frame_function_name: Value,
    warnings: Value,
    profile_info: Option<Value>,
}

#[derive(Deserialize)]
struct RawInstruction {
    #[serde(deserialize_with = "opt_u64")]
    timestamp: Option<u64>,
    #[serde(default, deserialize_with = "opt_u64")]
    duration: Option<u64>,
    #[serde(default, deserialize_with = "opt_text")]
    label: Option<String>,
    #[serde(default, deserialize_with = "opt_text")]
    subgroup: Option<String>,
    #[serde(default, deserialize_with = "opt_text")]
    opcode: Option<String>,
    #[serde(default, deserialize_with = "opt_text")]
    hlo_name: Option<String>,
    #[serde(default, deserialize_with = "opt_text")]
    layer: Option<String>,
    #[serde(default, deserialize_with = "opt_text")]
    nki_source_location: Option<String>,
    #[serde(default, deserialize_with = "ids")]
    stack_frame_ids: Vec<u64>,
    #[serde(default, deserialize_with = "opt_f64")]
    hbm_read_bytes: Option<f64>,
    #[serde(default, deserialize_with = "opt_f64")]
    hbm_write_bytes: Option<f64>,
    #[serde(default, deserialize_with = "opt_f64")]
    sbuf_read_bytes: Option<f64>,
    #[serde(default, deserialize_with = "opt_f64")]
    sbuf_write_bytes: Option<f64>,
    #[serde(default, deserialize_with = "opt_f64")]
    spill_save_bytes: Option<f64>,
    #[serde(default, deserialize_with = "opt_f64")]
    spill_reload_bytes: Option<f64>,
    #[serde(default, deserialize_with = "opt_f64")]
    dma_wait_time_ns: Option<f64>,
    #[serde(default, deserialize_with = "opt_f64")]
    raw_flops: Option<f64>,
    #[serde(default, deserialize_with = "opt_f64")]
    adjusted_flops: Option<f64>,
    #[serde(default, deserialize_with = "opt_f64")]
    flops_transpose: Option<f64>,
}

#[derive(Deserialize)]
struct RawCollective {
    #[serde(deserialize_with = "opt_u64")]
    timestamp: Option<u64>,
    #[serde(default, deserialize_with = "opt_u64")]
    duration: Option<u64>,
    #[serde(default, deserialize_with = "opt_text")]
    operation: Option<String>,
    #[serde(default, deserialize_with = "opt_u64")]
    cc_trigger: Option<u64>,
    #[serde(default, deserialize_with = "opt_u64")]
    cc_trigger_start_delay: Option<u64>,
    #[serde(default, deserialize_with = "opt_f64")]
    input_size: Option<f64>,
    #[serde(default, deserialize_with = "opt_f64")]
    output_size: Option<f64>,
    #[serde(default, deserialize_with = "opt_text")]
    replica_group: Option<String>,
    #[serde(default, deserialize_with = "opt_text")]
    algorithm: Option<String>,
}

#[derive(Deserialize)]
struct RawDma {
    #[serde(deserialize_with = "opt_u64")]
    timestamp: Option<u64>,
    #[serde(default, deserialize_with = "opt_u64")]
    duration: Option<u64>,
    #[serde(default, deserialize_with = "opt_text")]
    subgroup: Option<String>,
    #[serde(default, deserialize_with = "opt_f64")]
    transfer_size: Option<f64>,
}

#[derive(Deserialize)]
struct RawActive {
    #[serde(deserialize_with = "opt_u64")]
    timestamp: Option<u64>,
    #[serde(default, deserialize_with = "opt_u64")]
    duration: Option<u64>,
    #[serde(default, deserialize_with = "opt_text")]
    label: Option<String>,
    #[serde(default, deserialize_with = "opt_text")]
    subgroup: Option<String>,
}

/// Read a full-JSON profile file.
pub fn read(path: &Path) -> Result<NeuronProfile> {
    let text = std::fs::read_to_string(path).map_err(|e| NeuronError::io(path, e))?;
    parse(path, &text)
}

/// Parse full-JSON text (`path` names it in errors).
pub fn parse(path: &Path, text: &str) -> Result<NeuronProfile> {
    let doc: Document = parse_after_log(path, text)?;
    if doc.profile_info.is_some() && holds_only_profile_info(&doc) {
        return Err(NeuronError::NeffMismatch { path: path.into() });
    }
    let mut p = NeuronProfile {
        source: path.into(),
        ..NeuronProfile::default()
    };
    p.instructions = convert(doc.instruction, |n, r| instruction(path, n, r))?;
    p.collectives = convert(doc.cc_ops, |n, r| collective(path, n, r))?;
    p.dma = convert(doc.dma, |n, r| {
        let start = required(path, "dma", n, r.timestamp)?;
        Ok(DmaTransfer {
            start_ns: start,
            end_ns: start.saturating_add(r.duration.unwrap_or(0)),
            queue: r.subgroup.unwrap_or_default(),
            bytes: r.transfer_size.unwrap_or(0.0),
        })
    })?;
    p.active_periods = convert(doc.active_time, |n, r| {
        let start = required(path, "active_time", n, r.timestamp)?;
        Ok(ActivePeriod {
            start_ns: start,
            end_ns: start.saturating_add(r.duration.unwrap_or(0)),
            engine: r.subgroup.or(r.label).as_deref().map(Engine::parse),
        })
    })?;
    p.summaries = doc
        .summary
        .into_iter()
        .take(1)
        .map(|m| summary("summary".into(), m))
        .collect();
    if let Some(first) = doc.metadata.into_iter().next() {
        p.metadata = first.into_iter().map(|(k, v)| (k, text_of(v))).collect();
    }
    p.layers = layers(path, &doc.layer_summary)?;
    p.stack_frames = frames(path, &doc.stack_frame_function_name)?;
    if let Value::Array(w) = &doc.warnings {
        p.notes.extend(
            w.iter()
                .map(|v| format!("profiler warning: {}", text_of(v.clone()))),
        );
    }
    p.rebase();
    Ok(p)
}

/// Convert each entry of a list, with its index for error messages.
fn convert<R, T>(list: Vec<R>, f: impl Fn(usize, R) -> Result<T>) -> Result<Vec<T>> {
    list.into_iter().enumerate().map(|(n, r)| f(n, r)).collect()
}

/// `profile_info` and nothing with content beside it.
fn holds_only_profile_info(doc: &Document) -> bool {
    doc.instruction.is_empty()
        && doc.cc_ops.is_empty()
        && doc.dma.is_empty()
        && doc.summary.is_empty()
        && doc.active_time.is_empty()
        && doc.metadata.is_empty()
}

fn required(path: &Path, list: &str, n: usize, v: Option<u64>) -> Result<u64> {
    v.ok_or_else(|| {
        NeuronError::parse(
            path,
            format!("key `{list}[{n}].timestamp`"),
            "missing timestamp: the entry cannot be placed on the timeline",
        )
    })
}

fn instruction(path: &Path, n: usize, r: RawInstruction) -> Result<Instruction> {
    let start = required(path, "instruction", n, r.timestamp)?;
    let engine = r
        .subgroup
        .as_deref()
        .map(Engine::parse)
        .filter(|e| !matches!(e, Engine::Other(_)))
        .or_else(|| r.label.as_deref().map(Engine::parse));
    Ok(Instruction {
        start_ns: start,
        end_ns: start.saturating_add(r.duration.unwrap_or(0)),
        engine,
        opcode: r.opcode.unwrap_or_default(),
        hlo_name: r.hlo_name,
        layer: r.layer,
        stack_frame_ids: r.stack_frame_ids,
        nki_source_location: r.nki_source_location,
        hbm_read_bytes: r.hbm_read_bytes,
        hbm_write_bytes: r.hbm_write_bytes,
        sbuf_read_bytes: r.sbuf_read_bytes,
        sbuf_write_bytes: r.sbuf_write_bytes,
        spill_save_bytes: r.spill_save_bytes,
        spill_reload_bytes: r.spill_reload_bytes,
        dma_wait_ns: r.dma_wait_time_ns,
        raw_flops: r.raw_flops,
        adjusted_flops: r.adjusted_flops,
        transpose_flops: r.flops_transpose,
    })
}

/// The trigger is `cc_trigger` when given, else the start minus `cc_trigger_start_delay` when given.
fn collective(path: &Path, n: usize, r: RawCollective) -> Result<Collective> {
    let start = required(path, "cc_ops", n, r.timestamp)?;
    let trigger = r
        .cc_trigger
        .or_else(|| r.cc_trigger_start_delay.map(|d| start.saturating_sub(d)));
    Ok(Collective {
        start_ns: start,
        end_ns: start.saturating_add(r.duration.unwrap_or(0)),
        operation: r.operation.unwrap_or_default(),
        algorithm: r.algorithm,
        trigger_ns: trigger,
        input_size: r.input_size,
        output_size: r.output_size,
        replica_group: r.replica_group,
    })
}

fn text_of(v: Value) -> String {
    match v {
        Value::String(s) => s,
        other => other.to_string(),
    }
}

/// `layer_summary`: a list of objects, one per layer, named by `layer`, `name` or `node_name`, with an
/// optional `parent`/`parent_name` and `hfu`/`mfu`. The shape is not documented; anything else is an error.
fn layers(path: &Path, v: &Value) -> Result<Vec<LayerNode>> {
    let items = match v {
        Value::Null => return Ok(Vec::new()),
        Value::Array(items) => items,
        _ => {
            return Err(NeuronError::parse(
                path,
                "key `layer_summary`",
                "expected a list of layers",
            ))
        }
    };
    items
        .iter()
        .enumerate()
        .map(|(n, item)| {
            let at = || format!("key `layer_summary[{n}]`");
            let Value::Object(m) = item else {
                return Err(NeuronError::parse(path, at(), "expected an object"));
            };
            let name = ["layer", "name", "node_name"]
                .iter()
                .find_map(|k| m.get(*k).and_then(Value::as_str))
                .ok_or_else(|| {
                    NeuronError::parse(path, at(), "no `layer`, `name` or `node_name`")
                })?;
            let parent = ["parent", "parent_name"]
                .iter()
                .find_map(|k| m.get(*k).and_then(Value::as_str))
                .map(str::to_string);
            Ok(LayerNode {
                name: name.to_string(),
                parent,
                children: Vec::new(),
                hfu: m.get("hfu").and_then(Value::as_f64),
                mfu: m.get("mfu").and_then(Value::as_f64),
            })
        })
        .collect()
}

/// `stack_frame_function_name`: an object `{"<id>": "<function>"}` or a list of objects with
/// `stack_frame_id`, `fully_qualified_function_name`/`function_name` and `parent_stack_frame_id`.
fn frames(path: &Path, v: &Value) -> Result<Vec<StackFrame>> {
    let key = "stack_frame_function_name";
    match v {
        Value::Null => Ok(Vec::new()),
        Value::Object(m) => m
            .iter()
            .map(|(id, name)| {
                let id = id.trim().parse().map_err(|_| {
                    NeuronError::parse(
                        path,
                        format!("key `{key}.{id}`"),
                        "a stack frame id must be a number",
                    )
                })?;
                Ok(StackFrame {
                    id,
                    function: text_of(name.clone()),
                    parent: None,
                })
            })
            .collect(),
        Value::Array(items) => items
            .iter()
            .enumerate()
            .map(|(n, item)| frame_entry(path, key, n, item))
            .collect(),
        _ => Err(NeuronError::parse(
            path,
            format!("key `{key}`"),
            "expected an object or a list",
        )),
    }
}

fn frame_entry(path: &Path, key: &str, n: usize, item: &Value) -> Result<StackFrame> {
    let at = || format!("key `{key}[{n}]`");
    let num = |k: &str| {
        item.get(k)
            .and_then(|v| v.as_u64().or_else(|| v.as_str()?.parse().ok()))
    };
    let id = num("stack_frame_id")
        .ok_or_else(|| NeuronError::parse(path, at(), "no `stack_frame_id`"))?;
    let function = ["fully_qualified_function_name", "function_name", "name"]
        .iter()
        .find_map(|k| item.get(*k).and_then(Value::as_str))
        .ok_or_else(|| NeuronError::parse(path, at(), "no `fully_qualified_function_name`"))?;
    Ok(StackFrame {
        id,
        function: function.to_string(),
        parent: num("parent_stack_frame_id"),
    })
}
