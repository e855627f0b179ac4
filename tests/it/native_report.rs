//! The native report-file source against the CSV source on the same captures: for every `.ncu-rep`
//! fixture both give the same scopes, regions, kernel counts, metric values and advice rules; the
//! native one adds range instances. Also the derived units against the raw pages' units rows, and
//! `profile-run report` on report files and run directories without ncu.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Mutex;

use profile_run::analysis::{Observations, RunContext};
use profile_run::config::{load, Config, ConfigSources};
use profile_run::plan::Plan;
use profile_run::profiler::ncu::observe::report_source::{
    analyze_report_files, ReportInput, ReportSource,
};
use profile_run::profiler::ncu::readers::report_file::ReportFile;
use profile_run::profiler::ncu::readers::units::base_unit_of;
use profile_run::region::{RegionAccumulator, RegionKind, ScopeStats};
use profile_run::report::model::{MetricMap, Report, Scope};

use crate::common::{analyze_sets, fixture, ncu_plan, ExportSet};
use crate::report_file::{report_path, FIXTURES};

mod cli;

/// Metrics beyond the default groups that exercise other units (`hz`, `byte`, `cycle`, `block`).
const EXTRA_METRICS: &str = "report.metrics=[dram__cycles_elapsed.avg.per_second, profiler__replayer_bytes_mem_accessible.sum, sm__cycles_active.sum, launch__occupancy_limit_blocks, launch__shared_mem_per_block, device__attribute_display_name]";

fn config(extra: &[&str]) -> Config {
    let mut overrides = vec![
        "regions.unrequested=show".to_string(),
        EXTRA_METRICS.to_string(),
    ];
    overrides.extend(extra.iter().map(|s| s.to_string()));
    let sources = ConfigSources {
        files: Vec::new(),
        overrides,
        env: Vec::new(),
    };
    load(&sources).unwrap().config
}

fn csv_report(name: &str, config: &Config) -> Report {
    let dir = "ncu/h100-2025.3.1-pytorch";
    let set = ExportSet {
        raw: fixture(&format!("{dir}/{name}_raw.csv")),
        details: Some(fixture(&format!("{dir}/{name}_details.csv"))),
        rank: None,
    };
    analyze_sets(config, &[set], &RunContext::default()).unwrap()
}

fn native_report(name: &str, config: &Config) -> Report {
    let plan = Plan::new(config).unwrap();
    let ncu = ncu_plan(&plan);
    let input = ReportInput {
        deep: None,
        path: report_path(name),
        rank: None,
    };
    analyze_report_files(&ncu.reading(), &[input], &RunContext::default()).unwrap()
}

/// The CSV prints fractional values with two decimals: each result's value may be off by 0.005.
fn close(native: f64, csv: f64, results: u64) -> bool {
    let tolerance = 1e-9 * native.abs().max(csv.abs()) + 0.005 * results.max(1) as f64;
    (native - csv).abs() <= tolerance
}

fn same_values(at: &str, native: &[String], csv: &[String]) {
    // Attribute values: numbers compare within the CSV's rounding, text exactly; rounding may merge
    // two native values into one CSV value, so each side must find a match in the other.
    let matches = |a: &String, b: &String| match (a.parse::<f64>(), b.parse::<f64>()) {
        (Ok(x), Ok(y)) => close(x, y, 1),
        _ => a == b,
    };
    for v in native {
        assert!(
            csv.iter().any(|c| matches(v, c)),
            "{at}: {v} not in {csv:?}"
        );
    }
    for c in csv {
        assert!(
            native.iter().any(|v| matches(v, c)),
            "{at}: {c} not in {native:?}"
        );
    }
}

