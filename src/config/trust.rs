//! What a run directory's recorded configuration (`config.yaml`) may decide when `report`, `merge`
//! or `diff` read the directory: data only. A run directory may come from anyone (a CI artifact, a
//! shared file system, a tarball), so every key that names a program, its arguments, a file to read
//! or a place to write is taken from the command line and the user's own presets alone, unless
//! `--trust-run-config` says the directory is the user's own. Nor does it raise a limit on what is
//! read ([`RECORDED_LIMITS`]). [`RECORDED_UNTRUSTED`] is the one list of paths and programs;
//! a unit test fails when the schema gains a key that looks like a path or a program and is not
//! classified here.

use std::path::Path;

use serde_yaml::{Mapping, Value};

use super::error::ConfigError;
use super::origin::flow;
use super::suggest::get;
use crate::file_kind;
use crate::file_kind::FileError;

/// Keys a recorded configuration never sets (without `--trust-run-config`), and what each one names.
pub const RECORDED_UNTRUSTED: &[(&str, &str)] = &[
    ("defaults", "preset files to read"),
    (
        "pipeline.ncu.executable",
        "a program run to export the capture",
    ),
    (
        "pipeline.ncu.ncu_cli.extra_args",
        "arguments passed to the profiler",
    ),
    (
        "pipeline.ncu.trace.library",
        "a library loaded into the workload",
    ),
    (
        "pipeline.ncu.trace.libcupti",
        "a library loaded into the workload",
    ),
    (
        "pipeline.neuron.executable",
        "a program run to view the capture",
    ),
    (
        "pipeline.neuron.fallback_executable",
        "a program run to view the capture",
    ),
    ("pipeline.neuron.neff", "a file to read"),
    (
        "pipeline.neuron.capture.extra_args",
        "arguments passed to the profiler",
    ),
    (
        "pipeline.neuron.view.extra_args",
        "arguments passed to the profiler",
    ),
    ("report.template", "a template file read into report.md"),
    ("report.rules", "a rules file to read"),
    ("neuron.insights.rules", "a rules file to read"),
    ("output.root", "a directory to write into"),
    ("output.run_name", "a directory to write into"),
];

/// Limits on what is read, which a recorded configuration never raises (without
/// `--trust-run-config`): a stranger's directory could otherwise lift the bound that keeps its own
/// files from taking the machine's memory. They come from the user's presets and command line.
pub const RECORDED_LIMITS: &[(&str, &str)] = &[
    ("regions.max_depth", "a limit on the range stacks read"),
    (
        "pipeline.ncu.max_block_mib",
        "a limit on the report file blocks read",
    ),
    (
        "pipeline.ncu.max_export_mib",
        "a limit on the compressed exports read",
    ),
    (
        "pipeline.ncu.trace.max_mib",
        "a limit on the trace files read",
    ),
];

/// Keys left out as the ones above, but without a note: no reading command uses them, so what the
/// recorded value was changes nothing the user sees (`output.run_name` names the directory a
/// profiling run creates; `report`, `merge` and `diff` never create one by name). A note for them
/// would follow every re-render of a run the user named themselves.
const UNUSED_WHEN_READING: &[&str] = &["output.run_name"];

/// Keys an older run directory may have recorded that no configuration may set now
/// ([`super::schema::DEEP_GPUS_REFUSED`]): a recorded configuration, trusted or not, drops them
/// without a note, since the run they describe is over and they change nothing a report says.
const RECORDED_REFUSED: &[&str] = &["pipeline.ncu.sampling.deep_gpus"];

/// Takes every [`RECORDED_REFUSED`] key out of a recorded layer's data.
pub(crate) fn drop_refused(data: &mut Mapping) {
    for key in RECORDED_REFUSED {
        let path: Vec<&str> = key.split('.').collect();
        remove_at(data, &path);
    }
}

/// The largest recorded configuration read: a resolved config.yaml is a few KiB.
const RECORDED_LIMIT: u64 = 1 << 20;

/// The text of a recorded config.yaml, read as data: a regular file of at most 1 MiB, not through a
/// link (which could make the error quote a file of the user's), a FIFO or a device.
pub fn read_recorded(path: &Path) -> Result<String, ConfigError> {
    let refused = |reason: String| ConfigError::Refused {
        path: path.to_path_buf(),
        reason,
    };
    file_kind::read_small(
        path,
        RECORDED_LIMIT,
        "the configuration profile-run recorded",
        "remove it, or pass --trust-run-config to read it as any --config file",
    )
    .map_err(|e| match e {
        FileError::Refused { reason } => refused(reason),
        FileError::Io { source } => refused(source.to_string()),
    })?
    .ok_or_else(|| refused("does not exist".into()))
}

/// A recorded value left out, and why; said on stderr when it differs from the value used.
#[derive(Debug, Clone, PartialEq)]
pub struct Ignored {
    /// The dotted key (`pipeline.ncu.executable`).
    pub key: String,
    /// The recorded value, as one line of YAML.
    pub recorded: String,
    /// What the key names (`a program run to export the capture`).
    pub names: &'static str,
    /// Whether the key is one of [`RECORDED_LIMITS`] (the note says why in other words).
    pub limit: bool,
}

/// Removes every [`RECORDED_UNTRUSTED`] and [`RECORDED_LIMITS`] key from a recorded layer's data;
/// returns what was removed.
pub(crate) fn strip_untrusted(data: &mut Mapping) -> Vec<(&'static str, &'static str, Value)> {
    let mut removed = Vec::new();
    for &(key, names) in RECORDED_UNTRUSTED.iter().chain(RECORDED_LIMITS) {
        let path: Vec<&str> = key.split('.').collect();
        if let Some(value) = remove_at(data, &path) {
            removed.push((key, names, value));
        }
    }
    removed
}

