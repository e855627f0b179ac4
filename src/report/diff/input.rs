//! The part of a report.json that a comparison reads, deserialised on its own so that the diff
//! depends only on the documented JSON (docs/report-schema.md), not on the model's Rust types.

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::report::model::ItemNoun;
use crate::report::model::SCHEMA_VERSION;

/// The oldest report.json layout the diff reads.
const OLDEST_READABLE: u32 = 2;

/// One side of a comparison: a report.json, as far as the diff needs it.
#[derive(Debug, Clone, Deserialize)]
pub struct RunReport {
    pub schema_version: u32,
    pub run: RunSide,
    pub metrics: Vec<MetricSide>,
    pub time_metric: Option<String>,
    /// `report.kernels` as the report states it; absent in reports written before it was recorded.
    #[serde(default)]
    pub kernel_selection: Option<SelectionSide>,
    pub scopes: Vec<ScopeSide>,
    pub aggregate: Option<ScopeSide>,
    /// How a sampled run joined its passes (schema 3); absent or null for a run profiled in full.
    #[serde(default)]
    pub sampling: Option<SamplingSide>,
    /// What the report's profiler calls its results and scopes: not in report.json, so the command
    /// that reads it sets it from `run.profiler.name` (GPU words until then).
    #[serde(skip)]
    pub item_noun: ItemNoun,
}

