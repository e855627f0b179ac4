//! JSON as `neuron-explorer view` prints it: log lines first, the document from the first `{`. Errors
//! point at the line and column in the whole file and at the key path (`instruction[3].timestamp`).
//! Numbers arrive as JSON numbers or as numeric strings depending on the tool version; both are read.

use std::path::Path;

use serde::de::{DeserializeOwned, Deserializer, Error as _};
use serde::Deserialize;
use serde_json::Value;

use crate::profiler::neuron::error::{NeuronError, NeuronResult as Result};

/// The byte offset of the document (first `{`), or an error saying none was found.
pub fn document_start(path: &Path, text: &str) -> Result<usize> {
    text.find('{').ok_or_else(|| {
        NeuronError::parse(
            path,
            format!("byte {}", text.len()),
            "no JSON object found (expected `{` after the tool's log lines); \
             is this the output of `view --output-format json` or `summary-json`?",
        )
    })
}

/// Deserialise the document that starts at the first `{`, skipping the log lines before it.
pub fn parse_after_log<T: DeserializeOwned>(path: &Path, text: &str) -> Result<T> {
    let start = document_start(path, text)?;
    let lines_before = text[..start].matches('\n').count();
    let mut de = serde_json::Deserializer::from_str(&text[start..]);
    let value = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let key = e.path().to_string();
        let inner = e.into_inner();
        let line = inner.line() + lines_before;
        // serde_json appends its own (document-relative) position; the file-relative one replaces it.
        let message = inner.to_string();
        let message = message
            .rsplit_once(" at line ")
            .map_or(message.as_str(), |(m, _)| m);
        let at = if key == "." || key.is_empty() {
            format!("line {line}, column {}", inner.column())
        } else {
            format!("line {line}, column {}, key `{key}`", inner.column())
        };
        NeuronError::parse(path, at, message)
    })?;
    de.end().map_err(|e| {
        NeuronError::parse(
            path,
            format!("line {}", e.line() + lines_before),
            format!("text after the JSON document: {e}"),
        )
    })?;
    Ok(value)
}

/// A number given as a JSON number or a numeric string; `null` and `""` are `None`.
pub fn opt_f64<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    match Value::deserialize(d)? {
        Value::Null => Ok(None),
        Value::Number(n) => Ok(n.as_f64()),
        Value::String(s) if s.trim().is_empty() => Ok(None),
        Value::String(s) => s
            .trim()
            .parse::<f64>()
            .map(Some)
            .map_err(|_| D::Error::custom(format!("expected a number, found \"{s}\""))),
        other => Err(D::Error::custom(format!(
            "expected a number, found {other}"
        ))),
    }
}

/// A non-negative integer time or size (nanoseconds, bytes). Integers are read exactly (epoch
/// nanoseconds do not fit an f64); fractions are truncated.
pub fn opt_u64<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    let v = Value::deserialize(d)?;
    let exact = match &v {
        Value::Number(n) => n.as_u64(),
        Value::String(s) => s.trim().parse::<u64>().ok(),
        _ => None,
    };
    if exact.is_some() {
        return Ok(exact);
    }
    match opt_f64(v).map_err(D::Error::custom)? {
        None => Ok(None),
        Some(x) if x >= 0.0 && x.is_finite() => Ok(Some(x as u64)),
        Some(x) => Err(D::Error::custom(format!(
            "expected a non-negative number, found {x}"
        ))),
    }
}

/// A string, a number written as text, or `None` for `null` and `""`.
pub fn opt_text<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    match Value::deserialize(d)? {
        Value::Null => Ok(None),
        Value::String(s) if s.is_empty() => Ok(None),
        Value::String(s) => Ok(Some(s)),
        Value::Number(n) => Ok(Some(n.to_string())),
        Value::Bool(b) => Ok(Some(b.to_string())),
        other => Ok(Some(other.to_string())),
    }
}

/// Stack frame ids as a list of numbers/numeric strings, or one string such as `"[3, 7]"` or `"3,7"`.
pub fn ids<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u64>, D::Error> {
    let v = Value::deserialize(d)?;
    match &v {
        Value::Null => Ok(Vec::new()),
        Value::Array(items) => items.iter().map(id_of).collect::<Result<_, String>>(),
        Value::Number(_) => id_of(&v).map(|id| vec![id]),
        Value::String(s) => parse_id_list(s),
        Value::Bool(_) | Value::Object(_) => Err("expected a list of stack frame ids".into()),
    }
    .map_err(D::Error::custom)
}

fn id_of(v: &Value) -> Result<u64, String> {
    match v {
        Value::Number(n) => n.as_u64().ok_or_else(|| format!("bad stack frame id {n}")),
        Value::String(s) => s
            .trim()
            .parse()
            .map_err(|_| format!("bad stack frame id \"{s}\"")),
        other => Err(format!("bad stack frame id {other}")),
    }
}

/// `"[3, 7]"`, `"3,7"`, `"3 7"` or `""`.
pub fn parse_id_list(s: &str) -> Result<Vec<u64>, String> {
    s.trim_matches(|c: char| c == '[' || c == ']' || c.is_whitespace())
        .split(|c: char| c == ',' || c.is_whitespace())
        .filter(|w| !w.is_empty())
        .map(|w| {
            w.parse()
                .map_err(|_| format!("bad stack frame id \"{w}\" in \"{s}\""))
        })
        .collect()
}
