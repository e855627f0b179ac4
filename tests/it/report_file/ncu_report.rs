//! The native reader against NVIDIA's own (`ncu_report`, `pip install ncu-report`): for every fixture,
//! tests/support/ncu_report_dump.py dumps each result as ncu_report sees it, and every name, metric
//! (value and stored type), NVTX range of the launching thread, start/end range and rule message must
//! agree. Ignored by default (it needs Python and the 17 MB wheel); CI runs it explicitly:
//! `cargo test --test it report_file::ncu_report -- --ignored`. `PYTHON` picks the interpreter.

use std::collections::BTreeMap;
use std::process::Command;

use serde_json::Value;

use super::{decode, report_path, Decoded, Val, FIXTURES};
use crate::common::repo;
use profile_run::profiler::ncu::readers::report_file::ResultKind;

fn dump(name: &str) -> Vec<Value> {
    let python = std::env::var("PYTHON").unwrap_or_else(|_| "python3".to_owned());
    let out = Command::new(&python)
        .arg(repo().join("tests/support/ncu_report_dump.py"))
        .arg(report_path(name))
        .output()
        .unwrap_or_else(|e| panic!("could not run {python}: {e}"));
    assert!(
        out.status.success(),
        "{name}: ncu_report_dump.py failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice::<Vec<Value>>(&out.stdout).unwrap()
}

fn check_metrics(at: &str, ours: &Decoded, theirs: &serde_json::Map<String, Value>) {
    for (name, kv) in theirs {
        let (kind, value) = (kv[0].as_str().unwrap(), &kv[1]);
        let mine = ours
            .metrics
            .get(name)
            .unwrap_or_else(|| panic!("{at}: {name} missing"));
        assert_eq!(ours.metric_types[name], kind, "{at}: {name}: stored type");
        match (kind, mine) {
            ("string", Val::Str(s)) => assert_eq!(Some(s.as_str()), value.as_str(), "{at}: {name}"),
            // Integers compare exactly; floats within a few ulps (JSON text is parsed back here).
            ("uint32" | "uint64", Val::Num(v)) => {
                assert_eq!(Some(*v as u64), value.as_u64(), "{at}: {name}")
            }
            (_, Val::Num(v)) => {
                let t = value.as_f64().unwrap();
                assert!(
                    (v - t).abs() <= 4.0 * f64::EPSILON * v.abs().max(t.abs()),
                    "{at}: {name}: {v} vs {t}"
                );
            }
            _ => panic!("{at}: {name}: {kind} {value} vs {mine:?}"),
        }
    }
    let valued = ours
        .metrics
        .values()
        .filter(|v| **v != Val::Missing)
        .count();
    assert_eq!(valued, theirs.len(), "{at}: metrics with a value");
}

fn check_nvtx(at: &str, ours: &Decoded, push_pop: &Value, start_end: &Value) {
    let state = ours.nvtx.as_ref().unwrap();
    // ncu_report gives the stacks of the thread that launched the result: ours, by its ThreadID.
    let mut mine: BTreeMap<String, Vec<String>> = BTreeMap::new();
    if let Some(t) = state.thread(ours.thread_id) {
        for d in t.domains.iter().filter(|d| !d.stack.is_empty()) {
            mine.insert(
                d.domain.clone(),
                d.stack.iter().map(|r| r.name.clone()).collect(),
            );
        }
    }
    let theirs: BTreeMap<String, Vec<String>> = serde_json::from_value(push_pop.clone()).unwrap();
    assert_eq!(
        mine, theirs,
        "{at}: push/pop ranges of thread {}",
        ours.thread_id
    );
    let mine: Vec<(String, String)> = state
        .start_end
        .iter()
        .map(|r| (r.domain.clone(), r.name.clone()))
        .collect();
    let theirs: Vec<(String, String)> = serde_json::from_value(start_end.clone()).unwrap();
    assert_eq!(mine, theirs, "{at}: start/end ranges");
}

fn check_rules(at: &str, ours: &Decoded, theirs: &[Value]) {
    // Speedups to 9 decimals: the dump's JSON text is parsed back, which may move the last ulp.
    let mine: Vec<(String, String, Option<String>)> = ours
        .rules
        .iter()
        .filter_map(|r| {
            let m = r.messages.first()?;
            Some((
                r.identifier.clone(),
                m.text.clone(),
                m.speedup.map(|s| format!("{:.9}", s.value)),
            ))
        })
        .collect();
    let theirs: Vec<(String, String, Option<String>)> = theirs
        .iter()
        .map(|r| {
            (
                r["identifier"].as_str().unwrap().to_owned(),
                r["message"].as_str().unwrap().to_owned(),
                r["speedup"].as_f64().map(|v| format!("{v:.9}")),
            )
        })
        .collect();
    assert_eq!(mine, theirs, "{at}: rule results");
}

#[test]
#[ignore = "needs Python with `pip install ncu-report`; CI runs it explicitly"]
fn every_fixture_agrees_with_nvidias_reader() {
    for name in FIXTURES {
        let ours = decode(name);
        let theirs = dump(name);
        assert_eq!(ours.len(), theirs.len(), "{name}: results");
        for (d, t) in ours.iter().zip(&theirs) {
            let at = format!("{name} result {}", d.index);
            match &d.kernel {
                Some((demangled, function, mangled)) => {
                    assert_eq!(t["workload"], "kernel", "{at}");
                    // ncu_report falls back to the function name where the file has no demangled one.
                    assert_eq!(t["demangled"].as_str(), Some(demangled.as_str()), "{at}");
                    assert_eq!(t["function"].as_str(), Some(function.as_str()), "{at}");
                    assert_eq!(t["mangled"].as_str(), Some(mangled.as_str()), "{at}");
                }
                None => assert_eq!(
                    (d.kind, t["workload"].as_str()),
                    (ResultKind::Range, Some("range")),
                    "{at}"
                ),
            }
            check_metrics(&at, d, t["metrics"].as_object().unwrap());
            check_nvtx(&at, d, &t["push_pop"], &t["start_end"]);
            check_rules(&at, d, t["rules"].as_array().unwrap());
        }
    }
}
