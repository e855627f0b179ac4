//! The reader on small texts: every record, every malformed line named, cut traces marked partial.

use super::*;

fn parse_text(text: &str) -> Result<ProcessTrace, TraceError> {
    parse(text.as_bytes(), Path::new("t.trace"))
}

const HEAD: &str = "profile-run-cupti-trace\t2\nprocess\t42\th\tpython3\t/lib/libcupti.so.13\n";

/// `body` after [`HEAD`], then the `end` line that counts them.
fn whole(body: &str) -> String {
    let text = format!("{HEAD}{body}");
    let lines = text.lines().count();
    format!("{text}end\t{lines}\n")
}

#[test]
fn every_record_reads_back() {
    let text = whole(
        "name\t0\t_Z4gemmv\n\
         kernel\t7\t200\t260\t0\t1\t7\t4\t1\t1\t128\t1\t1\t32\t0\t1024\t0\n\
         api\t7\t11\t100\t105\truntime\t211\n\
         range\t1\tpush-pop\t11\t50\t300\t-\tstep\\tone\n\
         range\t2\tstart-end\t11\t60\t-\tLLM\t\\-\n",
    );
    let t = parse_text(&text).unwrap();
    assert_eq!((t.pid, t.process_name.as_str()), (42, "python3"));
    assert_eq!(t.names, ["_Z4gemmv"]);
    let k = &t.kernels[0];
    assert_eq!(t.shape(k).grid, [4, 1, 1]);
    assert_eq!(t.shape(k).dynamic_shared, 1024);
    assert_eq!(t.name(k), "_Z4gemmv");
    assert_eq!(k.duration_ns(), 60.0);
    assert_eq!(
        k.launch,
        Some(Launch {
            thread: 11,
            start: 100
        })
    );
    let name = |r: &Range| r.name.map(|n| t.text(n));
    assert_eq!(name(&t.ranges[0]), Some("step\tone"));
    assert_eq!(t.ranges[0].domain, None);
    assert_eq!(t.ranges[1].kind, RangeKind::StartEnd);
    assert_eq!(t.ranges[1].end, None);
    assert_eq!(t.ranges[1].domain.map(|d| t.text(d)), Some("LLM"));
    assert_eq!(name(&t.ranges[1]), Some("-"), "an escaped dash is a name");
    assert_eq!(t.partial, None);
}

#[test]
fn malformed_lines_name_the_line_and_field() {
    let cases = [
        ("garbage\n", 1, "expected `profile-run-cupti-trace"),
        ("", 1, "the file is empty"),
        (
            &format!("{HEAD}kernel\t7\t200\n") as &str,
            3,
            "has no field 16 (name index)",
        ),
        (
            &format!("{HEAD}api\tx\t1\t2\t3\truntime\t1\n"),
            3,
            "field 1 (correlation id) is \"x\"",
        ),
        (&format!("{HEAD}api\t1\t1\t2\n"), 3, "has no field 6 (cbid)"),
        (
            &format!("{HEAD}name\t1\tk\n"),
            3,
            "name index 1 out of order (expected 0)",
        ),
        (
            &format!("{HEAD}range\t1\tnested\t1\t2\t3\t-\ta\n"),
            3,
            "neither push-pop",
        ),
        (
            &format!("{HEAD}kernel\t7\t2\t3\t0\t1\t7\t4\t1\t1\t1\t1\t1\t32\t0\t0\t5\n"),
            3,
            "only 0 names",
        ),
        (&format!("{HEAD}memcpy\t1\n"), 3, "unknown record `memcpy`"),
        ("profile-run-cupti-trace\t2\n", 1, "no `process` line"),
        (
            &format!("{HEAD}end\t2\nname\t0\tk\n"),
            4,
            "a record after the `end` line (line 3)",
        ),
        (
            &format!("{HEAD}end\t9\n"),
            3,
            "field 1 (lines before it) is 9, but 2 lines precede it",
        ),
    ];
    for (text, line, what) in cases {
        let e = parse_text(text).unwrap_err().to_string();
        assert!(e.starts_with(&format!("t.trace:{line}: ")), "{e}");
        assert!(e.contains(what), "{e}");
    }
    let bytes = [HEAD.as_bytes(), b"name\t0\tk\xff\n"].concat();
    let e = parse(&bytes[..], Path::new("t.trace"))
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("t.trace:3: not UTF-8 text (byte 9 of the line)"),
        "{e}"
    );
}

