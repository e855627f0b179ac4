//! Fuzzing `diff`'s inputs with proptest: a real report.json (rank 0 of the two-GPU DDP export)
//! with its values, units, regions and visits edited at random. Nothing may panic; a refusal names a
//! region or scope; and a region made slower than the limit in B always fails the gate, whatever
//! B's own spread of visits is.
//!
//! Cases per property: a quarter of `PROPTEST_CASES` (default 256). CI: `PROPTEST_CASES=3000 cargo test --test it
//! hardening::fuzz`.

use std::sync::OnceLock;

use proptest::prelude::*;
use proptest::sample::Index;
use serde_json::{json, Value};

use crate::common::{analyze, fixture};
use profile_run::report::diff::{compare, gate_time, RunReport, Verdict};

const TIME: &str = "gpu__time_duration.sum";

fn baseline() -> &'static Value {
    static REPORT: OnceLock<Value> = OnceLock::new();
    REPORT.get_or_init(|| {
        let config = serde_yaml::from_str(profile_run::config::DEFAULT_PRESET).unwrap();
        let raw = fixture("ncu/h200x2-2025.3.1/ddp_rank0_raw.csv");
        serde_json::to_value(analyze(&config, &[raw], &Default::default()).unwrap()).unwrap()
    })
}

fn config() -> ProptestConfig {
    let cases: u32 = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(256);
    ProptestConfig {
        // Each case analyses nothing but compares two whole reports: a quarter of the cases.
        cases: cases.div_ceil(4),
        max_shrink_iters: 256,
        ..ProptestConfig::default()
    }
}

fn parsed(value: Value) -> RunReport {
    serde_json::from_value(value).unwrap()
}

fn regions(report: &mut Value) -> &mut Vec<Value> {
    report["scopes"][0]["regions"].as_array_mut().unwrap()
}

/// One edit of a report: what an attacker or a damaged file could hold.
#[derive(Debug, Clone)]
enum Edit {
    Time(Index, Option<f64>),
    Unit(Index, &'static str),
    Drop(Index),
    Duplicate(Index),
    Rename(Index),
    Visits(Index, u64, f64, f64, f64),
}

fn edit() -> impl Strategy<Value = Edit> {
    let value = prop_oneof![
        Just(None),
        (-1e9f64..1e12).prop_map(Some),
        Just(Some(0.0)),
        Just(Some(f64::MAX)),
    ];
    prop_oneof![
        (any::<Index>(), value).prop_map(|(i, v)| Edit::Time(i, v)),
        (
            any::<Index>(),
            prop::sample::select(vec!["ns", "ms", "us", "", "%"])
        )
            .prop_map(|(i, u)| Edit::Unit(i, u)),
        any::<Index>().prop_map(Edit::Drop),
        any::<Index>().prop_map(Edit::Duplicate),
        any::<Index>().prop_map(Edit::Rename),
        (any::<Index>(), 0u64..50, -1e6f64..1e9, 0f64..1e9, 0f64..1e9)
            .prop_map(|(i, n, min, med, p90)| Edit::Visits(i, n, min, med, p90)),
    ]
}

fn apply(report: &mut Value, edit: &Edit) {
    let list = regions(report);
    let n = list.len();
    if n == 0 {
        return;
    }
    match edit {
        Edit::Time(i, v) => list[i.index(n)]["inclusive"][TIME]["value"] = json!(v),
        Edit::Unit(i, u) => list[i.index(n)]["inclusive"][TIME]["unit"] = json!(u),
        Edit::Drop(i) => {
            list.remove(i.index(n));
        }
        Edit::Duplicate(i) => {
            let copy = list[i.index(n)].clone();
            list.push(copy);
        }
        Edit::Rename(i) => {
            let r = &mut list[i.index(n)];
            r["path"] = json!(format!("{}~", r["path"].as_str().unwrap()));
        }
        Edit::Visits(i, count, min, median, p90) => {
            list[i.index(n)]["instances"] =
                json!({"count": count, "min": min, "median": median, "p90": p90, "max": p90});
        }
    }
}

proptest! {
    #![proptest_config(config())]

    /// Any edits, on either side: a diff or a refusal that names what it refused, never a panic.
    #[test]
    fn edited_reports_are_compared_or_refused_by_name(
        edits_a in prop::collection::vec(edit(), 0..4),
        edits_b in prop::collection::vec(edit(), 0..6),
        limit in 0f64..50.0,
    ) {
        let (mut a, mut b) = (baseline().clone(), baseline().clone());
        edits_a.iter().for_each(|e| apply(&mut a, e));
        edits_b.iter().for_each(|e| apply(&mut b, e));
        let gate = gate_time(&limit.to_string()).unwrap();
        match compare(("a", &parsed(a)), ("b", &parsed(b)), &[gate]) {
            Ok(diff) => prop_assert_ne!(diff.verdict, Verdict::NotGated),
            Err(message) => prop_assert!(
                message.contains("region `") || message.contains("scope `"),
                "{message}"
            ),
        }
    }

    /// A region slower than the limit in B fails, its visits known or not; and B's spread of visits
    /// (its fastest visit) never changes the verdict: the noise band is the baseline's alone.
    #[test]
    fn a_slower_region_fails_whatever_b_spread_is(
        at in any::<Index>(),
        factor in 1.06f64..100.0,
        visits in prop::option::of((2u64..40, 0.01f64..0.2)),
        b_min in 0f64..1.0,
    ) {
        let mut a = baseline().clone();
        let i = at.index(regions(&mut a).len());
        let time = regions(&mut a)[i]["inclusive"][TIME]["value"].as_f64().unwrap();
        prop_assume!(time > 0.0);
        let mut b = a.clone();
        regions(&mut b)[i]["inclusive"][TIME]["value"] = json!(time * factor);
        if let Some((count, jitter)) = visits {
            // A's visits steady within `jitter` of the mean; B's the same visits, `factor` slower,
            // with its fastest anywhere below.
            let mean = time / count as f64;
            regions(&mut a)[i]["instances"] = json!({"count": count, "min": mean * (1.0 - jitter),
                "median": mean, "p90": mean * (1.0 + jitter), "max": mean * (1.0 + jitter)});
            let slow = mean * factor;
            regions(&mut b)[i]["instances"] = json!({"count": count, "min": slow * b_min,
                "median": slow, "p90": slow * (1.0 + jitter), "max": slow * (1.0 + jitter)});
        }
        let gate = gate_time("5").unwrap();
        let diff = compare(("a", &parsed(a)), ("b", &parsed(b)), &[gate]).unwrap();
        // A genuinely noisy baseline (A's p90 − min, 2 × jitter of the mean) may excuse a change
        // within it; any change beyond it fails.
        let within_a_spread = visits.is_some_and(|(_, jitter)| factor - 1.0 <= 2.0 * jitter);
        if !within_a_spread {
            prop_assert_eq!(diff.verdict, Verdict::Fail, "{}", diff.summary);
        }
    }
}
