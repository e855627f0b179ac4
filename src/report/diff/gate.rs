//! Regression gates: "no region got slower by more than P %" (`--fail-above`) and "no region's
//! counter grew by more than P %" (`--gate-metric NAME:P`). A time change within the runs' own spread
//! of visit times is noise, not a failure; counters barely move between runs, so they gate exactly.

use serde::Serialize;

use super::{Change, Difference, OneSided, RegionDiff, ScopeDiff, Side, Verdict};
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

    pub(super) fn name(&self) -> String {
        format!(
            "{} +{}%",
            self.metric.as_deref().unwrap_or("time"),
            self.limit_pct
        )
    }

    /// The gate's result over every matched region of every matched scope, and over the regions
    /// only one run has, worded as the runs' profiler words it.
    pub fn apply(
        &self,
        scopes: &[ScopeDiff],
        time_metric: Option<&str>,
        words: &ItemNoun,
    ) -> GateResult {
        let mut checked = 0;
        let mut findings = Vec::new();
        for scope in scopes {
            for region in &scope.regions {
                let measures = self.measure(region);
                if measures.is_empty() {
                    continue;
                }
                checked += 1;
                findings.extend(self.worst(&measures).map(|(m, status)| GateFinding {
                    scope: scope.key.clone(),
                    region: region.path.clone(),
                    statistic: m.statistic,
                    why: finding_why(status, m, self.limit_pct),
                    a: m.change.a,
                    b: m.change.b,
                    delta_pct: m.change.delta_pct,
                    status,
                }));
            }
            let metric = self.metric.as_deref().or(time_metric);
            findings.extend(metric.into_iter().flat_map(|metric| {
                scope
                    .one_sided
                    .iter()
                    .filter_map(move |r| self.one_sided(&scope.key, r, metric))
            }));
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
            (0, n) => format!("{checked} regions checked; {n} grew by more than {}% but within the baseline's own spread (noise)", self.limit_pct),
            (f, _) => format!("{f} regions failed ({checked} in both runs checked, and those only one run has): over {}%", self.limit_pct),
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

    /// What this gate compares of a region in both runs. The time gate: the total, and with visits
    /// known the median and the p90 visit, each against the baseline's spread alone (A's p90 − min;
    /// for the total, that spread over its visits, √visits × spread), so that a regression in B can
    /// never widen the band that excuses it. A named metric: its value, exactly.
    fn measure(&self, region: &RegionDiff) -> Vec<Measure> {
        match &self.metric {
            None => {
                let Some(total) = &region.time else {
                    return Vec::new();
                };
                let Some(v) = &region.per_visit else {
                    return vec![Measure::exact(Statistic::Total, total)];
                };
                vec![
                    Measure {
                        statistic: Statistic::Total,
                        change: total.clone(),
                        noise: Some(v.noise * v.visits.a.max(1.0).sqrt()),
                    },
                    Measure {
                        statistic: Statistic::Median,
                        change: v.median.clone(),
                        noise: Some(v.noise),
                    },
                    Measure {
                        statistic: Statistic::P90,
                        change: v.p90.clone(),
                        noise: Some(v.noise),
                    },
                ]
            }
            Some(name) => region
                .metrics
                .iter()
                .filter(|m| &m.name == name)
                .map(|m| Measure::exact(Statistic::Total, &m.change))
                .collect(),
        }
    }

    /// The worst of a region's measures: the first that fails, else the first within noise.
    fn worst<'m>(&self, measures: &'m [Measure]) -> Option<(&'m Measure, GateStatus)> {
        let judged: Vec<(&Measure, GateStatus)> = measures
            .iter()
            .filter_map(|m| Some((m, self.judge(&m.change, m.noise)?)))
            .collect();
        judged
            .iter()
            .find(|(_, s)| *s == GateStatus::Fail)
            .or_else(|| judged.first())
            .copied()
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

    /// A region only one run has fails when it holds more than the limit's share of its scope: a
    /// renamed region made slower must not pass as one region gone and another new. Only the
    /// outermost of such regions is judged; its children are in its share.
    fn one_sided(&self, scope: &str, region: &OneSided, metric: &str) -> Option<GateFinding> {
        let share = *region.share_pct.get(metric)?;
        if !region.outermost || share <= self.limit_pct {
            return None;
        }
        let (statistic, a, b, verb) = match region.side {
            Side::New => (Statistic::New, 0.0, share, "is new in B"),
            Side::Gone => (Statistic::Gone, share, 0.0, "is gone from B"),
        };
        Some(GateFinding {
            scope: scope.to_string(),
            region: region.path.clone(),
            statistic,
            a,
            b,
            delta_pct: None,
            status: GateStatus::Fail,
            why: format!(
                "{verb} and holds {share:.2}% of its scope's {metric} there, over the limit of {}%: a renamed region cannot be compared, so name it alike in both runs",
                self.limit_pct
            ),
        })
    }
}

/// One statistic of a region in both runs, and the noise band it is allowed.
struct Measure {
    statistic: Statistic,
    change: Change,
    noise: Option<f64>,
}

impl Measure {
    fn exact(statistic: Statistic, change: &Change) -> Measure {
        Measure {
            statistic,
            change: change.clone(),
            noise: None,
        }
    }
}

/// Which of a region's numbers a finding is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Statistic {
    /// The region's inclusive total (the time, or the gated metric).
    Total,
    /// The median visit time.
    Median,
    /// The 90th-percentile visit time.
    P90,
    /// A region only run B has; `a` and `b` are its share of the scope in percent.
    New,
    /// A region only run A has; `a` and `b` are its share of the scope in percent.
    Gone,
}

