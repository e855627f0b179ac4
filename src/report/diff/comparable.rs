//! Whether two runs' numbers can be compared at all: the recorded profiler, its settings (replay
//! mode, clock and cache control, …), the metric set and the GPU. A difference here changes numbers
//! by more than any regression gate would tolerate, so the diff refuses it unless asked not to.

use std::collections::BTreeSet;

use serde::Serialize;

use super::input::RunReport;
use crate::report::format;
use crate::report::workload::{KernelOverlap, MIN_KERNEL_OVERLAP};

/// One recorded difference between the runs that changes what the numbers mean.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Difference {
    /// What differs: `profiler`, `profiler version`, `setting replay_mode`, `metrics`, `device`.
    pub what: String,
    /// Run A's value (`unknown` when not recorded).
    pub a: String,
    /// Run B's value.
    pub b: String,
}

/// The differences that make the runs incomparable, and notes on what could not be checked.
pub fn check(a: &RunReport, b: &RunReport) -> (Vec<Difference>, Vec<String>) {
    let mut diffs = Vec::new();
    let notes = profiler(a, b, &mut diffs);
    setup(a, b, &mut diffs);
    metrics(a, b, &mut diffs);
    (diffs, notes)
}

/// Pushes `what` to `diffs` where the runs' values differ (`unknown` for one not recorded).
fn differ(diffs: &mut Vec<Difference>, what: &str, x: Option<&str>, y: Option<&str>) {
    if x != y {
        diffs.push(Difference {
            what: what.to_string(),
            a: x.unwrap_or("unknown").to_string(),
            b: y.unwrap_or("unknown").to_string(),
        });
    }
}

/// The profiler's name, version and every setting either run recorded; the note where a version
/// could not be compared.
fn profiler(a: &RunReport, b: &RunReport, diffs: &mut Vec<Difference>) -> Vec<String> {
    let (pa, pb) = (&a.run.profiler, &b.run.profiler);
    let mut notes = Vec::new();
    differ(diffs, "profiler", Some(&pa.name), Some(&pb.name));
    match (&pa.version, &pb.version) {
        (Some(x), Some(y)) => differ(
            diffs,
            "profiler version",
            Some(&format::profiler_version(x)),
            Some(&format::profiler_version(y)),
        ),
        (x, y) => notes.push(format!(
            "The profiler version is recorded {}; it could not be compared.",
            match (x.is_some(), y.is_some()) {
                (true, _) => "only in report A",
                (_, true) => "only in report B",
                _ => "in neither report",
            }
        )),
    }
    let keys: BTreeSet<&String> = pa.settings.keys().chain(pb.settings.keys()).collect();
    for key in keys {
        differ(
            diffs,
            &format!("setting {key}"),
            pa.settings.get(key).map(String::as_str),
            pb.settings.get(key).map(String::as_str),
        );
    }
    notes
}

/// How each run chose what it measured: sampling, the time metric and the result selection.
fn setup(a: &RunReport, b: &RunReport, diffs: &mut Vec<Difference>) {
    // A sampled run's deep metrics stand for launches it did not measure; a full run's do not.
    let sampling = |r: &RunReport| match &r.sampling {
        None => "off (every result profiled in full)".to_string(),
        Some(s) => format!(
            "timing pass + deep pass, {} launch(es) per distinct launch",
            s.launch_count
                .map_or("unknown".to_string(), |k| k.to_string())
        ),
    };
    differ(diffs, "sampling", Some(&sampling(a)), Some(&sampling(b)));
    differ(
        diffs,
        "time metric",
        a.time_metric.as_deref(),
        b.time_metric.as_deref(),
    );
    // Results left out by report.kernels would read as a speedup.
    let selection = |r: &RunReport| {
        r.kernel_selection.as_ref().map(|k| {
            format!(
                "include {:?}, exclude {:?}, by {}",
                k.include, k.exclude, k.name_base
            )
        })
    };
    differ(
        diffs,
        &format!("{} selection", a.item_noun.one),
        selection(a).as_deref(),
        selection(b).as_deref(),
    );
}

/// The metric sets, and each shared metric's rollup.
fn metrics(a: &RunReport, b: &RunReport, diffs: &mut Vec<Difference>) {
    let names =
        |r: &RunReport| -> BTreeSet<String> { r.metrics.iter().map(|m| m.name.clone()).collect() };
    let (ma, mb) = (names(a), names(b));
    if ma != mb {
        // Collecting more metrics means more replay passes, which can change what is measured.
        diffs.push(Difference {
            what: "metrics".into(),
            a: extra_metrics(&ma, &mb, "B"),
            b: extra_metrics(&mb, &ma, "A"),
        });
    }
    // The same metric combined differently (a schema 3 report's `.max` counters against schema 4's
    // sums) gives numbers that differ by the kernel count, not by a regression.
    for m in &a.metrics {
        let other = b.metrics.iter().find(|o| o.name == m.name);
        if let (Some(x), Some(y)) = (m.rollup.as_deref(), other.and_then(|o| o.rollup.as_deref())) {
            differ(diffs, &format!("rollup of {}", m.name), Some(x), Some(y));
        }
    }
}

