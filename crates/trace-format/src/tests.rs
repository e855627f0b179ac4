//! Every record written and read back, and the errors that name a bad line's field.

use std::borrow::Cow;

use super::*;

fn kernel() -> Kernel {
    Kernel {
        correlation: 7,
        start: 200,
        end: 260,
        device: 0,
        context: 1,
        stream: 7,
        grid: [4, 1, 1],
        block: [128, 1, 1],
        registers: 32,
        static_shared: 0,
        dynamic_shared: 1024,
        name: 0,
    }
}

fn records() -> Vec<Record<'static>> {
    vec![
        Record::Process(Process {
            pid: 42,
            host: "node\t1".into(),
            name: "-".into(),
            libcupti: "C:\\cuda\\libcupti.so".into(),
            rank: Some(3),
            world_size: Some(8),
        }),
        Record::Name(Name {
            index: 0,
            name: "_Z4gemmPf".into(),
        }),
        Record::Kernel(kernel()),
        Record::Api(Api {
            correlation: 7,
            thread: 11,
            start: 100,
            end: 105,
            kind: ApiKind::Driver,
            cbid: 307,
        }),
        Record::Range(Range {
            id: 1,
            kind: RangeKind::PushPop,
            thread: 11,
            start: 50,
            end: Some(300),
            domain: None,
            name: Some("step\none\r\\".into()),
        }),
        Record::Range(Range {
            id: 2,
            kind: RangeKind::StartEnd,
            thread: 11,
            start: 60,
            end: None,
            domain: Some("-".into()),
            name: Some(Cow::Borrowed("")),
        }),
        Record::DeepSet(DeepSet {
            device: 0,
            chip: "GH100".into(),
            passes: 9,
        }),
        Record::Metric(Metric {
            index: 0,
            name: "sm__throughput.avg.pct_of_peak_sustained_elapsed".into(),
        }),
        Record::Profiled(Profiled {
            correlation: 7,
            ranges: 1,
            cost_ns: 204_000_000,
        }),
        Record::Value(Value {
            correlation: 7,
            range: 0,
            metric: 0,
            value: 38.612_345_678_901_23,
        }),
        Record::DeepError(DeepError {
            text: "metric\tx is unknown".into(),
        }),
        Record::End(End { lines: 12 }),
    ]
}

#[test]
fn every_record_is_one_line_that_reads_back_as_written() {
    let mut text = String::new();
    write_header(&mut text);
    for record in records() {
        record.write(&mut text);
    }
    let mut lines = text.lines();
    check_header(lines.next().unwrap()).unwrap();
    let read: Vec<Record> = lines.map(|l| Record::parse(l).unwrap()).collect();
    assert_eq!(read, records());
    assert_eq!(text.lines().count(), 1 + records().len());
}

#[test]
fn the_bytes_are_version_three_as_documented() {
    let mut text = String::new();
    write_header(&mut text);
    for record in records() {
        record.write(&mut text);
    }
    assert_eq!(
        text,
        "profile-run-cupti-trace\t3\n\
         process\t42\tnode\\t1\t\\-\tC:\\\\cuda\\\\libcupti.so\t3\t8\n\
         name\t0\t_Z4gemmPf\n\
         kernel\t7\t200\t260\t0\t1\t7\t4\t1\t1\t128\t1\t1\t32\t0\t1024\t0\n\
         api\t7\t11\t100\t105\tdriver\t307\n\
         range\t1\tpush-pop\t11\t50\t300\t-\tstep\\none\\r\\\\\n\
         range\t2\tstart-end\t11\t60\t-\t\\-\t\n\
         deep-set\t0\tGH100\t9\n\
         metric\t0\tsm__throughput.avg.pct_of_peak_sustained_elapsed\n\
         profiled\t7\t1\t204000000\n\
         value\t7\t0\t0\t38.61234567890123\n\
         deep-error\tmetric\\tx is unknown\n\
         end\t12\n"
    );
}

#[test]
fn a_bad_line_names_its_field() {
    let cases = [
        (
            "kernel\t7\t200",
            "`kernel` line has no field 16 (name index)",
        ),
        (
            "api\tx\t1\t2\t3\truntime\t1",
            "field 1 (correlation id) is \"x\", not a number",
        ),
        (
            "api\t1\t1\t2\t3\tdevice\t1",
            "field 5 (kind) is \"device\", neither runtime nor driver",
        ),
        (
            "api\t99999999999\t1\t2\t3\truntime\t1",
            "field 1 (correlation id) is \"99999999999\", out of range",
        ),
        (
            "range\t1\tnested\t1\t2\t3\t-\ta",
            "field 2 (kind) is \"nested\", neither push-pop nor start-end",
        ),
        (
            "range\t1\tpush-pop\t1\t2\tlater\t-\ta",
            "field 5 (end) is \"later\"",
        ),
        (
            "kernel\t7\t2\t3\t0\t1\t7\t-4\t1\t1\t1\t1\t1\t32\t0\t0\t0",
            "field 7 (grid x) is -4, and a count is never negative",
        ),
        ("memcpy\t1", "unknown record `memcpy`"),
        ("value\t7\t0\t0", "`value` line has no field 4 (value)"),
        (
            "value\t7\t0\t0\tNaN",
            "field 4 (value) is NaN, and a counter value is a finite number",
        ),
        (
            "value\t7\t0\t0\tinf",
            "field 4 (value) is inf, and a counter value is a finite number",
        ),
        (
            "value\t7\t0\t0\t12%",
            "field 4 (value) is \"12%\", not a number",
        ),
        ("profiled\t7\t1", "`profiled` line has no field 3 (cost ns)"),
        ("deep-set\t0\tGH100\tnine", "field 3 (passes) is \"nine\""),
        ("end", "`end` line has no field 1 (lines before it)"),
        (
            "end\t-1",
            "field 1 (lines before it) is \"-1\", out of range",
        ),
        ("", "unknown record ``"),
    ];
    for (line, what) in cases {
        let e = Record::parse(line).unwrap_err().to_string();
        assert!(e.contains(what), "{line:?}: {e}");
    }
}