impl Statistic {
    fn words(self) -> &'static str {
        match self {
            Statistic::Total => "total",
            Statistic::Median => "median visit time",
            Statistic::P90 => "p90 visit time",
            Statistic::New | Statistic::Gone => "share",
        }
    }
}

fn finding_why(status: GateStatus, m: &Measure, limit: f64) -> String {
    let by = m
        .change
        .delta_pct
        .map_or("from 0".to_string(), |p| format!("by {p:.2}%"));
    let basis = m.statistic.words();
    match (status, m.noise) {
        (GateStatus::WithinNoise, Some(n)) => format!(
            "{basis} grew {by} (limit {limit}%), but the change {} is within the baseline's spread {}",
            format::number(m.change.delta),
            format::number(n)
        ),
        (_, Some(n)) => format!(
            "{basis} grew {by} (limit {limit}%), beyond the baseline's spread {}",
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
    /// Over the limit, but within the baseline's own spread of visit times.
    WithinNoise,
}

/// A region that went over a gate's limit.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GateFinding {
    pub scope: String,
    pub region: String,
    /// Which of the region's numbers went over: `total`, `median`, `p90`, or `new`/`gone` for a
    /// region only one run has.
    pub statistic: Statistic,
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

/// The verdict and its sentence; without a gate, what was compared and the largest time change,
/// since nothing was judged.
pub fn verdict(
    gates: &[GateResult],
    incomparable: &[Difference],
    scopes: &[ScopeDiff],
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
        let regions: usize = scopes.iter().map(|s| s.regions.len()).sum();
        let largest = largest_change(scopes).map_or(String::new(), |(scope, region, pct)| {
            format!(
                "; the largest time change is {} ({scope}) {pct:+.2}%",
                format::cut_long(region)
            )
        });
        format!(
            "no gate set, so nothing was judged: {regions} regions in {} matched scopes compared from A to B{largest}; add --fail-above PCT or --gate-metric NAME:PCT to fail on a regression",
            scopes.len()
        )
    } else if noisy > 0 {
        format!("pass: {noisy} region changes over a limit are within the baseline's own noise")
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
    let verdict = match (failed.is_empty(), gates.is_empty()) {
        (false, _) => Verdict::Fail,
        (true, true) => Verdict::NotGated,
        (true, false) => Verdict::Pass,
    };
    (verdict, summary)
}

/// The region whose time changed most in either direction: (scope, region, percent).
fn largest_change(scopes: &[ScopeDiff]) -> Option<(&str, &str, f64)> {
    scopes
        .iter()
        .flat_map(|s| {
            s.regions.iter().filter_map(move |r| {
                let pct = r.time.as_ref()?.delta_pct?;
                Some((s.key.as_str(), r.path.as_str(), pct))
            })
        })
        .max_by(|x, y| x.2.abs().total_cmp(&y.2.abs()))
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
