//! report.html: the summary, regions, inline charts and insights of a real capture, every hostile
//! name escaped, nothing loaded from outside, the same bytes twice; and (ignored by default, run by
//! CI) the page as headless Chromium renders it.

use std::path::Path;
use std::process::Command;

use profile_run::report::format;
use profile_run::report::render::html::render;
use profile_run::report::render::RenderOptions;
use profile_run::report::render::{outputs_for, write_all, Format};

use super::{hostile, manual, ranks, time, HOSTILE};

fn html(report: &profile_run::report::model::Report) -> String {
    render(report, &RenderOptions::default()).unwrap()
}

#[test]
fn the_page_holds_regions_times_charts_and_insights() {
    let report = manual();
    let page = html(&report);
    let scope = &report.scopes[0];
    for region in &scope.regions {
        assert!(
            page.contains(&format!(">{}</a>", region.name)),
            "{}",
            region.name
        );
        let t = format::value(Some(time(&region.inclusive)), "ns");
        assert!(page.contains(&format!("<td class=\"num\">{t}</td>")), "{t}");
    }
    assert_eq!(page.matches("<svg ").count(), 1, "the time chart, inline");
    let b = scope.regions.iter().find(|r| r.path == "B").unwrap();
    let first = &b.insights[0];
    assert!(page.contains(&format!("<strong>{}</strong>", first.rule)));
    // A finding's text is prose: escaped, its code spans as <code>.
    assert!(
        page.contains(&format::prose_html(&first.message)),
        "{}",
        first.message
    );
    assert!(page.starts_with("<!DOCTYPE html>"));
    assert!(
        !page.contains("<a href=\"charts"),
        "no link to chart files that are not written"
    );
}

#[test]
fn several_scopes_get_contents_and_the_aggregate() {
    let page = html(&ranks());
    assert!(page.contains("<h2>Contents</h2>"));
    for anchor in ["scope-1", "scope-2", "aggregate"] {
        assert!(
            page.contains(&format!("<section id=\"{anchor}\">")),
            "{anchor}"
        );
    }
    assert_eq!(page.matches("<svg ").count(), 3);
}

#[test]
fn hostile_names_are_escaped_and_nothing_is_loaded_from_outside() {
    let page = html(&hostile());
    assert!(
        !page.contains("<script"),
        "no script element, injected or ours"
    );
    assert!(page.contains("&lt;script&gt;alert("));
    assert!(!page.contains('\u{202e}'));
    for external in ["src=", "<link", "@import", "url(", "<iframe", "<object"] {
        assert!(!page.contains(external), "{external}");
    }
    // Attribute values (tooltips) cannot be broken out of either.
    assert!(!page.contains("title=\"A<"));
    let _ = HOSTILE;
}

#[test]
fn the_same_report_gives_the_same_bytes() {
    assert_eq!(html(&ranks()), html(&ranks()));
}

#[test]
fn write_all_puts_every_configured_output_in_place() {
    let dir = tempfile::tempdir().unwrap();
    let report = manual();
    let formats = [
        Format::Md,
        Format::Json,
        Format::Html,
        Format::Svg,
        Format::Trace,
    ];
    let options = RenderOptions::default();
    let outputs = outputs_for(&formats, &options);
    let refs: Vec<&dyn profile_run::report::render::Output> =
        outputs.iter().map(|o| o.as_ref()).collect();
    let written = write_all(&report, &refs, dir.path(), 2).unwrap();
    assert_eq!(written[0], dir.path().join("report.md"));
    for file in [
        "report.md",
        "report.json",
        "report.html",
        "trace.json",
        "charts/scope-1-time.svg",
    ] {
        assert!(dir.path().join(file).is_file(), "{file}");
    }
    let md = std::fs::read_to_string(dir.path().join("report.md")).unwrap();
    assert!(md.contains("**Charts:** [region time breakdown](charts/scope-1-time.svg)"));
    let page = std::fs::read_to_string(dir.path().join("report.html")).unwrap();
    assert!(
        page.contains("<a href=\"charts&#x2f;scope-1-time.svg\">"),
        "caption links the file"
    );
    // Rendering again gives the same files.
    let again = tempfile::tempdir().unwrap();
    write_all(&report, &refs, again.path(), 2).unwrap();
    for file in ["report.html", "trace.json", "charts/scope-1-time.svg"] {
        assert_eq!(
            std::fs::read(dir.path().join(file)).unwrap(),
            std::fs::read(again.path().join(file)).unwrap(),
            "{file}"
        );
    }
}

/// Chromium's DOM of a page, as `--dump-dom` prints it after rendering.
fn dump_dom(page: &Path) -> String {
    let output = Command::new("chromium")
        .args([
            "--headless",
            "--disable-gpu",
            "--no-sandbox",
            "--dump-dom",
            &format!("file://{}", page.display()),
        ])
        .output()
        .expect("chromium is installed (apt-get install -y chromium)");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

#[test]
#[ignore = "needs headless Chromium; CI runs it"]
fn browser_shows_regions_times_charts_and_insights() {
    // Rendered by the command, as a user would: the raw export, its details page found beside it.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    assert_cmd::Command::cargo_bin("profile-run")
        .unwrap()
        .arg("report")
        .arg(crate::common::fixture("ncu/h200-2025.3.1/manual_raw.csv"))
        .arg("--out")
        .arg(&out)
        .arg("report.outputs=[html]")
        .assert()
        .success();
    let report = manual();
    let dom = dump_dom(&out.join("report.html"));
    let scope = &report.scopes[0];
    for region in &scope.regions {
        assert!(
            dom.contains(&format!(">{}</a>", region.name)),
            "{}",
            region.name
        );
        let t = format::value(Some(time(&region.inclusive)), "ns");
        assert!(dom.contains(&t), "{t}");
    }
    assert!(dom.contains("<svg "), "the inline chart is in the DOM");
    assert!(dom.contains("<rect "));
    let b = scope.regions.iter().find(|r| r.path == "B").unwrap();
    assert!(dom.contains(&b.insights[0].rule));
    // The hostile page: the browser built no script element from a name.
    let hostile_page = dir.path().join("hostile.html");
    std::fs::write(&hostile_page, html(&hostile())).unwrap();
    let dom = dump_dom(&hostile_page);
    assert!(!dom.contains("<script"), "no script element in the DOM");
    assert!(dom.contains("&lt;script&gt;alert("));
}
