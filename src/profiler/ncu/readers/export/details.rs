//! The `--page details` reader: ncu's rule results (its guided-analysis advice) gathered per region.
//!
//! The details page is long: one row per (result, section metric), and one row per rule result with
//! `Rule Name`, `Rule Type` (OPT, WRN, INF), `Rule Description` and, for some rules, an estimated
//! speedup. Rows of one result are contiguous, so each result's duration (`Duration` row) and rules are
//! collected while its rows last and then folded into every region on its stack; memory grows with
//! the number of (scope, region, rule) groups, not with rows.

use std::collections::{BTreeMap, HashMap};
use std::io::BufRead;
use std::path::Path;

use crate::profiler::ncu::readers::units;
use crate::region::{RegionKind, RegionPath, ScopeKey};
use serde::Serialize;

use crate::report::model::{Evidence, Insight, Severity};

use super::nvtx_cell::{parse_cell, rename_entries, stacks_by_domain};
use super::raw::{csv_after_header, find, find_header, parse_number, row_error, ResultColumns};
use super::ExportError;
use crate::region::Renames;

/// One ncu rule's findings in one region, as ncu words them (a rule result of `--page details`, or
/// of a result in the report file); [`Advice::into_insight`] turns it into the report's terms.
///
/// `description`, `kernel`, `estimated_speedup` and `speedup_type` all come from one result the rule
/// fired on: the one with the largest estimated saving, else the longest.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Advice {
    /// Which profiler gave it (`ncu`).
    pub source: String,
    /// The rule's identifier (`SOLBottleneck`, `LaunchConfiguration`, …).
    pub rule: String,
    /// `OPT` (optimisation opportunity), `WRN` (warning) or `INF` (information).
    pub kind: String,
    /// The section the rule belongs to.
    pub section: String,
    /// The rule's text for the shown result.
    pub description: String,
    /// The shown result's kernel, as the profiler names it (demangled signature for ncu).
    pub kernel: String,
    /// Results the rule fired on.
    pub results: u64,
    /// Summed duration of those results, in ns.
    pub time: f64,
    /// The shown result's estimated speedup, in percent of its kernel's time (`null` when none).
    pub estimated_speedup: Option<f64>,
    /// `local` or `global`, as the profiler labels that estimate (`null` when none).
    pub speedup_type: Option<String>,
}

impl Advice {
    /// The report's neutral form: ncu's rule type becomes a severity, the section and the estimate's
    /// kind become labels.
    pub fn into_insight(self) -> Insight {
        let severity = match self.kind.as_str() {
            "OPT" => Severity::Opportunity,
            "WRN" => Severity::Warning,
            _ => Severity::Info,
        };
        let mut labels = std::collections::BTreeMap::new();
        labels.insert("section".to_string(), self.section);
        labels.insert("type".to_string(), self.kind);
        if let Some(kind) = self.speedup_type {
            labels.insert("speedup_type".to_string(), kind);
        }
        Insight {
            source: self.source,
            rule: self.rule,
            severity,
            message: self.description,
            cause: None,
            action: None,
            estimated_speedup: self.estimated_speedup,
            estimated_saving_ns: None,
            saving_by_kernel: BTreeMap::new(),
            not_quantified: None,
            evidence: Evidence {
                results: self.results,
                time: self.time,
                kernel: Some(self.kernel).filter(|k| !k.is_empty()),
                labels,
                metrics: std::collections::BTreeMap::new(),
            },
        }
    }
}

/// Why an ncu finding without an estimate has none.
const NO_ESTIMATE: &str = "ncu gives no estimated speedup for this rule";

/// One rule's findings while they are gathered: the advice so far, plus how it ranks the single
/// result whose description, kernel and estimate it carries. Those four always come from one result,
/// so a row never pairs one kernel's message with another kernel's speedup.
#[derive(Debug, Clone)]
struct Finding {
    advice: Advice,
    /// The shown result's estimated saving in ns (duration × speedup / 100), `None` without an estimate.
    saving: Option<f64>,
    /// The shown result's duration in ns.
    duration: f64,
    /// The time acting on it would save, in ns: over every result the rule fired on, that result's
    /// estimated speedup times its own duration (`None` when no result had an estimate). Kernel-local
    /// percentages never add up; these times do.
    total_saving: Option<f64>,
    /// `total_saving` kernel by kernel.
    by_kernel: BTreeMap<String, f64>,
}

