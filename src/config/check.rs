//! Validation. Each layer is extracted alone on top of the default preset (which is valid and sets
//! every key), so a bad key or value is blamed on the source that wrote it. Then the checks serde
//! cannot do: string keys that take one of a fixed set of values, and names that refer to other keys.

use figment::error::Kind;
use figment::Figment;
use serde_yaml::{Mapping, Value};

use super::closed_sets::ExportPage;
use super::error::ConfigError;
use super::origin::Layer;
use super::origin::{dotted, flow, origin_of, Origin};
use super::schema::{Config, Format};
use super::suggest::{did_you_mean, get, key_path};
use crate::region::Renames;

/// Check one layer; scalars given where a string or a list is expected are fixed up in place
/// (`devices=0` means the string "0", `regions.include=decode` the list `[decode]`).
pub(crate) fn validate_layer(
    base: &Layer,
    layer: &mut Layer,
    tree: &Value,
) -> Result<(), ConfigError> {
    loop {
        let err = match Figment::from(base.clone())
            .merge(layer.clone())
            .extract::<Config>()
        {
            Ok(_) => return Ok(()),
            Err(err) => err,
        };
        if !coerce(&mut layer.data, &err) {
            return Err(describe(err, layer, tree));
        }
    }
}

/// Map an error of the fully merged figment to the layer that set the offending key.
pub(crate) fn describe_merged(err: figment::Error, layers: &[Layer], tree: &Value) -> ConfigError {
    let origin = origin_of(layers, &err.path)
        .cloned()
        .unwrap_or(Origin::DefaultPreset);
    let layer = layers
        .iter()
        .rev()
        .find(|l| l.origin == origin)
        .expect("origin names a layer");
    describe(err, layer, tree)
}

fn coerce(data: &mut Mapping, err: &figment::Error) -> bool {
    let Kind::InvalidType(_, expected) = &err.kind else {
        return false;
    };
    let Some(slot) = get_mut(data, &err.path) else {
        return false;
    };
    match expected.as_str() {
        "a string" => match slot {
            // Every item in one go; `any` would stop at the first.
            Value::Sequence(items) => items.iter_mut().map(stringify).filter(|&c| c).count() > 0,
            scalar => stringify(scalar),
        },
        "a sequence" if matches!(slot, Value::String(_) | Value::Number(_) | Value::Bool(_)) => {
            *slot = Value::Sequence(vec![slot.clone()]);
            true
        }
        _ => false,
    }
}

fn stringify(value: &mut Value) -> bool {
    if matches!(value, Value::Number(_) | Value::Bool(_)) {
        *value = Value::String(flow(value, false));
        return true;
    }
    false
}

