//! The full JSON's `layer_summary` (one record per subgraph or layer path, with its span and the
//! tool's per-engine figures) and the tool's own layout of its summary (`summary_groups`,
//! `summary_group_order`, `terminology`: each a list holding one object, or the object itself).

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{Map, Value};

use crate::profiler::neuron::error::{NeuronError, NeuronResult as Result};
use crate::profiler::neuron::readers::model::{LayerNode, SummaryLayout};

/// `layer_summary`: a list of objects, one per layer, named by `name`, `layer` or `node_name`, with
/// an optional `parent`/`parent_name`, `hfu`/`mfu` (`tensor_engine_hfu`/`tensor_engine_mfu` in
/// profiler 2.27), `start`/`end` in ns and per-engine figures. Anything else is an error naming the
/// entry.
pub fn layers(path: &Path, v: &Value) -> Result<Vec<LayerNode>> {
    let items = match v {
        Value::Null => return Ok(Vec::new()),
        Value::Array(items) => items,
        _ => {
            return Err(NeuronError::parse(
                path,
                "key `layer_summary`",
                "expected a list of layer records (`name`, `start`, `end`, per-engine figures)",
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
            layer(m)
                .ok_or_else(|| NeuronError::parse(path, at(), "no `name`, `layer` or `node_name`"))
        })
        .collect()
}

fn layer(m: &Map<String, Value>) -> Option<LayerNode> {
    let text = |keys: &[&str]| {
        keys.iter()
            .find_map(|k| m.get(*k).and_then(Value::as_str))
            .map(str::to_string)
    };
    let name = text(&["name", "layer", "node_name"])?;
    let figures: BTreeMap<String, f64> = m
        .iter()
        .filter_map(|(k, v)| Some((k.clone(), number(v)?)))
        .collect();
    let fig = |keys: &[&str]| keys.iter().find_map(|k| figures.get(*k).copied());
    let time = |k: &str| figures.get(k).filter(|t| **t >= 0.0).map(|t| *t as u64);
    let start_ns = time("start");
    let end_ns = time("end").or_else(|| Some(start_ns? + time("duration")?));
    Some(LayerNode {
        parent: text(&["parent", "parent_name"]),
        children: Vec::new(),
        hfu: fig(&["hfu", "tensor_engine_hfu"]),
        mfu: fig(&["mfu", "tensor_engine_mfu"]),
        start_ns,
        end_ns,
        name,
        figures,
    })
}

/// A number, or numeric text (some releases write numbers as text).
fn number(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// The object a layout key holds: the object itself, or the first record of a list.
fn record(v: &Value) -> Option<&Map<String, Value>> {
    match v {
        Value::Object(m) => Some(m),
        Value::Array(items) => items.first().and_then(Value::as_object),
        _ => None,
    }
}

/// `summary_groups`, `summary_group_order` and `terminology`; a key of another shape is left out
/// (the report then keeps its own order and labels) with a note.
pub fn layout(
    groups: &Value,
    order: &Value,
    terminology: &Value,
    notes: &mut Vec<String>,
) -> SummaryLayout {
    let mut shape = |key: &str, v: &Value| {
        let r = record(v);
        if r.is_none() && !v.is_null() {
            notes.push(format!(
                "`{key}` is not a list holding one object: the report keeps its own order and labels"
            ));
        }
        r.cloned().unwrap_or_default()
    };
    let text = |m: Map<String, Value>| -> BTreeMap<String, String> {
        m.into_iter()
            .filter_map(|(k, v)| Some((k, v.as_str()?.to_string())))
            .collect()
    };
    SummaryLayout {
        groups: text(shape("summary_groups", groups)),
        group_order: shape("summary_group_order", order)
            .into_iter()
            .filter_map(|(k, v)| Some((k, number(&v)? as i64)))
            .collect(),
        terminology: text(shape("terminology", terminology)),
    }
}
