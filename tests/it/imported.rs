//! Traces other tools wrote, read by `report`, `merge` and `diff`: PyTorch profiler (Kineto) JSON
//! (`imported/kineto.rs`, the two HTA ranks of tests/fixtures/kineto), rocprofv3 CSV traces
//! (`imported/rocprof.rs`, tests/fixtures/rocprof), rocpd databases (`imported/rocpd.rs`) and Nsight Systems SQLite
//! exports (`imported/nsys.rs`, and `imported/nsys_pipit.rs` against pipit's read of an export;
//! tests/fixtures/nsys). Each range's GPU time is checked against an
//! independent computation over the file itself.

mod kineto;
mod nsys;
mod nsys_pipit;
mod rocpd;
mod rocprof;

use std::collections::BTreeMap;
use std::path::Path;

use assert_cmd::Command;
use serde_json::Value;

/// `profile-run ARGS… --out out`: its report.json and stderr; fails the test when it fails.
pub fn run_report(args: &[&str], inputs: &[&Path], out: &Path) -> (Value, String) {
    let output = Command::cargo_bin("profile-run")
        .unwrap()
        .args(&args[..1])
        .args(inputs)
        .arg("--out")
        .arg(out)
        .args(&args[1..])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.success(), "{args:?}: {stderr}");
    let json = std::fs::read_to_string(out.join("report.json")).unwrap();
    (serde_json::from_str(&json).unwrap(), stderr)
}

/// Each region's inclusive time in ns by its segments, for the scope whose label contains `scope`.
pub fn region_times(report: &Value, scope: &str) -> BTreeMap<Vec<String>, f64> {
    let scope = report["scopes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["label"].as_str().unwrap().contains(scope))
        .unwrap_or_else(|| panic!("no scope `{scope}` in the report"));
    scope["regions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let segments = r["segments"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| s.as_str().unwrap().to_string())
                .collect();
            let time = r["inclusive"]["gpu__time_duration.sum"]["value"]
                .as_f64()
                .unwrap();
            (segments, time)
        })
        .collect()
}

/// Every path's inclusive time from kernels given as (open ranges outermost first, time): each
/// kernel counts once in every prefix of its path.
pub fn inclusive_by_path(kernels: &[(Vec<String>, f64)]) -> BTreeMap<Vec<String>, f64> {
    let mut out = BTreeMap::new();
    for (path, time) in kernels {
        for depth in 1..=path.len() {
            *out.entry(path[..depth].to_vec()).or_insert(0.0) += time;
        }
    }
    out
}

/// Asserts the report's regions are exactly the expected ones, each within 0.1 % of its time.
pub fn assert_same_times(got: &BTreeMap<Vec<String>, f64>, want: &BTreeMap<Vec<String>, f64>) {
    let got_paths: Vec<_> = got.keys().collect();
    let want_paths: Vec<_> = want.keys().collect();
    assert_eq!(
        got_paths, want_paths,
        "the report's regions differ from the file's ranges"
    );
    for (path, want) in want {
        let got = got[path];
        let off = (got - want).abs() / want.max(1.0);
        assert!(off <= 1e-3, "{path:?}: report {got} ns, file {want} ns");
    }
}
