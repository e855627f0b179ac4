//! Which metrics a report asks for and how each is rolled up, from `report.sections`,
//! `report.metrics` and `report.rollups`.

use std::collections::BTreeMap;

use crate::config::Config;
use crate::error::{Error, Result};
use crate::region::Rollup;

/// A metric the report asks for, and the report group (section) that asked.
#[derive(Debug, Clone, PartialEq)]
pub struct MetricRequest {
    pub name: String,
    pub group: String,
}

/// The metrics to report, in order: each `report.sections` group, then `report.metrics`.
pub fn metric_requests(config: &Config) -> Result<Vec<MetricRequest>> {
    let report = &config.report;
    let mut requests: Vec<MetricRequest> = Vec::new();
    let mut push = |name: &str, group: &str| {
        if !requests.iter().any(|r| r.name == name) {
            requests.push(MetricRequest {
                name: name.to_string(),
                group: group.to_string(),
            });
        }
    };
    for section in &report.sections {
        let metrics = report.metric_groups.get(section).ok_or_else(|| {
            let known: Vec<&str> = report.metric_groups.keys().map(String::as_str).collect();
            Error::Usage(format!(
                "report.sections names `{section}`, which is not a key of report.metric_groups (known: {}); define it under report.metric_groups.{section} or remove it",
                known.join(", ")
            ))
        })?;
        for metric in metrics {
            push(metric, section);
        }
    }
    for metric in &report.metrics {
        push(metric, "metrics");
    }
    Ok(requests)
}

pub fn rollup_overrides(config: &Config) -> Result<BTreeMap<String, Rollup>> {
    config
        .report
        .rollups
        .iter()
        .map(|(metric, text)| {
            Rollup::parse(text.as_str()).map(|r| (metric.clone(), r)).ok_or_else(|| {
                Error::Usage(format!(
                    "report.rollups.{metric} = `{text}` is not a rollup; use one of sum, mean, max, min, distinct"
                ))
            })
        })
        .collect()
}