impl Finding {
    /// A finding of one result that ran `duration` ns.
    fn of_result(mut advice: Advice, duration: f64) -> Finding {
        advice.results = 1;
        advice.time = duration;
        let saving = advice.estimated_speedup.map(|s| duration * s / 100.0);
        let by_kernel = saving
            .map(|s| (advice.kernel.clone(), s))
            .into_iter()
            .collect();
        Finding {
            saving,
            total_saving: saving,
            by_kernel,
            duration,
            advice,
        }
    }

    fn merge(&mut self, other: &Finding) {
        let shown = other.ranks_above(self);
        self.total_saving = match (self.total_saving, other.total_saving) {
            (Some(x), Some(y)) => Some(x + y),
            (x, y) => x.or(y),
        };
        for (kernel, saving) in &other.by_kernel {
            *self.by_kernel.entry(kernel.clone()).or_default() += saving;
        }
        let (a, b) = (&mut self.advice, &other.advice);
        a.results += b.results;
        a.time += b.time;
        if shown {
            a.description = b.description.clone();
            a.kernel = b.kernel.clone();
            a.estimated_speedup = b.estimated_speedup;
            a.speedup_type = b.speedup_type.clone();
            self.saving = other.saving;
            self.duration = other.duration;
        }
    }

    /// The result worth showing: the largest estimated saving, else (no estimate anywhere) the longest;
    /// remaining ties go to the smaller description and kernel name, a total order, so the choice never
    /// depends on the order results or scopes are merged in.
    fn ranks_above(&self, other: &Finding) -> bool {
        let key = |f: &Finding| (f.saving.is_some(), f.saving.unwrap_or(0.0), f.duration);
        let (a, b) = (key(self), key(other));
        a.0.cmp(&b.0)
            .then(a.1.total_cmp(&b.1))
            .then(a.2.total_cmp(&b.2))
            .then_with(|| other.advice.description.cmp(&self.advice.description))
            .then_with(|| other.advice.kernel.cmp(&self.advice.kernel))
            .is_gt()
    }
}

/// Orders findings: optimisation opportunities and warnings before information; within a class, rules
/// with an estimated speedup first, by the time they would save (each result's speedup × its own
/// time, summed), then rules without an estimate, by the time they cover.
fn priority(finding: &Finding) -> (u8, u8, f64) {
    let advice = &finding.advice;
    let class = match advice.kind.as_str() {
        "OPT" | "WRN" => 0,
        _ => 1,
    };
    match finding.total_saving {
        Some(saving) => (class, 0, -saving),
        None => (class, 1, -advice.time),
    }
}

/// A scope's findings: per region, per (rule, kind).
type ScopeFindings = HashMap<RegionKey, BTreeMap<RuleKey, Finding>>;

type RegionKey = (RegionKind, Vec<String>);
type RuleKey = (String, String);

/// Advice per scope and region.
#[derive(Debug, Default)]
pub struct AdviceIndex {
    scopes: HashMap<ScopeKey, ScopeFindings>,
}

impl AdviceIndex {
    /// Advice for a region of one scope, or of all scopes together when `scope` is `None`, most
    /// important first, as the report's insights.
    pub fn for_region(&self, scope: Option<&ScopeKey>, path: &RegionPath) -> Vec<Insight> {
        let key = (path.kind, path.segments.clone());
        let mut merged: BTreeMap<RuleKey, Finding> = BTreeMap::new();
        // Scopes are merged in key order, so the aggregate never depends on hash order.
        let mut scopes: Vec<(&ScopeKey, &ScopeFindings)> = match scope {
            Some(s) => self.scopes.get_key_value(s).into_iter().collect(),
            None => self.scopes.iter().collect(),
        };
        scopes.sort_by(|a, b| a.0.cmp(b.0));
        for (_, regions) in scopes {
            for (rule, finding) in regions.get(&key).into_iter().flatten() {
                match merged.get_mut(rule) {
                    Some(m) => m.merge(finding),
                    None => {
                        merged.insert(rule.clone(), finding.clone());
                    }
                }
            }
        }
        let mut list: Vec<Finding> = merged.into_values().collect();
        list.sort_by(|a, b| {
            let (ca, ea, wa) = priority(a);
            let (cb, eb, wb) = priority(b);
            (ca, ea)
                .cmp(&(cb, eb))
                .then(wa.total_cmp(&wb))
                .then_with(|| a.advice.rule.cmp(&b.advice.rule))
        });
        list.into_iter()
            .map(|f| {
                let mut insight = f.advice.into_insight();
                insight.estimated_saving_ns = f.total_saving;
                insight.saving_by_kernel = f.by_kernel;
                if f.total_saving.is_none() && insight.severity != Severity::Info {
                    insight.not_quantified = Some(NO_ESTIMATE.to_string());
                }
                insight
            })
            .collect()
    }