/// The part of a sampled run's `sampling` the diff compares.
#[derive(Debug, Clone, Deserialize)]
pub struct SamplingSide {
    pub launch_count: Option<u32>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct SelectionSide {
    pub include: Vec<String>,
    pub exclude: Vec<String>,
    pub name_base: String,
}

#[derive(Debug, Clone, Deserialize)]
pub struct RunSide {
    pub profiler: ProfilerSide,
    /// Devices and driver (schema 4 reports since provenance was recorded; empty before).
    #[serde(default)]
    pub platform: PlatformSide,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct PlatformSide {
    #[serde(default)]
    pub devices: Vec<DeviceSide>,
    #[serde(default)]
    pub driver: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct DeviceSide {
    pub id: String,
    pub model: String,
}

impl PlatformSide {
    /// The distinct models, sorted: what a comparison checks.
    pub fn models(&self) -> Vec<&str> {
        let mut models: Vec<&str> = self.devices.iter().map(|d| d.model.as_str()).collect();
        models.sort_unstable();
        models.dedup();
        models
    }

    /// The model of device `id`, when listed once.
    pub fn model_of(&self, id: &str) -> Option<&str> {
        let mut of = self.devices.iter().filter(|d| d.id == id);
        match (of.next(), of.next()) {
            (Some(d), None) => Some(&d.model),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct ProfilerSide {
    pub name: String,
    pub version: Option<String>,
    #[serde(default)]
    pub settings: BTreeMap<String, String>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct MetricSide {
    pub name: String,
    /// The profiler's display name that report tables show (schema 4); `--gate-metric` accepts it.
    #[serde(default)]
    pub label: Option<String>,
    #[serde(default)]
    pub unit: String,
    /// How the metric combined over a region's results; schema 4 sums counters that schema 3 took
    /// the largest of (`gpc__cycles_elapsed.max`), so two runs must agree on it.
    #[serde(default)]
    pub rollup: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct ScopeSide {
    pub label: String,
    pub rank: Option<u32>,
    pub process_name: Option<String>,
    pub host: Option<String>,
    pub device: Option<String>,
    pub regions: Vec<RegionSide>,
    /// Results outside every region; only its kernel names are read (the workload check).
    #[serde(default)]
    pub outside_regions: Option<TotalsSide>,
    /// The scope's totals; only its result count is read (the same-amount-of-work check).
    #[serde(default)]
    pub total: Option<TotalsSide>,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct TotalsSide {
    #[serde(default)]
    pub kernels: Vec<KernelSide>,
    #[serde(default)]
    pub kernel_count: Option<u64>,
    /// The scope's totals per metric: what a region's share of the scope is taken against.
    #[serde(default)]
    pub metrics: BTreeMap<String, ValueSide>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct KernelSide {
    pub name: String,
}

#[derive(Debug, Clone, Deserialize)]
pub struct RegionSide {
    pub path: String,
    /// The enclosing region's path; `null` at the top of the tree.
    #[serde(default)]
    pub parent: Option<String>,
    pub kernel_count: u64,
    pub inclusive: BTreeMap<String, ValueSide>,
    pub instances: Option<InstancesSide>,
    /// Only the kernel names are read (the workload check).
    #[serde(default)]
    pub kernels: Vec<KernelSide>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct ValueSide {
    pub value: Option<f64>,
    /// The value's own unit (`ns`, `ms`, `%`); absent in reports that gave it only per metric.
    #[serde(default)]
    pub unit: Option<String>,
}

#[derive(Debug, Clone, Copy, Deserialize)]
pub struct InstancesSide {
    pub count: u64,
    pub min: Option<f64>,
    pub median: Option<f64>,
    pub p90: Option<f64>,
}

impl RegionSide {
    pub fn metric(&self, name: &str) -> Option<f64> {
        self.inclusive.get(name).and_then(|v| v.value)
    }

    /// The unit `metric`'s value is given in: its own, else the metric's.
    pub fn unit_of<'a>(&'a self, report: &'a RunReport, metric: &str) -> &'a str {
        self.inclusive
            .get(metric)
            .and_then(|v| v.unit.as_deref())
            .unwrap_or_else(|| report.unit(metric))
    }
}

impl InstancesSide {
    /// The per-visit median, p90 and spread of visits (p90 − min), when the region has visits.
    pub fn visits(&self) -> Option<Visits> {
        if self.count == 0 {
            return None;
        }
        let (min, median, p90) = (self.min?, self.median?, self.p90?);
        Some(Visits {
            count: self.count,
            median,
            p90,
            spread: p90 - min,
        })
    }
}

/// A region's visit statistics, as the gate reads them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Visits {
    pub count: u64,
    pub median: f64,
    pub p90: f64,
    /// p90 − min: how far one visit strays from the fastest in this run.
    pub spread: f64,
}

impl ScopeSide {
    /// What identifies a scope across runs: its rank under a launcher; a scope that is one input file
    /// (a profile) by the file's name, so two folders of profiles pair file by file; otherwise process
    /// name, host and device (process ids change from run to run, so the label cannot be used).
    pub fn key(&self, words: &ItemNoun) -> String {
        if let Some(rank) = self.rank {
            return format!("rank {rank}");
        }
        if words.scope_per_file {
            return std::path::Path::new(&self.label)
                .file_name()
                .map_or_else(|| self.label.clone(), |n| n.to_string_lossy().into_owned());
        }
        let part = |v: &Option<String>| v.clone().unwrap_or_else(|| "?".into());
        format!(
            "{} on {}, device {}",
            part(&self.process_name),
            part(&self.host),
            part(&self.device)
        )
    }
}

impl RunReport {
    /// Parses report.json text; errors name the JSON path and line of the offending value.
    pub fn parse(text: &str) -> Result<RunReport, String> {
        let de = &mut serde_json::Deserializer::from_str(text);
        let report: RunReport = serde_path_to_error::deserialize(de).map_err(|e| {
            let path = e.path().to_string();
            format!("not a profile-run report.json (at `{path}`: {})", e.inner())
        })?;
        // Versions since 2 only added fields: every field read here is in all of them.
        let readable = OLDEST_READABLE..=SCHEMA_VERSION;
        if !readable.contains(&report.schema_version) {
            return Err(format!(
                "report.json schema_version {} is not one this profile-run reads ({} to {}); render it again with `profile-run report`",
                report.schema_version,
                OLDEST_READABLE,
                SCHEMA_VERSION
            ));
        }
        Ok(report)
    }

    /// The names of every kernel of every scope, in its regions or outside them (the workload
    /// check; names repeat).
    pub fn kernel_names(&self) -> impl Iterator<Item = &str> {
        self.scopes.iter().flat_map(|s| {
            let outside = s.outside_regions.iter().flat_map(|t| &t.kernels);
            s.regions
                .iter()
                .flat_map(|r| &r.kernels)
                .chain(outside)
                .map(|k| k.name.as_str())
        })
    }

    /// The raw name of the metric that `--gate-metric` names, by raw name or by the label report
    /// tables show (letter case and repeated spaces aside); `None` when the report has no such metric.
    pub fn metric_named(&self, given: &str) -> Option<&str> {
        let fold = |s: &str| {
            s.split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
                .to_lowercase()
        };
        let wanted = fold(given);
        self.metrics
            .iter()
            .find(|m| m.name == given)
            .or_else(|| {
                self.metrics
                    .iter()
                    .find(|m| m.label.as_deref().is_some_and(|l| fold(l) == wanted))
            })
            .map(|m| m.name.as_str())
    }

    pub fn unit(&self, metric: &str) -> &str {
        self.metrics
            .iter()
            .find(|m| m.name == metric)
            .map_or("", |m| m.unit.as_str())
    }
}
