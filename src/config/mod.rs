//! Configuration: layered YAML presets resolved into one [`Config`], remembering where each key came from.
//!
//! Precedence, later wins:
//! 1. the embedded default preset (`conf/ncu/default.yaml`, compiled in; it sets every key), then,
//!    for `report` / `merge` of a run directory, the configuration it recorded (`config.yaml`) as
//!    data: its `defaults` are not followed and the keys that name programs, their arguments, files
//!    or directories ([`trust::RECORDED_UNTRUSTED`]) are left out, unless `--trust-run-config`;
//! 2. each `--config FILE`, in command-line order. An argument that is not an existing path but names a
//!    built-in preset (`ncu/memory`) loads that preset. A preset's `defaults: [name, …]` parents are
//!    merged just before the preset itself, recursively; a name is looked up as
//!    `<conf dir>/<name>.yaml` (the nearest ancestor directory of the including file named `conf`),
//!    then among the presets compiled in from `conf/ncu/`. A preset whose text was already merged is
//!    not merged again, and `defaults` never reaches the resolved config;
//! 3. environment variables `PROFILE_RUN_<KEY>`, `__` between levels, keys case-insensitive, values YAML;
//! 4. positional `dotted.key=value` overrides, the value parsed as YAML.
//!
//! Maps merge key by key; lists and scalars are replaced. Every layer is validated on its own against
//! the schema, so an unknown key or a wrong type is reported with the file, variable or override that
//! wrote it. See docs/configuration.md.
//!
//! Floor: config. May import region and the ground floor. (docs/architecture.md, checked by
//! tests/it/architecture.rs)

mod check;
pub mod closed_sets;
pub mod deep_ranks;
pub mod depth;
mod error;
mod layers;
pub mod neuron_pipeline;
pub mod neuron_settings;
mod origin;
pub mod schema;
mod suggest;
pub mod trust;

use std::path::PathBuf;

use figment::Figment;
use serde_yaml::Value;

pub use closed_sets::*;
pub use deep_ranks::DeepRanks;
pub use error::ConfigError;
pub use origin::Origin;
pub use schema::*;
pub use trust::Ignored;

use layers::{env_layer, override_layer, Resolver};
use origin::Layer;

/// The embedded default preset.
pub const DEFAULT_PRESET: &str = include_str!("../../conf/ncu/default.yaml");

/// Environment variables with this prefix are configuration.
pub const ENV_PREFIX: &str = "PROFILE_RUN_";

/// Names of the presets compiled into the binary (`ncu/default`, `ncu/memory`, …), sorted.
pub fn preset_names() -> Vec<&'static str> {
    layers::PRESETS.iter().map(|(name, _)| *name).collect()
}

/// Where configuration comes from, besides the built-in default.
#[derive(Debug, Clone, Default)]
pub struct ConfigSources {
    /// `--config` arguments, in command-line order.
    pub files: Vec<PathBuf>,
    /// Positional `dotted.key=value` overrides, in command-line order.
    pub overrides: Vec<String>,
    /// Environment variables; only those starting with [`ENV_PREFIX`] are used, in this order.
    pub env: Vec<(String, String)>,
}

impl ConfigSources {
    /// Sources with the `PROFILE_RUN_*` variables of this process, sorted by name; the injection
    /// library's variables a user sets (`PROFILE_RUN_DEEP_DEBUG`, …) are the traced process's, not
    /// settings. Those profile-run sets from its settings stay unknown keys: inherited, they would
    /// change what the run does behind its settings' back.
    pub fn with_process_env(files: Vec<PathBuf>, overrides: Vec<String>) -> Self {
        let mut env: Vec<(String, String)> = std::env::vars_os()
            .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
            .filter(|(k, _)| {
                k.get(..ENV_PREFIX.len())
                    .is_some_and(|p| p.eq_ignore_ascii_case(ENV_PREFIX))
                    && !cupti_trace::USER_VARIABLES.contains(&k.as_str())
            })
            .collect();
        env.sort();
        ConfigSources {
            files,
            overrides,
            env,
        }
    }
}

/// A run directory's own `config.yaml`, read by `report` / `merge` under the command's sources.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub path: PathBuf,
    /// `--trust-run-config`: read it whole, programs and files included.
    pub trusted: bool,
}

/// A resolved configuration and the layers it came from.
#[derive(Debug)]
pub struct Loaded {
    pub config: Config,
    /// All layers merged, for callers that want figment's own view.
    pub figment: Figment,
    layers: Vec<Layer>,
    /// Values of a recorded configuration left out (see [`trust`]) that differ from those used.
    pub ignored: Vec<Ignored>,
}

/// Resolve `sources` into one [`Config`]; see the module documentation for the order.
pub fn load(sources: &ConfigSources) -> Result<Loaded, ConfigError> {
    load_over(None, sources)
}