fn remove_at(data: &mut Mapping, path: &[&str]) -> Option<Value> {
    match path {
        [] => None,
        [leaf] => data.remove(*leaf),
        [first, rest @ ..] => match data.get_mut(*first)? {
            Value::Mapping(inner) => remove_at(inner, rest),
            _ => None,
        },
    }
}

/// The removed values that the resolved configuration does not hold anyway: those a user would
/// otherwise have got from the run directory. `resolved` is the merged configuration as YAML.
pub(crate) fn ignored(
    removed: Vec<(&'static str, &'static str, Value)>,
    resolved: &Mapping,
) -> Vec<Ignored> {
    removed
        .into_iter()
        .filter(|(key, _, _)| !UNUSED_WHEN_READING.contains(key))
        .filter(|(key, _, value)| {
            let path: Vec<String> = key.split('.').map(str::to_string).collect();
            match get(resolved, &path) {
                Some(used) => used != value,
                // `defaults` never reaches the resolved config: an empty list changes nothing.
                None => {
                    !matches!(value, Value::Null)
                        && !matches!(value, Value::Sequence(items) if items.is_empty())
                }
            }
        })
        .map(|(key, names, value)| Ignored {
            key: key.to_string(),
            recorded: flow(&value, false),
            names,
            limit: RECORDED_LIMITS.iter().any(|(k, _)| *k == key),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config;

    /// Words that make a key look like it names a program, its arguments, a file or a directory.
    const PATH_WORDS: &[&str] = &[
        "executable",
        "exe",
        "program",
        "binary",
        "bin",
        "command",
        "cmd",
        "script",
        "hook",
        "plugin",
        "library",
        "lib",
        "args",
        "argv",
        "path",
        "paths",
        "file",
        "files",
        "dir",
        "directory",
        "root",
        "template",
        "templates",
        "rules",
        "neff",
        "css",
        "preset",
        "presets",
    ];

    /// Keys whose names look like paths but hold data only (with why).
    const PATH_LIKE_DATA: &[(&str, &str)] = &[(
        "pipeline.ncu.ncu_cli.apply_rules",
        "ncu's --apply-rules yes|no, and only when profiling",
    )];

    fn leaves(map: &Mapping, prefix: &str, out: &mut Vec<String>) {
        for (key, value) in map {
            let key = key.as_str().unwrap();
            let dotted = if prefix.is_empty() {
                key.to_string()
            } else {
                format!("{prefix}.{key}")
            };
            match value {
                // Map-valued keys (`report.metric_groups`) hold user names, not schema keys.
                Value::Mapping(inner)
                    if !dotted.ends_with("metric_groups") && !dotted.ends_with("rollups") =>
                {
                    leaves(inner, &dotted, out)
                }
                _ => out.push(dotted),
            }
        }
    }

    /// Every leaf key of the schema, from the resolved default configuration (which sets each one).
    fn schema_keys() -> Vec<String> {
        let loaded = config::load(&Default::default()).unwrap();
        let Value::Mapping(tree) = serde_yaml::to_value(&loaded.config).unwrap() else {
            unreachable!()
        };
        let mut keys = Vec::new();
        leaves(&tree, "", &mut keys);
        keys
    }

    #[test]
    fn every_key_that_looks_like_a_path_or_program_is_classified() {
        let keys = schema_keys();
        assert!(keys.len() > 80, "{keys:?}");
        let classified = |key: &str| {
            RECORDED_UNTRUSTED.iter().any(|(k, _)| *k == key)
                || PATH_LIKE_DATA.iter().any(|(k, _)| *k == key)
        };
        let unclassified: Vec<&String> = keys
            .iter()
            .filter(|key| {
                let last = key.rsplit('.').next().unwrap();
                last.split(['_', '-'])
                    .any(|word| PATH_WORDS.contains(&word))
            })
            .filter(|key| !classified(key))
            .collect();
        assert!(
            unclassified.is_empty(),
            "{unclassified:?} look like they name a program, its arguments, a file or a directory: \
             add each to RECORDED_UNTRUSTED in src/config/trust.rs (a run directory's config.yaml \
             never sets it), or to PATH_LIKE_DATA in its test with the reason it is data"
        );
        // Nothing listed is stale: each entry is a key of the schema.
        for (key, _) in RECORDED_UNTRUSTED.iter().chain(PATH_LIKE_DATA) {
            assert!(
                *key == "defaults" || keys.iter().any(|k| k == key),
                "{key} is not a key of the schema any more"
            );
        }
    }

    #[test]
    fn every_untrusted_key_is_removed_and_the_rest_kept() {
        let mut text = String::new();
        for (key, _) in RECORDED_UNTRUSTED {
            text.push_str(&format!("{key}: x\n"));
        }
        // Dotted lines as nested YAML.
        let mut data = Mapping::new();
        for line in text.lines() {
            let (key, _) = line.split_once(':').unwrap();
            let mut node = &mut data;
            let parts: Vec<&str> = key.split('.').collect();
            for part in &parts[..parts.len() - 1] {
                node = node
                    .entry(Value::from(*part))
                    .or_insert_with(|| Value::Mapping(Mapping::new()))
                    .as_mapping_mut()
                    .unwrap();
            }
            node.insert(Value::from(parts[parts.len() - 1]), Value::from("x"));
        }
        data.insert(Value::from("kept"), Value::from(1));
        let removed = strip_untrusted(&mut data);
        assert_eq!(removed.len(), RECORDED_UNTRUSTED.len());
        let mut leftover = Vec::new();
        leaves(&data, "", &mut leftover);
        // Only emptied sections (no leaves) and the data key remain.
        assert_eq!(leftover, ["kept"]);
    }
}