fn same_metrics(at: &str, native: &MetricMap, csv: &MetricMap, results: u64) {
    let names = |m: &MetricMap| m.0.iter().map(|(n, _)| n.to_string()).collect::<Vec<_>>();
    assert_eq!(names(native), names(csv), "{at}: metric names");
    for ((name, n), (_, c)) in native.0.iter().zip(&csv.0) {
        let at = format!("{at} {name}");
        assert_eq!(n.unit, c.unit, "{at}: unit");
        match (n.value, c.value) {
            (Some(a), Some(b)) => assert!(close(a, b, results), "{at}: native {a} vs CSV {b}"),
            (a, b) => assert_eq!(a.is_some(), b.is_some(), "{at}: {a:?} vs {b:?}"),
        }
        match (&n.values, &c.values) {
            (Some(a), Some(b)) => same_values(&at, a, b),
            (a, b) => assert_eq!(a.is_some(), b.is_some(), "{at}: values"),
        }
    }
}

/// (rule, ncu rule type) → results of every insight of a region.
fn rules(insights: &[profile_run::report::model::Insight]) -> BTreeMap<(String, String), u64> {
    insights
        .iter()
        .filter(|a| a.source == "ncu")
        .map(|a| {
            let kind = a.evidence.labels["type"].clone();
            ((a.rule.clone(), kind), a.evidence.results)
        })
        .collect()
}

fn same_scope(at: &str, native: &Scope, csv: &Scope) {
    assert_eq!(native.label, csv.label, "{at}: label");
    assert_eq!(
        (native.rank, native.process_id, &native.device),
        (csv.rank, csv.process_id, &csv.device),
        "{at}"
    );
    for (what, n, c) in [
        ("total", &native.total, &csv.total),
        ("outside", &native.outside_regions, &csv.outside_regions),
    ] {
        assert_eq!(n.kernel_count, c.kernel_count, "{at} {what}: results");
        same_metrics(
            &format!("{at} {what}"),
            &n.metrics,
            &c.metrics,
            c.kernel_count,
        );
    }
    let paths = |s: &Scope| {
        s.regions
            .iter()
            .map(|r| (r.path.clone(), r.kind))
            .collect::<Vec<_>>()
    };
    assert_eq!(paths(native), paths(csv), "{at}: regions");
    for (n, c) in native.regions.iter().zip(&csv.regions) {
        let at = format!("{at} region {}", c.path);
        assert_eq!(n.segments, c.segments, "{at}");
        assert_eq!(
            (n.kernel_count, n.self_kernel_count),
            (c.kernel_count, c.self_kernel_count),
            "{at}: results"
        );
        same_metrics(
            &format!("{at} inclusive"),
            &n.inclusive,
            &c.inclusive,
            c.kernel_count,
        );
        same_metrics(
            &format!("{at} exclusive"),
            &n.exclusive,
            &c.exclusive,
            c.kernel_count,
        );
        assert_eq!(rules(&n.insights), rules(&c.insights), "{at}: insights");
        for (a, b) in n.insights.iter().zip(&c.insights) {
            assert!(
                close(a.evidence.time, b.evidence.time, 0),
                "{at} {}: insight time",
                a.rule
            );
        }
    }
}

