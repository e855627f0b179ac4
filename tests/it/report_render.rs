//! report.md and report.json rendering: layout snapshots, escaping of hostile names, truncation and
//! template errors (report.json against its schema: `report_schema`).

use profile_run::region::{RegionKind, Rollup};
use profile_run::report::model::{
    DeviceModel, Kernel, KernelSelectionInfo, MetricInfo, MetricMap, MetricValue, Platform,
    ProfilerInfo, Region, Report, RunInfo, Scope, Totals, SCHEMA_VERSION,
};
use profile_run::report::render::json::to_json;
use profile_run::report::render::markdown::render;
use profile_run::report::render::RenderOptions;

const TIME: &str = "gpu__time_duration.sum";

/// (name, unit, rollup) of the metrics every test report carries, in report order.
const METRICS: &[(&str, &str, Rollup)] = &[
    (TIME, "ns", Rollup::Sum),
    (
        "sm__throughput.avg.pct_of_peak_sustained_elapsed",
        "%",
        Rollup::Mean,
    ),
    ("dram__bytes_read.sum", "byte", Rollup::Sum),
    ("sm__cycles_active.avg", "cycle", Rollup::Mean),
    ("gpc__cycles_elapsed.avg.per_second", "hz", Rollup::Mean),
    ("launch__block_size", "", Rollup::Distinct),
];

/// A metric map whose time is `ns` and whose other metrics derive from it.
pub(crate) fn metrics(ns: f64) -> MetricMap {
    MetricMap(
        METRICS
            .iter()
            .enumerate()
            .map(|(i, (name, unit, rollup))| {
                let value = match (i, rollup) {
                    (_, Rollup::Distinct) => None,
                    (0, _) => Some(ns),
                    (1, _) => Some(if ns > 0.0 { 42.125 } else { 0.0 }),
                    (2, _) => Some(ns * 1000.0),
                    (3, _) => Some(ns * 1.5),
                    _ => Some(1.755e9),
                };
                let values = (*rollup == Rollup::Distinct)
                    .then(|| vec!["(128, 1, 1)".to_string(), "(256, 1, 1)".to_string()]);
                (
                    (*name).into(),
                    MetricValue {
                        value,
                        unit: (*unit).into(),
                        values,
                        interval95: None,
                    },
                )
            })
            .collect(),
    )
}

pub(crate) fn kernel(name: &str, function: &str, count: u64, ns: f64) -> Kernel {
    Kernel {
        name: name.to_string(),
        function: function.to_string(),
        count,
        metrics: metrics(ns),
    }
}

/// A push/pop region from its segments; `self_ns` is the exclusive time, `ns` the inclusive one.
pub(crate) fn region(
    segments: &[&str],
    counts: (u64, u64),
    ns: f64,
    self_ns: f64,
    kernels: Vec<Kernel>,
) -> Region {
    let escape = |s: &&str| s.replace('\\', "\\\\").replace('/', "\\/");
    let path = segments.iter().map(escape).collect::<Vec<_>>().join("/");
    let parent = (segments.len() > 1).then(|| {
        segments[..segments.len() - 1]
            .iter()
            .map(escape)
            .collect::<Vec<_>>()
            .join("/")
    });
    let notes = if counts.0 == 0 {
        vec!["No results in this region; metrics are zero.".to_string()]
    } else {
        Vec::new()
    };
    Region {
        coverage: None,
        path,
        segments: segments.iter().map(|s| s.to_string()).collect(),
        name: segments.last().unwrap().to_string(),
        kind: RegionKind::Stack,
        origin: "nvtx".to_string(),
        parent,
        depth: segments.len() - 1,
        kernel_count: counts.0,
        self_kernel_count: counts.1,
        time_share: Some(ns / 10_000_000.0),
        inclusive: metrics(ns),
        exclusive: metrics(self_ns),
        per_result: Default::default(),
        collectives: None,
        kernels,
        instances: None,
        insights: Vec::new(),
        notes,
        idle: None,
    }
}

pub(crate) fn scope(label: &str, pid: u64, regions: Vec<Region>, outside: Vec<Kernel>) -> Scope {
    let outside_ns: f64 = outside
        .iter()
        .map(|k| k.metrics.get(TIME).unwrap().value.unwrap())
        .sum();
    let outside_count = outside.iter().map(|k| k.count).sum();
    let mut scope = Scope {
        label: label.to_string(),
        rank: None,
        process_id: Some(pid),
        process_name: Some("python3.12".to_string()),
        host: Some("127.0.0.1".to_string()),
        device: Some("0".to_string()),
        summary: Default::default(),
        total: Totals {
            coverage: None,
            kernel_count: 40,
            metrics: metrics(10_000_000.0),
            kernels: Vec::new(),
        },
        outside_regions: Totals {
            coverage: None,
            kernel_count: outside_count,
            metrics: metrics(outside_ns),
            kernels: outside,
        },
        regions,
        insights: Vec::new(),
        distributions: Vec::new(),
        notes: Vec::new(),
        idle: None,
    };
    profile_run::report::summary::fill(&mut scope, Some(TIME));
    scope
}

