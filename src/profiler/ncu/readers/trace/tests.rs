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
