//! The diagnosis on small timelines whose answer is known by construction.

use globset::{Glob, GlobSetBuilder};

use super::{diagnose, Timelines};
use crate::region::{Coverage, Observation, ScopeKey};

const MS: u64 = 1_000_000;

fn collectives() -> globset::GlobSet {
    let mut set = GlobSetBuilder::new();
    set.add(Glob::new("nccl*").expect("valid glob"));
    set.build().expect("valid set")
}

fn scope(host: &str, device: u32) -> ScopeKey {
    ScopeKey {
        host: host.into(),
        process_id: (100 + device).to_string(),
        process_name: "python3".into(),
        device: device.to_string(),
        rank: String::new(),
    }
}

/// Feeds one kernel of `scope` that starts at `start` and lasts `ms` milliseconds, in `region`.
fn kernel(t: &mut Timelines, scope: &ScopeKey, region: &[&str], name: &str, start: u64, ms: u64) {
    let stacks = vec![region.iter().map(|s| s.to_string()).collect::<Vec<_>>()];
    t.visit(
        &Observation {
            scope,
            stacks: &stacks,
            instances: None,
            marks: &[],
            call_stack: None,
            kernel: name,
            time: Some((ms * MS) as f64),
            start: Some(start),
            weight: None,
            values: &[],
            coverage: Coverage::Measured,
            key: None,
        },
        &collectives(),
    );
}

/// `steps` steps on `ranks` ranks: a 10 ms forward, then an all-reduce in backward that every rank
/// leaves when the last arrives plus 1 ms of transfer. Rank `late` (if any) spends `extra` more ms in
/// forward; hosts other than the first have their clock `skew` ns ahead.
fn job(ranks: u32, late: Option<u32>, extra: u64, hosts: u32, skew: u64) -> Timelines {
    let mut t = Timelines::default();
    let per_host = ranks.div_ceil(hosts);
    for step in 0..10u64 {
        let begin = step * 100 * MS;
        let arrive = |r: u32| begin + 10 * MS + if Some(r) == late { extra * MS } else { 0 };
        let last = (0..ranks).map(arrive).max().unwrap_or(0);
        for r in 0..ranks {
            let host = r / per_host;
            let shift = if host == 0 { 0 } else { skew };
            let s = scope(&format!("node{host}"), r);
            let forward = 10 + if Some(r) == late { extra } else { 0 };
            kernel(
                &mut t,
                &s,
                &["step", "forward"],
                "gemm",
                begin + shift,
                forward,
            );
            let wait = (last - arrive(r)) / MS;
            let name = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(x)";
            kernel(
                &mut t,
                &s,
                &["step", "backward"],
                name,
                arrive(r) + shift,
                wait + 1,
            );
        }
    }
    t
}

#[test]
fn the_late_rank_and_its_region_are_named_with_the_others_wait() {
    let x = diagnose(job(4, Some(2), 30, 1, 0)).expect("four ranks with collectives");
    assert_eq!(x.collectives, 10);
    assert_eq!(x.unmatched, 0);
    let s = x.straggler.expect("rank 2 stands out");
    assert!(s.scope.contains("device 2"), "{}", s.scope);
    assert_eq!(s.last, 10);
    assert_eq!(s.region, "step/backward");
    assert_eq!(s.wait_ns, (10 * 30 * MS) as f64);
    let cause = s.cause.expect("forward is the cause");
    assert_eq!(cause.region, "step/forward");
    assert_eq!(cause.time_ns, (10 * 40 * MS) as f64);
    assert_eq!(cause.median_ns, (10 * 10 * MS) as f64);
    // The others wait 30 ms of their 31 ms all-reduce each step; the late rank only transfers.
    assert_eq!(x.ranks[2].wait_ns, 0.0);
    assert_eq!(x.ranks[0].wait_ns, (10 * 30 * MS) as f64);
    assert_eq!(x.ranks[0].transfer_ns, (10 * MS) as f64);
    assert!(x.finding.starts_with("python3 (pid 102)"), "{}", x.finding);
    assert!(
        x.finding.contains("`step/forward` takes 400"),
        "{}",
        x.finding
    );
}

#[test]
fn no_straggler_is_named_when_ranks_arrive_together() {
    let x = diagnose(job(4, None, 0, 1, 0)).expect("four ranks with collectives");
    assert!(x.straggler.is_none());
    assert!(x.finding.starts_with("No rank stands out"), "{}", x.finding);
    assert!(x.ranks.iter().all(|r| r.wait_ns == 0.0));
}

#[test]
fn hosts_with_skewed_clocks_are_aligned_on_collective_ends() {
    // Node 1's clock runs 5 s ahead: unaligned, its ranks would look 5 s late to every collective.
    let x = diagnose(job(4, Some(1), 30, 2, 5_000 * MS)).expect("two hosts");
    assert!(x.clock.starts_with("2 hosts"), "{}", x.clock);
    assert_eq!(x.ranks[2].clock_offset_ns, (5_000 * MS) as i64);
    let s = x.straggler.expect("rank 1 stands out");
    assert!(s.scope.contains("device 1"), "{}", s.scope);
    assert_eq!(s.wait_ns, (10 * 30 * MS) as f64);
}

#[test]
fn one_scope_or_no_collective_gives_no_diagnosis() {
    assert!(diagnose(job(1, None, 0, 1, 0)).is_none());
    let mut t = Timelines::default();
    for r in 0..2 {
        kernel(&mut t, &scope("a", r), &["step"], "gemm", 0, 1);
    }
    assert!(diagnose(t).is_none());
}

#[test]
fn a_rank_with_an_extra_collective_leaves_it_unmatched() {
    let mut t = job(2, None, 0, 1, 0);
    let s = scope("node0", 0);
    kernel(
        &mut t,
        &s,
        &["step"],
        "ncclDevKernel_Broadcast(x)",
        2_000 * MS,
        1,
    );
    let x = diagnose(t).expect("two ranks");
    assert_eq!(x.collectives, 10);
    assert_eq!(x.unmatched, 1);
}
