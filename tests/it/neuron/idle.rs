//! Where a Neuron device sits idle: the busy share against the profile's own
//! `total_active_time / total_time`, the largest gap against the profile's own records (the waits
//! overlapping it, the DMA queues moving data in it), the idle finding first, and the Summary's
//! first line; and the leftovers a reader tripped on (launch overhead, `Results 0`, backticks in
//! report.html, numbers rounded to `0.00`, a Run block that said "not recorded").

use std::collections::BTreeSet;
use std::path::Path;

use assert_cmd::Command;
use serde_json::Value;

use super::cli::{report_json, Env};
use super::real_layout::sweep_file;

fn read(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// `profile-run report PROFILE` into `out`, with report.html too.
pub(super) fn report(profile: &Path, out: &Path) {
    Command::cargo_bin("profile-run")
        .unwrap()
        .arg("report")
        .arg(profile)
        .arg("--out")
        .arg(out)
        .arg("report.outputs=[json,md,html]")
        .assert()
        .success();
}

fn records<'a>(profile: &'a Value, key: &str) -> &'a [Value] {
    profile[key].as_array().map_or(&[], Vec::as_slice)
}

fn u(v: &Value, key: &str) -> u64 {
    v[key].as_u64().unwrap_or_else(|| panic!("{key} in {v}"))
}

/// The profile's first timestamp: what the report's times count from.
fn origin(profile: &Value) -> u64 {
    let starts = records(profile, "instruction")
        .iter()
        .chain(records(profile, "dma"))
        .map(|r| u(r, "timestamp"))
        .chain(
            records(profile, "active_time")
                .iter()
                .map(|a| u(a, "start_ts")),
        )
        .chain(
            records(profile, "layer_summary")
                .iter()
                .map(|l| u(l, "start")),
        );
    starts.min().unwrap()
}

/// A DMA queue as a gap names it: without its ring on one engine (`-E7`).
fn queue_base(q: &str) -> &str {
    match q.rsplit_once("-E") {
        Some((base, ring)) if !ring.is_empty() && ring.bytes().all(|b| b.is_ascii_digit()) => base,
        _ => q,
    }
}

