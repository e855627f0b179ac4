//! report.md's multi-scope layout on real captures: contents and the region × scope table with several
//! scopes, scope pages above eight, no repeated aggregate with one; and, per region, share of parent,
//! self time, kernels grouped by function and a Unit column that matches the shown numbers.

use std::collections::HashSet;

use crate::common::{analyze_sets, ExportSet};
use profile_run::analysis::RunContext;
use profile_run::config::{load, ConfigSources};
use profile_run::report::format;
use profile_run::report::model::SIDE_BY_SIDE;
use profile_run::report::model::{Region, Report, Scope};
use profile_run::report::render::markdown::{render, render_pages};
use profile_run::report::render::RenderOptions;

use crate::common::fixture;

const TIME: &str = "gpu__time_duration.sum";

fn analyze(sets: &[(&str, Option<u32>)]) -> Report {
    let config = load(&ConfigSources::default()).unwrap().config;
    let sets: Vec<ExportSet> = sets
        .iter()
        .map(|(raw, rank)| ExportSet {
            raw: fixture(raw),
            details: None,
            rank: *rank,
        })
        .collect();
    analyze_sets(&config, &sets, &RunContext::default()).unwrap()
}

fn time(region: &Region) -> f64 {
    region.inclusive.get(TIME).unwrap().value.unwrap()
}

fn region<'a>(scope: &'a Scope, path: &str) -> &'a Region {
    scope.regions.iter().find(|r| r.path == path).unwrap()
}

fn ns(v: f64) -> String {
    format::escape_md(&format::value(Some(v), "ns"))
}

/// The region × scope table's row for `name` (a top-level region, or a nested one by its last name).
fn matrix_row<'a>(text: &'a str, name: &str) -> &'a str {
    let table = text.split("## Regions by scope").nth(1).unwrap();
    table
        .lines()
        .find(|l| l.starts_with('|') && l.contains(&format!("[{name}](#aggregate-")))
        .unwrap_or_else(|| panic!("no row for {name} in\n{table}"))
}

#[test]
fn two_ranks_get_contents_and_a_region_by_rank_table() {
    let report = analyze(&[
        ("ncu/h200x2-2025.3.1/ddp_rank0_raw.csv", Some(0)),
        ("ncu/h200x2-2025.3.1/ddp_rank1_raw.csv", Some(1)),
    ]);
    assert_eq!(report.scopes.len(), 2);
    let text = render(&report, &RenderOptions::default()).unwrap();
    let contents = text.find("## Contents").unwrap();
    let table = text.find("## Regions by scope").unwrap();
    let first_scope = text.find("<a id=\"scope-1\"></a>").unwrap();
    assert!(
        contents < table && table < first_scope,
        "right after the summary"
    );
    assert!(text.contains("| Region | rank 0 | rank 1 | Fastest | Slowest | Spread |"));
    for path in ["train\\_step", "forward", "backward", "optimizer"] {
        let plain = path.replace('\\', "");
        let full = if plain == "train_step" {
            plain.clone()
        } else {
            format!("train_step/{plain}")
        };
        let (t0, t1) = (
            time(region(&report.scopes[0], &full)),
            time(region(&report.scopes[1], &full)),
        );
        let (fast, slow) = if t1 < t0 {
            ("rank 1", "rank 0")
        } else {
            ("rank 0", "rank 1")
        };
        let (lo, hi) = (t0.min(t1), t0.max(t1));
        let spread = format!(
            "{} ({})",
            ns(hi - lo),
            format::escape_md(&format::share(Some((hi - lo) / hi)))
        );
        let expected = format!(" | {} | {} | {fast} | {slow} | {spread} |", ns(t0), ns(t1));
        let row = matrix_row(&text, path);
        assert!(row.ends_with(&expected), "{row}\nexpected …{expected}");
    }
    // Both scopes are inline, each linked from the contents, then the aggregate.
    assert!(text.contains("- [python3.12 (pid "));
    assert!(text.contains("](#scope-2)"));
    assert!(text.contains("<a id=\"aggregate\"></a>"));
    assert!(render_pages(&report, &RenderOptions::default())
        .unwrap()
        .scopes
        .is_empty());
}

#[test]
fn two_processes_of_one_capture_are_told_apart_by_pid() {
    let report = analyze(&[("ncu/h200-2025.3.1/multiproc_raw.csv", None)]);
    assert_eq!(report.scopes.len(), 2);
    let text = render(&report, &RenderOptions::default()).unwrap();
    let pids: Vec<String> = report
        .scopes
        .iter()
        .map(|s| format!("pid {}", s.process_id.unwrap()))
        .collect();
    assert!(
        text.contains(&format!("| Region | {} | {} |", pids[0], pids[1])),
        "{text}"
    );
    let b = [
        time(region(&report.scopes[0], "B")),
        time(region(&report.scopes[1], "B")),
    ];
    let slow = if b[1] > b[0] { &pids[1] } else { &pids[0] };
    let row = matrix_row(&text, "B");
    assert!(
        row.contains(&format!("| {} | {} |", ns(b[0]), ns(b[1]))),
        "{row}"
    );
    assert!(row.contains(&format!("| {slow} | ")), "{row}");
}

