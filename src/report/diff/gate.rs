//! Regression gates: "no region got slower by more than P %" (`--fail-above`) and "no region's
//! counter grew by more than P %" (`--gate-metric NAME:P`). A time change within the runs' own spread
//! of visit times is noise, not a failure; counters barely move between runs, so they gate exactly.

use serde::Serialize;

use super::{Change, Difference, RegionDiff, ScopeDiff, Verdict};
use crate::report::format;
use crate::report::model::ItemNoun;

/// A gate: the time metric (`metric: None`) or a named metric may grow by at most `limit_pct`.
#[derive(Debug, Clone, PartialEq)]
pub struct Gate {
    pub metric: Option<String>,
    pub limit_pct: f64,
}

impl Gate {
    /// `NAME:PCT`, as `--gate-metric` takes it.
    pub fn parse_metric(text: &str) -> Result<Gate, String> {
        let (name, pct) = text.rsplit_once(':').ok_or_else(|| {
            format!("--gate-metric `{text}`: expected NAME:PCT, e.g. smsp__inst_executed.sum:2")
        })?;
        let limit_pct = parse_pct(pct).map_err(|e| format!("--gate-metric `{text}`: {e}"))?;
        if name.is_empty() {
            return Err(format!("--gate-metric `{text}`: the metric name is empty"));
        }
        Ok(Gate {
            metric: Some(name.to_string()),
            limit_pct,
        })
    }

    fn name(&self) -> String {
        format!(
            "{} +{}%",
            self.metric.as_deref().unwrap_or("time"),
            self.limit_pct
        )
    }

    /// The gate's result over every matched region of every matched scope, worded as the runs'
    /// profiler words it.
    pub fn apply(&self, scopes: &[ScopeDiff], words: &ItemNoun) -> GateResult {
        let mut checked = 0;
        let mut findings = Vec::new();
        for scope in scopes {
            for region in &scope.regions {
                let Some((change, noise)) = self.measure(region) else {
                    continue;
                };
                checked += 1;
                if let Some(status) = self.judge(&change, noise) {
                    findings.push(GateFinding {
                        scope: scope.key.clone(),
                        region: region.path.clone(),
                        why: finding_why(status, &change, noise, self.limit_pct),
                        a: change.a,
                        b: change.b,
                        delta_pct: change.delta_pct,
                        status,
                    });
                }
            }
        }
        let failed = findings
            .iter()
            .filter(|f| f.status == GateStatus::Fail)
            .count();
        let noisy = findings.len() - failed;
        // A gate that compared nothing has shown nothing: a renamed range or the wrong run directory
        // must not let a CI gate pass.
        let status = if failed > 0 || checked == 0 {
            GateStatus::Fail
        } else {
            GateStatus::Pass
        };
        let why = match (failed, noisy) {
            _ if checked == 0 => format!("no region both runs have could be checked, so nothing was compared; {}", words.no_shared_regions),
            (0, 0) => format!("{checked} regions checked; none grew by more than {}%", self.limit_pct),
            (0, n) => format!("{checked} regions checked; {n} grew by more than {}% but within the runs' own spread (noise)", self.limit_pct),
            (f, _) => format!("{f} of {checked} regions grew by more than {}%", self.limit_pct),
        };
        GateResult {
            gate: self.name(),
            metric: self.metric.clone(),
            limit_pct: self.limit_pct,
            status,
            checked,
            why,
            findings,
        }
    }

    /// The change this gate looks at, and the noise band it allows (time with visits only).
    fn measure(&self, region: &RegionDiff) -> Option<(Change, Option<f64>)> {
        match &self.metric {
            None => match &region.per_visit {
                Some(v) => Some((v.median.clone(), Some(v.noise))),
                None => Some((region.time.clone()?, None)),
            },
            Some(name) => region
                .metrics
                .iter()
                .find(|m| &m.name == name)
                .map(|m| (m.change.clone(), None)),
        }
    }

    fn judge(&self, change: &Change, noise: Option<f64>) -> Option<GateStatus> {
        let over = change.delta_pct.is_none_or(|p| p > self.limit_pct);
        if !over || change.delta <= 0.0 {
            return None;
        }
        match noise {
            Some(n) if change.delta <= n => Some(GateStatus::WithinNoise),
            _ => Some(GateStatus::Fail),
        }
    }
}

fn finding_why(status: GateStatus, change: &Change, noise: Option<f64>, limit: f64) -> String {
    let by = change
        .delta_pct
        .map_or("from 0".to_string(), |p| format!("by {p:.2}%"));
    let basis = if noise.is_some() {
        "median visit time"
    } else {
        "value"
    };
    match (status, noise) {
        (GateStatus::WithinNoise, Some(n)) => format!(
            "{basis} grew {by} (limit {limit}%), but the change {} is within the runs' spread p90 − min = {}",
            format::number(change.delta),
            format::number(n)
        ),
        (_, Some(n)) => format!(
            "{basis} grew {by} (limit {limit}%), beyond the runs' spread p90 − min = {}",
            format::number(n)
        ),
        _ => format!("{basis} grew {by} (limit {limit}%); no visit spread is known to judge noise"),
    }
}