const GEMM: &str =
    "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4>(Params)";

/// Three levels of nesting, an empty region, kernels in and outside regions.
fn nested_regions() -> Vec<Region> {
    vec![
        region(
            &["train_step"],
            (30, 2),
            8_000_000.0,
            500_000.0,
            vec![
                kernel(GEMM, "cutlass::Kernel", 20, 6_000_000.0),
                kernel("elementwise", "elementwise", 10, 2_000_000.0),
            ],
        ),
        region(
            &["train_step", "forward"],
            (18, 6),
            5_000_000.0,
            1_000_000.0,
            vec![kernel(GEMM, "cutlass::Kernel", 18, 5_000_000.0)],
        ),
        region(
            &["train_step", "forward", "layer0"],
            (12, 12),
            4_000_000.0,
            4_000_000.0,
            vec![kernel(GEMM, "cutlass::Kernel", 12, 4_000_000.0)],
        ),
        region(
            &["train_step", "backward"],
            (10, 10),
            2_500_000.0,
            2_500_000.0,
            vec![kernel("elementwise", "elementwise", 10, 2_500_000.0)],
        ),
        region(&["eval"], (0, 0), 0.0, 0.0, Vec::new()),
    ]
}

pub(crate) fn report(scopes: Vec<Scope>, aggregate: bool) -> Report {
    let aggregate = aggregate.then(|| {
        let mut all = scope(
            "aggregate",
            0,
            nested_regions(),
            vec![kernel("memset", "memset", 2, 50_000.0)],
        );
        all.process_id = None;
        all.process_name = None;
        all.host = None;
        all.device = None;
        all
    });
    Report {
        scope_tables: Vec::new(),
        sampling: None,
        cross_rank: None,
        across_scopes: Vec::new(),
        scope_trees: true,
        item_noun: Default::default(),
        console_notes: Vec::new(),
        timeline: None,
        time_measured: None,
        schema_version: SCHEMA_VERSION,
        generator: "profile-run 0.1.0".to_string(),
        run: RunInfo {
            partial: None,
            flagged_ranks: Vec::new(),
            command: vec![
                "python".into(),
                "train.py".into(),
                "--steps".into(),
                "2".into(),
            ],
            profiler_command: vec![
                "ncu".into(),
                "--nvtx".into(),
                "--replay-mode".into(),
                "range".into(),
            ],
            profiler: ProfilerInfo {
                name: "ncu".to_string(),
                version: Some("2025.3.1".to_string()),
                settings: [("replay_mode".to_string(), "range".to_string())].into(),
            },
            platform: Platform {
                devices: vec![DeviceModel {
                    id: "0".to_string(),
                    model: "NVIDIA H200".to_string(),
                }],
                driver: Some("CUDA 13.0".to_string()),
                runtime: None,
            },
            config_fingerprint: "0123456789abcdef".to_string(),
            sources: vec!["runs/1/raw.csv".to_string()],
        },
        metrics: METRICS
            .iter()
            .map(|(name, unit, rollup)| MetricInfo {
                label: profile_run::profiler::ncu::observe::labels::label(name, &[]),
                name: name.to_string(),
                unit: unit.to_string(),
                rollup: *rollup,
                group: "speed_of_light".to_string(),
                description: None,
            })
            .collect(),
        time_metric: Some(TIME.to_string()),
        kernel_selection: KernelSelectionInfo {
            include: Vec::new(),
            exclude: vec!["*nccl*".to_string()],
            name_base: "demangled".to_string(),
            results_selected: 80,
            results_excluded: 4,
        },
        scopes,
        aggregate,
        notes: vec!["Pattern `decode*` in regions.include matched no range.".to_string()],
        compare: Vec::new(),
    }
}

pub(crate) fn two_scopes(aggregate: bool) -> Report {
    report(
        vec![
            scope(
                "python3.12 (pid 1606) on 127.0.0.1, device 0",
                1606,
                nested_regions(),
                vec![kernel("memset", "memset", 1, 25_000.0)],
            ),
            scope(
                "python3.12 (pid 1607) on 127.0.0.1, device 1",
                1607,
                nested_regions(),
                Vec::new(),
            ),
        ],
        aggregate,
    )
}

pub(crate) fn md(report: &Report) -> String {
    render(report, &RenderOptions::default()).unwrap()
}

/// Cells of a GFM table row: splits on `|` not escaped by a backslash.
fn cells(row: &str) -> usize {
    let mut count = 0;
    let mut escaped = false;
    for ch in row.chars() {
        match ch {
            '\\' if !escaped => escaped = true,
            '|' if !escaped => count += 1,
            _ => escaped = false,
        }
        if ch != '\\' {
            escaped = false;
        }
    }
    count
}

