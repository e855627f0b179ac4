//! The visual outputs (report.html, the SVG charts, trace.json) on real captures: structure, escaping
//! of hostile names, determinism, `report.outputs`, and report.html in headless Chromium (ignored by
//! default; CI runs it).

mod config;
mod html;
mod svg;
mod trace;

use profile_run::analysis::RunContext;
use profile_run::config::{load, ConfigSources};
use profile_run::report::model::{Percentiles, Report};

use crate::common::{analyze_sets, fixture, ExportSet};

pub const TIME: &str = "gpu__time_duration.sum";

fn report_of(sets: &[ExportSet], overrides: &[&str]) -> Report {
    let config = load(&ConfigSources {
        files: vec![],
        overrides: overrides.iter().map(|s| s.to_string()).collect(),
        env: vec![],
    })
    .unwrap()
    .config;
    analyze_sets(&config, sets, &RunContext::default()).unwrap()
}

/// H200, one process: regions A, A/A1 and B, with ncu's rule results from the details page.
pub fn manual() -> Report {
    report_of(
        &[ExportSet {
            raw: fixture("ncu/h200-2025.3.1/manual_raw.csv"),
            details: Some(fixture("ncu/h200-2025.3.1/manual_details.csv")),
            rank: None,
        }],
        &[],
    )
}

/// Two torchrun ranks on two H200s, merged: two scopes and the aggregate.
pub fn ranks() -> Report {
    let sets: Vec<ExportSet> = (0..2)
        .map(|rank| ExportSet {
            raw: fixture(&format!("ncu/h200x2-2025.3.1/ddp_rank{rank}_raw.csv")),
            details: None,
            rank: Some(rank),
        })
        .collect();
    report_of(&sets, &[])
}

/// A PyTorch run with `emit_nvtx`: deep operator stacks from two threads.
pub fn pytorch() -> Report {
    report_of(
        &[ExportSet::raw_only(fixture(
            "ncu/h100-2025.3.1-pytorch/emit_nvtx_raw.csv",
        ))],
        &["regions.include=[step]", "regions.unrequested=show"],
    )
}

/// The manual capture with every region's instances taken from its kernels' times (as if each
/// kernel name were one visit): CSV exports cannot tell visits apart, so the charts of instances
/// need a source that can; this gives them real, uneven times.
pub fn with_instances(mut report: Report) -> Report {
    for region in &mut report.scopes[0].regions {
        let times: Vec<f64> = region
            .kernels
            .iter()
            .filter_map(|k| k.metrics.get(TIME).and_then(|v| v.value))
            .collect();
        region.instances = Percentiles::nearest_rank(&times);
    }
    report
}

/// Names a workload controls, made hostile: markup, quotes, ampersands, a bidi override and a line
/// break, in range names, paths, the scope label, kernel names and an insight.
pub const HOSTILE: &str = "<script>alert('x')</script>&\"\u{202e}\nnext";

pub fn hostile() -> Report {
    let mut report = manual();
    let scope = &mut report.scopes[0];
    scope.label = format!("{HOSTILE} scope");
    for region in &mut scope.regions {
        for segment in &mut region.segments {
            *segment = format!("{segment}{HOSTILE}");
        }
        region.name = region.segments.last().unwrap().clone();
        region.path = region.segments.join("/");
        region.parent = (region.segments.len() > 1)
            .then(|| region.segments[..region.segments.len() - 1].join("/"));
        for kernel in &mut region.kernels {
            kernel.name = format!("{HOSTILE}{}", kernel.name);
            kernel.function = format!("{HOSTILE}{}", kernel.function);
        }
        for insight in &mut region.insights {
            insight.message = format!("{HOSTILE} {}", insight.message);
            insight.evidence.kernel = Some(HOSTILE.to_string());
        }
    }
    for kernel in &mut scope.total.kernels {
        kernel.name = format!("{HOSTILE}{}", kernel.name);
        kernel.function = format!("{HOSTILE}{}", kernel.function);
    }
    report
}

/// The time metric's value of a metric map.
pub fn time(map: &profile_run::report::model::MetricMap) -> f64 {
    map.get(TIME).unwrap().value.unwrap()
}
