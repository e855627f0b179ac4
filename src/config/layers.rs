//! Turning presets, environment variables and overrides into layers of YAML data, in precedence order.
//!
//! A preset's `defaults: [name, …]` parents are expanded depth-first before the preset itself and the
//! `defaults` key is removed, so it never reaches the resolved config. A parent preset whose exact text
//! was already merged (the built-in default always is) is not merged again: a later `--config` that
//! extends `ncu/default` must not reset what an earlier one changed. A preset named by `--config` itself
//! is always merged, even when its text is the built-in default's (a copy of `conf/ncu/default.yaml`):
//! the user named it, so it sets every key it holds and `config show --origin` names it, as
//! `git config --show-origin` names the file that set a value last, whatever the value.

use std::borrow::Cow;
use std::collections::HashSet;
use std::path::{Path, PathBuf};

use serde_yaml::{Mapping, Value};

use super::depth;
use super::error::ConfigError;
use super::origin::{flow, key_string, Layer, Origin};
use super::suggest::did_you_mean;
use super::{DEFAULT_PRESET, ENV_PREFIX};
use crate::file_kind;

/// Every file of `conf/ncu/`, compiled in. A unit test checks that none is missing.
pub(crate) const PRESETS: &[(&str, &str)] = &[
    ("ncu/compute", include_str!("../../conf/ncu/compute.yaml")),
    ("ncu/default", DEFAULT_PRESET),
    (
        "ncu/distributed",
        include_str!("../../conf/ncu/distributed.yaml"),
    ),
    ("ncu/full", include_str!("../../conf/ncu/full.yaml")),
    ("ncu/memory", include_str!("../../conf/ncu/memory.yaml")),
    ("ncu/pytorch", include_str!("../../conf/ncu/pytorch.yaml")),
    ("ncu/sampled", include_str!("../../conf/ncu/sampled.yaml")),
    ("ncu/trace", include_str!("../../conf/ncu/trace.yaml")),
    (
        "neuron/default",
        include_str!("../../conf/neuron/default.yaml"),
    ),
    ("neuron/neff", include_str!("../../conf/neuron/neff.yaml")),
];

pub(crate) fn embedded(name: &str) -> Option<&'static str> {
    let name = name.trim_end_matches(".yaml").trim_end_matches(".yml");
    PRESETS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, text)| *text)
}

/// `ncu/pytorch` for a path ending in `conf/ncu/pytorch.yaml` (any directory before `conf/`).
fn builtin_name_of_path(path: &str) -> Option<&str> {
    let at = path.rfind("conf/")?;
    (at == 0 || path[..at].ends_with('/')).then(|| &path[at + "conf/".len()..])
}

pub(crate) fn preset_list() -> String {
    PRESETS
        .iter()
        .map(|(n, _)| *n)
        .collect::<Vec<_>>()
        .join(", ")
}

/// Parse YAML text that must hold a mapping (an empty text is an empty mapping).
pub(crate) fn parse_mapping(text: &str, origin: &Origin) -> Result<Mapping, ConfigError> {
    match parse_value(text, origin)? {
        Value::Null => Ok(Mapping::new()),
        Value::Mapping(map) => Ok(normalise_keys(map)),
        other => Err(ConfigError::NotAMapping {
            origin: origin.clone(),
            found: flow(&other, false),
        }),
    }
}

/// Parse one YAML value, reporting syntax errors with their line and column.
/// Nesting past [`depth::MAX_YAML_DEPTH`] is refused before the parser starts.
pub(crate) fn parse_value(text: &str, origin: &Origin) -> Result<Value, ConfigError> {
    if let Some((line, depth)) = depth::too_deep(text, depth::MAX_YAML_DEPTH) {
        return Err(ConfigError::TooDeep {
            origin: origin.clone(),
            line,
            depth,
            limit: depth::MAX_YAML_DEPTH,
        });
    }
    serde_yaml::from_str::<Value>(text).map_err(|e| {
        let (line, column) = e
            .location()
            .map(|l| (l.line(), l.column()))
            .unwrap_or((1, 1));
        // serde_yaml repeats the location inside its message; ours says it once.
        let mut message = e
            .to_string()
            .replace(&format!(" at line {line} column {column}"), "");
        // A glob such as `*gemm*` unquoted reads as a YAML alias; serde_yaml's words do not say so.
        if message.contains("alias") || message.contains("anchor") {
            message.push_str(
                "; a value that starts with `*` or `&` is a YAML alias or anchor: quote it, as in `include: ['*gemm*']`",
            );
        }
        ConfigError::Yaml {
            origin: origin.clone(),
            line,
            column,
            message,
        }
    })
}