/// Every table row has as many unescaped pipes as its table's header.
pub(crate) fn assert_tables_well_formed(text: &str) {
    let mut header: Option<usize> = None;
    for (n, line) in text.lines().enumerate() {
        if line.starts_with('|') {
            let pipes = cells(line);
            match header {
                None => header = Some(pipes),
                Some(h) => assert_eq!(pipes, h, "line {}: {line}", n + 1),
            }
        } else {
            header = None;
        }
        assert!(
            !line.ends_with(' '),
            "trailing whitespace on line {}: {line:?}",
            n + 1
        );
    }
}

#[test]
fn two_scopes_with_aggregate() {
    let text = md(&two_scopes(true));
    assert_tables_well_formed(&text);
    insta::assert_snapshot!(text);
}

#[test]
fn aggregate_off_says_so() {
    let text = md(&two_scopes(false));
    assert!(
        text.contains("No aggregate section: `report.aggregate` is false"),
        "{text}"
    );
    assert_tables_well_formed(&text);
}

#[test]
fn a_scope_without_regions_is_a_baseline() {
    let mut report = report(
        vec![scope(
            "python3.12 (pid 7) on h, device 0",
            7,
            Vec::new(),
            vec![
                kernel(GEMM, "cutlass::Kernel", 39, 9_000_000.0),
                kernel("memset", "memset", 1, 1_000_000.0),
            ],
        )],
        false,
    );
    report.scopes[0].notes.push(
        "2 result(s) were left out by report.kernels; totals cover the selected kernels only."
            .into(),
    );
    let text = md(&report);
    assert_tables_well_formed(&text);
    insta::assert_snapshot!(text);
}

fn hostile_names() -> Vec<String> {
    vec![
        "a|b|c".to_string(),
        "`code` and ``more``".to_string(),
        "<script>alert(1)</script>".to_string(),
        "line one\nline two\r\n| --- |".to_string(),
        "# heading *bold* _it_ [link](http://x) &amp; ~~strike~~ \\".to_string(),
        "前向き/パス".to_string(),
        "x".repeat(10_000),
    ]
}

pub(crate) fn hostile_report() -> Report {
    let names = hostile_names();
    let mut regions = Vec::new();
    for (i, name) in names.iter().enumerate() {
        let k = kernel(
            &format!("void k<{name}>(int)"),
            name,
            1,
            1000.0 * (i + 1) as f64,
        );
        regions.push(region(
            &[name.as_str()],
            (1, 1),
            1000.0 * (i + 1) as f64,
            0.0,
            vec![k],
        ));
    }
    regions.push(region(
        &["a|b|c", "<b>child</b>"],
        (1, 1),
        500.0,
        500.0,
        Vec::new(),
    ));
    regions.sort_by(|a, b| a.segments.cmp(&b.segments));
    let mut s = scope("<img src=x onerror=alert(1)> | pid", 1, regions, Vec::new());
    s.notes
        .push("note with <script>x</script> and | pipe".into());
    let mut r = report(vec![s], false);
    r.run.command = vec!["sh".into(), "-c".into(), "echo `id` | cat\nrm -rf /".into()];
    r.notes.push("<script>alert('note')</script>".into());
    r
}

#[test]
fn hostile_names_cannot_break_tables_or_inject_html() {
    let text = md(&hostile_report());
    assert_tables_well_formed(&text);
    insta::assert_snapshot!(text);
    // A tag opens only at a `<` without a backslash before it.
    let raw = |tag: &str| {
        text.match_indices(tag)
            .any(|(at, _)| at == 0 || text.as_bytes()[at - 1] != b'\\')
    };
    assert!(!raw("<script"), "raw <script> in report.md");
    assert!(!raw("<img"), "raw <img> in report.md");
    assert!(!raw("<b>"), "raw <b> in report.md");
    assert!(text.contains("\\<script\\>alert(1)\\</script\\>"));
    // Plain text with no HTML entities: escapes are backslashes, indentation no-break spaces.
    for entity in ["&lt;", "&gt;", "&nbsp;", "&amp;lt;"] {
        assert!(!text.contains(entity), "{entity} in report.md");
    }
    assert!(text.contains("a\\|b\\|c"));
    assert!(text.contains("前向き\\\\/パス"), "non-Latin names are kept");
    // The only HTML is ours: anchors and the collapsed kernel-name lists.
    for line in text.lines().filter(|l| l.replace("\\<", "").contains('<')) {
        assert!(
            line.starts_with("<a id=\"") || line.starts_with("<details>") || line == "</details>",
            "unexpected HTML: {line}"
        );
    }
    // Long names are cut in Markdown only.
    let longest = text.lines().map(|l| l.chars().count()).max().unwrap();
    assert!(longest < 2_000, "a line of {longest} characters");
    assert!(text.contains(&format!("{}…", "x".repeat(79))));
}

