//! Scopes too many to hold one by one (a Neuron profile of 200,000 subgraphs, each with a summary of
//! its own): each is a row of values against the table's one list of metric names and units, with the
//! rules that fired on it, and the table keeps how the rows spread, the slowest, and each finding's
//! count, which is what report.md shows of them. A row costs its values, not a scope's maps of
//! owned strings: docs/reliability.md, "Neuron profiles".

use std::sync::Arc;

use serde::ser::SerializeStruct;
use serde::{Serialize, Serializer};

use super::{Percentiles, Severity};

/// How many of the slowest rows the summary names.
const SLOWEST: usize = 10;

/// The rows beside one scope; serialised as `{summary, units, rows}`, each row as
/// `{label, total: {metric: value or null}, findings: [rule]}`.
#[derive(Debug, Clone)]
pub struct ScopeTable {
    pub summary: TableSummary,
    /// Metric name and unit, in the order of every row's values.
    pub metrics: Vec<(Arc<str>, Arc<str>)>,
    pub rows: Vec<ScopeRow>,
}

/// One row: a label, a value per metric of the table (`None` where it has none), and the indices of
/// the summary's findings that fired on it.
#[derive(Debug, Clone)]
pub struct ScopeRow {
    pub label: String,
    pub values: Box<[Option<f64>]>,
    pub findings: Box<[u32]>,
}

/// What report.md shows of a table's rows.
#[derive(Debug, Clone, Default, Serialize)]
pub struct TableSummary {
    /// The label of the scope the rows belong beside.
    pub scope: String,
    /// What one row is, and many (`subgraph`, `subgraphs`).
    pub noun: (String, String),
    pub count: u64,
    /// The metric rows are ranked by (the report's time metric); `null` without one.
    pub time_metric: Option<String>,
    /// Each metric's spread over the rows that have a value of it, in the table's order.
    pub spread: Vec<MetricSpread>,
    /// The time metric's unit (`null` without one).
    pub time_unit: Option<Arc<str>>,
    /// The slowest rows by the time metric, slowest first: label and value (in `time_unit`).
    pub slowest: Vec<(String, f64)>,
    /// Every rule that fired on a row, most rows first.
    pub findings: Vec<RowFinding>,
}

/// One metric over the rows; `count` is the rows with a value.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MetricSpread {
    pub metric: Arc<str>,
    pub unit: Arc<str>,
    #[serde(flatten)]
    pub spread: Percentiles,
}

/// A rule over the rows: how many it fired on, and its message where it fired on the slowest of them.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RowFinding {
    pub rule: String,
    pub severity: Severity,
    pub rows: u64,
    /// The row its message is from.
    pub example: String,
    pub message: String,
    /// The example row's time (ranks which row's message is kept); not written.
    #[serde(skip)]
    example_time: f64,
}

impl ScopeTable {
    /// An empty table beside `scope` over `metrics` (name, unit), rows ranked by `time_metric`.
    pub fn new(
        scope: String,
        noun: (&str, &str),
        metrics: Vec<(Arc<str>, Arc<str>)>,
        time_metric: Option<&str>,
    ) -> ScopeTable {
        ScopeTable {
            summary: TableSummary {
                scope,
                noun: (noun.0.to_string(), noun.1.to_string()),
                time_metric: time_metric.map(str::to_string),
                ..TableSummary::default()
            },
            metrics,
            rows: Vec::new(),
        }
    }

    /// Adds a row: its values in the order of the table's metrics (`None` where it has none), and
    /// the findings that fired on it (rule, severity, message).
    pub fn push(
        &mut self,
        label: String,
        values: Box<[Option<f64>]>,
        fired: impl IntoIterator<Item = (String, Severity, String)>,
    ) {
        debug_assert_eq!(values.len(), self.metrics.len());
        let time = self.time_index().and_then(|i| values[i]).unwrap_or(0.0);
        let findings = fired
            .into_iter()
            .map(|(rule, severity, message)| self.count(rule, severity, message, &label, time))
            .collect();
        self.rows.push(ScopeRow {
            label,
            values,
            findings,
        });
    }

    /// The finding's index, counted once more; its message kept where this row is the slowest yet.
    fn count(
        &mut self,
        rule: String,
        severity: Severity,
        message: String,
        label: &str,
        time: f64,
    ) -> u32 {
        let findings = &mut self.summary.findings;
        let at = match findings.iter().position(|f| f.rule == rule) {
            Some(at) => at,
            None => {
                findings.push(RowFinding {
                    rule,
                    severity,
                    rows: 0,
                    example: String::new(),
                    message: String::new(),
                    example_time: f64::NEG_INFINITY,
                });
                findings.len() - 1
            }
        };
        let f = &mut findings[at];
        f.rows += 1;
        if time > f.example_time {
            (f.example, f.message, f.example_time) = (label.to_string(), message, time);
        }
        at as u32
    }