#[test]
fn a_range_ending_before_it_starts_or_a_kernel_lasting_2_64_ns_is_refused() {
    let long = u64::MAX;
    let cases = [
        (
            "range\t1\tpush-pop\t1\t500\t400\t-\ta\n".to_string(),
            "field 5 (end) is 400, before the range's start (field 4, 500)",
        ),
        (
            format!("range\t1\tstart-end\t1\t0\t{long}\t-\ta\n"),
            "field 5 (end) is 18446744073709551615: the range would last",
        ),
        (
            format!("name\t0\tk\nkernel\t7\t0\t{long}\t0\t1\t7\t4\t1\t1\t128\t1\t1\t32\t0\t0\t0\n"),
            "field 3 (end) is 18446744073709551615: the kernel would last 18446744073709551615 ns, more than 2^53 ns",
        ),
    ];
    for (body, what) in cases {
        let e = parse_text(&whole(&body)).unwrap_err().to_string();
        assert!(e.starts_with("t.trace:"), "{e}");
        assert!(e.contains(what), "{e}");
    }
}

#[test]
fn a_kernel_cupti_handed_over_unfinished_is_left_out_and_counted() {
    let text = whole(
        "name\t0\tk\n\
         kernel\t7\t200\t100\t0\t1\t7\t4\t1\t1\t128\t1\t1\t32\t0\t0\t0\n\
         kernel\t8\t300\t400\t0\t1\t7\t4\t1\t1\t128\t1\t1\t32\t0\t0\t0\n",
    );
    let t = parse_text(&text).unwrap();
    assert_eq!(t.unfinished, 1);
    assert_eq!(t.kernels.len(), 1);
    assert_eq!(t.kernels[0].correlation, 8);
}

#[test]
fn a_trace_cut_at_a_line_boundary_or_mid_line_is_partial() {
    let text = whole("name\t0\tk\nkernel\t7\t200\t260\t0\t1\t7\t4\t1\t1\t128\t1\t1\t32\t0\t0\t0\n");
    assert_eq!(parse_text(&text).unwrap().partial, None);
    let end = text.find("end\t").unwrap();
    let at_boundary = parse_text(&text[..end]).unwrap();
    let why = at_boundary
        .partial
        .expect("a trace without its end line is partial");
    assert!(
        why.contains("t.trace does not end with the writer's `end` line"),
        "{why}"
    );
    assert_eq!(at_boundary.kernels.len(), 1, "what was read is kept");
    let mid_kernel = parse_text(&text[..end - 5]).unwrap();
    assert!(mid_kernel.kernels.is_empty(), "the cut line is not read");
    let why = mid_kernel.partial.unwrap();
    assert!(why.contains("in the middle of line 4"), "{why}");
    // Version 1 had no end line: a whole one is not partial, a cut one still is.
    let v1 = text[..end].replace("trace\t2", "trace\t1");
    assert_eq!(parse_text(&v1).unwrap().partial, None);
    assert!(parse_text(&v1[..v1.len() - 3]).unwrap().partial.is_some());
}

#[test]
fn launches_join_by_correlation_and_order_the_kernels() {
    let text = whole(
        "name\t0\tk\n\
         kernel\t7\t900\t950\t0\t1\t7\t4\t1\t1\t128\t1\t1\t32\t0\t0\t0\n\
         kernel\t8\t100\t150\t0\t1\t7\t4\t1\t1\t128\t1\t1\t32\t0\t0\t0\n\
         kernel\t9\t500\t550\t0\t1\t7\t4\t1\t1\t128\t1\t1\t32\t0\t0\t0\n\
         api\t7\t3\t50\t60\truntime\t211\n\
         api\t9\t3\t40\t45\truntime\t211\n\
         api\t9\t4\t70\t75\truntime\t211\n",
    );
    let t = parse_text(&text).unwrap();
    let order: Vec<(u32, u64)> = t
        .kernels
        .iter()
        .map(|k| (k.correlation, k.launched_at()))
        .collect();
    assert_eq!(
        order,
        [(7, 50), (9, 70), (8, 100)],
        "a repeated call keeps its last"
    );
    assert_eq!(t.shapes.len(), 1, "one launch key, kept once");
}

#[test]
fn an_endless_line_is_refused_at_the_limit() {
    let endless = std::io::repeat(0).take(MAX_LINE_BYTES as u64 + 10);
    let input = std::io::BufReader::new(HEAD.as_bytes().chain(endless));
    let e = parse(input, Path::new("t.trace")).unwrap_err().to_string();
    assert!(
        e.starts_with("t.trace:3: the line is longer than 64 MiB"),
        "{e}"
    );
}

/// `body` after a version 3 head, then its `end` line.
fn whole_v3(body: &str) -> String {
    whole(body).replacen("trace\t2", "trace\t3", 1)
}

