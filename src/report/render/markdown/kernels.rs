//! report.md's kernel tables: kernels grouped by function name (template instantiations and
//! per-call variants of one function become one row with their summed count and time), the longest
//! groups first, cut to `report.max_kernels`.

use std::collections::HashMap;
use std::sync::Arc;

use serde::Serialize;

use crate::report::model::{Kernel, MetricValue};

/// Full names listed per row under "Full kernel names"; report.json has all of them.
const NAMES_PER_ROW: usize = 5;

#[derive(Serialize)]
pub(in crate::report::render) struct KernelList<'a> {
    pub(in crate::report::render) shown: Vec<KernelRow<'a>>,
    /// Rows (function names) not shown.
    pub(in crate::report::render) hidden: usize,
    /// True when a shown row's full names say more than its function name.
    pub(in crate::report::render) has_long_names: bool,
}

#[derive(Serialize)]
pub(in crate::report::render) struct KernelRow<'a> {
    /// The function name shared by the row's kernels.
    pub(in crate::report::render) function: &'a str,
    /// The full name of the row's longest kernel.
    pub(in crate::report::render) name: &'a str,
    /// Up to five full names, longest kernel first.
    pub(in crate::report::render) names: Vec<&'a str>,
    /// Distinct full names in the row (1 when nothing was grouped).
    pub(in crate::report::render) variants: usize,
    /// Results of all the row's kernels.
    pub(in crate::report::render) count: u64,
    /// The row's kernels as report.json has them, longest first.
    pub(in crate::report::render) kernels: Vec<&'a Kernel>,
    /// Summed time metric value, `none` without a time metric.
    pub(in crate::report::render) time: Option<MetricValue>,
    /// That time over the enclosing region's (or scope's) time, 0..1.
    pub(in crate::report::render) share: Option<f64>,
}

struct Group<'a> {
    first: usize,
    time: Option<f64>,
    unit: Option<Arc<str>>,
    members: Vec<(f64, usize)>,
    count: u64,
    function: &'a str,
}

impl<'a> KernelList<'a> {
    /// Groups `kernels` by function name and keeps the `max` longest groups. Only shown groups become
    /// rows: a scope may have thousands of kernels.
    pub(in crate::report::render) fn new(
        kernels: &'a [Kernel],
        time: Option<&str>,
        base_time: Option<f64>,
        max: usize,
    ) -> Self {
        let mut groups: Vec<Group<'a>> = Vec::new();
        let mut index: HashMap<&str, usize> = HashMap::new();
        for (i, kernel) in kernels.iter().enumerate() {
            let value = time.and_then(|t| kernel.metrics.get(t));
            let ns = value.and_then(|v| v.value);
            let slot = *index.entry(kernel.function.as_str()).or_insert_with(|| {
                groups.push(Group {
                    first: i,
                    time: None,
                    unit: None,
                    members: Vec::new(),
                    count: 0,
                    function: &kernel.function,
                });
                groups.len() - 1
            });
            let group = &mut groups[slot];
            group.count += kernel.count;
            group.members.push((ns.unwrap_or(f64::MIN), i));
            if let Some(ns) = ns {
                group.time = Some(group.time.unwrap_or(0.0) + ns);
            }
            if group.unit.is_none() {
                group.unit = value.map(|v| v.unit.clone());
            }
        }
        // Longest first; ties keep model order, whatever the producer did.
        let longest_first = |a: &Group, b: &Group| {
            b.time
                .unwrap_or(f64::MIN)
                .total_cmp(&a.time.unwrap_or(f64::MIN))
                .then(a.first.cmp(&b.first))
        };
        let total = groups.len();
        if groups.len() > max {
            groups.select_nth_unstable_by(max, longest_first);
            groups.truncate(max);
        }
        groups.sort_unstable_by(longest_first);
        let shown: Vec<KernelRow> = groups
            .into_iter()
            .map(|g| row(g, kernels, base_time))
            .collect();
        KernelList {
            has_long_names: shown.iter().any(|r| r.variants > 1 || r.name != r.function),
            hidden: total - shown.len(),
            shown,
        }
    }
}

fn row<'a>(mut group: Group<'a>, kernels: &'a [Kernel], base_time: Option<f64>) -> KernelRow<'a> {
    group
        .members
        .sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    let members: Vec<&Kernel> = group.members.iter().map(|&(_, i)| &kernels[i]).collect();
    let mut names: Vec<&str> = Vec::new();
    for k in &members {
        if !names.contains(&k.name.as_str()) {
            names.push(&k.name);
        }
    }
    let variants = names.len();
    names.truncate(NAMES_PER_ROW);
    KernelRow {
        function: group.function,
        name: members[0].name.as_str(),
        names,
        variants,
        count: group.count,
        kernels: members,
        time: group.unit.map(|unit| MetricValue::number(group.time, unit)),
        share: match (group.time, base_time) {
            (Some(t), Some(b)) if b > 0.0 => Some(t / b),
            _ => None,
        },
    }
}