fn check_same_report(name: &str, config: &Config) {
    let native = native_report(name, config);
    let csv = csv_report(name, config);
    let metrics = |r: &Report| {
        r.metrics
            .iter()
            .map(|m| (m.name.clone(), m.unit.clone(), m.rollup))
            .collect::<Vec<_>>()
    };
    assert_eq!(metrics(&native), metrics(&csv), "{name}: metrics");
    assert_eq!(native.time_metric, csv.time_metric, "{name}");
    assert_eq!(native.notes, csv.notes, "{name}: notes");
    assert_eq!(native.run.profiler.name, csv.run.profiler.name, "{name}");
    assert_eq!(
        native.run.profiler.settings, csv.run.profiler.settings,
        "{name}: profiler settings"
    );
    // The report file knows more than its pages: the ncu that wrote it, and the GPU.
    assert_eq!(csv.run.profiler.version, None, "{name}");
    assert_eq!(
        native.run.profiler.version.as_deref(),
        Some("2025.3.1.0"),
        "{name}"
    );
    assert_eq!(
        native.run.platform.models(),
        ["NVIDIA H100 80GB HBM3"],
        "{name}"
    );
    // The raw page names the same devices (its device columns); only the file knows the driver.
    assert_eq!(
        native.run.platform.devices, csv.run.platform.devices,
        "{name}: devices"
    );
    assert_eq!(csv.run.platform.driver, None, "{name}");
    assert_eq!(
        native.run.platform.driver.as_deref(),
        Some("CUDA 13.0"),
        "{name}"
    );
    assert_eq!(native.scopes.len(), csv.scopes.len(), "{name}: scopes");
    let regions: usize = csv.scopes.iter().map(|s| s.regions.len()).sum();
    assert!(regions > 0, "{name}: no region compared");
    let advice: usize = csv
        .scopes
        .iter()
        .flat_map(|s| &s.regions)
        .map(|r| r.insights.len())
        .sum();
    assert!(advice > 0, "{name}: no advice compared");
    for extra in [
        "dram__cycles_elapsed.avg.per_second",
        "launch__shared_mem_per_block",
    ] {
        assert!(
            native.metrics.iter().any(|m| m.name == extra),
            "{name}: {extra} not compared"
        );
    }
    for (i, (n, c)) in native.scopes.iter().zip(&csv.scopes).enumerate() {
        same_scope(&format!("{name} scope {i}"), n, c);
    }
    same_scope(
        &format!("{name} aggregate"),
        native.aggregate.as_ref().unwrap(),
        csv.aggregate.as_ref().unwrap(),
    );
}

macro_rules! same_as_csv {
    ($($name:ident),*) => {$(
        #[test]
        fn $name() {
            check_same_report(stringify!($name), &config(&[]));
        }
    )*};
}

mod same_as_csv {
    use super::check_same_report;
    use super::config;
    same_as_csv!(
        emit_nvtx,
        nccl_one_rank,
        rep_apprange,
        rep_kernel,
        rep_multiproc,
        rep_pystack,
        rep_range,
        rep_start_end
    );
}

#[test]
fn renames_and_every_requested_region_match_the_csv() {
    // The PyTorch preset's renames merge per-call operator ranges; `regions.include` sets aside the
    // rest (NCCL's range) into a note, which must read the same.
    let mut config = config(&["regions.include=[step]", "regions.unrequested=note"]);
    let pytorch = load(&ConfigSources {
        files: vec![crate::common::repo().join("conf/ncu/pytorch.yaml")],
        overrides: Vec::new(),
        env: Vec::new(),
    })
    .unwrap()
    .config;
    config.regions.rename = pytorch.regions.rename;
    check_same_report("emit_nvtx", &config);
    let mut config = config.clone();
    config.regions.include = vec!["train_step".into()];
    check_same_report("nccl_one_rank", &config);
}

#[test]
fn derived_units_are_the_raw_pages_units_for_every_metric_of_every_fixture() {
    let fixed = [
        "ID",
        "Process ID",
        "Process Name",
        "Host Name",
        "Kernel Name",
        "Context",
        "Stream",
        "Block Size",
        "Grid Size",
        "Device",
        "CC",
    ];
    let mut compared = BTreeSet::new();
    for name in FIXTURES {
        let path = fixture(&format!("ncu/h100-2025.3.1-pytorch/{name}_raw.csv"));
        let mut rows = csv::ReaderBuilder::new()
            .has_headers(false)
            .from_path(&path)
            .unwrap()
            .into_records();
        let header = rows.next().unwrap().unwrap();
        let units = rows.next().unwrap().unwrap();
        // Every metric the report file holds is a column of the raw page, and the other way round.
        let mut in_file = BTreeSet::new();
        let mut report = ReportFile::open(&report_path(name)).unwrap();
        report
            .for_each_result(|r| {
                for m in r.metrics() {
                    in_file.insert(m.map_err(|e| r.err(e))?.name.to_owned());
                }
                Ok::<_, profile_run::profiler::ncu::readers::report_file::ReportFileError>(())
            })
            .unwrap();
        for (column, unit) in header.iter().zip(units.iter()) {
            if fixed.contains(&column) || column.contains("Range") {
                continue;
            }
            assert!(in_file.contains(column), "{name}: {column} not in the file");
            assert_eq!(base_unit_of(column), unit, "{name}: {column}");
            compared.insert(column.to_string());
        }
    }
    assert!(
        compared.len() > 450,
        "only {} metrics compared",
        compared.len()
    );
}