#[test]
fn json_keeps_hostile_names_exactly() {
    let report = hostile_report();
    let text = to_json(&report);
    let value: serde_json::Value = serde_json::from_str(&text).unwrap();
    let regions = value["scopes"][0]["regions"].as_array().unwrap();
    let names: Vec<&str> = regions
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    for name in hostile_names() {
        assert!(
            names.contains(&name.as_str()),
            "{name:?} missing from report.json"
        );
    }
    for (r, region) in regions.iter().zip(&report.scopes[0].regions) {
        assert_eq!(r["path"], region.path.as_str());
        assert_eq!(
            r["kernels"][0]["name"].as_str(),
            region.kernels.first().map(|k| k.name.as_str())
        );
    }
    assert_eq!(value["run"]["command"][2], "echo `id` | cat\nrm -rf /");
}

#[test]
fn json_is_deterministic_and_ends_with_a_newline() {
    let report = two_scopes(true);
    let a = to_json(&report);
    assert_eq!(a, to_json(&report));
    assert!(a.ends_with("}\n"));
    let keys: Vec<&str> = a
        .lines()
        .filter(|l| l.starts_with("  \""))
        .map(|l| l.trim().split('"').nth(1).unwrap())
        .collect();
    assert_eq!(
        keys,
        [
            "schema_version",
            "generator",
            "run",
            "metrics",
            "time_metric",
            "kernel_selection",
            "scopes",
            "aggregate",
            "notes",
            "compare",
            "sampling",
            "cross_rank",
            "scope_trees"
        ]
    );
    let value: serde_json::Value = serde_json::from_str(&a).unwrap();
    let metric_names: Vec<&String> = value["scopes"][0]["total"]["metrics"]
        .as_object()
        .unwrap()
        .keys()
        .collect();
    assert_eq!(
        metric_names,
        METRICS.iter().map(|m| m.0).collect::<Vec<_>>(),
        "metric maps keep report order"
    );
}

#[test]
fn truncation_keeps_the_longest_regions_and_their_ancestors() {
    let options = RenderOptions {
        template: None,
        max_regions: 3,
        max_kernels: 1,
        threads: 1,
        charts: false,
    };
    let text = render(&two_scopes(false), &options).unwrap();
    assert!(
        text.contains(
            "… 2 more regions not shown (report.json has all of them; raise report.max_regions)."
        ),
        "{text}"
    );
    assert!(text.contains(
        "… 1 more kernel functions (report.json has all of them; raise report.max_kernels)."
    ));
    // train_step (8 ms), forward (5 ms), layer0 (4 ms) are kept; backward and the empty eval are not.
    let scope = text.split("<a id=\"scope-2\"></a>").next().unwrap();
    assert!(scope.contains("### train\\_step/forward/layer0"));
    assert!(!scope.contains("### train\\_step/backward"));
    assert!(!scope.contains("(#scope-1-eval)"));
    assert_tables_well_formed(&text);
}

#[test]
fn a_child_is_shown_only_with_its_ancestors() {
    let mut report = two_scopes(false);
    // layer0 becomes the longest region; with room for two, its parent chain does not fit, so the
    // next longest regions are shown instead of an orphan.
    let layer0 = &mut report.scopes[0].regions[2];
    layer0.inclusive = metrics(90_000_000.0);
    let options = RenderOptions {
        template: None,
        max_regions: 2,
        max_kernels: 10,
        threads: 1,
        charts: false,
    };
    let text = render(&report, &options).unwrap();
    let scope = text.split("<a id=\"scope-2\"></a>").next().unwrap();
    assert!(
        !scope.contains("(#scope-1-train-step-forward-layer0)"),
        "{scope}"
    );
    assert!(scope.contains("(#scope-1-train-step)"));
    assert!(scope.contains("(#scope-1-train-step-forward)"));
}

/// An interval whose low end is held at 0 reads from the value to its high end: the half width
/// shown is `hi − value`, not half of `hi − lo`.
#[test]
fn a_half_width_reads_from_the_value_to_the_high_end() {
    let mut report = two_scopes(false);
    let region = &mut report.scopes[0].regions[0];
    let cycles = region
        .inclusive
        .0
        .iter_mut()
        .find(|(name, _)| &**name == "sm__cycles_active.avg")
        .map(|(_, v)| v)
        .unwrap();
    cycles.value = Some(1500.0);
    cycles.interval95 = Some([0.0, 37_500.0]);
    let text = md(&report);
    assert!(text.contains("1,500 ± 36,000"), "{text}");
    assert!(!text.contains("± 19,000"), "half of hi − lo");
}
