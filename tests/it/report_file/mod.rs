//! The native `.ncu-rep` reader on the real report files of tests/fixtures/ncu/h100-2025.3.1-pytorch:
//! against the CSV pages ncu exported from the same files, on what only the file holds (thread ids,
//! range instance ids, Python stacks), on damaged bytes, and against NVIDIA's own reader.

mod against_csv;
mod facts;
mod hardening;
mod ncu_report;

use std::collections::BTreeMap;
use std::path::PathBuf;

use profile_run::profiler::ncu::readers::report_file::{
    CallFrame, NvtxState, RecordedValue, ReportFile, ReportFileError, ResultKind, RuleResult,
};

use crate::common::fixture;

pub const FIXTURES: [&str; 8] = [
    "emit_nvtx",
    "nccl_one_rank",
    "rep_apprange",
    "rep_kernel",
    "rep_multiproc",
    "rep_pystack",
    "rep_range",
    "rep_start_end",
];

pub fn report_path(name: &str) -> PathBuf {
    fixture(&format!("ncu/h100-2025.3.1-pytorch/{name}.ncu-rep.gz"))
}

/// A metric value copied out of the borrowed record.
#[derive(Debug, Clone, PartialEq)]
pub enum Val {
    Num(f64),
    Str(String),
    Missing,
}

/// What the tests compare, copied out of each visited record.
#[derive(Debug, Clone)]
pub struct Decoded {
    pub index: u64,
    pub kind: ResultKind,
    pub thread_id: u32,
    pub pid: u32,
    pub process_name: Option<String>,
    pub host: Option<String>,
    pub kernel: Option<(String, String, String)>,
    pub grid: Option<[u64; 3]>,
    pub block: Option<[u64; 3]>,
    pub device: Option<u64>,
    pub context: Option<u32>,
    pub stream: Option<u32>,
    pub metrics: BTreeMap<String, Val>,
    /// The stored type of each metric (`double`, `uint64`, …).
    pub metric_types: BTreeMap<String, &'static str>,
    pub nvtx: Option<NvtxState>,
    pub rules: Vec<RuleResult>,
    pub python_stack: Option<Vec<CallFrame>>,
}

pub fn decode(name: &str) -> Vec<Decoded> {
    let mut report = ReportFile::open(&report_path(name)).unwrap();
    assert_eq!(report.version(), 7);
    let mut out = Vec::new();
    report
        .for_each_result(|r| {
            let mut metrics = BTreeMap::new();
            let mut metric_types = BTreeMap::new();
            for m in r.metrics() {
                let m = m.map_err(|e| r.err(e))?;
                metric_types.insert(m.name.to_owned(), m.value.type_name());
                let v = match m.value {
                    RecordedValue::String(s) => Val::Str(s.to_owned()),
                    RecordedValue::Missing => Val::Missing,
                    v => Val::Num(v.as_f64().unwrap()),
                };
                metrics.insert(m.name.to_owned(), v);
            }
            out.push(Decoded {
                index: r.index,
                kind: r.kind,
                thread_id: r.thread_id,
                pid: r.process.id,
                process_name: r.process.name().map(str::to_owned),
                host: r.process.host.clone(),
                kernel: r.kernel.map(|k| {
                    (
                        k.display().to_owned(),
                        k.function.to_owned(),
                        k.mangled.to_owned(),
                    )
                }),
                grid: r.grid_size,
                block: r.block_size,
                device: r.device_id()?,
                context: r.context_id,
                stream: r.stream_id,
                metrics,
                metric_types,
                nvtx: r.nvtx()?,
                rules: r.rule_results()?,
                python_stack: r.python_stack()?,
            });
            Ok::<_, ReportFileError>(())
        })
        .unwrap();
    out
}
