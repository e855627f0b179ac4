//! Whether two runs' numbers can be compared at all: the recorded profiler, its settings (replay
//! mode, clock and cache control, …), the metric set and the GPU. A difference here changes numbers
//! by more than any regression gate would tolerate, so the diff refuses it unless asked not to.

use std::collections::BTreeSet;

use serde::Serialize;

use super::input::RunReport;

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
    let mut notes = Vec::new();
    let (pa, pb) = (&a.run.profiler, &b.run.profiler);
    let mut differ = |what: &str, x: Option<&str>, y: Option<&str>| {
        if x != y {
            diffs.push(Difference {
                what: what.to_string(),
                a: x.unwrap_or("unknown").to_string(),
                b: y.unwrap_or("unknown").to_string(),
            });
        }
    };
    differ("profiler", Some(&pa.name), Some(&pb.name));
    match (&pa.version, &pb.version) {
        (Some(x), Some(y)) => differ("profiler version", Some(x), Some(y)),
        _ => notes.push(
            "The profiler version is not recorded in both reports; it could not be compared."
                .into(),
        ),
    }
    let keys: BTreeSet<&String> = pa.settings.keys().chain(pb.settings.keys()).collect();
    for key in keys {
        differ(
            &format!("setting {key}"),
            pa.settings.get(key).map(String::as_str),
            pb.settings.get(key).map(String::as_str),
        );
    }
    // A sampled run's deep metrics stand for launches it did not measure; a full run's do not.
    let sampling = |r: &RunReport| match &r.sampling {
        None => "off (every result profiled in full)".to_string(),
        Some(s) => format!(
            "timing pass + deep pass, {} launch(es) per distinct launch",
            s.launch_count
                .map_or("unknown".to_string(), |k| k.to_string())
        ),
    };
    differ("sampling", Some(&sampling(a)), Some(&sampling(b)));
    differ(
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
        "kernel selection",
        selection(a).as_deref(),
        selection(b).as_deref(),
    );
    let names =
        |r: &RunReport| -> BTreeSet<String> { r.metrics.iter().map(|m| m.name.clone()).collect() };
    let (ma, mb) = (names(a), names(b));
    if ma != mb {
        let only = |x: &BTreeSet<String>, y: &BTreeSet<String>| {
            let v: Vec<&str> = x.difference(y).map(String::as_str).collect();
            if v.is_empty() {
                "the same plus none".to_string()
            } else {
                format!("also {}", v.join(", "))
            }
        };
        // Collecting more metrics means more replay passes, which can change what is measured.
        diffs.push(Difference {
            what: "metrics".into(),
            a: only(&ma, &mb),
            b: only(&mb, &ma),
        });
    }
    notes.push(
        "The GPU model is not recorded in report.json (a scope names its device by index), so whether both runs used the same GPU is unknown.".into(),
    );
    (diffs, notes)
}

/// A note when matched scopes ran on different device indices: the index alone does not say whether
/// the GPU model differs, so it is flagged, not refused.
pub fn device_note(key: &str, a: Option<&str>, b: Option<&str>) -> Option<String> {
    (a != b).then(|| {
        format!(
            "`{key}` ran on device {} in A and device {} in B; the reports do not record the GPU model, so whether it is the same is unknown.",
            a.unwrap_or("unknown"),
            b.unwrap_or("unknown")
        )
    })
}