/// The finished region trees of a report file under `config`, straight from the source.
fn native_stats(name: &str, config: &Config) -> Vec<ScopeStats> {
    let plan = Plan::new(config).unwrap();
    let ncu = ncu_plan(&plan);
    let input = ReportInput {
        deep: None,
        path: report_path(name),
        rank: None,
    };
    let source = ReportSource::open(
        &ncu.analysis,
        &[input],
        &RunContext::default(),
        &[],
        ncu.max_block_bytes,
    )
    .unwrap();
    let specs = source.metrics().specs.clone();
    let filter = Mutex::new(plan.profiler.analysis().filter.clone());
    let (acc, _) = source
        .read(
            1,
            &filter,
            || RegionAccumulator::new(specs.clone()),
            |acc, obs| acc.add(obs),
            |acc, later| acc.merge(later),
        )
        .unwrap();
    acc.finish(false).0
}

fn instances_of(scopes: &[ScopeStats], segments: &[&str]) -> (Vec<f64>, f64) {
    let region = scopes
        .iter()
        .flat_map(|s| &s.regions)
        .find(|r| r.path.kind == RegionKind::Stack && r.path.segments == segments)
        .unwrap_or_else(|| panic!("no region {segments:?}"));
    let time = region.inclusive.time;
    (region.instances.clone().expect("instances"), time)
}

#[test]
fn instances_come_from_the_range_ids() {
    let config = config(&[]);
    let (step, time) = instances_of(&native_stats("emit_nvtx", &config), &["step"]);
    assert_eq!(step.len(), 2, "{step:?}");
    assert!(step.iter().all(|t| *t > 0.0));
    assert!((step.iter().sum::<f64>() - time).abs() <= 1e-6 * time);
    // Range replay: the workload pushes A and B once each, and each is one range result; under
    // kernel replay the same single visits hold all their kernels (A1's included in A's).
    for name in ["rep_range", "rep_kernel"] {
        let scopes = native_stats(name, &config);
        for path in [&["A"][..], &["A", "A1"], &["B"]] {
            if name == "rep_range" && path.len() > 1 {
                continue;
            }
            let (times, time) = instances_of(&scopes, path);
            assert_eq!(times.len(), 1, "{name} {path:?}: {times:?}");
            assert!(time > 0.0 && (times[0] - time).abs() <= 1e-6 * time);
        }
    }
}

#[test]
fn csv_exports_give_no_instances() {
    let config = config(&[]);
    let plan = Plan::new(&config).unwrap();
    let set = ExportSet::raw_only(fixture("ncu/h100-2025.3.1-pytorch/emit_nvtx_raw.csv"));
    let source = profile_run::profiler::ncu::observe::source::CsvSource::open(
        plan.profiler.analysis(),
        &[set],
        &RunContext::default(),
        &[],
    )
    .unwrap();
    let specs = source.metrics().specs.clone();
    let filter = Mutex::new(plan.profiler.analysis().filter.clone());
    let (acc, _) = source
        .read(
            1,
            &filter,
            || RegionAccumulator::new(specs.clone()),
            |acc, obs| acc.add(obs),
            |acc, later| acc.merge(later),
        )
        .unwrap();
    let scopes = acc.finish(false).0;
    let regions: Vec<_> = scopes.iter().flat_map(|s| &s.regions).collect();
    assert!(!regions.is_empty());
    assert!(regions.iter().all(|r| r.instances.is_none()));
}

