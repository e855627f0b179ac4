//! Rollups that add up: a region's counters against an independent sum over its rows of a real
//! capture (read here with the csv crate), whatever the counter's within-kernel suffix.

use profile_run::analysis::RunContext;
use profile_run::config::{load, ConfigSources};

use crate::common::{analyze, fixture};

const TIME: &str = "gpu__time_duration.sum";

fn report(export: &str) -> profile_run::report::model::Report {
    let config = load(&ConfigSources::default()).unwrap().config;
    analyze(&config, &[fixture(export)], &RunContext::default()).unwrap()
}

/// Sums `metric` over the rows of `export` whose push/pop stack holds `range`, read with the csv crate.
fn independent_sum(export: &str, range: &str, metric: &str) -> (u64, f64) {
    let mut reader = csv::Reader::from_path(fixture(export)).unwrap();
    let headers = reader.headers().unwrap().clone();
    let col = headers.iter().position(|h| h == metric).unwrap();
    let nvtx = headers
        .iter()
        .position(|h| h.contains("Push/Pop_Range"))
        .unwrap();
    let needle = format!(":{range}:");
    let (mut count, mut sum) = (0, 0.0);
    // The first row after the header holds the units.
    for row in reader.records().skip(1) {
        let row = row.unwrap();
        if row[nvtx].contains(&needle) {
            count += 1;
            sum += row[col].replace(',', "").parse::<f64>().unwrap();
        }
    }
    (count, sum)
}

#[test]
fn counters_add_up_across_kernels_whatever_their_within_kernel_suffix() {
    // `.max`, `.min`, `.avg` reduce over the GPCs/SMs inside one kernel; across a region's kernels the
    // cycles add up, like the time does.
    let export = "ncu/h200-2025.3.1/train_process_raw.csv";
    let report = report(export);
    let step = report.scopes[0]
        .regions
        .iter()
        .find(|r| r.path == "train_step")
        .unwrap();
    for metric in ["gpc__cycles_elapsed.max", "sm__cycles_active.avg", TIME] {
        let (count, expected) = independent_sum(export, "train_step", metric);
        assert_eq!(step.kernel_count, count);
        let got = step.inclusive.get(metric).unwrap().value.unwrap();
        // This export records time in ns, as the report does.
        assert!(
            (got - expected).abs() <= 1e-6 * got.abs().max(1.0),
            "{metric}: {got} vs independent sum {expected}"
        );
    }
    let rate = step
        .inclusive
        .get("sm__throughput.avg.pct_of_peak_sustained_elapsed")
        .unwrap()
        .value
        .unwrap();
    assert!(
        rate <= 100.0,
        "rates stay time-weighted means, not sums: {rate}"
    );
}