fn get_mut<'a>(data: &'a mut Mapping, path: &[String]) -> Option<&'a mut Value> {
    let (first, rest) = path.split_first()?;
    let mut node = data.get_mut(first.as_str())?;
    for segment in rest {
        node = match node {
            Value::Mapping(map) => map.get_mut(segment.as_str())?,
            Value::Sequence(items) => items.get_mut(segment.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    Some(node)
}

/// The key path of an error, list items written `key[0]`.
fn key_of(data: &Mapping, path: &[String]) -> String {
    let mut shown = String::new();
    for (i, segment) in path.iter().enumerate() {
        let in_list = i > 0 && matches!(get(data, &path[..i]), Some(Value::Sequence(_)));
        if in_list {
            shown.push_str(&format!("[{segment}]"));
        } else {
            if i > 0 {
                shown.push('.');
            }
            shown.push_str(&dotted(std::slice::from_ref(segment)));
        }
    }
    shown
}

fn describe(err: figment::Error, layer: &Layer, tree: &Value) -> ConfigError {
    let origin = layer.origin.clone();
    let key = key_of(&layer.data, &err.path);
    match err.kind {
        Kind::UnknownField(field, expected) => {
            let mut parent = err.path.clone();
            if parent.last() == Some(&field) {
                parent.pop();
            }
            let mut full = parent.clone();
            full.push(field.clone());
            let below = get(&layer.data, &full);
            let hint = match key_path(&parent, &field, below, expected, tree) {
                Some(path) => format!(" (did you mean `{}`?)", dotted(&path)),
                None if parent.is_empty() => {
                    format!("; valid top-level keys: {}", expected.join(", "))
                }
                None => format!(
                    "; valid keys under `{}`: {}",
                    dotted(&parent),
                    expected.join(", ")
                ),
            };
            ConfigError::UnknownKey {
                key: dotted(&full),
                origin,
                hint,
            }
        }
        Kind::UnknownVariant(value, allowed) => ConfigError::InvalidValue {
            key,
            origin,
            allowed: with_hint(&value, allowed),
            value: format!("`{value}`"),
        },
        Kind::InvalidType(found, expected) | Kind::InvalidValue(found, expected) => {
            ConfigError::WrongType {
                key,
                origin,
                expected: humanise(&expected),
                found: found.to_string(),
            }
        }
        other => ConfigError::Invalid {
            key,
            origin,
            message: other.to_string(),
        },
    }
}

/// serde's names for what it expected, in the words of a config file.
fn humanise(expected: &str) -> String {
    match expected {
        "usize" | "u64" | "u32" => "a whole number of 0 or more, e.g. `3`".to_string(),
        "u16" => "a whole number from 0 to 65535".to_string(),
        "a boolean" => "`true` or `false`".to_string(),
        "a sequence" => "a list, e.g. `[a, b]`".to_string(),
        "a map" => "a mapping of keys to values".to_string(),
        other if other.starts_with("struct ") => {
            "a mapping of keys, e.g. `{key: value}`".to_string()
        }
        other => other.to_string(),
    }
}

fn with_hint(value: &str, allowed: &[&str]) -> String {
    let hint = did_you_mean(value, allowed.iter().copied())
        .map(|s| format!(" (did you mean `{s}`?)"))
        .unwrap_or_default();
    format!("{}{hint}", allowed.join(", "))
}

/// Checks on the resolved config that need more than its types.
pub(crate) fn check_values(config: &Config, layers: &[Layer]) -> Result<(), ConfigError> {
    check_references(config, layers)
}

fn check_references(config: &Config, layers: &[Layer]) -> Result<(), ConfigError> {
    let origin = |key: &str| {
        let path: Vec<String> = key.split('.').map(str::to_string).collect();
        origin_of(layers, &path)
            .cloned()
            .unwrap_or(Origin::DefaultPreset)
    };
    let groups: Vec<&str> = config
        .report
        .metric_groups
        .keys()
        .map(String::as_str)
        .collect();
    if let Some(missing) = config
        .report
        .sections
        .iter()
        .find(|s| !groups.contains(&s.as_str()))
    {
        return Err(ConfigError::InvalidValue {
            key: "report.sections".to_string(),
            origin: origin("report.sections"),
            value: format!("`{missing}` (not a key of `report.metric_groups`)"),
            allowed: with_hint(missing, &groups),
        });
    }
    if let Err(err) = Renames::new(&config.regions.rename) {
        return Err(ConfigError::Invalid {
            key: format!("regions.rename[{}].pattern", err.index),
            origin: origin("regions.rename"),
            message: format!(
                "{:?} is not a valid regular expression: {}",
                err.pattern, err.reason
            ),
        });
    }
    if config.report.outputs.is_empty() {
        return Err(ConfigError::Invalid {
            key: "report.outputs".to_string(),
            origin: origin("report.outputs"),
            message: "names no output; list at least one of md, json, html, svg, trace \
                      (output.render=false skips rendering altogether)"
                .to_string(),
        });
    }
    let writes_trace = config.report.outputs.contains(&Format::Trace);
    if writes_trace && config.report.trace_events == 0 {
        return Err(ConfigError::Invalid {
            key: "report.trace_events".to_string(),
            origin: origin("report.trace_events"),
            message: "is 0, but report.outputs has `trace`: trace.json would hold no slices; \
                      set it to 1 or more (300000 by default), or leave `trace` out of \
                      report.outputs"
                .to_string(),
        });
    }
    let ncu = &config.pipeline.ncu;
    if ncu.reader == super::schema::ReportReader::Csv
        && !ncu.export.pages.contains(&ExportPage::Raw)
    {
        return Err(ConfigError::Invalid {
            key: "pipeline.ncu.export.pages".to_string(),
            origin: origin("pipeline.ncu.export.pages"),
            message: "must include `raw` when pipeline.ncu.reader is `csv`: the region report is built from that page (or set pipeline.ncu.reader=native to read the .ncu-rep itself)".to_string(),
        });
    }
    Ok(())
}