/// report.json holds, past the scopes report.md shows side by side, each region's time across
/// the scopes: the same min, median, p90 and max the wide region × scope table shows.
#[test]
fn more_than_eight_scopes_spread_each_regions_time_in_report_json() {
    let sets: Vec<(&str, Option<u32>)> = (0..10)
        .map(|r| match r % 2 {
            0 => ("ncu/h200x2-2025.3.1/ddp_rank0_raw.csv", Some(r)),
            _ => ("ncu/h200x2-2025.3.1/ddp_rank1_raw.csv", Some(r)),
        })
        .collect();
    let report = analyze(&sets);
    let json = serde_json::to_value(&report).unwrap();
    let across = json["across_scopes"].as_array().expect("across_scopes");
    let first = &report.scopes[0].regions[0];
    let entry = across
        .iter()
        .find(|a| a["path"] == first.path.as_str())
        .unwrap_or_else(|| panic!("{} in {across:?}", first.path));
    let mut times: Vec<f64> = report
        .scopes
        .iter()
        .map(|s| time(region(s, &first.path)))
        .collect();
    times.sort_by(f64::total_cmp);
    assert_eq!(entry["count"], 10);
    assert_eq!(entry["unit"], "ns");
    assert_eq!(entry["min"], times[0]);
    assert_eq!(entry["max"], times[9]);
    assert_eq!(entry["median"], (times[4] + times[5]) / 2.0);
    let text = render(&report, &RenderOptions::default()).unwrap();
    let row = text
        .lines()
        .find(|l| {
            l.starts_with('|')
                && l.contains(&format::escape_md(&first.name))
                && l.contains("| 10 |")
        })
        .unwrap_or_else(|| panic!("no wide row for {} in\n{text}", first.name));
    assert!(
        row.contains(&format!(
            "| 10 | {} | {} |",
            ns(times[0]),
            ns(entry["median"].as_f64().unwrap())
        )),
        "{row}"
    );
    // Two scopes are shown side by side: no spread across them.
    let two = analyze(&sets[..2]);
    assert!(serde_json::to_value(&two)
        .unwrap()
        .get("across_scopes")
        .is_none());
}

#[test]
fn more_than_eight_scopes_get_a_page_each_linked_from_report_md() {
    // Ten ranks: the two real ranks' exports, each tagged five times with a different rank.
    let sets: Vec<(&str, Option<u32>)> = (0..10)
        .map(|r| {
            let raw = if r % 2 == 0 {
                "ncu/h200x2-2025.3.1/ddp_rank0_raw.csv"
            } else {
                "ncu/h200x2-2025.3.1/ddp_rank1_raw.csv"
            };
            (raw, Some(r))
        })
        .collect();
    let report = analyze(&sets);
    assert_eq!(report.scopes.len(), 10);
    assert!(report.scopes.len() > SIDE_BY_SIDE);
    for threads in [1, 4] {
        let options = RenderOptions {
            threads,
            ..RenderOptions::default()
        };
        let pages = render_pages(&report, &options).unwrap();
        let main = &pages.main;
        let files: Vec<&str> = pages.scopes.iter().map(|(f, _)| f.as_str()).collect();
        let expected: Vec<String> = (0..10).map(|r| format!("scopes/rank-{r}.md")).collect();
        assert_eq!(files, expected);
        // report.md: summary, contents linking every page, the table, the aggregate; no scope section.
        for file in &files {
            assert!(main.contains(&format!("]({file}) (own file)")), "{file}");
        }
        assert!(!main.contains("<a id=\"scope-1\"></a>"));
        assert!(main.contains("<a id=\"aggregate\"></a>"));
        // Above eight scopes the table holds each region's distribution, not a column per rank.
        assert!(
            main.contains("| Region | Scopes | Min | Median | p90 | Max | Slowest | Spread |"),
            "{main}"
        );
        assert!(!main.contains("| rank 9 |"), "{main}");
        assert_links_resolve(main);
        // Each page: its scope's section, with links that resolve inside it. Cut to its totals
        // (more than 8 scopes), a scope lists each region's time in its table and has no section
        // per region: the aggregate's sections hold the rest.
        assert!(!report.scope_trees);
        for (i, (_, page)) in pages.scopes.iter().enumerate() {
            assert!(page.contains(&format!("<a id=\"scope-{}\"></a>", i + 1)));
            assert!(page.contains(&format!("rank {i}")));
            assert!(page.contains("[report.md](../report.md)"));
            assert!(page.contains("─\u{a0}forward | "), "{page}");
            assert!(!page.contains("### train\\_step/forward"), "{page}");
            assert_links_resolve(page);
        }
        assert_eq!(render(&report, &options).unwrap(), *main);
    }
    // Written beside report.md, under scopes/.
    let dir = tempfile::tempdir().unwrap();
    let pages = render_pages(&report, &RenderOptions::default()).unwrap();
    let markdown = profile_run::report::render::markdown::Markdown {
        options: RenderOptions::default(),
    };
    profile_run::report::render::write_all(&report, &[&markdown], dir.path(), 1).unwrap();
    assert_eq!(
        std::fs::read_to_string(dir.path().join("report.md")).unwrap(),
        pages.main
    );
    for (file, text) in &pages.scopes {
        assert_eq!(
            &std::fs::read_to_string(dir.path().join(file)).unwrap(),
            text
        );
    }
}

