//! The SVG charts: bars where the synthetic timeline puts them, labels indented by depth and escaped,
//! tooltips with full names, instance boxes, one chart per scope and the aggregate, same bytes twice.

use profile_run::report::render::svg::{charts, svg_file, ChartKind};

use super::{hostile, manual, pytorch, ranks, time, with_instances, HOSTILE};

/// One `<g>` row of a chart: (tooltip, label text, the rects' (x, width)).
type Row = (String, String, Vec<(f64, f64)>);

fn rows(svg: &str) -> Vec<Row> {
    let doc = roxmltree::Document::parse(svg).expect("well-formed SVG");
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "svg");
    root.children()
        .filter(|n| n.has_tag_name("g") && n.attribute("class").is_none())
        .map(|g| {
            let child_text = |tag: &str| {
                g.children()
                    .find(|n| n.has_tag_name(tag))
                    .and_then(|n| n.text())
                    .unwrap_or("")
                    .to_string()
            };
            let rects = g
                .children()
                .filter(|n| n.has_tag_name("rect"))
                .map(|r| {
                    let num = |a| r.attribute(a).unwrap().parse::<f64>().unwrap();
                    (num("x"), num("width"))
                })
                .collect();
            (child_text("title"), child_text("text"), rects)
        })
        .collect()
}

fn label_x(svg: &str, label: &str) -> f64 {
    let doc = roxmltree::Document::parse(svg).unwrap();
    doc.descendants()
        .find(|n| n.has_tag_name("text") && n.text() == Some(label))
        .and_then(|n| n.attribute("x"))
        .unwrap()
        .parse()
        .unwrap()
}