#[test]
fn the_csv_reader_needs_the_raw_page_and_the_reader_takes_two_values() {
    let load_with = |overrides: &[&str]| {
        load(&ConfigSources {
            files: Vec::new(),
            overrides: overrides.iter().map(|s| s.to_string()).collect(),
            env: Vec::new(),
        })
    };
    let defaults = load_with(&[]).unwrap().config;
    assert_eq!(
        defaults.pipeline.ncu.reader,
        profile_run::config::ReportReader::Native
    );
    assert!(defaults.pipeline.ncu.export.pages.is_empty());
    let err = load_with(&["pipeline.ncu.reader=csv"])
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("pipeline.ncu.export.pages") && err.contains("raw"),
        "{err}"
    );
    assert!(load_with(&["pipeline.ncu.reader=csv", "pipeline.ncu.export.pages=[raw]"]).is_ok());
    let err = load_with(&["pipeline.ncu.reader=ncu_report"])
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("pipeline.ncu.reader") && err.contains("native"),
        "{err}"
    );
}

#[test]
fn several_report_files_read_like_their_exports_on_any_thread_count() {
    // Two captures as two launcher ranks: the scopes keep their ranks apart, the aggregate merges
    // them, and reading the files on one or several threads gives the same report.
    let names = ["rep_kernel", "rep_multiproc"];
    let dir = "ncu/h100-2025.3.1-pytorch";
    let sets: Vec<ExportSet> = names
        .iter()
        .zip(0..)
        .map(|(name, rank)| ExportSet {
            raw: fixture(&format!("{dir}/{name}_raw.csv")),
            details: Some(fixture(&format!("{dir}/{name}_details.csv"))),
            rank: Some(rank),
        })
        .collect();
    let inputs: Vec<ReportInput> = names
        .iter()
        .zip(0..)
        .map(|(name, rank)| ReportInput {
            deep: None,
            path: report_path(name),
            rank: Some(rank),
        })
        .collect();
    let mut reports = Vec::new();
    for threads in ["1", "2"] {
        let config = config(&[&format!("report.threads={threads}")]);
        let plan = Plan::new(&config).unwrap();
        let native =
            analyze_report_files(&ncu_plan(&plan).reading(), &inputs, &RunContext::default())
                .unwrap();
        let csv = analyze_sets(&config, &sets, &RunContext::default()).unwrap();
        assert_eq!(native.scopes.len(), 3, "one scope of rank 0, two of rank 1");
        assert_eq!(native.scopes.len(), csv.scopes.len());
        for (i, (n, c)) in native.scopes.iter().zip(&csv.scopes).enumerate() {
            same_scope(&format!("scope {i}"), n, c);
        }
        same_scope(
            "aggregate",
            native.aggregate.as_ref().unwrap(),
            csv.aggregate.as_ref().unwrap(),
        );
        reports.push(serde_json::to_value(&native).unwrap());
    }
    assert_eq!(reports[0], reports[1], "the thread count changes nothing");
}

#[test]
fn metric_labels_are_ncus_own_from_the_report_files_sections_and_the_table_agrees() {
    // The report file's sections label the metrics they show; the CSV pages carry no labels, so the
    // CSV route takes them from the built-in table, which must say what ncu's sections say.
    let config = config(&[]);
    for name in ["emit_nvtx", "rep_range"] {
        let native = native_report(name, &config);
        let csv = csv_report(name, &config);
        let mut seen = 0;
        for (n, c) in native.metrics.iter().zip(&csv.metrics) {
            assert_eq!(n.name, c.name);
            if let Some(label) = &n.label {
                seen += 1;
                assert_eq!(c.label.as_ref(), Some(label), "{name}: {}", n.name);
            }
        }
        let label = |metric: &str| {
            native
                .metrics
                .iter()
                .find(|m| m.name == metric)
                .and_then(|m| m.label.clone())
        };
        assert_eq!(
            label("sm__throughput.avg.pct_of_peak_sustained_elapsed").as_deref(),
            Some("Compute (SM) Throughput"),
            "the section header's label, not a chart's shorter one"
        );
        assert_eq!(
            label("gpc__cycles_elapsed.max").as_deref(),
            Some("Elapsed Cycles")
        );
        assert_eq!(label("gpu__time_duration.sum").as_deref(), Some("Duration"));
        assert!(seen >= 10, "{name}: {seen} labels from the file");
    }
}
