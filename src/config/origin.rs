//! Where each key's value came from, and the `config show --origin` listing built on it.
//!
//! Origins are tracked on our own layer data rather than through figment's value tags so that the
//! answer follows the merge rule exactly (maps merge key by key, everything else is replaced) and
//! keys containing dots (metric names under `report.rollups`) still resolve.

use std::fmt;
use std::path::PathBuf;

use serde_yaml::{Mapping, Value};

use figment::value::{Dict, Map};
use figment::{Metadata, Profile, Provider};
use serde::Deserialize;

/// One source's data, its keys as strings.
#[derive(Debug, Clone)]
pub(crate) struct Layer {
    pub origin: Origin,
    pub data: Mapping,
}

impl Provider for Layer {
    fn metadata(&self) -> Metadata {
        Metadata::named(self.origin.to_string())
    }

    fn data(&self) -> Result<Map<Profile, Dict>, figment::Error> {
        let value =
            <figment::value::Value as Deserialize>::deserialize(Value::Mapping(self.data.clone()))
                .map_err(|e| figment::Error::from(e.to_string()))?;
        let dict = value.into_dict().unwrap_or_default();
        Ok(Profile::Default.collect(dict))
    }
}

/// One source of configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// The embedded `conf/ncu/default.yaml`, always the first layer.
    DefaultPreset,
    /// A preset compiled into the binary, named like `ncu/memory`.
    Embedded(String),
    /// A preset file on disk: a `--config FILE` or a parent found in a `conf/` directory.
    File(PathBuf),
    /// An environment variable, by name.
    Env(String),
    /// A positional `dotted.key=value` override, as written.
    Override(String),
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::DefaultPreset => f.write_str("built-in default preset"),
            Origin::Embedded(name) => write!(f, "built-in preset `{name}`"),
            Origin::File(path) => write!(f, "{}", path.display()),
            Origin::Env(name) => write!(f, "env {name}"),
            // A hostile override can be megabytes long; the start names it well enough.
            Origin::Override(text) if text.chars().count() > 200 => {
                let start: String = text.chars().take(199).collect();
                write!(f, "override `{start}…`")
            }
            Origin::Override(text) => write!(f, "override `{text}`"),
        }
    }
}

/// The layer that last set `path` (or a non-map value above it), i.e. the one whose value survived.
pub(crate) fn origin_of<'a>(layers: &'a [Layer], path: &[String]) -> Option<&'a Origin> {
    layers
        .iter()
        .rev()
        .find(|layer| sets(&layer.data, path))
        .map(|layer| &layer.origin)
}

fn sets(data: &Mapping, path: &[String]) -> bool {
    let Some((first, rest)) = path.split_first() else {
        return false;
    };
    match data.get(first.as_str()) {
        None => false,
        Some(Value::Mapping(inner)) if !rest.is_empty() => sets(inner, rest),
        // A scalar or list set here replaces everything below it.
        Some(_) => true,
    }
}

impl Origin {
    /// The built-in default preset, as the first layer or as the parent `ncu/default` a preset names:
    /// what every configuration starts from, so not a preset's own key.
    pub fn is_base(&self) -> bool {
        match self {
            Origin::DefaultPreset => true,
            Origin::Embedded(name) => name == "ncu/default",
            _ => false,
        }
    }
}

/// `resolved` cut to the leaf keys some source other than the default preset set: what the given
/// presets, environment and overrides change.
pub(crate) fn own_keys(resolved: &Value, layers: &[Layer]) -> Value {
    fn keep(value: &Value, path: &mut Vec<String>, layers: &[Layer]) -> Option<Value> {
        match value {
            Value::Mapping(map) if !map.is_empty() => {
                let mut kept = Mapping::new();
                for (key, inner) in map {
                    path.push(key_string(key));
                    if let Some(v) = keep(inner, path, layers) {
                        kept.insert(key.clone(), v);
                    }
                    path.pop();
                }
                (!kept.is_empty()).then_some(Value::Mapping(kept))
            }
            _ => origin_of(layers, path)
                .filter(|o| !o.is_base())
                .map(|_| value.clone()),
        }
    }
    keep(resolved, &mut Vec::new(), layers).unwrap_or(Value::Mapping(Mapping::new()))
}

