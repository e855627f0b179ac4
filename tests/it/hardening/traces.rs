//! CUPTI traces of hostile shapes (`benches/tools/trace_scenarios.rs`, small here; large in
//! `benches/trace.sh`): ranges pushed or started in a loop and never ended, a domain or a thread per
//! range, stacks 256 deep under many kernels, a trace cut short, times that run backwards or last
//! 2^64 ns. Each is read in bounded memory and refused with a message that names the file (and the
//! line and field) and the fix, or read whole.

#[path = "../../../benches/tools/trace_scenarios.rs"]
pub(super) mod trace_scenarios;

use std::path::{Path, PathBuf};

use assert_cmd::Command;

use super::limits::run_measured;
use super::{code_and_stderr, read_json};

/// Scenario `name` at size `n`, as `DIR/cupti.4242.trace`.
fn scenario(dir: &Path, name: &str, n: u32) -> PathBuf {
    let path = dir.join("cupti.4242.trace");
    let file = std::fs::File::create(&path).unwrap();
    assert!(trace_scenarios::write(name, n, std::io::BufWriter::new(file)).unwrap());
    path
}

/// `report -c ncu/trace TRACE --out DIR/out OVERRIDES…`: exit code and stderr.
fn report(trace: &Path, overrides: &[&str]) -> (i32, String) {
    let out = trace.parent().unwrap().join("out");
    let mut cmd = Command::cargo_bin("profile-run").unwrap();
    cmd.args(["report", "-c", "ncu/trace"])
        .arg(trace)
        .arg("--out")
        .arg(&out)
        .args(overrides);
    code_and_stderr(&mut cmd)
}

#[test]
fn ranges_pushed_in_a_loop_and_never_popped_are_refused_with_the_depth_message_in_bounded_memory() {
    let dir = tempfile::tempdir().unwrap();
    scenario(dir.path(), "never-popped", 20_000);
    let (code, stderr, peak_mib) = run_measured(
        dir.path(),
        &[
            "report",
            "-c",
            "ncu/trace",
            "cupti.4242.trace",
            "--out",
            "out",
        ],
    );
    assert_eq!(code, 5, "{stderr}");
    // The CSV reader's words, and the depth the whole trace needs.
    assert!(
        stderr.contains(
            "a range stack in cupti.4242.trace is 20000 levels deep, past regions.max_depth (256)"
        ) && stderr.contains("raise the limit with regions.max_depth=20000"),
        "{stderr}"
    );
    // Every kernel's stack used to be built first: 20,000 × 20,000 / 2 strings.
    assert!(peak_mib <= 200, "peak RSS {peak_mib} MiB");
    assert!(!dir.path().join("out/report.json").exists());
}