fn normalise_keys(map: Mapping) -> Mapping {
    map.into_iter()
        .map(|(k, v)| {
            let v = match v {
                Value::Mapping(inner) => Value::Mapping(normalise_keys(inner)),
                other => other,
            };
            (Value::String(key_string(&k)), v)
        })
        .collect()
}

/// A preset waiting to be expanded.
struct Preset {
    origin: Origin,
    /// Identity for cycle detection: a canonical path or `builtin:<name>`.
    ident: String,
    text: Cow<'static, str>,
    /// The `conf/` directory its parents are looked up in first, if it lives under one.
    conf_dir: Option<PathBuf>,
}

impl Preset {
    fn embedded(name: &str, text: &'static str) -> Preset {
        let name = name
            .trim_end_matches(".yaml")
            .trim_end_matches(".yml")
            .to_string();
        Preset {
            origin: Origin::Embedded(name.clone()),
            ident: format!("builtin:{name}"),
            text: Cow::Borrowed(text),
            conf_dir: None,
        }
    }

    fn file(path: &Path) -> Result<Preset, ConfigError> {
        // Told by kind before opening: a FIFO would block `open()`, a device read without end.
        if let Some(kind) = file_kind::not_a_file(path) {
            return Err(ConfigError::NotAFile {
                path: path.to_path_buf(),
                kind,
            });
        }
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        let canonical = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
        let conf_dir = conf_dir_of(path).or_else(|| conf_dir_of(&canonical));
        Ok(Preset {
            origin: Origin::File(path.to_path_buf()),
            ident: canonical.display().to_string(),
            text: Cow::Owned(text),
            conf_dir,
        })
    }
}

/// The nearest ancestor directory named `conf`.
fn conf_dir_of(path: &Path) -> Option<PathBuf> {
    path.ancestors()
        .skip(1)
        .find(|dir| dir.file_name().is_some_and(|n| n == "conf"))
        .map(Path::to_path_buf)
}

/// Expands presets into layers, parents first.
pub(crate) struct Resolver {
    stack: Vec<(String, String)>,
    merged: HashSet<String>,
    pub layers: Vec<Layer>,
}

impl Resolver {
    /// Starts with the built-in default preset as the first layer.
    pub fn new() -> Result<Resolver, ConfigError> {
        let origin = Origin::DefaultPreset;
        let mut data = parse_mapping(DEFAULT_PRESET, &origin)?;
        data.remove("defaults");
        Ok(Resolver {
            stack: Vec::new(),
            merged: HashSet::from([DEFAULT_PRESET.to_string()]),
            layers: vec![Layer { origin, data }],
        })
    }

    /// A `--config` argument: an existing file, else the name of a built-in preset (`ncu/pytorch`),
    /// also when written as the repository path of its file (`conf/ncu/pytorch.yaml`), so commands
    /// copied from the docs work from any directory; a file that exists always wins.
    pub fn add_config_arg(&mut self, arg: &Path) -> Result<(), ConfigError> {
        let name = arg
            .to_str()
            .map(|a| builtin_name_of_path(a).unwrap_or(a).to_string());
        let preset = if arg.exists() {
            Preset::file(arg)?
        } else if let Some((name, text)) = name
            .as_deref()
            .and_then(|n| embedded(n).map(|text| (n, text)))
        {
            Preset::embedded(name, text)
        } else {
            let names = PRESETS.iter().map(|(n, _)| *n);
            return Err(ConfigError::MissingFile {
                path: arg.to_path_buf(),
                presets: preset_list(),
                hint: did_you_mean(&arg.to_string_lossy(), names)
                    .map(|n| format!(" (did you mean `{n}`?)"))
                    .unwrap_or_default(),
            });
        };
        self.expand(preset, true)
    }

    /// A run directory's recorded `config.yaml`. Untrusted (the default), it is data: its
    /// `defaults` are not followed and every key of [`super::trust::RECORDED_UNTRUSTED`] is taken
    /// out (returned, to be named). Trusted, it is read like any `--config` file.
    pub fn add_recorded(
        &mut self,
        path: &Path,
        trusted: bool,
    ) -> Result<Vec<(&'static str, &'static str, Value)>, ConfigError> {
        if trusted {
            self.add_config_arg(path)?;
            return Ok(Vec::new());
        }
        let origin = Origin::File(path.to_path_buf());
        let mut data = parse_mapping(&super::trust::read_recorded(path)?, &origin)?;
        let removed = super::trust::strip_untrusted(&mut data);
        self.layers.push(Layer { origin, data });
        Ok(removed)
    }

