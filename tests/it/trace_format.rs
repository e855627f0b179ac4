//! The trace format end to end: what the injection library's writer renders, profile-run's reader reads
//! back field for field (escaped text included), and the committed real H100 traces are re-written
//! byte for byte by the one format definition both use.

use std::io::{Read, Write};
use std::path::Path;

use cupti_trace::trace::{ApiCall, ApiKind, Kernel, Range, Trace};
use profile_run::profiler::ncu::readers::trace::{self as reader, Launch, RangeKind};

use crate::common::fixture;

fn kernel(correlation: u32, start: u64, name: u32) -> Kernel {
    Kernel {
        correlation,
        start,
        end: start + 40,
        device: 1,
        context: 3,
        stream: 13,
        grid: [108, 2, 1],
        block: [256, 1, 1],
        registers: 168,
        static_shared: 49152,
        dynamic_shared: 0,
        name,
    }
}

fn range(id: u32, start: u64, domain: Option<&str>, name: Option<&str>) -> Range {
    Range {
        id,
        thread: 77,
        start,
        end: None,
        domain: domain.map(str::to_string),
        name: name.map(str::to_string),
    }
}

/// A trace with every record kind and every text the escaping must carry: tab, newline, carriage
/// return, backslash, a lone `-`, an empty text and missing values.
fn written() -> Trace {
    let mut t = Trace::default();
    let gemm = t.name("_Z4gemmILi128EEvPKfS1_Pf");
    let odd = t.name("kernel\twith\\odd\nname");
    t.kernel(kernel(5, 1_000, gemm));
    t.kernel(kernel(6, 2_000, odd));
    for (correlation, kind) in [
        (5, ApiKind::Runtime),
        (6, ApiKind::Driver),
        (9, ApiKind::Runtime),
    ] {
        t.api(ApiCall {
            correlation,
            thread: 77,
            start: u64::from(correlation) * 100,
            end: u64::from(correlation) * 100 + 7,
            kind,
            cbid: 211,
        });
    }
    t.range_start(range(1, 900, None, Some("step\t1\nof\r2 \\ done")));
    t.range_start(range(2, 950, Some("-"), Some("-")));
    t.range_start(range(3, 960, Some("LLM"), None));
    t.range_start(range(4, 970, Some(""), Some("")));
    t.start_end(3);
    t.range_end(1, 2_500);
    t.range_end(3, 2_100);
    t
}

fn gzip(text: &str) -> Vec<u8> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    encoder.write_all(text.as_bytes()).unwrap();
    encoder.finish().unwrap()
}

#[test]
fn what_the_writer_renders_the_reader_reads_back_field_for_field() {
    let who = cupti_trace::trace::Who {
        pid: 4242,
        host: "node\t7".into(),
        process: "-".into(),
        rank: Some(5),
        world_size: Some(16),
    };
    let text = written().render(&who, "/opt/cuda\\lib/libcupti.so.13");
    let tmp = tempfile::tempdir().unwrap();
    let plain = tmp.path().join("cupti.4242.trace");
    let packed = tmp.path().join("cupti.4242.trace.gz");
    std::fs::write(&plain, &text).unwrap();
    std::fs::write(&packed, gzip(&text)).unwrap();
    for path in [&plain, &packed] {
        let read = reader::read(path).unwrap();
        assert_eq!(read.path, *path);
        assert_eq!(read.pid, 4242);
        assert_eq!(read.host, "node\t7");
        assert_eq!(read.process_name, "-", "a process named `-` is a name");
        assert_eq!(read.libcupti, "/opt/cuda\\lib/libcupti.so.13");
        assert_eq!(read.rank, Some(5));
        assert_eq!(
            read.names,
            ["_Z4gemmILi128EEvPKfS1_Pf", "kernel\twith\\odd\nname"]
        );
        let kernels: Vec<_> = read
            .kernels
            .iter()
            .map(|k| (k.correlation, k.start, k.end, k.device, k.stream))
            .collect();
        assert_eq!(
            kernels,
            [(5, 1_000, 1_040, 1, 13), (6, 2_000, 2_040, 1, 13)]
        );
        let names: Vec<&str> = read.kernels.iter().map(|k| read.name(k)).collect();
        assert_eq!(
            names,
            ["_Z4gemmILi128EEvPKfS1_Pf", "kernel\twith\\odd\nname"]
        );
        let k = read.shape(&read.kernels[0]);
        assert_eq!(
            (k.grid, k.block, k.registers),
            ([108, 2, 1], [256, 1, 1], 168)
        );
        assert_eq!((k.static_shared, k.dynamic_shared), (49152, 0));
        let launches: Vec<_> = read.kernels.iter().map(|k| k.launch).collect();
        assert_eq!(
            launches,
            [
                Some(Launch {
                    thread: 77,
                    start: 500
                }),
                Some(Launch {
                    thread: 77,
                    start: 600
                })
            ],
            "each kernel has the call with its correlation id"
        );
        assert_eq!(
            read.partial, None,
            "the writer's trace ends with its end line"
        );
        assert_ranges_read_back(&read);
    }
}

/// The writer's four ranges, as the reader gives them back: escaped names, a `-` that is a name, an
/// empty domain and name, a start/end range in its domain.
fn assert_ranges_read_back(read: &reader::ProcessTrace) {
    let ranges: Vec<_> = read
        .ranges
        .iter()
        .map(|r| {
            (
                r.id,
                r.kind,
                r.thread,
                r.start,
                r.end,
                r.domain.map(|d| read.text(d)),
                r.name.map(|n| read.text(n)),
            )
        })
        .collect();
    assert_eq!(
        ranges,
        [
            (
                1,
                RangeKind::PushPop,
                77,
                900,
                Some(2_500),
                None,
                Some("step\t1\nof\r2 \\ done")
            ),
            (2, RangeKind::PushPop, 77, 950, None, Some("-"), Some("-")),
            (
                3,
                RangeKind::StartEnd,
                77,
                960,
                Some(2_100),
                Some("LLM"),
                None
            ),
            (4, RangeKind::PushPop, 77, 970, None, Some(""), Some("")),
        ]
    );
}

#[test]
fn the_real_traces_are_rewritten_byte_for_byte_by_the_one_format() {
    let dir = fixture("ncu/h100-2025.3.1-cupti");
    let mut traces: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".trace.gz"))
        .collect();
    traces.sort();
    assert!(traces.len() >= 5, "{traces:?}");
    for path in &traces {
        let text = gunzip(path);
        let mut lines = text.lines();
        let version = trace_format::check_header(lines.next().unwrap()).unwrap();
        assert_eq!(version, 1, "recorded before the end line was written");
        let mut again = format!("{}\t{version}\n", trace_format::MAGIC);
        for line in lines {
            let record = trace_format::Record::parse(line)
                .unwrap_or_else(|e| panic!("{}: {line:?}: {e}", path.display()));
            record.write(&mut again);
        }
        assert!(
            again == text,
            "{} is not rewritten as it was",
            path.display()
        );
    }
}

/// A gzipped fixture's text.
pub(crate) fn gunzip(path: &Path) -> String {
    let mut text = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(path).unwrap())
        .read_to_string(&mut text)
        .unwrap();
    text
}
