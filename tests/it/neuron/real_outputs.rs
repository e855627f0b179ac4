//! Neuron reports tell one story in report.md, report.html and report.json (no "kernel", the same
//! outside-regions share, no "MFU not estimated" beside an MFU, the scope's insights and Totals in
//! html too); a folder of profiles gives one scope each, an aggregate and a sweep chart; `diff`
//! compares two profiles. On the sweep fixtures and the decoder fixture.

use std::path::Path;

use assert_cmd::Command;
use serde_json::Value;

use super::cli::{close, report_json, Env, MLP};
use super::real_layout::sweep_file;
use crate::common::fixture;

fn report(env: &Env, input: &Path, out: &str, extra: &[&str]) -> std::path::PathBuf {
    let dir = env.path(out);
    Command::cargo_bin("profile-run")
        .unwrap()
        .arg("report")
        .arg(input)
        .arg("--out")
        .arg(&dir)
        .arg("report.outputs=[md, html, json, svg]")
        .args(extra)
        .assert()
        .success();
    dir
}

fn text(dir: &Path, name: &str) -> String {
    std::fs::read_to_string(dir.join(name)).unwrap()
}

/// The share in `… (12.3% of the scope's time)` (md) or `… outside every region (X, 12.3%)` (html),
/// unescaped (`\<0.1%` in Markdown, `&lt;0.1%` in HTML) so the two compare as text.
fn outside_share(md: &str, html: &str) -> (String, String) {
    let line = md
        .lines()
        .find(|l| l.starts_with("Outside any region:"))
        .expect("md outside line");
    let md_share = line.rsplit_once(" (").unwrap().1.split(' ').next().unwrap();
    let after = html
        .split("outside every region (")
        .nth(1)
        .expect("html outside");
    let html_share = after
        .split(')')
        .next()
        .unwrap()
        .rsplit(", ")
        .next()
        .unwrap();
    (
        md_share.replace("\\<", "<"),
        html_share.replace("&lt;", "<"),
    )
}

#[test]
fn md_html_and_json_tell_one_story() {
    let env = Env::new();
    for (input, extra) in [(sweep_file(1024), &[][..]), (super::decoder_json(), MLP)] {
        let dir = report(&env, &input, "one", &[&["--force"][..], extra].concat());
        let (md, html) = (text(&dir, "report.md"), text(&dir, "report.html"));
        for (name, body) in [("md", &md), ("html", &html)] {
            assert!(
                !body.to_lowercase().contains("kernel"),
                "{name} says kernel"
            );
        }
        let (md_share, html_share) = outside_share(&md, &html);
        assert_eq!(md_share, html_share);
        let json = report_json(&dir);
        let scope = &json["scopes"][0];
        let outside = scope["outside_regions"]["metrics"]["total_time"]["value"]
            .as_f64()
            .unwrap();
        let total = scope["total"]["metrics"]["total_time"]["value"]
            .as_f64()
            .unwrap();
        assert!(outside >= 0.0 && outside < total, "{outside} of {total}");
        // the scope's insights and Totals are in html as in md
        for insight in scope["insights"].as_array().unwrap() {
            let rule = insight["rule"].as_str().unwrap();
            assert!(
                md.contains(&rule.replace('_', "\\_")) && html.contains(rule),
                "{rule}"
            );
        }
        assert!(md.contains("### Totals") && html.contains("<h3>Totals</h3>"));
        // each insight's evidence says its unit, in md and html alike
        let evidence = md
            .split("tensor\\_engine\\_active\\_time\\_percent = ")
            .nth(1)
            .and_then(|rest| rest.split(" |").next())
            .expect("the tensor engine rule's evidence");
        assert!(evidence.ends_with(" %"), "{evidence}");
        assert!(html.contains(&format!("tensor_engine_active_time_percent = {evidence})")));
        assert!(html.contains("title=\"total_time\">Time</td>") || html.contains(">Time</td>"));
        // MFU is estimated everywhere here: no note may say otherwise
        assert!(!md.contains("not estimated") && !html.contains("not estimated"));
    }
    // the decoder's MLP segments leave about 42 % of its time outside them
    let dir = env.path("one");
    let json = report_json(&dir);
    let scope = &json["scopes"][0];
    let outside = scope["outside_regions"]["metrics"]["total_time"]["value"]
        .as_f64()
        .unwrap();
    assert!(close(
        outside,
        408_000.0 - 38_000.0 - 40_000.0 - 38_000.0 - 64_000.0
    ));
}

#[test]
fn a_folder_of_profiles_is_one_scope_each_an_aggregate_and_a_sweep() {
    let env = Env::new();
    let folder = fixture("neuron/matmul_sweep");
    let dir = report(&env, &folder, "sweep", &[]);
    let json = report_json(&dir);
    let labels: Vec<&str> = json["scopes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["label"].as_str().unwrap())
        .collect();
    assert_eq!(labels.len(), 3);
    for (label, k) in labels.iter().zip(["k256", "k512", "k1024"]) {
        assert!(label.ends_with(&format!("{k}.json")), "{labels:?}");
    }
    let m = |s: &Value, k: &str| s["total"]["metrics"][k]["value"].as_f64().unwrap();
    let scopes = json["scopes"].as_array().unwrap();
    let aggregate = &json["aggregate"];
    let time: f64 = scopes.iter().map(|s| m(s, "total_time")).sum();
    assert!(close(m(aggregate, "total_time"), time));
    let weighted: f64 = scopes
        .iter()
        .map(|s| m(s, "mfu_estimated_percent") * m(s, "total_time"))
        .sum::<f64>()
        / time;
    assert!(close(m(aggregate, "mfu_estimated_percent"), weighted));
    let flops: f64 = scopes.iter().map(|s| m(s, "hardware_flops")).sum();
    let bytes: f64 = scopes
        .iter()
        .map(|s| m(s, "hbm_read_bytes") + m(s, "hbm_write_bytes"))
        .sum();
    assert!(close(
        m(aggregate, "mm_arithmetic_intensity"),
        flops / bytes
    ));
    let regions = aggregate["regions"].as_array().unwrap();
    assert_eq!(regions.len(), 2);
    assert_eq!(regions[1]["kernel_count"], {
        let n: u64 = scopes
            .iter()
            .map(|s| s["regions"][1]["kernel_count"].as_u64().unwrap())
            .sum();
        n
    });
    // the sweep chart: one point per profile in each panel, x from the file names
    let svg = text(&dir, "charts/sweep.svg");
    assert_eq!(svg.matches("<circle").count(), 6, "{svg}");
    assert!(svg.contains("(256 … 1,024)"), "{svg}");
    assert!(text(&dir, "report.html").contains("Sweep: total time and MFU per profile"));
}

#[test]
fn diff_compares_two_profiles_region_by_region() {
    let output = Command::cargo_bin("profile-run")
        .unwrap()
        .arg("diff")
        .arg(sweep_file(256))
        .arg(sweep_file(1024))
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let stdout = String::from_utf8_lossy(&output.stdout);
    for want in ["sg00/_dot.3", "gemm_k256.json", "gemm_k1024.json"] {
        assert!(stdout.contains(want), "{stdout}");
    }
}