#[test]
fn the_time_chart_lays_regions_on_one_timeline_with_self_time_solid() {
    let report = manual();
    let all = charts(&report, 200);
    assert_eq!(all.len(), 1, "one scope, no instances: one time chart");
    let chart = &all[0];
    assert_eq!(chart.kind, ChartKind::Time);
    assert_eq!(chart.file, "charts/scope-1-time.svg");
    let rows = rows(&chart.svg);
    let scope = &report.scopes[0];
    assert_eq!(rows.len(), scope.regions.len());
    let by = |name: &str| rows.iter().find(|r| r.1 == name).unwrap().clone();
    let (a, a1, b) = (by("A"), by("A1"), by("B"));
    assert!(
        a1.0.starts_with("A / A1 — "),
        "full path in the tooltip: {}",
        a1.0
    );
    // Bars: width proportional to inclusive time on a common axis; A1 starts where A starts, B
    // where A ends; A's solid (self) part is its exclusive time, after its child.
    let region = |p: &str| scope.regions.iter().find(|r| r.path == p).unwrap();
    let px = a.2[0].1 / time(&region("A").inclusive);
    assert!((b.2[0].1 / time(&region("B").inclusive) - px).abs() < 1e-3 * px.max(1.0));
    assert!((a1.2[0].0 - a.2[0].0).abs() < 0.01);
    assert!((b.2[0].0 - (a.2[0].0 + a.2[0].1)).abs() < 0.02);
    assert!((a.2[1].1 - time(&region("A").exclusive) * px).abs() < 0.02);
    assert!((a.2[1].0 - (a1.2[0].0 + a1.2[0].1)).abs() < 0.02);
    // Nested labels are indented.
    assert!(label_x(&chart.svg, "A1") > label_x(&chart.svg, "A"));
    // An axis in a scaled unit, a title and a description for screen readers.
    assert!(chart.svg.contains(">time (ms)</text>"), "{}", chart.svg);
    assert!(chart.svg.contains("<title id=\"scope-1-time-title\">"));
    assert!(chart.svg.contains("<desc id=\"scope-1-time-desc\">"));
    assert!(svg_file(&chart.svg).starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg "));
}

#[test]
fn merged_ranks_get_a_chart_per_rank_and_one_for_the_aggregate() {
    let report = ranks();
    let files: Vec<String> = charts(&report, 200).into_iter().map(|c| c.file).collect();
    assert_eq!(
        files,
        [
            "charts/scope-1-time.svg",
            "charts/scope-2-time.svg",
            "charts/aggregate-time.svg"
        ]
    );
    for chart in charts(&report, 200) {
        let rows = rows(&chart.svg);
        let step = rows.iter().find(|r| r.1 == "train_step").unwrap();
        // NCCL's range, another domain's tree, starts at 0 like the program's own ranges.
        let nccl = rows
            .iter()
            .find(|r| r.0.starts_with("NCCL@ncclCommInitRankConfig — "))
            .unwrap();
        assert_eq!(nccl.2[0].0, step.2[0].0);
        // Every bar lies inside the plot.
        for (_, _, rects) in &rows {
            for (x, w) in rects {
                assert!(*x >= 300.0 - 1e-9 && x + w <= 740.0 + 0.01, "{x} {w}");
            }
        }
    }
}

#[test]
fn long_names_are_shortened_with_the_full_path_in_the_tooltip() {
    let report = pytorch();
    let chart = &charts(&report, 200)[0];
    let all = rows(&chart.svg);
    // A drawn region with a long name (the chart draws the longest 40 regions by time).
    let row = report.scopes[0]
        .regions
        .iter()
        .filter(|r| r.name.chars().count() > 40)
        .find_map(|long| {
            all.iter().find(|r| {
                r.0.starts_with(&format!("{} — ", long.segments.join(" / ")))
            })
        })
        .expect("emit_nvtx has long operator names among its longest regions");
    assert!(
        row.1.ends_with('…') && row.1.chars().count() <= 40,
        "{}",
        row.1
    );
    // Capped at max_regions rows.
    assert!(rows(&charts(&report, 3)[0].svg).len() <= 3);
}

#[test]
fn instance_charts_show_min_median_p90_and_max() {
    let report = with_instances(manual());
    let all = charts(&report, 200);
    let chart = all.iter().find(|c| c.kind == ChartKind::Instances).unwrap();
    assert_eq!(chart.file, "charts/scope-1-instances.svg");
    let a = &report.scopes[0].regions[0];
    let inst = a.instances.as_ref().unwrap();
    let row = rows(&chart.svg).into_iter().find(|r| r.1 == "A").unwrap();
    assert!(
        row.0.contains(&format!("{} visit(s)", inst.count)),
        "{}",
        row.0
    );
    // The box runs from the median to p90 on an axis up to the largest max.
    let extent = report.scopes[0]
        .regions
        .iter()
        .filter_map(|r| Some(r.instances.as_ref()?.max))
        .fold(0.0, f64::max);
    let px = |v: f64| 300.0 + v / extent * 440.0;
    let (x, w) = row.2[0];
    assert!((x - px(inst.median)).abs() < 0.02);
    assert!((x + w - px(inst.p90)).abs() < 0.02 || w == 1.0);
    // A slowest visit beyond p90 is marked.
    if inst.max > inst.p90 {
        assert!(chart.svg.contains("<circle"));
    }
}

#[test]
fn hostile_names_are_escaped_and_the_charts_stay_well_formed() {
    let report = hostile();
    for chart in charts(&report, 200) {
        // Parses: no name broke out of its element or attribute.
        let doc = roxmltree::Document::parse(&chart.svg).unwrap();
        assert!(!doc.descendants().any(|n| n.has_tag_name("script")));
        assert!(!chart.svg.contains("<script"));
        assert!(
            !chart.svg.contains('\u{202e}'),
            "bidi override made visible"
        );
        assert!(chart
            .svg
            .contains("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;&quot;\\u{202e} next"));
        let titles: Vec<&str> = doc
            .descendants()
            .filter(|n| n.has_tag_name("title"))
            .filter_map(|n| n.text())
            .collect();
        assert!(titles
            .iter()
            .any(|t| t.contains("<script>alert('x')</script>&\"")));
    }
    let _ = HOSTILE;
}

#[test]
fn the_same_report_gives_the_same_bytes() {
    let one: Vec<String> = charts(&ranks(), 200).into_iter().map(|c| c.svg).collect();
    let two: Vec<String> = charts(&ranks(), 200).into_iter().map(|c| c.svg).collect();
    assert_eq!(one, two);
}

#[test]
fn report_md_links_each_scopes_charts_also_from_split_scope_pages() {
    use profile_run::report::render::{markdown::render_pages, RenderOptions};
    let options = RenderOptions {
        charts: true,
        ..RenderOptions::default()
    };
    // Two ranks: each section and the aggregate link their own chart.
    let pages = render_pages(&ranks(), &options).unwrap();
    for file in ["scope-1-time", "scope-2-time", "aggregate-time"] {
        assert!(
            pages.main.contains(&format!("(charts/{file}.svg)")),
            "{file}"
        );
    }
    // Nine scopes (the two ranks repeated): each scope's page lives in scopes/, one folder down.
    let mut many = ranks();
    let scopes = many.scopes.clone();
    while many.scopes.len() < 9 {
        many.scopes.extend(scopes.iter().cloned());
    }
    many.scopes.truncate(9);
    let pages = render_pages(&many, &options).unwrap();
    assert_eq!(pages.scopes.len(), 9);
    assert!(pages.scopes[8]
        .1
        .contains("[region time breakdown](../charts/scope-9-time.svg)"));
    assert!(pages.main.contains("(charts/aggregate-time.svg)"));
    let files: Vec<String> = charts(&many, 200).into_iter().map(|c| c.file).collect();
    assert!(files.contains(&"charts/scope-9-time.svg".to_string()));
    // Off unless the charts are written.
    let plain = render_pages(&ranks(), &RenderOptions::default()).unwrap();
    assert!(!plain.main.contains("**Charts:**"));
}