#[test]
fn the_header_names_a_wrong_version() {
    assert_eq!(check_header("profile-run-cupti-trace\t1"), Ok(1));
    assert_eq!(check_header("profile-run-cupti-trace\t2\tlater"), Ok(2));
    assert_eq!(check_header("profile-run-cupti-trace\t3"), Ok(3));
    for version in ["4", "0", "x"] {
        let e = check_header(&format!("profile-run-cupti-trace\t{version}"))
            .unwrap_err()
            .0;
        assert!(
            e.contains(&format!("version \"{version}\"")) && e.contains("versions 1 to 3"),
            "{e}"
        );
    }
    for line in ["garbage", "profile-run-cupti-trace", ""] {
        let e = check_header(line).unwrap_err().0;
        assert!(
            e.starts_with("expected `profile-run-cupti-trace<TAB>3`"),
            "{e}"
        );
    }
}

#[test]
fn fields_past_a_records_last_are_ignored() {
    let line = "api\t7\t11\t100\t105\truntime\t211\tlater";
    let Record::Api(api) = Record::parse(line).unwrap() else {
        panic!("not an api record")
    };
    assert_eq!(
        (api.correlation, api.kind, api.cbid),
        (7, ApiKind::Runtime, 211)
    );
}

proptest::proptest! {
    /// Every finite counter value reads back as the same number.
    #[test]
    fn any_finite_value_round_trips(value in proptest::num::f64::NORMAL | proptest::num::f64::SUBNORMAL | proptest::num::f64::ZERO) {
        let written = Record::Value(Value { correlation: 1, range: 2, metric: 3, value });
        let mut text = String::new();
        written.write(&mut text);
        proptest::prop_assert_eq!(Record::parse(text.trim_end_matches('\n')).unwrap(), written);
    }

    /// Any texts, control characters, backslashes and lone dashes included, come back as written,
    /// and a record stays one line.
    #[test]
    fn any_text_round_trips(
        domain in proptest::option::of("(-|\\\\|\t|\n|\r|.){0,12}"),
        name in proptest::option::of("(-|\\\\|\t|\n|\r|.){0,12}"),
        host in "(-|\\\\|\t|\n|\r|.){0,12}",
        end in proptest::option::of(0u64..u64::MAX),
    ) {
        let written = vec![
            Record::Process(Process {
                pid: 1,
                host: host.as_str().into(),
                name: "p".into(),
                libcupti: "l".into(),
                rank: None,
                world_size: None,
            }),
            Record::Range(Range {
                id: 3,
                kind: RangeKind::StartEnd,
                thread: 4,
                start: 5,
                end,
                domain: domain.as_deref().map(Cow::Borrowed),
                name: name.as_deref().map(Cow::Borrowed),
            }),
        ];
        let mut text = String::new();
        for record in &written {
            record.write(&mut text);
        }
        proptest::prop_assert_eq!(text.lines().count(), written.len());
        let read: Vec<Record> = text.lines().map(|l| Record::parse(l).unwrap()).collect();
        proptest::prop_assert_eq!(read, written);
    }
}

#[test]
fn a_process_line_from_before_the_rank_fields_reads_with_no_rank() {
    let Record::Process(p) = Record::parse("process\t7\thost\tpython\tlibcupti.so.13").unwrap()
    else {
        panic!("not a process line");
    };
    assert_eq!((p.rank, p.world_size), (None, None));
    let Record::Process(p) = Record::parse("process\t7\thost\tpython\tl\t2\t4").unwrap() else {
        panic!("not a process line");
    };
    assert_eq!((p.rank, p.world_size), (Some(2), Some(4)));
    let Record::Process(p) = Record::parse("process\t7\thost\tpython\tl\t-\t-").unwrap() else {
        panic!("not a process line");
    };
    assert_eq!((p.rank, p.world_size), (None, None));
    let err = Record::parse("process\t7\thost\tpython\tl\ttwo").unwrap_err();
    assert!(err.to_string().contains("field 5 (rank)"), "{err}");
}
