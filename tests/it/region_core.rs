//! Invariants of the region core on arbitrary result streams, and the attribution rules for start/end
//! and unnamed ranges that no real fixture exercises.

use proptest::prelude::*;

use profile_run::region::{
    Cell, MetricSpec, Observation, RegionAccumulator, RegionKind, Rollup, ScopeKey, ScopeStats,
};

fn specs() -> Vec<MetricSpec> {
    vec![
        MetricSpec {
            name: "time".into(),
            unit: "ns".into(),
            rollup: Rollup::Sum,
        },
        MetricSpec {
            name: "util".into(),
            unit: "%".into(),
            rollup: Rollup::Mean,
        },
        MetricSpec {
            name: "peak".into(),
            unit: "cycle".into(),
            rollup: Rollup::Max,
        },
    ]
}

fn scope(pid: u8) -> ScopeKey {
    ScopeKey {
        host: "h".into(),
        process_id: pid.to_string(),
        process_name: "python".into(),
        device: "0".into(),
        rank: String::new(),
    }
}

#[derive(Debug, Clone)]
struct Result_ {
    pid: u8,
    stack: Vec<String>,
    start_end: Vec<String>,
    kernel: String,
    time: f64,
    util: f64,
}

fn result_strategy() -> impl Strategy<Value = Result_> {
    (
        0u8..3,
        prop::collection::vec(prop::sample::select(vec!["a", "b", "c"]), 0..4),
        prop::collection::vec(prop::sample::select(vec!["epoch", "step"]), 0..2),
        prop::sample::select(vec!["gemm", "relu", "reduce"]),
        1u32..10_000,
        0u32..100,
    )
        .prop_map(|(pid, stack, start_end, kernel, time, util)| Result_ {
            pid,
            stack: stack.into_iter().map(String::from).collect(),
            start_end: start_end.into_iter().map(String::from).collect(),
            kernel: kernel.into(),
            time: time as f64,
            util: util as f64,
        })
}

fn run(results: &[Result_], aggregate: bool) -> (Vec<ScopeStats>, Option<ScopeStats>) {
    let mut acc = RegionAccumulator::new(specs());
    for r in results {
        let key = scope(r.pid);
        let values = [
            Cell::Num(r.time),
            Cell::Num(r.util),
            Cell::Num(r.time * 2.0),
        ];
        acc.add(&Observation {
            scope: &key,
            stacks: std::slice::from_ref(&r.stack),
            instances: None,
            marks: &r.start_end,
            call_stack: None,
            kernel: &r.kernel,
            time: Some(r.time),
            start: None,
            weight: None,
            values: &values,
            coverage: Default::default(),
            key: None,
        });
    }
    acc.finish(aggregate)
}

fn check_tree(scope: &ScopeStats) {
    for region in &scope.regions {
        let children: Vec<_> = scope
            .regions
            .iter()
            .filter(|c| c.path.parent().as_ref() == Some(&region.path))
            .collect();
        let count: u64 =
            region.exclusive.count + children.iter().map(|c| c.inclusive.count).sum::<u64>();
        assert_eq!(region.inclusive.count, count, "{:?}", region.path);
        let time: f64 =
            region.exclusive.time + children.iter().map(|c| c.inclusive.time).sum::<f64>();
        assert!(
            (region.inclusive.time - time).abs() < 1e-6,
            "{:?}",
            region.path
        );
        let sum = region.inclusive.accs[0].value().unwrap_or(0.0);
        assert!((sum - region.inclusive.time).abs() < 1e-6);
        let kernel_total: u64 = region.kernels.iter().map(|(_, g)| g.count).sum();
        assert_eq!(
            kernel_total, region.inclusive.count,
            "kernel list covers the region"
        );
        // A parent's peak is the largest of its own and its children's peaks.
        let peaks = std::iter::once(region.exclusive.accs[2].value())
            .chain(children.iter().map(|c| c.inclusive.accs[2].value()))
            .flatten()
            .fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.max(v))));
        assert_eq!(region.inclusive.accs[2].value(), peaks);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn inclusive_is_self_plus_children_and_the_aggregate_adds_scopes(
        results in prop::collection::vec(result_strategy(), 0..120)
    ) {
        let (scopes, aggregate) = run(&results, true);
        for scope in &scopes {
            check_tree(scope);
            let outside: u64 = results
                .iter()
                .filter(|r| r.pid.to_string() == scope.key.process_id && r.stack.is_empty() && r.start_end.is_empty())
                .count() as u64;
            prop_assert_eq!(scope.outside.count, outside);
        }
        let aggregate = aggregate.unwrap();
        check_tree(&aggregate);
        prop_assert_eq!(aggregate.total.count, results.len() as u64);
        for region in &aggregate.regions {
            let per_scope: u64 = scopes
                .iter()
                .flat_map(|s| s.regions.iter())
                .filter(|r| r.path == region.path)
                .map(|r| r.inclusive.count)
                .sum();
            prop_assert_eq!(region.inclusive.count, per_scope);
        }
    }

    #[test]
    fn the_same_results_always_give_the_same_numbers(
        results in prop::collection::vec(result_strategy(), 0..60)
    ) {
        let render = |stats: &[ScopeStats]| format!("{:?}", stats.iter().map(|s| (&s.key, s.regions.iter().map(|r| (&r.path, r.inclusive.clone(), r.exclusive.clone())).collect::<Vec<_>>())).collect::<Vec<_>>());
        let (a, _) = run(&results, false);
        let (b, _) = run(&results, false);
        prop_assert_eq!(render(&a), render(&b));
    }
}

