//! Charts and report.html that stay readable on real captures: a chart draws at most its top rows
//! plus one "others" line, the flame graph's caption wraps inside the chart and a bar shows a name
//! only where a readable part of it fits, instance charts leave out regions visited once, and the
//! summary's cells wrap inside their column.

use crate::common::{fixture, render_fixture_copy};

/// The text of every `<text>` element of an SVG, tags inside it (`<tspan>`) removed.
fn texts(svg: &str) -> Vec<String> {
    svg.split("<text ")
        .skip(1)
        .map(|t| {
            let body = &t[t.find('>').unwrap() + 1..t.find("</text>").unwrap()];
            let mut plain = String::new();
            let mut in_tag = false;
            for c in body.chars() {
                match c {
                    '<' => in_tag = true,
                    '>' => in_tag = false,
                    c if !in_tag => plain.push(c),
                    _ => {}
                }
            }
            plain
        })
        .collect()
}

fn svg_height(svg: &str) -> f64 {
    let at = svg.find(" height=\"").unwrap() + 9;
    svg[at..at + svg[at..].find('"').unwrap()].parse().unwrap()
}

#[test]
fn a_chart_of_137_stack_frame_regions_draws_its_top_rows_and_one_line_for_the_others() {
    let (_dir, out, report) = render_fixture_copy(
        "ncu/h100-2025.3.1-gpt2/gpt2_pystack.ncu-rep.gz",
        &[
            "regions.include=[train_step]",
            "regions.auto.method=stack_frames",
            "report.outputs=[md, json, html, svg]",
        ],
    );
    let regions = report["scopes"][0]["regions"].as_array().unwrap().len();
    assert!(regions > 100, "{regions}");
    let svg = std::fs::read_to_string(out.join("charts/scope-1-time.svg")).unwrap();
    let rows = svg.matches("<g><title>").count();
    assert_eq!(rows, 40);
    let others = format!("others: {} more regions, ", regions - rows);
    assert!(
        texts(&svg).iter().any(|t| t.starts_with(&others)),
        "no line for the other regions"
    );
    // 40 rows of 22 px, the others line, heading, axis and a wrapped legend: far from 3,126 px.
    assert!(svg_height(&svg) <= 64.0 + 22.0 * 41.0 + 48.0 + 28.0);

    let flame = std::fs::read_to_string(out.join("charts/scope-1-flame.svg")).unwrap();
    // The caption wraps into lines that fit the 1,160 px chart (11 px text, 170 characters).
    let caption: Vec<&str> = flame
        .split("<tspan ")
        .skip(1)
        .map(|t| &t[t.find('>').unwrap() + 1..t.find("</tspan>").unwrap()])
        .collect();
    assert!(caption.len() >= 2, "{caption:?}");
    assert!(caption.iter().all(|l| l.chars().count() <= 170));
    assert!(caption.last().unwrap().ends_with("not timestamps."));
    // A bar's name is whole, or at least 8 characters of it before the ellipsis (never `fo…`).
    let names: Vec<String> = report["scopes"][0]["regions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap().to_string())
        .collect();
    for label in texts(&flame) {
        if let Some(cut) = label.strip_suffix('…') {
            assert!(cut.chars().count() >= 7, "unreadable label {label}");
        } else if !label.contains(" · ") && !label.contains("GPU time") {
            assert!(
                names.contains(&label) || label == report["scopes"][0]["label"],
                "{label}"
            );
        }
    }
}

#[test]
fn instance_charts_leave_out_regions_visited_once() {
    // rep_kernel: `A`, `A/A1` and `B` are each visited once; no spread to draw, so no chart.
    let (_dir, out, _) = render_fixture_copy(
        "ncu/h100-2025.3.1-pytorch/rep_kernel.ncu-rep.gz",
        &["report.outputs=[md, json, svg]"],
    );
    assert!(out.join("charts/scope-1-time.svg").is_file());
    assert!(!out.join("charts/scope-1-instances.svg").exists());
    // emit_nvtx: regions visited 2, 4 and 6 times are drawn, and no row says "1 visits".
    let (_dir, out, report) = render_fixture_copy(
        "ncu/h100-2025.3.1-pytorch/emit_nvtx.ncu-rep.gz",
        &["report.outputs=[md, json, svg]"],
    );
    let svg = std::fs::read_to_string(out.join("charts/scope-1-instances.svg")).unwrap();
    let rows = texts(&svg)
        .into_iter()
        .filter(|t| t.contains(" visits · "))
        .collect::<Vec<_>>();
    assert!(!rows.is_empty());
    assert!(rows.iter().all(|t| !t.starts_with("1 visits")), "{rows:?}");
    let visited_more: usize = report["scopes"][0]["regions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["instances"]["count"].as_u64().is_some_and(|c| c > 1))
        .count();
    assert_eq!(rows.len(), visited_more.min(40));
}

#[test]
fn the_html_summary_wraps_inside_its_column_and_lists_overlapping_and_unquantified_findings() {
    let (_dir, out, _) = render_fixture_copy(
        "ncu/h100-2025.3.1-pytorch/rep_kernel.ncu-rep.gz",
        &["report.outputs=[md, json, html]"],
    );
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    let glance = &html[html.find("<section class=\"glance\">").unwrap()..];
    let glance = &glance[..glance.find("</section>").unwrap()];
    // Long paths and names break anywhere rather than push the table past the column.
    assert!(html.contains("section.glance td { overflow-wrap: anywhere; }"));
    assert!(glance.contains("vectorized_elementwise_kernel (3 variants)"));
    assert!(glance.contains("of 89.02 µs; the rest counts under profile-run:launch_overhead"));
    assert!(glance.contains(
        "<li>latency_bound (profile-run) in B: 245.88 µs, counted under ncu:LaunchConfiguration</li>"
    ));
    assert!(glance.contains(
        "<li>SOLBottleneck (ncu) in B: ncu gives no estimated speedup for this rule</li>"
    ));
}

#[test]
fn report_html_groups_a_scopes_kernels_by_function_as_the_summary_does() {
    // The GPT-2 step runs three cutlass SGEMM variants and thirteen vectorized elementwise ones.
    let (_dir, out, report) = render_fixture_copy(
        "ncu/h100-2025.3.1-gpt2/gpt2_pystack.ncu-rep.gz",
        &["report.outputs=[md, json, html]"],
    );
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    let summary = &report["scopes"][0]["summary"]["top_kernels"];
    let kernel2 = summary
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["function"] == "cutlass::Kernel2")
        .expect("cutlass::Kernel2 named with its scope, not a bare Kernel2");
    assert_eq!(kernel2["variants"], 3);
    // One row for the function, with its variant count, never one per variant.
    assert_eq!(
        html.matches(">cutlass::Kernel2 (3 variants)</td>").count(),
        1
    );
    assert!(!html.contains(">Kernel2</td>"));
    assert!(!html.contains(">cutlass::Kernel2</td>"));
}

#[test]
fn report_html_of_a_scope_without_regions_lists_kernels_by_function() {
    // The manual capture with its NVTX columns removed, as an export made without --nvtx looks:
    // no region, so report.html shows the scope's own kernel table.
    let text = std::fs::read_to_string(fixture("ncu/h200-2025.3.1/manual_raw.csv")).unwrap();
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let headers = reader.headers().unwrap().clone();
    let keep: Vec<usize> = (0..headers.len())
        .filter(|&i| !headers[i].contains("_Range"))
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("no_nvtx_raw.csv");
    let mut writer = csv::Writer::from_path(&path).unwrap();
    writer
        .write_record(keep.iter().map(|&i| &headers[i]))
        .unwrap();
    for row in reader.records() {
        let row = row.unwrap();
        writer.write_record(keep.iter().map(|&i| &row[i])).unwrap();
    }
    writer.flush().unwrap();
    let out = dir.path().join("out");
    assert_cmd::Command::cargo_bin("profile-run")
        .unwrap()
        .arg("report")
        .arg(&path)
        .arg("--out")
        .arg(&out)
        .arg("report.outputs=[md, json, html]")
        .assert()
        .success();
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    let kernels = report["scopes"][0]["outside_regions"]["kernels"]
        .as_array()
        .unwrap();
    let variants = kernels
        .iter()
        .filter(|k| k["function"] == "vectorized_elementwise_kernel")
        .count();
    assert!(variants > 1, "{variants}");
    let row = format!(">vectorized_elementwise_kernel ({variants} variants)</td>");
    assert!(html.matches(&row).count() >= 1, "{row}");
    assert!(!html.contains(">vectorized_elementwise_kernel</td>"));
}
