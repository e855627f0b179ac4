//! The flame graph of GPU time by Python call stack (`charts/<scope>-flame.svg`) on the real
//! Python-stack capture: every bar's width is its region's inclusive time over the scope's, children
//! fit inside their parent, and report.html shows the same chart.

use std::collections::BTreeMap;

use crate::common::render_fixture_copy;

/// `(tooltip, x, y, width)` of every bar, in drawing order.
fn bars(svg: &str) -> Vec<(String, f64, f64, f64)> {
    let attr = |text: &str, name: &str| -> f64 {
        let start = text.find(&format!(" {name}=\"")).unwrap() + name.len() + 3;
        text[start..start + text[start..].find('"').unwrap()]
            .parse()
            .unwrap()
    };
    svg.split("<g><title>")
        .skip(1)
        .map(|group| {
            let title = group[..group.find("</title>").unwrap()].to_string();
            let rect = &group[group.find("<rect").unwrap()..];
            (title, attr(rect, "x"), attr(rect, "y"), attr(rect, "width"))
        })
        .collect()
}

#[test]
fn the_flame_graph_draws_gpu_time_by_python_call_stack() {
    let (_dir, out, report) = render_fixture_copy(
        "ncu/h100-2025.3.1-pytorch/rep_pystack.ncu-rep.gz",
        &[
            "regions.include=[train_step]",
            "regions.auto.method=stack_frames",
            "report.outputs=[md, json, html, svg]",
        ],
    );
    let svg = std::fs::read_to_string(out.join("charts/scope-1-flame.svg")).unwrap();
    let scope = &report["scopes"][0];
    let time = |m: &serde_json::Value| m["gpu__time_duration.sum"]["value"].as_f64().unwrap();
    let total = time(&scope["total"]["metrics"]);
    // Region path (segments joined by " / ", as the tooltips give it) → inclusive time.
    let regions: BTreeMap<String, f64> = scope["regions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let segments: Vec<&str> = r["segments"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| s.as_str().unwrap())
                .collect();
            (segments.join(" / "), time(&r["inclusive"]))
        })
        .collect();
    let drawn = bars(&svg);
    // The scope's bar spans the whole plot; every region's bar is its share of it.
    let full = drawn[0].3;
    assert!(drawn[0].0.starts_with(scope["label"].as_str().unwrap()));
    assert_eq!(drawn.len(), regions.len() + 1);
    for (tip, _, _, width) in &drawn[1..] {
        let path = &tip[..tip.find(" — ").unwrap()];
        let expected = regions[path] / total * full;
        assert!(
            (width - expected).abs() < 0.01,
            "{path}: {width} vs {expected}"
        );
    }
    // Children lie inside their parent: within its x range, one bar higher.
    for (tip, x, y, width) in &drawn[1..] {
        let path = &tip[..tip.find(" — ").unwrap()];
        let Some((parent, _)) = path.rsplit_once(" / ") else {
            continue;
        };
        let (_, px, py, pw) = drawn
            .iter()
            .find(|b| b.0.starts_with(&format!("{parent} — ")))
            .unwrap();
        assert!((py - y - 18.0).abs() < 0.01, "{path}");
        assert!(*x >= px - 0.01 && x + width <= px + pw + 0.01, "{path}");
    }
    // report.md links it, report.html shows it.
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.contains("(charts/scope-1-flame.svg)"), "{md}");
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(html.contains("id=\"scope-1-flame-title\""));
}
