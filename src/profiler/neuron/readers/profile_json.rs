//! `view --output-format json`: the full profile. Every top-level key is optional, except in a
//! complete output (one with `summary_groups`, as profiler 2.27 writes), which must hold `summary`,
//! `instruction` and `layer_summary`; times are nanoseconds and are rebased to the first timestamp.
//! An output holding only `profile_info` means the NEFF and NTFF did not match and is an error.
//! Unknown keys are skipped whatever their type (they vary by release) and listed for `-v`.

use std::path::Path;

use serde_json::Value;

use crate::profiler::neuron::error::{NeuronError, NeuronResult as Result};
use crate::profiler::neuron::readers::json_text::parse_after_log;
use crate::profiler::neuron::readers::layer_summary::{layers, layout};
use crate::profiler::neuron::readers::model::{
    ActivePeriod, Collective, DmaTransfer, Engine, Instruction, NeuronProfile, StackFrame,
};
use crate::profiler::neuron::readers::profile_document::{
    Document, RawActive, RawCollective, RawInstruction,
};
use crate::profiler::neuron::readers::summary_json::summary;

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
    if doc.is_complete_output() {
        require_lists(path, &doc)?;
    }
    let mut p = NeuronProfile {
        source: path.into(),
        ignored_keys: doc.ignored,
        ..NeuronProfile::default()
    };
    p.instructions = convert(doc.instruction.unwrap_or_default(), |n, r| {
        instruction(path, n, r)
    })?;
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
    p.active_periods = convert(doc.active_time, |n, r| active_period(path, n, r))?;
    p.summaries = doc
        .summary
        .unwrap_or_default()
        .into_iter()
        .take(1)
        .map(|m| {
            summary("summary".into(), m).map_err(|(message, key)| {
                NeuronError::parse(path, format!("key `summary[0].{key}`"), message)
            })
        })
        .collect::<Result<_>>()?;
    if let Some(first) = doc.metadata.into_iter().next() {
        p.metadata = first.into_iter().map(|(k, v)| (k, text_of(v))).collect();
    }
    if let Some(version) = doc.profile_info.as_ref().and_then(|v| {
        v.pointer("/0/profiler_version")
            .or_else(|| v.get("profiler_version"))
    }) {
        p.metadata
            .insert("profiler_version".into(), text_of(version.clone()));
    }
    p.layers = layers(path, doc.layer_summary.as_ref().unwrap_or(&Value::Null))?;
    p.summary_layout = layout(
        &doc.summary_groups,
        &doc.summary_group_order,
        &doc.terminology,
        &mut p.notes,
    );
    p.stack_frames = frames(path, &doc.stack_frame_function_name)?;
    if let Value::Array(w) = &doc.warnings {
        p.notes.extend(w.iter().map(warning));
    }
    p.rebase();
    Ok(p)
}

/// A complete output without one of the lists a report is made of was cut short or edited: say which.
fn require_lists(path: &Path, doc: &Document) -> Result<()> {
    let missing = [
        ("summary", doc.summary.is_none()),
        ("instruction", doc.instruction.is_none()),
        ("layer_summary", doc.layer_summary.is_none()),
    ];
    match missing.iter().find(|(_, m)| *m) {
        Some((key, _)) => Err(NeuronError::parse(
            path,
            format!("key `{key}`"),
            "missing: a complete `view --output-format json` output (it has `summary_groups`) holds \
             `summary`, `instruction` and `layer_summary`; view the NTFF again",
        )),
        None => Ok(()),
    }
}

/// `{category, message}` records (profiler 2.27) or plain text.
fn warning(v: &Value) -> String {
    match (v.get("category").and_then(Value::as_str), v.get("message")) {
        (Some(category), Some(message)) => {
            format!(
                "profiler warning ({category}): {}",
                text_of(message.clone())
            )
        }
        _ => format!("profiler warning: {}", text_of(v.clone())),
    }
}

/// `timestamp` + `duration` (documented) or `start_ts` + `end_ts`/`duration_ns` (profiler 2.27).
fn active_period(path: &Path, n: usize, r: RawActive) -> Result<ActivePeriod> {
    let start = r.start_ts.or(r.timestamp).ok_or_else(|| {
        NeuronError::parse(
            path,
            format!("key `active_time[{n}]`"),
            "no `start_ts` or `timestamp`: the period cannot be placed on the timeline",
        )
    })?;
    let end = r
        .end_ts
        .or_else(|| Some(start.saturating_add(r.duration_ns.or(r.duration)?)))
        .unwrap_or(start);
    Ok(ActivePeriod {
        start_ns: start,
        end_ns: end.max(start),
        engine: r
            .engine
            .or(r.subgroup)
            .or(r.label)
            .as_deref()
            .map(Engine::parse),
    })
}

/// Convert each entry of a list, with its index for error messages.
fn convert<R, T>(list: Vec<R>, f: impl Fn(usize, R) -> Result<T>) -> Result<Vec<T>> {
    list.into_iter().enumerate().map(|(n, r)| f(n, r)).collect()
}

/// `profile_info` and nothing with content beside it.
fn holds_only_profile_info(doc: &Document) -> bool {
    doc.instruction.as_ref().is_none_or(Vec::is_empty)
        && doc.cc_ops.is_empty()
        && doc.dma.is_empty()
        && doc.summary.as_ref().is_none_or(Vec::is_empty)
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