#[test]
fn start_end_ranges_are_flat_and_count_beside_the_push_pop_path() {
    let results = vec![
        Result_ {
            pid: 1,
            stack: vec!["train".into(), "fwd".into()],
            start_end: vec!["epoch".into()],
            kernel: "gemm".into(),
            time: 10.0,
            util: 50.0,
        },
        Result_ {
            pid: 1,
            stack: vec![],
            start_end: vec!["epoch".into(), "step".into()],
            kernel: "relu".into(),
            time: 5.0,
            util: 20.0,
        },
        Result_ {
            pid: 1,
            stack: vec![],
            start_end: vec![],
            kernel: "copy".into(),
            time: 1.0,
            util: 1.0,
        },
    ];
    let (scopes, _) = run(&results, false);
    let scope = &scopes[0];
    let find = |kind: RegionKind, path: &[&str]| {
        scope
            .regions
            .iter()
            .find(|r| r.path.kind == kind && r.path.segments == path)
            .unwrap_or_else(|| panic!("{kind:?} {path:?}"))
    };
    assert_eq!(find(RegionKind::Stack, &["train"]).inclusive.count, 1);
    assert_eq!(
        find(RegionKind::Stack, &["train", "fwd"]).exclusive.count,
        1
    );
    assert_eq!(find(RegionKind::Mark, &["epoch"]).inclusive.count, 2);
    assert_eq!(find(RegionKind::Mark, &["step"]).inclusive.count, 1);
    assert_eq!(
        scope.total.count, 3,
        "each result counts once in the scope total"
    );
    assert_eq!(scope.outside.count, 1);
    // Push/pop regions come before start/end ones.
    assert_eq!(scope.regions.last().unwrap().path.kind, RegionKind::Mark);
}

#[test]
fn overlapping_instances_of_one_start_end_range_count_a_result_once() {
    let results = vec![
        Result_ {
            pid: 1,
            stack: vec![],
            start_end: vec!["epoch".into(), "step".into(), "epoch".into()],
            kernel: "gemm".into(),
            time: 10.0,
            util: 50.0,
        },
        Result_ {
            pid: 1,
            stack: vec![],
            start_end: vec!["epoch".into()],
            kernel: "gemm".into(),
            time: 4.0,
            util: 50.0,
        },
    ];
    let (scopes, _) = run(&results, false);
    let epoch = scopes[0]
        .regions
        .iter()
        .find(|r| r.path.segments == ["epoch"])
        .unwrap();
    assert_eq!(epoch.inclusive.count, 2);
    assert_eq!(epoch.inclusive.time, 14.0);
    assert_eq!(epoch.kernels[0].1.count, 2);
}

#[test]
fn means_are_weighted_by_duration_across_nesting() {
    let results = vec![
        Result_ {
            pid: 1,
            stack: vec!["a".into()],
            start_end: vec![],
            kernel: "k".into(),
            time: 1.0,
            util: 10.0,
        },
        Result_ {
            pid: 1,
            stack: vec!["a".into(), "b".into()],
            start_end: vec![],
            kernel: "k".into(),
            time: 3.0,
            util: 50.0,
        },
    ];
    let (scopes, _) = run(&results, false);
    let a = &scopes[0].regions[0];
    assert_eq!(a.inclusive.accs[1].value(), Some(40.0));
    assert_eq!(a.exclusive.accs[1].value(), Some(10.0));
}

#[test]
fn instances_of_a_range_get_their_inclusive_times_and_unknown_stays_null() {
    // Two visits of `step` (ids 7 and 9), each with `fwd` nested once; the second visit is slower.
    let key = scope(1);
    let values = |t: f64| [Cell::Num(t), Cell::Num(50.0), Cell::Num(t * 2.0)];
    let mut acc = RegionAccumulator::new(specs());
    for (step, fwd, time) in [(7, 1, 10.0), (7, 1, 5.0), (9, 2, 30.0), (9, 2, 1.0)] {
        let stacks = [vec!["step".to_string(), "fwd".to_string()]];
        let ids = [vec![step, fwd]];
        acc.add(&Observation {
            scope: &key,
            stacks: &stacks,
            instances: Some(&ids),
            marks: &[],
            call_stack: None,
            kernel: "k",
            time: Some(time),
            start: None,
            weight: None,
            values: &values(time),
            coverage: Default::default(),
            key: None,
        });
    }
    let stacks = [vec!["step".to_string()]];
    // A result with no instance ids (a source that cannot tell) adds no instance.
    acc.add(&Observation {
        scope: &key,
        stacks: &stacks,
        instances: None,
        marks: &[],
        call_stack: None,
        kernel: "k",
        time: Some(100.0),
        start: None,
        weight: None,
        values: &values(100.0),
        coverage: Default::default(),
        key: None,
    });
    let (scopes, aggregate) = acc.finish(true);
    let step = scopes[0]
        .regions
        .iter()
        .find(|r| r.path.segments == ["step"])
        .unwrap();
    assert_eq!(step.instances.as_deref(), Some(&[15.0, 31.0][..]));
    let fwd = &scopes[0].regions[1];
    assert_eq!(fwd.instances.as_deref(), Some(&[15.0, 31.0][..]));
    let agg = aggregate.unwrap();
    assert_eq!(agg.regions[0].instances.as_deref(), Some(&[15.0, 31.0][..]));
    let plain = run(
        &[Result_ {
            pid: 1,
            stack: vec!["a".into()],
            start_end: vec![],
            kernel: "k".into(),
            time: 1.0,
            util: 1.0,
        }],
        false,
    );
    assert!(plain.0[0].regions.iter().all(|r| r.instances.is_none()));
}
