//! What only the report file holds and the CSV pages cannot show: NVTX range instance ids, the
//! launching thread of each result, Python call stacks; plus the device list of the session.

use std::collections::BTreeSet;

use profile_run::profiler::ncu::readers::report_file::{ReportFile, ReportFileError, ResultKind};

use super::{decode, report_path, Decoded, FIXTURES};

/// The ids of every open push/pop range called `name`, over all results and threads.
fn range_ids(results: &[Decoded], name: &str) -> BTreeSet<u64> {
    results
        .iter()
        .flat_map(|d| d.nvtx.as_ref().unwrap().threads.iter())
        .flat_map(|t| t.domains.iter().flat_map(|d| d.stack.iter()))
        .filter(|r| r.name == name)
        .map(|r| r.id)
        .collect()
}

#[test]
fn the_two_step_instances_of_emit_nvtx_have_different_range_ids() {
    let results = decode("emit_nvtx");
    let ids = range_ids(&results, "step");
    assert_eq!(ids.len(), 2, "two `step` pushes, two instance ids: {ids:?}");
    // Every kernel runs inside one of them; the first half of the results in the first.
    let first_step = |d: &Decoded| {
        let main = &d.nvtx.as_ref().unwrap().threads[0];
        main.domains[0].stack[0].id
    };
    assert_eq!(first_step(&results[0]), *ids.first().unwrap());
    assert_eq!(first_step(results.last().unwrap()), *ids.last().unwrap());
}

#[test]
fn range_results_carry_the_range_they_measured() {
    let results = decode("rep_range");
    let innermost: Vec<(String, u64)> = results
        .iter()
        .map(|d| {
            assert_eq!(d.kind, ResultKind::Range);
            let t = d
                .nvtx
                .as_ref()
                .unwrap()
                .thread(d.thread_id)
                .expect("the range's thread");
            let r = t.domains[0].stack.last().expect("an open range");
            (r.name.clone(), r.id)
        })
        .collect();
    assert_eq!(
        innermost
            .iter()
            .map(|(n, _)| n.as_str())
            .collect::<Vec<_>>(),
        ["A", "B"]
    );
    assert_ne!(
        innermost[0].1, innermost[1].1,
        "A and B are different range instances"
    );
    let apprange = decode("rep_apprange");
    assert_eq!(apprange.len(), 1);
    assert_eq!(apprange[0].kind, ResultKind::Range);
}

/// In emit_nvtx the CSV cell of a backward kernel lists the main thread (`step`) and then the
/// autograd thread; the file says which of them launched the kernel.
#[test]
fn backward_kernels_were_launched_by_the_autograd_thread() {
    let results = decode("emit_nvtx");
    let (mut forward, mut backward) = (0, 0);
    let main_tid = results[0].pid;
    for d in &results {
        let state = d.nvtx.as_ref().unwrap();
        let open: Vec<u32> = state
            .threads
            .iter()
            .filter(|t| t.has_ranges())
            .map(|t| t.tid)
            .collect();
        let launcher = state
            .thread(d.thread_id)
            .expect("the launching thread is tracked");
        assert!(
            launcher.has_ranges(),
            "result {}: launcher has open ranges",
            d.index
        );
        if open.len() == 2 {
            assert_eq!(
                d.thread_id, open[1],
                "result {}: a backward kernel, launched by the second thread",
                d.index
            );
            assert_ne!(d.thread_id, main_tid);
            let names: Vec<&str> = launcher.domains[0]
                .stack
                .iter()
                .map(|r| r.name.as_str())
                .collect();
            assert!(
                names.iter().any(|n| n.contains("Backward")),
                "result {}: {names:?}",
                d.index
            );
            backward += 1;
        } else {
            assert_eq!(
                d.thread_id, main_tid,
                "result {}: a forward kernel, launched by the main thread",
                d.index
            );
            forward += 1;
        }
    }
    assert!(
        forward > 0 && backward > 0,
        "forward {forward}, backward {backward}"
    );
}