/// The report of `profile` (full JSON) tells where its device sat idle, as the profile itself has it.
pub(super) fn assert_idle_matches_profile(profile: &Value, report: &Value) {
    let summary = &profile["summary"][0];
    let own =
        summary["total_active_time"].as_f64().unwrap() / summary["total_time"].as_f64().unwrap();
    let scope = &report["scopes"][0];
    let idle = &scope["idle"];
    let busy = idle["busy_share"].as_f64().unwrap();
    assert!(
        ((busy - own) * 100.0).abs() < 0.1,
        "busy share {busy} against the profile's own {own}"
    );
    // The largest gap names what waits in it and the DMA queues moving data, as the records say.
    let gap = &idle["gaps"][0];
    let (start, len) = (u(gap, "start_ns"), u(gap, "length_ns"));
    let lengths: Vec<u64> = idle["gaps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| u(g, "length_ns"))
        .collect();
    assert!(lengths.windows(2).all(|w| w[0] >= w[1]), "{lengths:?}");
    let at = origin(profile);
    let (s, e) = (start + at, start + at + len);
    let overlaps = |r: &Value| u(r, "timestamp") < e && u(r, "timestamp") + u(r, "duration") > s;
    let waiting: BTreeSet<String> = records(profile, "instruction")
        .iter()
        .filter(|i| i["opcode"] == "EVENT_SEMAPHORE" && overlaps(i))
        .map(|i| {
            format!(
                "{} {}",
                i["subgroup"].as_str().unwrap(),
                i["opcode"].as_str().unwrap()
            )
        })
        .collect();
    let named: BTreeSet<String> = gap["waiting"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap().to_string())
        .collect();
    assert!(
        !named.is_empty() && named == waiting,
        "{named:?} against {waiting:?}"
    );
    let queues: BTreeSet<&str> = records(profile, "dma")
        .iter()
        .filter(|d| overlaps(d) && u(d, "duration") > 0)
        .map(|d| queue_base(d["subgroup"].as_str().unwrap()))
        .collect();
    let named: BTreeSet<&str> = gap["dma_queues"]
        .as_array()
        .unwrap()
        .iter()
        .map(|q| q.as_str().unwrap())
        .collect();
    assert_eq!(named, queues);
    // Mostly idle: the idle finding comes first, for the scope and for every mostly idle region;
    // busy-time advice weighs the busy time, never the gap's.
    assert!(busy < 0.5);
    assert_eq!(
        scope["insights"][0]["rule"], "device_idle",
        "{}",
        scope["insights"]
    );
    for region in scope["regions"].as_array().unwrap() {
        let idle = &region["idle"];
        if idle["busy_share"].as_f64().unwrap() >= 0.5 {
            continue;
        }
        let insights = region["insights"].as_array().unwrap();
        assert_eq!(insights[0]["rule"], "device_idle", "{}", region["path"]);
        for i in &insights[1..] {
            assert_eq!(
                i["evidence"]["time"], idle["active_ns"],
                "{} {}",
                region["path"], i["rule"]
            );
        }
    }
}

/// The Summary of report.md opens each scope with the device's busy share.
pub(super) fn assert_summary_opens_with_busy_share(md: &str) {
    let summary = md
        .split("## Summary")
        .nth(1)
        .unwrap()
        .split("\n## ")
        .next()
        .unwrap();
    for section in summary.split("\n### ").skip(1) {
        let first = section.lines().skip(1).find(|l| !l.is_empty()).unwrap();
        assert!(first.starts_with("**The device was busy "), "{first}");
    }
}

#[test]
fn a_sweep_profile_says_how_busy_the_device_was_and_what_its_largest_gap_waits_on() {
    let env = Env::new();
    let out = env.path("k256");
    report(&sweep_file(256), &out);
    assert_idle_matches_profile(&read(&sweep_file(256)), &report_json(&out));
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert_summary_opens_with_busy_share(&md);
    assert!(
        md.contains("**The device was busy 0.0974% of the 1.40 ms window"),
        "{md}"
    );
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(html.contains("<strong>The device was busy 0.0974% of the 1.40 ms window"));
    assert!(html.contains("<h3>Idle time</h3>"), "{html}");
    assert!(html
        .contains("<td>Sync DMA_TRIGGER</td><td>Vector DRAIN</td><td>Sync EVENT_SEMAPHORE</td>"));
}

#[test]
fn a_semaphore_wait_is_waiting_and_a_range_clear_is_busy() {
    let wait = |opcode: &str| profile_run::profiler::neuron::readers::model::Instruction {
        opcode: opcode.to_string(),
        ..Default::default()
    };
    for opcode in [
        "EVENT_SEMAPHORE",
        "EVENT_SEMAPHORE_WAIT",
        "event_semaphore",
        "DMA_WAIT",
    ] {
        assert!(!wait(opcode).is_busy(), "{opcode}");
    }
    // The profile's own active_time counts it (every real profile of the public sweep).
    for opcode in ["EVENT_SEMAPHORE_RANGE_CLEAR", "MATMULT", "WAITRESS"] {
        assert!(wait(opcode).is_busy(), "{opcode}");
    }
}

#[test]
fn numbers_the_run_block_and_the_leftovers_read_as_a_reader_needs() {
    let env = Env::new();
    let out = env.path("k256");
    report(&sweep_file(256), &out);
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    // MFU 6.648e-5 of peak and the tensor engine busy 4.18e-4 of the time: three significant digits.
    assert!(md.contains("| MFU (estimated) | % | 0.00665 |"), "{md}");
    assert!(md.contains("| Tensor engine busy | % | 0.0418 |"), "{md}");
    assert!(
        md.contains("Tensor engine busy only 0.0418% of the time"),
        "{md}"
    );
    for text in [&md, &html] {
        assert!(!text.contains("launch overhead"));
        assert!(!text.contains("0.00%"));
    }
    // A rule of profile-run's judges a region, not a count of results: no `Results 0`.
    for severity in ["opportunity", "warning", "info"] {
        assert!(!md.contains(&format!("| {severity} | 0 |")), "{md}");
    }
    assert!(!html.contains('`'), "backticks in report.html");
    assert!(!html.contains("(profile-run; 0 result(s)"), "{html}");
    let run = md
        .split("## Run")
        .nth(1)
        .unwrap()
        .split("\n## ")
        .next()
        .unwrap();
    for want in [
        "neuron-explorer 2.27.33.0%kaena-tools/2.27@0000000",
        "inf2.xlarge (device 0)",
        "**driver:** Neuron driver 2.25.0",
        "**runtime:** Neuron runtime 2.29.40 (00000), collectives 2.29.41",
    ] {
        assert!(run.contains(want), "{want} not in {run}");
    }
    assert_eq!(
        run.matches("not recorded").count(),
        1,
        "only the command: {run}"
    );
}

#[test]
fn a_folder_of_profiles_adds_up_their_windows_and_opens_every_summary_with_the_busy_share() {
    let env = Env::new();
    let out = env.path("sweep");
    report(sweep_file(256).parent().unwrap(), &out);
    let report = report_json(&out);
    let scopes = report["scopes"].as_array().unwrap();
    assert_eq!(scopes.len(), 3);
    let sum = |key: &str| -> f64 {
        scopes
            .iter()
            .map(|s| s["idle"][key].as_f64().unwrap())
            .sum()
    };
    let aggregate = &report["aggregate"]["idle"];
    assert_eq!(aggregate["window_ns"].as_f64().unwrap(), sum("window_ns"));
    assert_eq!(aggregate["active_ns"].as_f64().unwrap(), sum("active_ns"));
    assert_eq!(aggregate["gaps"].as_array().unwrap().len(), 0);
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert_summary_opens_with_busy_share(&md);
}