#[test]
fn in_process_counters_read_back_and_join_their_kernels() {
    let text = whole_v3(
        "name\t0\tk\n\
         kernel\t8\t300\t400\t0\t1\t7\t4\t1\t1\t128\t1\t1\t32\t0\t0\t0\n\
         kernel\t7\t0\t0\t0\t1\t7\t4\t1\t1\t128\t1\t1\t32\t0\t0\t0\n\
         api\t7\t3\t50\t60\truntime\t211\n\
         api\t8\t3\t250\t260\truntime\t211\n\
         deep-set\t0\tGH100\t9\n\
         metric\t0\tsm__throughput.avg.pct_of_peak_sustained_elapsed\n\
         metric\t1\tdram__bytes.sum\n\
         profiled\t7\t1\t204000000\n\
         value\t7\t0\t0\t38.5\n\
         value\t7\t0\t1\t1048576\n\
         profiled\t9\t0\t1000\n\
         deep-error\tlaunch 9: CUPTI measured no kernel in it\n",
    );
    let t = parse_text(&text).unwrap();
    let c = &t.counters;
    assert_eq!(
        c.metrics,
        [
            "sm__throughput.avg.pct_of_peak_sustained_elapsed",
            "dram__bytes.sum"
        ]
    );
    assert_eq!(
        c.chips,
        [ChipPasses {
            device: 0,
            chip: "GH100".into(),
            passes: 9
        }]
    );
    assert_eq!(c.launches.len(), 2);
    let gemm = &c.launches[0];
    assert_eq!((gemm.correlation, gemm.cost_ns), (7, 204_000_000));
    assert_eq!(gemm.values, [[Some(38.5), Some(1_048_576.0)]]);
    let kernel = &t.kernels[gemm.kernel.expect("joined by correlation id")];
    assert_eq!((kernel.correlation, kernel.duration_ns()), (7, 0.0));
    assert_eq!(t.kernels[0].correlation, 7, "kernels in launch order");
    assert_eq!(
        (c.launches[1].values.len(), c.launches[1].kernel),
        (0, None)
    );
    assert_eq!(c.errors, ["launch 9: CUPTI measured no kernel in it"]);
    let none = parse_text(&whole("name\t0\tk\n")).unwrap();
    assert_eq!(
        none.counters,
        InProcessCounters::default(),
        "a version 2 trace has none"
    );
}

#[test]
fn bad_counter_lines_name_the_line_and_what_is_wrong() {
    let metric = "metric\t0\tdram__bytes.sum\n";
    let cases = [
        (
            format!("{metric}value\t7\t0\t0\t1\n"),
            4,
            "a value of launch 7, which no `profiled` line before it names",
        ),
        (
            "metric\t1\tx.sum\n".to_string(),
            3,
            "metric index 1 out of order (expected 0)",
        ),
        (
            format!("{metric}profiled\t7\t1\t5\nvalue\t7\t1\t0\t1\n"),
            5,
            "field 2 (range) is 1, but launch 7 measured 1 kernels",
        ),
        (
            format!("{metric}profiled\t7\t1\t5\nvalue\t7\t0\t1\t1\n"),
            5,
            "field 3 (metric index) is 1, but only 1 metrics precede it",
        ),
        (
            format!("{metric}profiled\t7\t1\t5\nvalue\t7\t0\t0\t1\nvalue\t7\t0\t0\t2\n"),
            6,
            "launch 7 range 0 metric 0 is given twice",
        ),
        (
            format!("{metric}profiled\t7\t1\t5\nprofiled\t7\t1\t5\n"),
            5,
            "launch 7 is profiled twice",
        ),
        (
            format!("{metric}profiled\t7\t1\t5\nvalue\t7\t0\t0\tNaN\n"),
            5,
            "a counter value is a finite number",
        ),
    ];
    for (body, line, what) in cases {
        let e = parse_text(&whole_v3(&body)).unwrap_err().to_string();
        assert!(e.starts_with(&format!("t.trace:{line}: ")), "{e}");
        assert!(e.contains(what), "{e}");
    }
    let e = parse_text(&whole(metric)).unwrap_err().to_string();
    assert!(
        e.contains("t.trace:3: an in-process counter record in a version 2 trace"),
        "{e}"
    );
}

