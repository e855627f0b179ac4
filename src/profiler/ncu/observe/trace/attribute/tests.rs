//! Attribution on small traces: process and thread scope, graph nodes, marks, and the limit.

use super::*;
use crate::profiler::ncu::readers::trace::parse;

/// Main thread 1 pushes `step`, thread 2 pushes `bwd` inside it; a start/end range `epoch` spans
/// both; a domain `LLM` range on thread 1; kernel 13 is a graph node launched by call 12.
const TRACE: &str = "profile-run-cupti-trace\t1\n\
    process\t9\th\tpython3\t-\n\
    name\t0\tk\n\
    kernel\t10\t1000\t1100\t0\t1\t7\t1\t1\t1\t32\t1\t1\t8\t0\t0\t0\n\
    kernel\t11\t1200\t1300\t0\t1\t7\t1\t1\t1\t32\t1\t1\t8\t0\t0\t0\n\
    kernel\t12\t1400\t1450\t0\t1\t7\t1\t1\t1\t32\t1\t1\t8\t0\t0\t0\n\
    kernel\t12\t1460\t1500\t0\t1\t7\t1\t1\t1\t32\t1\t1\t8\t0\t0\t0\n\
    kernel\t99\t1600\t1700\t0\t1\t7\t1\t1\t1\t32\t1\t1\t8\t0\t0\t0\n\
    api\t10\t1\t150\t160\truntime\t1\n\
    api\t11\t2\t250\t260\truntime\t1\n\
    api\t12\t1\t450\t460\truntime\t1\n\
    range\t1\tpush-pop\t1\t100\t500\t-\tstep\n\
    range\t2\tpush-pop\t2\t200\t300\t-\tbwd\n\
    range\t3\tstart-end\t2\t50\t-\t-\tepoch\n\
    range\t4\tpush-pop\t1\t400\t480\tLLM\tdecode\n";

/// What each kernel was given: correlation id, stacks, ids, marks, whether launched.
type Got = (u32, Vec<Vec<String>>, Vec<Vec<u64>>, Vec<String>, bool);

fn attributed(text: &str, scope: PushPopScope, max_depth: usize) -> Result<Vec<Got>, TooMany> {
    let trace = parse(text.as_bytes(), std::path::Path::new("t")).unwrap();
    let mut got = Vec::new();
    attribute(&trace, scope, &Renames::default(), max_depth, |a| {
        got.push((
            a.kernel.correlation,
            a.stacks.to_vec(),
            a.ids.to_vec(),
            a.marks.to_vec(),
            a.launched,
        ));
    })?;
    Ok(got)
}

fn p(segments: &[&str]) -> Vec<String> {
    segments.iter().map(|s| s.to_string()).collect()
}

#[test]
fn process_scope_chains_threads_and_domains_and_graph_nodes_take_the_launch() {
    let got = attributed(TRACE, PushPopScope::Process, 256).unwrap();
    let correlation: Vec<u32> = got.iter().map(|a| a.0).collect();
    assert_eq!(correlation, [10, 11, 12, 12, 99], "launch order");
    assert_eq!(
        (&got[0].1, &got[0].3),
        (&vec![p(&["step"])], &p(&["epoch"]))
    );
    assert_eq!(got[1].1, vec![p(&["step", "bwd"])]);
    assert_eq!(got[1].2, vec![vec![1, 2]]);
    for node in &got[2..4] {
        assert_eq!(node.1, vec![p(&["step"]), p(&["LLM@decode"])]);
        assert_eq!(node.3, p(&["epoch"]));
    }
    assert!(!got[4].4, "no API record");
    assert_eq!((&got[4].1, &got[4].3), (&vec![vec![]], &p(&["epoch"])));
}

#[test]
fn thread_scope_sees_only_the_launching_thread() {
    let got = attributed(TRACE, PushPopScope::Thread, 256).unwrap();
    assert_eq!(got[1].1, vec![p(&["bwd"])], "thread 2 launched it");
    assert_eq!(got[0].1, vec![p(&["step"])]);
    assert_eq!(got[4].1, vec![Vec::<String>::new()]);
}

/// A trace whose one kernel is launched after `body`'s ranges.
fn after(body: &str) -> String {
    format!(
        "profile-run-cupti-trace\t1\nprocess\t9\th\tp\t-\nname\t0\tk\n\
         kernel\t1\t1000000\t1000100\t0\t1\t7\t1\t1\t1\t32\t1\t1\t8\t0\t0\t0\n\
         api\t1\t1\t999999\t1000000\truntime\t1\n{body}"
    )
}

#[test]
fn ranges_past_the_limit_are_refused_before_their_stack_is_made() {
    let pushed: String = (0..40)
        .map(|i| format!("range\t{i}\tpush-pop\t1\t{i}\t-\t-\tloop\n"))
        .collect();
    let e = attributed(&after(&pushed), PushPopScope::Process, 32).unwrap_err();
    assert_eq!(
        e,
        TooMany::Levels {
            depth: 40,
            at: 999999
        }
    );
    assert!(attributed(&after(&pushed), PushPopScope::Thread, 40).is_ok());
    let marks: String = (0..40)
        .map(|i| format!("range\t{i}\tstart-end\t1\t{i}\t-\t-\tm\n"))
        .collect();
    let e = attributed(&after(&marks), PushPopScope::Process, 32).unwrap_err();
    assert_eq!(
        e,
        TooMany::Marks {
            count: 40,
            at: 999999
        }
    );
    let domains: String = (0..40)
        .map(|i| format!("range\t{i}\tpush-pop\t1\t{i}\t-\td{i}\tr\n"))
        .collect();
    let e = attributed(&after(&domains), PushPopScope::Thread, 32).unwrap_err();
    assert_eq!(
        e,
        TooMany::Domains {
            count: 40,
            at: 999999
        }
    );
}

#[test]
fn stacks_are_handed_over_again_unchanged_until_a_range_opens_or_closes() {
    let trace = parse(TRACE.as_bytes(), std::path::Path::new("t")).unwrap();
    let mut generations = Vec::new();
    attribute(
        &trace,
        PushPopScope::Process,
        &Renames::default(),
        256,
        |a| generations.push(a.generation),
    )
    .unwrap();
    // Kernels 10 and 11 differ (bwd opened), the two graph nodes share one launch, the last differs.
    assert_eq!(generations[2], generations[3]);
    assert!(generations[0] < generations[1] && generations[1] < generations[2]);
    assert!(generations[3] < generations[4]);
}
