//! The cut: whole steps on every process, within the bound, each process cut at its own step end.

use super::*;

const STEP: u64 = 1_000;

/// A process of `steps` steps of `STEP` ns from `shift`: each one range pushed on thread 1 and
/// `kernels` kernels launched inside it, each running `lag` ns after its launch.
fn census(steps: u64, kernels: u64, shift: u64, lag: u64) -> Census {
    let mut census = Census::default();
    for s in 0..steps {
        census.visit(&TimelineEvent::Range {
            thread: 1,
            domain: "",
            start: shift + s * STEP,
            end: Some(shift + (s + 1) * STEP - 1),
            name: "train_step",
            nested: true,
        });
    }
    for s in 0..steps {
        for k in 0..kernels {
            let launched = shift + s * STEP + 10 * (k + 1);
            census.visit(&TimelineEvent::Kernel {
                device: 0,
                stream: 7,
                launched,
                start: launched + lag,
                end: launched + lag + 5,
                name: "gemm",
                region: "train_step",
                grid: [1, 1, 1],
                block: [32, 1, 1],
            });
        }
    }
    census
}

fn planned(offset_ns: i64) -> PlannedProcess {
    PlannedProcess {
        process: TimelineProcess::default(),
        label: String::new(),
        devices: vec![0],
        offset_ns,
        last_ns: 0,
        before_ns: None,
        quota: None,
    }
}

#[test]
fn everything_fits_no_cut() {
    let censuses = [census(5, 9, 0, 0), census(5, 9, 0, 0)];
    let mut processes = [planned(0), planned(0)];
    assert_eq!(cut(&mut processes, &censuses, 100), None);
    assert_eq!(processes[0].before_ns, None);
}

#[test]
fn the_bound_keeps_whole_steps_on_every_process() {
    // 10 slices a step, 50 a process: 45 keeps two steps on each, 40 slices.
    let censuses = [census(5, 9, 0, 0), census(5, 9, 0, 0)];
    let mut processes = [planned(0), planned(0)];
    let cut = cut(&mut processes, &censuses, 45).unwrap();
    assert_eq!((cut.total, cut.steps_kept, cut.steps), (100, 4, 10));
    assert_eq!(cut.before_ns, Some((2 * STEP - 1) as i64));
    for p in &processes {
        assert_eq!(p.before_ns, Some(2 * STEP - 1));
    }
}

#[test]
fn each_process_is_cut_at_its_own_step_end_on_the_aligned_clock() {
    // The second process's clock runs 300 ns behind: shifted +300, its steps end 300 ns later.
    let censuses = [census(5, 9, 0, 0), census(5, 9, 0, 0)];
    let mut processes = [planned(0), planned(300)];
    let cut = cut(&mut processes, &censuses, 35).unwrap();
    // By aligned 1,999 the first has ended two steps and the second one (30 slices); by 2,299 both
    // have ended two (40, past the bound).
    assert_eq!(cut.before_ns, Some((2 * STEP - 1) as i64));
    assert_eq!(processes[0].before_ns, Some(2 * STEP - 1));
    assert_eq!(processes[1].before_ns, Some(STEP - 1));
    assert_eq!(cut.steps_kept, 3);
}

#[test]
fn a_kernel_counts_in_the_step_that_launched_it_however_late_it_runs() {
    // Every kernel runs a whole step after its launch: still counted in its launching step.
    let late = census(5, 9, 0, STEP);
    let on_time = census(5, 9, 0, 0);
    assert_eq!(late.before_ends(), on_time.before_ends());
    assert_eq!(late.before_ends(), vec![10, 20, 30, 40, 50]);
}

#[test]
fn a_library_domain_and_a_range_never_popped_are_no_steps() {
    let mut census = census(3, 1, 0, 0);
    census.visit(&TimelineEvent::Range {
        thread: 2,
        domain: "NCCL",
        start: 3 * STEP,
        end: Some(3 * STEP + 10),
        name: "ncclAllReduce",
        nested: true,
    });
    census.visit(&TimelineEvent::Range {
        thread: 3,
        domain: "",
        start: 3 * STEP + 20,
        end: None,
        name: "never popped",
        nested: true,
    });
    assert_eq!(census.ends, vec![STEP - 1, 2 * STEP - 1, 3 * STEP - 1]);
    assert_eq!(census.total, 8);
}

#[test]
fn a_first_step_past_the_bound_keeps_no_step() {
    let censuses = [census(5, 9, 0, 0)];
    let mut processes = [planned(0)];
    let cut = cut(&mut processes, &censuses, 5).unwrap();
    assert_eq!((cut.steps_kept, cut.before_ns), (0, None));
    // No step cut: the quota (set by the plan) bounds what is written instead.
    assert_eq!(processes[0].before_ns, None);
    assert!(cut_note(&cut, 0).contains("even the first step"));
}
