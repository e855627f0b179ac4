//! A traced kernel's regions, the way ncu gives them: the NVTX ranges open when the API call that
//! launched it started (the kernel's correlation id names that call; a CUDA graph's node kernels name
//! the graph launch, so they take the ranges open at graph launch). Push/pop ranges form one stack per
//! domain, chaining every thread with an open range (process scope) or only the launching thread's
//! (thread scope); start/end ranges open anywhere are marks. Pure: the tests feed it traces.

use crate::profiler::ncu::readers::export::nvtx_cell::{path_segment, DEFAULT_DOMAIN, UNNAMED};
use crate::region::Renames;

use crate::profiler::ncu::readers::trace::{Kernel, ProcessTrace, Range, RangeKind};

/// Whose push/pop ranges a kernel sees (`--nvtx-push-pop-scope`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PushPopScope {
    Thread,
    Process,
}

/// One kernel with its regions, in launch order.
#[derive(Debug, Clone, PartialEq)]
pub struct Attributed<'t> {
    pub kernel: &'t Kernel,
    /// One path per domain (the default domain's first), outermost first.
    pub stacks: Vec<Vec<String>>,
    /// The ranges' ids, parallel to `stacks`.
    pub ids: Vec<Vec<u64>>,
    pub marks: Vec<String>,
    /// Whether the trace holds the API call that launched it (else it was placed by its own start).
    pub launched: bool,
}

/// Every kernel of `trace` with its regions, in launch order (launch start, then correlation id).
pub fn attribute<'t>(
    trace: &'t ProcessTrace,
    scope: PushPopScope,
    renames: &Renames,
) -> Vec<Attributed<'t>> {
    let mut order: Vec<(u64, u32, &Kernel, Option<u32>)> = trace
        .kernels
        .iter()
        .map(|k| match trace.launches.get(&k.correlation) {
            Some(l) => (l.start, k.correlation, k, Some(l.thread)),
            None => (k.start, k.correlation, k, None),
        })
        .collect();
    order.sort_by_key(|(at, correlation, k, _)| (*at, *correlation, k.start));
    let thread_rank = thread_ranks(&trace.ranges);
    let mut starts: Vec<usize> = (0..trace.ranges.len()).collect();
    starts.sort_by_key(|&i| (trace.ranges[i].start, trace.ranges[i].id));
    let mut next = 0;
    let mut open: Vec<usize> = Vec::new();
    let mut out = Vec::with_capacity(order.len());
    for (at, _, kernel, thread) in order {
        while next < starts.len() && trace.ranges[starts[next]].start < at {
            open.push(starts[next]);
            next += 1;
        }
        open.retain(|&i| trace.ranges[i].end.is_none_or(|end| end > at));
        let seen = |r: &Range| match (scope, r.kind) {
            (_, RangeKind::StartEnd) => false,
            (PushPopScope::Process, _) => true,
            (PushPopScope::Thread, _) => Some(r.thread) == thread,
        };
        let mut pushed: Vec<&Range> = open
            .iter()
            .map(|&i| &trace.ranges[i])
            .filter(|r| seen(r))
            .collect();
        // Threads in order of their first range (the main thread's first), each thread's ranges by start.
        pushed.sort_by_key(|r| (thread_rank.get(&r.thread).copied(), r.start, r.id));
        let (stacks, ids) = stacks_by_domain(&pushed, renames);
        let marks = open
            .iter()
            .map(|&i| &trace.ranges[i])
            .filter(|r| r.kind == RangeKind::StartEnd)
            .map(|r| segment(r, renames))
            .collect();
        out.push(Attributed {
            kernel,
            stacks,
            ids,
            marks,
            launched: thread.is_some(),
        });
    }
    out
}

/// Each thread's rank: the order of its first push/pop range.
fn thread_ranks(ranges: &[Range]) -> crate::fast_map::FastMap<u32, usize> {
    let mut first: Vec<(u64, u32)> = Vec::new();
    for r in ranges.iter().filter(|r| r.kind == RangeKind::PushPop) {
        match first.iter_mut().find(|(_, t)| *t == r.thread) {
            Some(entry) => entry.0 = entry.0.min(r.start),
            None => first.push((r.start, r.thread)),
        }
    }
    first.sort_unstable();
    first
        .iter()
        .enumerate()
        .map(|(rank, (_, t))| (*t, rank))
        .collect()
}

fn segment(range: &Range, renames: &Renames) -> String {
    let name = range
        .name
        .as_deref()
        .filter(|n| !n.is_empty())
        .unwrap_or(UNNAMED);
    let domain = range.domain.as_deref().unwrap_or(DEFAULT_DOMAIN);
    path_segment(domain, &renames.apply(name))
}

/// One path per domain: the default domain's first (empty when none is open), then the others in
/// order of appearance.
fn stacks_by_domain(pushed: &[&Range], renames: &Renames) -> (Vec<Vec<String>>, Vec<Vec<u64>>) {
    let mut stacks = vec![Vec::new()];
    let mut ids = vec![Vec::new()];
    let mut domains: Vec<&str> = Vec::new();
    for r in pushed {
        let at = match r.domain.as_deref() {
            None => 0,
            Some(d) => match domains.iter().position(|known| *known == d) {
                Some(i) => i + 1,
                None => {
                    domains.push(d);
                    stacks.push(Vec::new());
                    ids.push(Vec::new());
                    domains.len()
                }
            },
        };
        stacks[at].push(segment(r, renames));
        ids[at].push(u64::from(r.id));
    }
    (stacks, ids)
}

#[cfg(test)]
mod tests {
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

    fn paths(a: &Attributed<'_>) -> (Vec<Vec<String>>, Vec<String>) {
        (a.stacks.clone(), a.marks.clone())
    }

    fn p(segments: &[&str]) -> Vec<String> {
        segments.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn process_scope_chains_threads_and_domains_and_graph_nodes_take_the_launch() {
        let trace = parse(TRACE.as_bytes(), std::path::Path::new("t")).unwrap();
        let got = attribute(&trace, PushPopScope::Process, &Renames::default());
        let correlation: Vec<u32> = got.iter().map(|a| a.kernel.correlation).collect();
        assert_eq!(correlation, [10, 11, 12, 12, 99], "launch order");
        assert_eq!(paths(&got[0]), (vec![p(&["step"])], p(&["epoch"])));
        assert_eq!(paths(&got[1]), (vec![p(&["step", "bwd"])], p(&["epoch"])));
        assert_eq!(got[1].ids, vec![vec![1, 2]]);
        for node in &got[2..4] {
            assert_eq!(
                paths(node),
                (vec![p(&["step"]), p(&["LLM@decode"])], p(&["epoch"]))
            );
        }
        assert!(!got[4].launched, "no API record");
        assert_eq!(paths(&got[4]), (vec![vec![]], p(&["epoch"])));
    }

    #[test]
    fn thread_scope_sees_only_the_launching_thread() {
        let trace = parse(TRACE.as_bytes(), std::path::Path::new("t")).unwrap();
        let got = attribute(&trace, PushPopScope::Thread, &Renames::default());
        assert_eq!(got[1].stacks, vec![p(&["bwd"])], "thread 2 launched it");
        assert_eq!(got[0].stacks, vec![p(&["step"])]);
        assert_eq!(got[4].stacks, vec![Vec::<String>::new()]);
    }
}