    /// Expands `preset` and its parents; `named` is true for a preset given on the command line, which
    /// is merged even when a preset with the same text already was.
    fn expand(&mut self, preset: Preset, named: bool) -> Result<(), ConfigError> {
        if let Some(pos) = self
            .stack
            .iter()
            .position(|(ident, _)| *ident == preset.ident)
        {
            let mut chain: Vec<&str> = self.stack[pos..]
                .iter()
                .map(|(_, shown)| shown.as_str())
                .collect();
            let shown = preset.origin.to_string();
            chain.push(&shown);
            return Err(ConfigError::PresetCycle {
                chain: chain.join(" -> "),
            });
        }
        if !named && self.merged.contains(preset.text.as_ref()) {
            return Ok(());
        }
        let mut data = parse_mapping(&preset.text, &preset.origin)?;
        let parents = take_defaults(&mut data, &preset.origin)?;
        self.stack
            .push((preset.ident.clone(), preset.origin.to_string()));
        for name in parents {
            let parent = resolve_parent(&name, &preset)?;
            self.expand(parent, false)?;
        }
        self.stack.pop();
        self.merged.insert(preset.text.into_owned());
        self.layers.push(Layer {
            origin: preset.origin,
            data,
        });
        Ok(())
    }
}

fn take_defaults(data: &mut Mapping, origin: &Origin) -> Result<Vec<String>, ConfigError> {
    let bad = || ConfigError::BadDefaults {
        origin: origin.clone(),
    };
    match data.remove("defaults") {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::String(name)) => Ok(vec![name]),
        Some(Value::Sequence(items)) => items
            .into_iter()
            .map(|item| match item {
                Value::String(name) => Ok(name),
                _ => Err(bad()),
            })
            .collect(),
        Some(_) => Err(bad()),
    }
}

/// `ncu/memory` → `<conf dir>/ncu/memory.yaml` of the including preset, then the built-in presets.
fn resolve_parent(name: &str, child: &Preset) -> Result<Preset, ConfigError> {
    let stem = name.trim_end_matches(".yaml").trim_end_matches(".yml");
    let mut searched = Vec::new();
    if let Some(dir) = &child.conf_dir {
        let candidate = dir.join(format!("{stem}.yaml"));
        if candidate.is_file() {
            return Preset::file(&candidate);
        }
        searched.push(format!("`{}`", candidate.display()));
    }
    if let Some(text) = embedded(stem) {
        return Ok(Preset::embedded(stem, text));
    }
    searched.push(format!("the built-in presets ({})", preset_list()));
    let hint = did_you_mean(stem, PRESETS.iter().map(|(n, _)| *n))
        .map(|s| format!(" (did you mean `{s}`?)"))
        .unwrap_or_default();
    Err(ConfigError::UnknownPreset {
        name: name.to_string(),
        origin: child.origin.clone(),
        searched: searched.join(" and "),
        hint,
    })
}

/// One layer per `PROFILE_RUN_<KEY>` variable: `__` separates levels, keys are case-insensitive.
pub(crate) fn env_layer(name: &str, value: &str) -> Result<Option<Layer>, ConfigError> {
    let Some(rest) = name
        .get(..ENV_PREFIX.len())
        .filter(|p| p.eq_ignore_ascii_case(ENV_PREFIX))
        .map(|_| &name[ENV_PREFIX.len()..])
    else {
        return Ok(None);
    };
    let origin = Origin::Env(name.to_string());
    let path: Vec<String> = rest
        .to_lowercase()
        .split("__")
        .map(str::to_string)
        .collect();
    if path.iter().any(String::is_empty) {
        return Err(ConfigError::BadKey {
            key: rest.to_string(),
            origin,
            reason: "empty level; separate levels with `__`, e.g. PROFILE_RUN_OUTPUT__ROOT"
                .to_string(),
        });
    }
    not_defaults(&path, &origin)?;
    let value = parse_value(value, &origin)?;
    Ok(Some(Layer {
        data: nest(&path, value),
        origin,
    }))
}

/// One layer per `dotted.key=value` override, the value parsed as YAML.
pub(crate) fn override_layer(text: &str) -> Result<Layer, ConfigError> {
    let (key, value) = text
        .split_once('=')
        .ok_or_else(|| ConfigError::OverrideWithoutEquals {
            text: text.to_string(),
            fix: super::suggest::override_fix(text),
        })?;
    let origin = Origin::Override(text.to_string());
    let path = split_key(key.trim()).map_err(|reason| ConfigError::BadKey {
        key: key.to_string(),
        origin: origin.clone(),
        reason,
    })?;
    not_defaults(&path, &origin)?;
    let value = match parse_value(value, &origin) {
        Ok(value) => value,
        Err(e @ ConfigError::TooDeep { .. }) => return Err(e),
        Err(e) => bracketed_names(value).ok_or(e)?,
    };
    Ok(Layer {
        data: nest(&path, value),
        origin,
    })
}