    /// Folds in one result's rule findings: `rules` ran on a result of `kernel` that took `time` ns in
    /// `scope`, inside every region of `regions` (each prefix of each stack path, each mark). Both
    /// sources gather advice through here: the details page per result's rows, the report file per
    /// result.
    pub fn add_result(
        &mut self,
        scope: &ScopeKey,
        regions: &[(RegionKind, Vec<String>)],
        kernel: &str,
        time: f64,
        rules: Vec<Advice>,
    ) {
        if regions.is_empty() {
            return;
        }
        for mut advice in rules {
            advice.kernel = kernel.to_string();
            self.add(scope, regions, &Finding::of_result(advice, time));
        }
    }

    /// Folds in the findings of inputs read apart (another file, on another thread); merged in input
    /// order, the outcome does not depend on how the reading was split.
    pub fn merge(&mut self, other: AdviceIndex) {
        for (scope, regions) in other.scopes {
            let mine = self.scopes.entry(scope).or_default();
            for (region, rules) in regions {
                let into = mine.entry(region).or_default();
                for (key, finding) in rules {
                    match into.get_mut(&key) {
                        Some(existing) => existing.merge(&finding),
                        None => {
                            into.insert(key, finding);
                        }
                    }
                }
            }
        }
    }

    pub fn is_empty(&self) -> bool {
        self.scopes.is_empty()
    }

    fn add(&mut self, scope: &ScopeKey, regions: &[RegionKey], finding: &Finding) {
        let per_region = self.scopes.entry(scope.clone()).or_default();
        for region in regions {
            let rules = per_region.entry(region.clone()).or_default();
            let key = (finding.advice.rule.clone(), finding.advice.kind.clone());
            match rules.get_mut(&key) {
                Some(existing) => existing.merge(finding),
                None => {
                    rules.insert(key, finding.clone());
                }
            }
        }
    }
}

struct Columns {
    result: ResultColumns,
    section: usize,
    metric: usize,
    unit: usize,
    value: usize,
    rule: usize,
    rule_type: usize,
    description: usize,
    speedup_type: Option<usize>,
    speedup: Option<usize>,
}

/// The result whose rows are being read.
struct Current {
    id: Vec<u8>,
    kernel: String,
    scope: ScopeKey,
    regions: Vec<RegionKey>,
    selected: bool,
    time: f64,
    rules: Vec<Advice>,
}

impl Current {
    fn flush(self, index: &mut AdviceIndex) {
        if self.selected {
            index.add_result(
                &self.scope,
                &self.regions,
                &self.kernel,
                self.time,
                self.rules,
            );
        }
    }
}

fn field(rec: &csv::ByteRecord, col: Option<usize>) -> String {
    col.and_then(|c| rec.get(c))
        .map(|v| String::from_utf8_lossy(v).trim().to_string())
        .unwrap_or_default()
}

/// Every region a result belongs to: each prefix of each domain's push/pop path, and each open
/// start/end range.
fn regions_of(rec: &csv::ByteRecord, columns: &Columns, renames: &Renames) -> Vec<RegionKey> {
    let mut regions = Vec::new();
    if let Some((col, layout)) = columns.result.push_pop {
        let cell = String::from_utf8_lossy(rec.get(col).unwrap_or(b""));
        let mut entries = parse_cell(&cell, layout);
        rename_entries(&mut entries, renames);
        let stacks = stacks_by_domain(&entries);
        for path in std::iter::once(&stacks.default).chain(&stacks.others) {
            for depth in 1..=path.len() {
                regions.push((RegionKind::Stack, path[..depth].to_vec()));
            }
        }
    }
    if let Some((col, layout)) = columns.result.start_end {
        let cell = String::from_utf8_lossy(rec.get(col).unwrap_or(b""));
        let mut entries = parse_cell(&cell, layout);
        rename_entries(&mut entries, renames);
        for entry in entries {
            let region = (RegionKind::Mark, vec![entry.segment()]);
            // Overlapping instances of one range are one region, as in the raw export's tree.
            if !regions.contains(&region) {
                regions.push(region);
            }
        }
    }
    regions
}