/// Every `](#id)` link has its `<a id="id">` in the same text.
fn assert_links_resolve(text: &str) {
    let ids: HashSet<&str> = text
        .split("<a id=\"")
        .skip(1)
        .map(|s| s.split('"').next().unwrap())
        .collect();
    for link in text.split("](#").skip(1) {
        let id = link.split(')').next().unwrap();
        assert!(ids.contains(id), "link to #{id} has no target");
    }
}

#[test]
fn one_scope_is_not_repeated_as_the_aggregate() {
    let report = analyze(&[("ncu/h200-2025.3.1/manual_raw.csv", None)]);
    assert_eq!(report.scopes.len(), 1);
    assert!(report.aggregate.is_some(), "report.json keeps it");
    let text = render(&report, &RenderOptions::default()).unwrap();
    assert!(!text.contains("<a id=\"aggregate\"></a>"));
    assert!(text.contains("With one scope the aggregate is that scope"));
    assert!(!text.contains("## Contents") && !text.contains("## Regions by scope"));
    assert_eq!(text.matches("### A/A1").count(), 1);
}

#[test]
fn regions_show_share_of_parent_self_time_grouped_kernels_and_row_units() {
    let report = analyze(&[("ncu/h200-2025.3.1/manual_raw.csv", None)]);
    let scope = &report.scopes[0];
    let text = render(&report, &RenderOptions::default()).unwrap();
    let (a, a1) = (region(scope, "A"), region(scope, "A/A1"));

    // Regions table: A1's share of A, and its self time.
    let row = text
        .lines()
        .find(|l| l.contains("[A1](#scope-1-a-a1)"))
        .unwrap();
    let self_a1 = a1.exclusive.get(TIME).unwrap().value.unwrap();
    let expected = format!(
        "| {} | {} | {} | {} |",
        ns(time(a1)),
        format::escape_md(&format::share(a1.time_share)),
        format::escape_md(&format::share(Some(time(a1) / time(a)))),
        ns(self_a1)
    );
    assert!(row.contains(&expected), "{row}\nexpected {expected}");
    assert!(text.contains("| Region | Time | Share of scope | Share of parent | Self time |"));

    // Metrics legend: each metric's rollup once, never in a region's rows.
    // ncu's label heads the rows; the legend pairs it with the raw name.
    assert!(text.contains("| Duration | `gpu__time_duration.sum` | ns | sum | time |"));
    assert!(text.contains("| time-weighted mean |"));
    let section_a = text.split("<a id=\"scope-1-a\"></a>").nth(1).unwrap();
    let section_a = section_a.split("<a id=").next().unwrap();
    assert!(!section_a.contains("time-weighted"));

    // The Unit column names the unit of the shown numbers: A's time in µs, as bare numbers.
    let time_row = section_a
        .lines()
        .find(|l| l.starts_with("| Duration |"))
        .unwrap();
    let cells: Vec<&str> = time_row.split(" | ").collect();
    assert_eq!(cells[1], "µs", "{time_row}");
    let shown: f64 = cells[2].replace(',', "").parse().unwrap();
    assert!((shown * 1e3 - time(a)).abs() < 10.0, "{time_row}");

    // Kernels of one function are one row, with the results of all its variants counted.
    let function = "vectorized_elementwise_kernel";
    let variants: Vec<_> = a
        .kernels
        .iter()
        .filter(|k| k.function == function)
        .collect();
    assert!(variants.len() > 1, "A runs several elementwise kernels");
    let count: u64 = variants.iter().map(|k| k.count).sum();
    let row = section_a
        .lines()
        .find(|l| l.contains("| vectorized\\_elementwise\\_kernel ("))
        .unwrap();
    assert!(
        row.contains(&format!(
            "vectorized\\_elementwise\\_kernel ({} variants) | {count} |",
            variants.len()
        )),
        "{row}"
    );
    assert_eq!(
        section_a
            .matches("| vectorized\\_elementwise\\_kernel")
            .count(),
        1
    );
}