#[test]
fn start_end_ranges_never_ended_and_domains_never_popped_are_refused_naming_the_limit() {
    for (name, what) in [
        ("marks", "up to 5000 open start/end ranges"),
        (
            "domains",
            "up to 5000 open NVTX domains with a push/pop range",
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let trace = scenario(dir.path(), name, 5_000);
        for scope in ["thread", "process"] {
            let set = format!("pipeline.ncu.ncu_cli.nvtx.push_pop_scope={scope}");
            let (code, stderr) = report(&trace, &[&set]);
            assert_eq!(code, 5, "{name}: {stderr}");
            assert!(
                stderr.contains("cupti.4242.trace: kernels run inside")
                    && stderr.contains(what)
                    && stderr.contains("past regions.max_depth (256)")
                    && stderr.contains("regions.max_depth=5000"),
                "{name}: {stderr}"
            );
        }
    }
}

#[test]
fn a_range_per_thread_or_per_domain_and_marks_that_end_are_read_whole() {
    for (name, n, regions) in [
        ("threads", 20_000, 1),
        ("domains-popped", 2_000, 2_000),
        ("marks-ended", 20_000, 1),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let trace = scenario(dir.path(), name, n);
        let (code, stderr) = report(&trace, &[]);
        assert_eq!(code, 0, "{name}: {stderr}");
        let json = read_json(&dir.path().join("out/report.json"));
        let scope = &json["scopes"][0];
        assert_eq!(scope["total"]["kernel_count"], n, "{name}");
        let top: Vec<&serde_json::Value> = scope["regions"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["depth"] == 0)
            .collect();
        assert_eq!(top.len(), regions, "{name}");
        let counted: u64 = top
            .iter()
            .map(|r| r["kernel_count"].as_u64().unwrap())
            .sum();
        assert_eq!(counted, u64::from(n), "{name}: every kernel in its range");
    }
}

#[test]
fn a_stack_256_deep_under_many_kernels_is_read_at_the_limit_and_refused_past_it() {
    let dir = tempfile::tempdir().unwrap();
    let trace = scenario(dir.path(), "deep", 300);
    let (code, stderr) = report(
        &trace,
        &["pipeline.ncu.ncu_cli.nvtx.push_pop_scope=process"],
    );
    assert_eq!(code, 0, "{stderr}");
    let json = read_json(&dir.path().join("out/report.json"));
    let deepest = json["scopes"][0]["regions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["depth"].as_u64().unwrap())
        .max();
    assert_eq!(deepest, Some(255));
    let (code, stderr) = report(&trace, &["regions.max_depth=255", "--force"]);
    assert_eq!(code, 5, "{stderr}");
    assert!(
        stderr.contains("is 256 levels deep, past regions.max_depth (255)"),
        "{stderr}"
    );
}

#[test]
fn a_trace_cut_at_a_line_boundary_reads_as_partial() {
    let dir = tempfile::tempdir().unwrap();
    let trace = scenario(dir.path(), "kernels", 3_000);
    let text = std::fs::read_to_string(&trace).unwrap();
    let cut = text.rfind("end\t").unwrap();
    std::fs::write(&trace, &text[..cut]).unwrap();
    let (code, stderr) = report(&trace, &[]);
    assert_eq!(code, 0, "{stderr}");
    let json = read_json(&dir.path().join("out/report.json"));
    let partial = json["run"]["partial"].as_str().unwrap_or_default();
    assert!(
        partial.contains(
            "cupti.4242.trace does not end with the writer's `end` line: it was cut short"
        ),
        "{partial:?}"
    );
    assert_eq!(json["scopes"][0]["total"]["kernel_count"], 3_000);
    let markdown = std::fs::read_to_string(dir.path().join("out/report.md")).unwrap();
    assert!(
        markdown.contains("does not end with the writer"),
        "report.md says so"
    );
}

#[test]
fn times_that_run_backwards_or_last_2_64_ns_are_refused_naming_the_line_and_field() {
    let head = "profile-run-cupti-trace\t2\nprocess\t7\th\tp\t-\nname\t0\tk\n";
    let kernel = |start: u64, end: u64| {
        format!("kernel\t1\t{start}\t{end}\t0\t1\t7\t1\t1\t1\t32\t1\t1\t8\t0\t0\t0\n")
    };
    let max = u64::MAX;
    let cases = [
        (
            format!("{}range\t1\tpush-pop\t1\t900\t100\t-\tstep\n", kernel(10, 20)),
            ":5: field 5 (end) is 100, before the range's start (field 4, 900)",
        ),
        (
            kernel(0, max),
            ":4: field 3 (end) is 18446744073709551615: the kernel would last 18446744073709551615 ns, more than 2^53 ns",
        ),
    ];
    for (body, what) in cases {
        let dir = tempfile::tempdir().unwrap();
        let trace = dir.path().join("cupti.7.trace");
        let text = format!("{head}{body}");
        let lines = text.lines().count();
        std::fs::write(&trace, format!("{text}end\t{lines}\n")).unwrap();
        let (code, stderr) = report(&trace, &[]);
        assert_eq!(code, 5, "{stderr}");
        assert!(stderr.contains(&format!("cupti.7.trace{what}")), "{stderr}");
    }
}