/// One line per leaf key, in schema order: `dotted.key: value  # origin`.
pub(crate) fn show(resolved: &Value, layers: &[Layer]) -> String {
    let mut rows = Vec::new();
    if let Value::Mapping(map) = resolved {
        collect_rows(map, &mut Vec::new(), layers, &mut rows);
    }
    // Align the origin comments, but do not let one long value push every comment far right.
    let width = rows
        .iter()
        .map(|(entry, _)| entry.chars().count())
        .filter(|&n| n <= 72)
        .max()
        .unwrap_or(0);
    let mut out = String::new();
    for (entry, origin) in rows {
        let pad = width.saturating_sub(entry.chars().count()).max(1) + 1;
        out.push_str(&format!("{entry}{:pad$}# {origin}\n", ""));
    }
    out
}

fn collect_rows(
    map: &Mapping,
    path: &mut Vec<String>,
    layers: &[Layer],
    rows: &mut Vec<(String, String)>,
) {
    for (key, value) in map {
        path.push(key_string(key));
        match value {
            Value::Mapping(inner) if !inner.is_empty() => collect_rows(inner, path, layers, rows),
            _ => {
                let origin = origin_of(layers, path).unwrap_or(&Origin::DefaultPreset);
                rows.push((
                    format!("{}: {}", dotted(path), flow(value, false)),
                    origin.to_string(),
                ));
            }
        }
        path.pop();
    }
}

/// A dotted key path; segments that contain a dot or other separators are double-quoted, which is also
/// how an override addresses them (`report.rollups."gpu__time_duration.sum"=max`).
pub(crate) fn dotted(path: &[String]) -> String {
    path.iter()
        .map(|segment| {
            let plain = !segment.is_empty()
                && segment
                    .chars()
                    .all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '/' | '*'));
            if plain {
                segment.clone()
            } else {
                serde_json::to_string(segment).expect("string serialises")
            }
        })
        .collect::<Vec<_>>()
        .join(".")
}

pub(crate) fn key_string(key: &Value) -> String {
    match key {
        Value::String(s) => s.clone(),
        other => flow(other, false),
    }
}

/// A value as one line of YAML: scalars as YAML writes them, lists and maps in flow style.
pub(crate) fn flow(value: &Value, in_flow: bool) -> String {
    match value {
        Value::Sequence(items) => {
            let items: Vec<String> = items.iter().map(|v| flow(v, true)).collect();
            format!("[{}]", items.join(", "))
        }
        Value::Mapping(map) => {
            let entries: Vec<String> = map
                .iter()
                .map(|(k, v)| format!("{}: {}", flow(k, true), flow(v, true)))
                .collect();
            format!("{{{}}}", entries.join(", "))
        }
        Value::Tagged(tagged) => format!("{} {}", tagged.tag, flow(&tagged.value, in_flow)),
        scalar => {
            let text = serde_yaml::to_string(scalar).expect("scalar serialises");
            let text = text.trim_end_matches('\n');
            let needs_quotes = match scalar {
                Value::String(s) => {
                    text.contains('\n')
                        || (in_flow && s.contains([',', '[', ']', '{', '}', '#', ':']))
                }
                _ => false,
            };
            if needs_quotes {
                serde_json::to_string(scalar).expect("scalar serialises")
            } else {
                text.to_string()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn yaml(text: &str) -> Value {
        serde_yaml::from_str(text).unwrap()
    }

    #[test]
    fn flow_values_stay_on_one_line() {
        assert_eq!(flow(&yaml("[a, b]"), false), "[a, b]");
        assert_eq!(flow(&yaml("{}"), false), "{}");
        assert_eq!(flow(&yaml("null"), false), "null");
        assert_eq!(flow(&yaml("'true'"), false), "'true'");
        assert_eq!(
            flow(&yaml("['regex:^(?!nccl)', 'a,b']"), false),
            r#"["regex:^(?!nccl)", "a,b"]"#
        );
        assert_eq!(flow(&yaml("\"two\\nlines\""), false), r#""two\nlines""#);
    }

    #[test]
    fn dotted_quotes_segments_with_dots() {
        let path = vec![
            "report".to_string(),
            "rollups".to_string(),
            "a.sum".to_string(),
        ];
        assert_eq!(dotted(&path), r#"report.rollups."a.sum""#);
    }
}