    fn time_index(&self) -> Option<usize> {
        let time = self.summary.time_metric.as_deref()?;
        self.metrics.iter().position(|(n, _)| &**n == time)
    }

    /// Every row is in: the spread of each metric, the slowest rows, the findings most rows first.
    pub fn finish(&mut self) {
        self.summary.count = self.rows.len() as u64;
        let mut column = Vec::with_capacity(self.rows.len());
        self.summary.spread = (0..self.metrics.len())
            .filter_map(|i| {
                column.clear();
                column.extend(self.rows.iter().filter_map(|r| r.values[i]));
                column.sort_by(f64::total_cmp);
                Some(MetricSpread {
                    metric: self.metrics[i].0.clone(),
                    unit: self.metrics[i].1.clone(),
                    spread: Percentiles::of_sorted(&column)?,
                })
            })
            .collect();
        if let Some(t) = self.time_index() {
            self.summary.time_unit = Some(self.metrics[t].1.clone());
            let mut timed: Vec<(f64, usize)> = (self.rows.iter().enumerate())
                .filter_map(|(n, r)| Some((r.values[t]?, n)))
                .collect();
            let cut = timed.len().min(SLOWEST);
            if cut > 0 {
                timed.select_nth_unstable_by(cut - 1, |a, b| b.0.total_cmp(&a.0));
            }
            timed.truncate(cut);
            timed.sort_by(|a, b| b.0.total_cmp(&a.0));
            self.summary.slowest = timed
                .into_iter()
                .map(|(v, n)| (self.rows[n].label.clone(), v))
                .collect();
        }
        self.sort_findings();
    }

    /// The findings most rows first, the rows' indices moved with them.
    fn sort_findings(&mut self) {
        let findings = &mut self.summary.findings;
        let mut order: Vec<usize> = (0..findings.len()).collect();
        order.sort_by(|&a, &b| {
            let (a, b) = (&findings[a], &findings[b]);
            b.rows.cmp(&a.rows).then(a.severity.cmp(&b.severity))
        });
        let mut moved_to = vec![0u32; order.len()];
        for (to, &from) in order.iter().enumerate() {
            moved_to[from] = to as u32;
        }
        let mut taken: Vec<Option<RowFinding>> = findings.drain(..).map(Some).collect();
        findings.extend(order.iter().filter_map(|&from| taken[from].take()));
        for row in &mut self.rows {
            for i in row.findings.iter_mut() {
                *i = moved_to[*i as usize];
            }
        }
    }
}

impl Serialize for ScopeTable {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut table = serializer.serialize_struct("ScopeTable", 3)?;
        table.serialize_field("summary", &self.summary)?;
        table.serialize_field("units", &Units(&self.metrics))?;
        let rows: Vec<Row<'_>> = self
            .rows
            .iter()
            .map(|row| Row { table: self, row })
            .collect();
        table.serialize_field("rows", &rows)?;
        table.end()
    }
}

/// Metric name → unit.
struct Units<'a>(&'a [(Arc<str>, Arc<str>)]);

impl Serialize for Units<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_map(self.0.iter().map(|(name, unit)| (&**name, &**unit)))
    }
}

/// One row as report.json has it: its values by metric name, its findings by rule.
struct Row<'a> {
    table: &'a ScopeTable,
    row: &'a ScopeRow,
}

impl Serialize for Row<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut row = serializer.serialize_struct("ScopeRow", 3)?;
        row.serialize_field("label", &self.row.label)?;
        row.serialize_field("total", &Values(self.table, self.row))?;
        let rules: Vec<&str> = (self.row.findings.iter())
            .filter_map(|&i| self.table.summary.findings.get(i as usize))
            .map(|f| f.rule.as_str())
            .collect();
        row.serialize_field("findings", &rules)?;
        row.end()
    }
}

/// A row's values by metric name, `null` where it has none.
struct Values<'a>(&'a ScopeTable, &'a ScopeRow);

impl Serialize for Values<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let names = self.0.metrics.iter().map(|(name, _)| &**name);
        serializer.collect_map(names.zip(self.1.values.iter()))
    }
}