fn parse_pct(text: &str) -> Result<f64, String> {
    let v: f64 = text
        .trim()
        .trim_end_matches('%')
        .parse()
        .map_err(|_| format!("`{text}` is not a percentage (a number such as 5 or 2.5)"))?;
    if !v.is_finite() || v < 0.0 {
        return Err(format!("`{text}` must be a percentage of 0 or more"));
    }
    Ok(v)
}

/// `--fail-above PCT`.
pub fn parse_time_limit(text: &str) -> Result<Gate, String> {
    Ok(Gate {
        metric: None,
        limit_pct: parse_pct(text).map_err(|e| format!("--fail-above: {e}"))?,
    })
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum GateStatus {
    Pass,
    Fail,
    /// Over the limit, but within the runs' own spread of visit times.
    WithinNoise,
}

/// A region that went over a gate's limit.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GateFinding {
    pub scope: String,
    pub region: String,
    pub a: f64,
    pub b: f64,
    pub delta_pct: Option<f64>,
    pub status: GateStatus,
    pub why: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GateResult {
    /// `time +5%`, `smsp__inst_executed.sum +2%`.
    pub gate: String,
    /// `null` for the time gate.
    pub metric: Option<String>,
    pub limit_pct: f64,
    pub status: GateStatus,
    /// Regions both runs have a value for.
    pub checked: u64,
    pub why: String,
    /// Regions over the limit: failures and changes within noise.
    pub findings: Vec<GateFinding>,
}

/// The verdict and its sentence; `compared` is (regions, scopes) matched in both runs, what a diff
/// without gates says it compared.
pub fn verdict(
    gates: &[GateResult],
    incomparable: &[Difference],
    compared: (usize, usize),
) -> (Verdict, String) {
    let failed: Vec<&str> = gates
        .iter()
        .filter(|g| g.status == GateStatus::Fail)
        .map(|g| g.gate.as_str())
        .collect();
    let noisy = gates
        .iter()
        .flat_map(|g| &g.findings)
        .filter(|f| f.status == GateStatus::WithinNoise)
        .count();
    let mut summary = if !failed.is_empty() {
        format!("fail: gate {} failed", failed.join(", "))
    } else if gates.is_empty() {
        format!(
            "no gate given: {} regions in {} matched scopes compared from A to B (the table below); pass --fail-above PCT or --gate-metric NAME:PCT to fail on a regression",
            compared.0, compared.1
        )
    } else if noisy > 0 {
        format!("pass: {noisy} region changes over a limit are within the runs' own noise")
    } else {
        "pass: every gate held".to_string()
    };
    if !incomparable.is_empty() {
        let what: Vec<&str> = incomparable.iter().map(|d| d.what.as_str()).collect();
        summary.push_str(&format!(
            "; the runs differ in {} (allowed with --allow-incomparable), so changes may come from that",
            what.join(", ")
        ));
    }
    let verdict = if failed.is_empty() {
        Verdict::Pass
    } else {
        Verdict::Fail
    };
    (verdict, summary)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metric_gates_parse_name_and_percent() {
        let gate = Gate::parse_metric("dram__bytes_read.sum:5").unwrap();
        assert_eq!(gate.metric.as_deref(), Some("dram__bytes_read.sum"));
        assert_eq!(gate.limit_pct, 5.0);
        assert_eq!(Gate::parse_metric("x:2.5%").unwrap().limit_pct, 2.5);
        assert!(Gate::parse_metric("x:-1")
            .unwrap_err()
            .contains("0 or more"));
        assert!(Gate::parse_metric(":1")
            .unwrap_err()
            .contains("name is empty"));
        assert!(parse_time_limit("five")
            .unwrap_err()
            .starts_with("--fail-above"));
    }

    #[test]
    fn growth_from_zero_fails_and_shrinking_never_does() {
        let gate = Gate {
            metric: None,
            limit_pct: 5.0,
        };
        assert_eq!(
            gate.judge(&Change::new(0.0, 3.0), None),
            Some(GateStatus::Fail)
        );
        assert_eq!(gate.judge(&Change::new(100.0, 50.0), None), None);
        assert_eq!(gate.judge(&Change::new(100.0, 105.0), None), None);
        assert_eq!(
            gate.judge(&Change::new(100.0, 106.0), None),
            Some(GateStatus::Fail)
        );
        assert_eq!(
            gate.judge(&Change::new(100.0, 106.0), Some(6.0)),
            Some(GateStatus::WithinNoise)
        );
    }
}