#[test]
fn python_stacks_are_in_rep_pystack_only() {
    for name in FIXTURES {
        let results = decode(name);
        let with_stack = results
            .iter()
            .filter(|d| d.python_stack.as_ref().is_some_and(|s| !s.is_empty()))
            .count();
        if name != "rep_pystack" {
            assert_eq!(with_stack, 0, "{name}");
            continue;
        }
        // ncu walks the Python stack of the launching thread: the main thread's kernels have one, the
        // backward kernels launched by autograd's C++ thread have none.
        assert!(
            with_stack > 0 && with_stack < results.len(),
            "{with_stack} of {}",
            results.len()
        );
        for d in &results {
            let stack = d.python_stack.as_deref().unwrap_or_default();
            if d.thread_id != d.pid {
                assert!(
                    stack.is_empty(),
                    "result {}: autograd thread, no Python frames",
                    d.index
                );
                continue;
            }
            // Innermost first: the workload's `step` is below torch's frames, the module at the bottom.
            let step = stack
                .iter()
                .find(|f| {
                    f.function == "step"
                        && f.file
                            .as_deref()
                            .is_some_and(|p| p.ends_with("tests/manual/ncu/train_step.py"))
                })
                .unwrap_or_else(|| {
                    panic!(
                        "result {}: no train_step.py `step` frame in {stack:?}",
                        d.index
                    )
                });
            assert!(step.line.unwrap() > 0);
            assert_eq!(stack.last().unwrap().function, "<module>");
        }
    }
}

#[test]
fn start_end_ranges_name_their_starting_thread() {
    let results = decode("rep_start_end");
    let with_range: Vec<&Decoded> = results
        .iter()
        .filter(|d| !d.nvtx.as_ref().unwrap().start_end.is_empty())
        .collect();
    assert!(!with_range.is_empty());
    for d in with_range {
        for r in &d.nvtx.as_ref().unwrap().start_end {
            assert_eq!(
                r.start_tid,
                Some(d.pid),
                "result {}: started on the main thread",
                d.index
            );
            assert_eq!(r.domain, "<default domain>");
        }
    }
}

#[test]
fn registered_strings_name_nccl_ranges() {
    let results = decode("nccl_one_rank");
    let d = &results[0];
    let t = d.nvtx.as_ref().unwrap().thread(d.thread_id).unwrap();
    let nccl = t
        .domains
        .iter()
        .find(|s| s.domain == "NCCL")
        .expect("the NCCL domain");
    let r = &nccl.stack[0];
    assert_eq!(r.name, "ncclCommInitRankConfig");
    let m = r.attributes.as_ref().unwrap().message.as_ref().unwrap();
    assert_eq!(
        (m.kind, m.text.as_deref()),
        ("registered", Some("ncclCommInitRankConfig"))
    );
}

#[test]
fn the_session_lists_the_device_and_every_result_names_its_thread() {
    let mut report = ReportFile::open(&report_path("rep_multiproc")).unwrap();
    let mut pids = BTreeSet::new();
    report
        .for_each_result(|r| {
            pids.insert(r.process.id);
            assert!(r.thread_id > 0);
            assert!(
                r.device_attributes().count() > 50,
                "device__attribute_* metrics"
            );
            Ok::<_, ReportFileError>(())
        })
        .unwrap();
    assert_eq!(pids.len(), 2, "two processes in one report");
    let devices = report.devices();
    assert_eq!(devices.len(), 1, "{devices:?}");
    assert_eq!(devices[0].name.as_deref(), Some("NVIDIA H100 80GB HBM3"));
}

#[test]
fn the_session_names_the_driver_and_the_ncu_that_wrote_the_file() {
    for name in ["rep_kernel", "rep_multiproc", "emit_nvtx"] {
        let mut report = ReportFile::open(&report_path(name)).unwrap();
        report
            .for_each_result(|_| Ok::<_, ReportFileError>(()))
            .unwrap();
        let session = report.session();
        assert_eq!(session.version("CUDA Version"), Some("13.0"), "{name}");
        let ncu = session.version("Nsight Compute Target").unwrap();
        assert!(ncu.starts_with("2025.3.1.0 (build "), "{name}: {ncu}");
        assert_eq!(
            session
                .versions
                .iter()
                .filter(|(c, _)| c == "CUDA Version")
                .count(),
            1,
            "one entry per component: {:?}",
            session.versions
        );
    }
}
