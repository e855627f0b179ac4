//! `view --output-format summary-json`: one object keyed by profile id (one per subgraph), each a flat
//! map of metrics. Numbers are kept in the tool's units (seconds, bytes, 0–1 fractions); `null` stays
//! `None`; text values (versions) go to `Summary::text`.

use std::path::Path;

use serde_json::{Map, Value};

use crate::profiler::neuron::error::{NeuronError, Result};
use crate::profiler::neuron::readers::json_text::parse_after_log;
use crate::profiler::neuron::readers::model::Summary;

/// Read a summary-json file.
pub fn read(path: &Path) -> Result<Vec<Summary>> {
    let text = std::fs::read_to_string(path).map_err(|e| NeuronError::io(path, e))?;
    parse(path, &text)
}

/// Parse summary-json text (`path` names it in errors).
pub fn parse(path: &Path, text: &str) -> Result<Vec<Summary>> {
    let doc: Map<String, Value> = parse_after_log(path, text)?;
    if doc.is_empty() {
        return Err(NeuronError::parse(
            path,
            "key `.`",
            "the summary has no profile id; was the NTFF empty?",
        ));
    }
    doc.into_iter()
        .map(|(id, value)| match value {
            Value::Object(metrics) => Ok(summary(id, metrics)),
            other => Err(NeuronError::parse(
                path,
                format!("key `{id}`"),
                format!("expected an object of metrics, found {}", kind(&other)),
            )),
        })
        .collect()
}

/// One profile id's metrics. Nested values are not metrics; they are kept as their JSON text.
pub(crate) fn summary(profile_id: String, metrics: Map<String, Value>) -> Summary {
    let mut out = Summary {
        profile_id,
        ..Summary::default()
    };
    for (name, value) in metrics {
        match value {
            Value::Null => {
                out.metrics.insert(name, None);
            }
            Value::Number(n) => {
                out.metrics.insert(name, n.as_f64());
            }
            Value::String(s) => {
                out.text.insert(name, s);
            }
            other => {
                out.text.insert(name, other.to_string());
            }
        }
    }
    out
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}