/// `has 2 that B lacks (x, y)` or `has none that B lacks`: what one run's metric set adds to the
/// other's.
fn extra_metrics(own: &BTreeSet<String>, other: &BTreeSet<String>, other_name: &str) -> String {
    let extra: Vec<&str> = own.difference(other).map(String::as_str).collect();
    match extra.len() {
        0 => format!("has none that {other_name} lacks"),
        n => format!("has {n} that {other_name} lacks ({})", extra.join(", ")),
    }
}

/// Warnings that the runs may not measure the same thing although they were recorded alike: another
/// GPU model, or kernel sets that overlap too little to be one workload
/// ([`crate::report::workload`]); and notes on what could not be checked. Worded in run A's
/// profiler's words (kernels or instructions; a GPU or a Neuron device): when the profilers differ,
/// the runs are incomparable already.
pub fn warnings(a: &RunReport, b: &RunReport) -> (Vec<String>, Vec<String>) {
    let mut warnings = Vec::new();
    let mut notes = Vec::new();
    let (ma, mb) = (a.run.platform.models(), b.run.platform.models());
    if ma.is_empty() || mb.is_empty() {
        let which = match (ma.is_empty(), mb.is_empty()) {
            (true, true) => "either report",
            (true, false) => "report A",
            _ => "report B",
        };
        notes.push(a.item_noun.hardware_unknown.replace("{which}", which));
    } else if ma != mb {
        warnings.push(format!(
            "The runs ran on different GPUs (A: {} | B: {}): time and throughput differ by hardware, not only by code.",
            ma.join(", "),
            mb.join(", ")
        ));
    }
    match KernelOverlap::of(a.kernel_names(), b.kernel_names()) {
        Some(overlap) if overlap.is_low() => warnings.push(format!(
            "The runs share only {}, below the {:.0}% that marks one workload: they look like different workloads, so their regions may not be comparable.",
            overlap.describe(a.item_noun.many),
            MIN_KERNEL_OVERLAP * 100.0
        )),
        // One workload: the same kernels, but maybe not the same amount of work.
        Some(_) => warnings.extend(count_warning(a, b)),
        None => notes.push(format!(
            "One of the reports lists no {}, so whether both ran the same workload could not be checked.",
            a.item_noun.many
        )),
    }
    (warnings, notes)
}

/// Result counts that differ by more than this share of the smaller are not the same amount of work.
const COUNT_SPREAD: f64 = 0.10;

/// A warning when the runs hold different amounts of work (1 step against 3): every region's time
/// then changes by the work, not by the code.
fn count_warning(a: &RunReport, b: &RunReport) -> Option<String> {
    let count = |r: &RunReport| -> Option<u64> {
        r.scopes
            .iter()
            .map(|s| s.total.as_ref().and_then(|t| t.kernel_count))
            .sum()
    };
    let (ca, cb) = (count(a)?, count(b)?);
    let (low, high) = (ca.min(cb), ca.max(cb));
    if low == 0 || (high - low) as f64 <= COUNT_SPREAD * low as f64 {
        return None;
    }
    Some(format!(
        "The runs hold different amounts of work: {ca} {} in A, {cb} in B ({:+.0}%, more than {:.0}% apart): compare runs of the same steps, or read the changes as per-step only after dividing by the counts.",
        a.item_noun.many,
        (cb as f64 - ca as f64) / ca.max(1) as f64 * 100.0,
        COUNT_SPREAD * 100.0
    ))
}

/// A note when matched scopes ran on different device indices: with both models known it says them
/// (a different model is a run-wide warning already), else that whether it is the same GPU is unknown.
pub fn device_note(
    key: &str,
    a: (&RunReport, Option<&str>),
    b: (&RunReport, Option<&str>),
) -> Option<String> {
    let (ra, da) = a;
    let (rb, db) = b;
    if da == db {
        return None;
    }
    let model = |r: &RunReport, d: Option<&str>| {
        d.and_then(|d| r.run.platform.model_of(d).map(str::to_string))
    };
    let (da, db) = (da.unwrap_or("unknown"), db.unwrap_or("unknown"));
    Some(match (model(ra, a.1), model(rb, b.1)) {
        (Some(ma), Some(mb)) if ma == mb => {
            format!("`{key}` ran on device {da} in A and device {db} in B (both {ma}).")
        }
        (Some(ma), Some(mb)) => {
            format!("`{key}` ran on device {da} ({ma}) in A and device {db} ({mb}) in B.")
        }
        _ => format!(
            "`{key}` ran on device {da} in A and device {db} in B; the reports do not record both devices' models, so whether it is the same GPU is unknown."
        ),
    })
}