impl Columns {
    /// The details page's columns, by name; a raw page given instead is named as such.
    fn locate(headers: &[String], path: &Path) -> Result<Columns, ExportError> {
        let find = |name: &str| find(headers, name);
        let required = |name: &str| {
            find(name).ok_or_else(|| ExportError::MissingColumn {
                path: path.to_path_buf(),
                column: name.to_string(),
            })
        };
        if find("Metric Name").is_none() {
            return Err(ExportError::WrongPage {
                path: path.to_path_buf(),
                found: "raw",
                expected: "details",
            });
        }
        Ok(Columns {
            result: ResultColumns::locate(headers, path)?,
            section: required("Section Name")?,
            metric: required("Metric Name")?,
            unit: required("Metric Unit")?,
            value: required("Metric Value")?,
            rule: required("Rule Name")?,
            rule_type: required("Rule Type")?,
            description: required("Rule Description")?,
            speedup_type: find("Estimated Speedup Type"),
            speedup: find("Estimated Speedup"),
        })
    }
}

/// Reads a details-page export into `index`. `rank` tags its scopes like the raw export's;
/// `selects` applies the report's kernel selection to kernel names.
pub fn read_details<R: BufRead>(
    mut input: R,
    path: &Path,
    rank: Option<u32>,
    renames: &Renames,
    selects: &mut dyn FnMut(&str) -> bool,
    index: &mut AdviceIndex,
) -> Result<(), ExportError> {
    let rank = rank.map(|r| r.to_string()).unwrap_or_default();
    let (header, preamble) = find_header(&mut input, path)?;
    let (mut reader, headers) = csv_after_header(header, input, path, true)?;
    let columns = Columns::locate(&headers, path)?;

    let mut current: Option<Current> = None;
    let mut rec = csv::ByteRecord::new();
    loop {
        match reader.read_byte_record(&mut rec) {
            Ok(true) => {}
            Ok(false) => break,
            Err(e) => return Err(row_error(path, preamble, &e)),
        }
        let id = rec.get(columns.result.id).unwrap_or(b"");
        let pid = rec
            .get(columns.result.process_id.unwrap_or(columns.result.id))
            .unwrap_or(b"");
        let same = current
            .as_ref()
            .is_some_and(|c| c.id == id && c.scope.process_id.as_bytes() == pid);
        if !same {
            if let Some(done) = current.take() {
                done.flush(index);
            }
            let kernel = String::from_utf8_lossy(rec.get(columns.result.kernel).unwrap_or(b""));
            current = Some(Current {
                id: id.to_vec(),
                kernel: kernel.to_string(),
                scope: ScopeKey {
                    host: field(&rec, columns.result.host),
                    process_id: field(&rec, columns.result.process_id),
                    process_name: field(&rec, columns.result.process_name),
                    device: field(&rec, columns.result.device),
                    rank: rank.clone(),
                },
                regions: regions_of(&rec, &columns, renames),
                selected: selects(&kernel),
                time: 0.0,
                rules: Vec::new(),
            });
        }
        let current = current.as_mut().expect("set above");
        let metric = field(&rec, Some(columns.metric));
        if metric == "Duration" {
            let factor = units::normalize(&field(&rec, Some(columns.unit))).factor;
            if let Some(v) = parse_number(rec.get(columns.value).unwrap_or(b"")) {
                current.time = v * factor;
            }
        }
        let rule = field(&rec, Some(columns.rule));
        if !rule.is_empty() {
            current.rules.push(Advice {
                source: "ncu".into(),
                rule,
                kind: field(&rec, Some(columns.rule_type)),
                section: field(&rec, Some(columns.section)),
                description: field(&rec, Some(columns.description)),
                kernel: String::new(),
                results: 1,
                time: 0.0,
                estimated_speedup: columns
                    .speedup
                    .and_then(|c| parse_number(rec.get(c).unwrap_or(b""))),
                speedup_type: Some(field(&rec, columns.speedup_type)).filter(|t| !t.is_empty()),
            });
        }
    }
    if let Some(done) = current.take() {
        done.flush(index);
    }
    Ok(())
}