/// A real trace from an H200 (tests/fixtures/ncu/h200-2025.3.1-inprocess/README.md): one GEMM kernel
/// (same name, grid and block) in two regions with two problem sizes, profiled in process.
#[test]
fn a_real_in_process_trace_holds_every_profiled_launch_and_its_kernel() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/ncu/h200-2025.3.1-inprocess/two_sizes.inprocess.cupti.625.trace.gz");
    let t = read(&path).unwrap();
    let c = &t.counters;
    assert_eq!(
        (t.kernels.len(), c.launches.len(), c.metrics.len()),
        (145, 66, 10)
    );
    assert_eq!((c.chips[0].chip.as_str(), c.chips[0].passes), ("GH100", 9));
    assert!(c.errors.is_empty(), "{:?}", c.errors);
    let sm = c
        .metrics
        .iter()
        .position(|m| m == "sm__throughput.avg.pct_of_peak_sustained_elapsed")
        .unwrap();
    let mut profiled = std::collections::BTreeSet::new();
    let mut gemm = Vec::new();
    for launch in &c.launches {
        let k = &t.kernels[launch
            .kernel
            .expect("every profiled launch has its kernel record")];
        assert_eq!(
            k.duration_ns(),
            0.0,
            "a profiled launch's kernel record has no duration"
        );
        assert!(launch.values[0].iter().all(Option::is_some));
        profiled.insert(launch.kernel.unwrap());
        if t.name(k).starts_with("nvjet_sm90") {
            gemm.push(launch.values[0][sm].unwrap());
        }
    }
    let unprofiled_timed = (0..t.kernels.len())
        .filter(|at| !profiled.contains(at))
        .all(|at| t.kernels[at].duration_ns() > 0.0);
    assert!(
        unprofiled_timed,
        "every other kernel keeps its in-place time"
    );
    // One launch key, two regions of different work: the samples fall into two groups far apart,
    // which a sample per key alone would have merged.
    gemm.sort_by(f64::total_cmp);
    let gap = gemm.windows(2).map(|w| w[1] - w[0]).fold(0.0, f64::max);
    let spread = |g: &[f64]| g.last().unwrap() - g.first().unwrap();
    let split = gemm.windows(2).position(|w| w[1] - w[0] == gap).unwrap() + 1;
    assert_eq!(gemm.len(), 19);
    assert!(gap > 10.0, "{gemm:?}");
    assert!(
        spread(&gemm[..split]) < 2.0 && spread(&gemm[split..]) < 2.0,
        "{gemm:?}"
    );

    // KV-cache decode, µs-scale kernels: every profiled launch joined too, none empty.
    let decode = read(&path.with_file_name("decode.inprocess.cupti.595.trace.gz")).unwrap();
    let c = &decode.counters;
    assert_eq!((decode.kernels.len(), c.launches.len()), (297, 117));
    assert!(c
        .launches
        .iter()
        .all(|l| l.kernel.is_some() && l.values.len() == 1));
}

/// Real traces of `tests/manual/cupti/cuda_graph_step.py 6` with in-process counters on an H200: a
/// graph launch profiled (`PROFILE_RUN_DEEP_GRAPHS=1`) measures no kernel and leaves every later
/// profiled launch on the context empty too; with graph launches left alone every profiled launch
/// holds its kernel, and no graph node kernel (they share the graph launch's correlation id) is one.
#[test]
fn real_graph_traces_show_what_in_process_counters_do_with_cuda_graphs() {
    let dir =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/ncu/h200-2025.3.1-inprocess");
    let on = read(&dir.join("graph.graphs-on.cupti.911.trace.gz")).unwrap();
    let empty: Vec<bool> = on
        .counters
        .launches
        .iter()
        .map(|l| l.values.is_empty())
        .collect();
    assert_eq!((empty.len(), empty.iter().filter(|e| **e).count()), (22, 9));
    let first_empty = empty.iter().position(|e| *e).unwrap();
    assert!(
        empty[first_empty..].iter().all(|e| *e),
        "after the first graph launch, nothing: {empty:?}"
    );
    assert_eq!(on.counters.errors.len(), 9);
    assert!(on.counters.errors[0].ends_with("CUPTI measured no kernel in it"));

    let off = read(&dir.join("graph.graphs-off.cupti.945.trace.gz")).unwrap();
    let mut per_correlation = std::collections::HashMap::new();
    for k in &off.kernels {
        *per_correlation.entry(k.correlation).or_insert(0) += 1;
    }
    assert!(
        per_correlation.values().any(|n| *n > 1),
        "graph node kernels share an id"
    );
    assert_eq!(off.counters.launches.len(), 19);
    for launch in &off.counters.launches {
        assert_eq!(
            per_correlation[&launch.correlation], 1,
            "a graph node kernel was profiled"
        );
        assert!(launch.kernel.is_some() && launch.values.len() == 1);
    }
}