/// `[MLP[0], MLP[3]]`: a list of plain names that YAML cannot read because the names hold brackets
/// (region names do). Split at the commas outside brackets; `None` when it is not such a list.
fn bracketed_names(text: &str) -> Option<Value> {
    let inner = text.trim().strip_prefix('[')?.strip_suffix(']')?;
    let (mut depth, mut start, mut names) = (0i32, 0, Vec::new());
    for (i, c) in inner.char_indices() {
        match c {
            '[' => depth += 1,
            ']' => depth -= 1,
            ',' if depth == 0 => {
                names.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
        if depth < 0 {
            return None;
        }
    }
    names.push(&inner[start..]);
    let names: Vec<&str> = names.into_iter().map(str::trim).collect();
    if depth != 0
        || names
            .iter()
            .any(|n| n.is_empty() || n.contains(['{', '}', '"', '\'']))
    {
        return None;
    }
    Some(Value::Sequence(
        names.into_iter().map(|n| Value::String(n.into())).collect(),
    ))
}

/// `defaults` names parent presets and only means something inside a preset file.
fn not_defaults(path: &[String], origin: &Origin) -> Result<(), ConfigError> {
    if path.first().is_some_and(|k| k == "defaults") {
        return Err(ConfigError::BadKey {
            key: "defaults".to_string(),
            origin: origin.clone(),
            reason:
                "parent presets can only be named inside a preset file; pass the preset itself \
                     with `--config`, e.g. `--config ncu/memory`"
                    .to_string(),
        });
    }
    Ok(())
}

/// `a.b."c.d"` → `[a, b, c.d]`.
pub(crate) fn split_key(key: &str) -> Result<Vec<String>, String> {
    let mut path = Vec::new();
    let mut chars = key.chars().peekable();
    loop {
        let mut segment = String::new();
        if chars.peek() == Some(&'"') {
            chars.next();
            loop {
                match chars.next() {
                    Some('"') => break,
                    Some(c) => segment.push(c),
                    None => return Err("unterminated `\"` in the key".to_string()),
                }
            }
            if !matches!(chars.peek(), None | Some('.')) {
                return Err("a quoted key segment must be followed by `.` or `=`".to_string());
            }
        } else {
            while let Some(&c) = chars.peek() {
                if c == '.' {
                    break;
                }
                segment.push(c);
                chars.next();
            }
            if segment.is_empty() {
                return Err("empty key segment; write `dotted.key=value`".to_string());
            }
        }
        path.push(segment);
        if chars.next().is_none() {
            return Ok(path);
        }
    }
}

fn nest(path: &[String], value: Value) -> Mapping {
    let (last, parents) = path.split_last().expect("key paths are never empty");
    let mut map = Mapping::new();
    map.insert(Value::String(last.clone()), value);
    for segment in parents.iter().rev() {
        let mut outer = Mapping::new();
        outer.insert(Value::String(segment.clone()), Value::Mapping(map));
        map = outer;
    }
    map
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_file_of_conf_ncu_is_embedded() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("conf/ncu");
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let name = format!("ncu/{}", path.file_stem().unwrap().to_str().unwrap());
            let text = std::fs::read_to_string(&path).unwrap();
            assert_eq!(
                embedded(&name),
                Some(text.as_str()),
                "{name} is not embedded"
            );
        }
    }

    #[test]
    fn split_key_honours_quotes() {
        assert_eq!(split_key("a.b").unwrap(), ["a", "b"]);
        assert_eq!(
            split_key(r#"report.rollups."x.sum""#).unwrap(),
            ["report", "rollups", "x.sum"]
        );
        assert!(split_key("a..b").is_err());
        assert!(split_key("").is_err());
    }

    #[test]
    fn env_names_are_case_insensitive_and_other_variables_ignored() {
        let layer = env_layer("profile_run_Output__Root", "/tmp/x")
            .unwrap()
            .unwrap();
        assert_eq!(
            layer.data,
            parse_mapping("output: {root: /tmp/x}", &Origin::DefaultPreset).unwrap()
        );
        assert!(env_layer("HOME", "/root").unwrap().is_none());
    }

    #[test]
    fn conf_dir_is_the_nearest_ancestor_named_conf() {
        assert_eq!(
            conf_dir_of(Path::new("a/conf/ncu/x.yaml")),
            Some(PathBuf::from("a/conf"))
        );
        assert_eq!(conf_dir_of(Path::new("x.yaml")), None);
    }
}