/// Like [`load`], with a run directory's recorded configuration as the lowest layer after the
/// built-in default: the command's own `--config` files, environment and overrides apply on top.
pub fn load_over(
    recorded: Option<&Recorded>,
    sources: &ConfigSources,
) -> Result<Loaded, ConfigError> {
    let mut resolver = Resolver::new()?;
    let removed = match recorded {
        Some(recorded) => resolver.add_recorded(&recorded.path, recorded.trusted)?,
        None => Vec::new(),
    };
    for file in &sources.files {
        resolver.add_config_arg(file)?;
    }
    let mut layers = resolver.layers;
    for (name, value) in &sources.env {
        layers.extend(env_layer(name, value)?);
    }
    for text in &sources.overrides {
        layers.push(override_layer(text)?);
    }

    let tree: Value =
        serde_yaml::from_str(DEFAULT_PRESET).expect("the default preset is valid YAML");
    let (base, rest) = layers
        .split_first_mut()
        .expect("the default preset is always the first layer");
    for layer in rest {
        check::validate_layer(base, layer, &tree)?;
    }
    let figment = layers
        .iter()
        .fold(Figment::new(), |f, layer| f.merge(layer.clone()));
    let config: Config = figment
        .extract()
        .map_err(|e| check::describe_merged(e, &layers, &tree))?;
    check::check_values(&config, &layers)?;
    let resolved = serde_yaml::to_value(&config).expect("config serialises");
    let ignored = match &resolved {
        Value::Mapping(resolved) => trust::ignored(removed, resolved),
        _ => Vec::new(),
    };
    Ok(Loaded {
        config,
        figment,
        layers,
        ignored,
    })
}

impl Loaded {
    /// The resolved config as YAML, every key present.
    pub fn to_yaml(&self) -> String {
        serde_yaml::to_string(&self.config).expect("config serialises")
    }

    /// Every leaf key with its value and the source it came from, one per line, in schema order:
    /// `report.max_regions: 50   # override `report.max_regions=50``.
    pub fn show_with_origin(&self) -> String {
        let resolved = serde_yaml::to_value(&self.config).expect("config serialises");
        origin::show(&resolved, &self.layers)
    }

    /// `config show`: the keys the given presets, environment and overrides set (what makes this
    /// configuration differ from the default preset), as YAML; with `origin`, one line per key
    /// with its source. Without any, the default preset whole, since it is the configuration.
    pub fn show_own(&self, origin: bool) -> String {
        let resolved = serde_yaml::to_value(&self.config).expect("config serialises");
        let own = origin::own_keys(&resolved, &self.layers);
        let empty = own.as_mapping().is_none_or(|m| m.is_empty());
        let header = match empty {
            true => "# the built-in default preset, every key (`config show -c PRESET` shows what a preset changes)\n",
            false => "# the keys these presets and overrides set; the rest are the default preset's (`config show --all`)\n",
        };
        let shown = if empty { &resolved } else { &own };
        let body = match origin {
            true => origin::show(shown, &self.layers),
            false => serde_yaml::to_string(shown).expect("config serialises"),
        };
        format!("{header}{body}")
    }

    /// The sources that were merged, lowest precedence first (parents before the presets naming them).
    pub fn sources(&self) -> Vec<&Origin> {
        self.layers.iter().map(|layer| &layer.origin).collect()
    }

    /// Where the value of a dotted key (`report.max_regions`) came from.
    pub fn origin_of(&self, key: &str) -> Option<&Origin> {
        let path = layers::split_key(key).ok()?;
        origin::origin_of(&self.layers, &path)
    }

    /// First 16 hex digits of the SHA-256 of the resolved YAML, leaving out `report.threads`,
    /// `pipeline.signal_grace_seconds` and the input limits (`regions.max_depth`,
    /// `pipeline.ncu.max_block_mib`, `pipeline.ncu.max_export_mib`, `pipeline.ncu.trace.max_mib`): they change how fast a report is made, how long an interrupted
    /// run waits or what is refused, never what a report says. The adaptive sampling settings
    /// (`pipeline.ncu.sampling.adaptive`, `error`, `max_samples`) are left out while adaptive is off,
    /// where they change nothing, and `pipeline.ncu.sampling.min_time_share` at 0;
    /// `pipeline.ncu.sampling.stop_when_covered` always (it ends a pass
    /// only once every result the report uses was profiled).
    pub fn fingerprint(&self) -> String {
        use sha2::{Digest, Sha256};
        let mut config = self.config.clone();
        config.report.threads = 0;
        config.pipeline.signal_grace_seconds = 0;
        let mut tree = serde_yaml::to_value(&config).expect("config serialises");
        // Limits only refuse inputs, never change a result: left out, so fingerprints made before
        // they existed still match. So are the adaptive sampling settings while adaptive is off.
        let mut left_out: Vec<&[&str]> = vec![
            &["regions", "max_depth"],
            &["pipeline", "ncu", "max_block_mib"],
            &["pipeline", "ncu", "trace", "max_mib"],
            &["pipeline", "ncu", "max_export_mib"],
            &["pipeline", "ncu", "sampling", "stop_when_covered"],
        ];
        if config.pipeline.ncu.sampling.min_time_share == 0.0 {
            left_out.push(&["pipeline", "ncu", "sampling", "min_time_share"]);
        }
        if !config.pipeline.ncu.sampling.adaptive {
            left_out.extend([
                &["pipeline", "ncu", "sampling", "adaptive"][..],
                &["pipeline", "ncu", "sampling", "error"],
                &["pipeline", "ncu", "sampling", "max_samples"],
            ]);
        }
        for path in left_out {
            let (last, parents) = path.split_last().expect("a key path");
            let parent = parents
                .iter()
                .try_fold(&mut tree, |node, key| node.get_mut(*key));
            if let Some(map) = parent.and_then(Value::as_mapping_mut) {
                map.remove(*last);
            }
        }
        let yaml = serde_yaml::to_string(&tree).expect("config serialises");
        let digest = Sha256::digest(yaml.as_bytes());
        digest.iter().take(8).map(|b| format!("{b:02x}")).collect()
    }
}
