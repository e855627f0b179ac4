//! One result of a report file as profile-run sees it: the launch facts decoded eagerly (they are a few
//! varints and short strings), metrics, NVTX state, rule results and call stacks decoded on demand from
//! the result's bytes, which stay borrowed from the block buffer until the visitor returns.

use std::path::Path;

use super::error::ReportFileError;
use super::metrics::{Metric, MetricIter};
use super::nvtx::NvtxState;
use super::rules::RuleResult;
use super::stack::CallFrame;
use super::strings::StringTable;
use super::wire::{Cursor, WireError};

/// What kind of workload a result measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ResultKind {
    /// One kernel launch (kernel replay, application replay).
    Kernel,
    /// One range (`--replay-mode range` or `app-range`): the kernels between a range's start and end.
    Range,
    /// One command list.
    Cmdlist,
    /// One CUDA graph launch (`--graph-profiling graph`).
    Graph,
}

impl ResultKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ResultKind::Kernel => "kernel",
            ResultKind::Range => "range",
            ResultKind::Cmdlist => "cmdlist",
            ResultKind::Graph => "graph",
        }
    }
}

/// The process a block of results came from (ncu writes it in every block header).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct ProcessInfo {
    pub id: u32,
    /// The executable as the file stores it (`/usr/bin/python3.12`).
    pub executable: Option<String>,
    pub host: Option<String>,
}

impl ProcessInfo {
    /// The executable's file name, as ncu prints it in the CSV's `Process Name` (`python3.12`).
    pub fn name(&self) -> Option<&str> {
        let exe = self.executable.as_deref()?;
        Some(exe.rsplit('/').next().unwrap_or(exe))
    }
}

/// A kernel's three names as the file stores them. `demangled` is empty for kernels without C++
/// mangling (cuBLAS' `sm80_xmma_…`); ncu then shows `function`. Note that ncu's CSV pages print a
/// shortened form of `demangled` (namespaces such as `native::` and casts such as `(int)` removed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KernelNames<'a> {
    pub mangled: &'a str,
    pub function: &'a str,
    pub demangled: &'a str,
}

impl<'a> KernelNames<'a> {
    /// The demangled name, or the function name when the file has no demangled one.
    pub fn display(&self) -> &'a str {
        if self.demangled.is_empty() {
            self.function
        } else {
            self.demangled
        }
    }
}

/// The field numbers of the parts profile-run reads; the four result messages number them differently.
#[derive(Debug)]
pub(crate) struct Layout {
    pub thread_id: u32,
    pub api_call_id: u32,
    pub metrics: u32,
    pub rules: u32,
    pub nvtx: u32,
    pub context_id: u32,
    pub stream_id: Option<u32>,
    pub cpu_stack: u32,
    pub python_stack: u32,
    /// The section layouts (`None` where the field is not known).
    pub sections: Option<u32>,
}

/// One result, in file order. Borrowed: copy out what must outlive the visitor call.
#[derive(Debug, Clone)]
pub struct ResultRecord<'a> {
    /// 0-based position among all results of the file (the CSV pages' `ID`).
    pub index: u64,
    pub kind: ResultKind,
    /// Absolute offset of the result's message in the (decompressed) file.
    pub offset: u64,
    pub process: &'a ProcessInfo,
    /// The OS thread that launched the kernel (or opened the range).
    pub thread_id: u32,
    pub api_call_id: u64,
    /// Present for kernel results.
    pub kernel: Option<KernelNames<'a>>,
    pub grid_size: Option<[u64; 3]>,
    pub block_size: Option<[u64; 3]>,
    pub context_id: Option<u32>,
    pub stream_id: Option<u32>,
    pub(crate) body: Cursor<'a>,
    pub(crate) layout: &'static Layout,
    pub(crate) strings: &'a StringTable,
    pub(crate) path: &'a Path,
}

impl<'a> ResultRecord<'a> {
    /// Every metric value of the result, in file order, named as in the raw CSV page's header.
    pub fn metrics(&self) -> MetricIter<'a> {
        MetricIter::new(self.body, self.layout.metrics, self.strings)
    }

    /// One metric by its full name (`gpu__time_duration.sum`); `Ok(None)` when the result lacks it.
    pub fn metric(&self, name: &str) -> Result<Option<Metric<'a>>, ReportFileError> {
        let Some(id) = self.strings.id_of(name) else {
            return Ok(None);
        };
        for m in self.metrics() {
            let m = m.map_err(|e| self.err(e))?;
            if m.name_id == id {
                return Ok(Some(m));
            }
        }
        Ok(None)
    }

    /// The metric as a number, `Ok(None)` when absent or not numeric.
    pub fn metric_f64(&self, name: &str) -> Result<Option<f64>, ReportFileError> {
        Ok(self.metric(name)?.and_then(|m| m.value.as_f64()))
    }

    /// The device the result ran on (`launch__device_id`, the CSV's `Device`).
    pub fn device_id(&self) -> Result<Option<u64>, ReportFileError> {
        Ok(self
            .metric("launch__device_id")?
            .and_then(|m| m.value.as_u64()))
    }

    /// The device attributes recorded with the result (`device__attribute_*` metrics).
    pub fn device_attributes(&self) -> impl Iterator<Item = Result<Metric<'a>, WireError>> + 'a {
        self.metrics().filter(|m| {
            m.as_ref()
                .map_or(true, |m| m.name.starts_with("device__attribute_"))
        })
    }

    /// The NVTX state ncu captured at the launch, with domain and registered-string names resolved.
    pub fn nvtx(&self) -> Result<Option<NvtxState>, ReportFileError> {
        match self.find(self.layout.nvtx).map_err(|e| self.err(e))? {
            Some(c) => super::nvtx::decode(c).map(Some).map_err(|e| self.err(e)),
            None => Ok(None),
        }
    }

    /// The rule results (the details page's `Rule …` columns), in file order.
    pub fn rule_results(&self) -> Result<Vec<RuleResult>, ReportFileError> {
        let mut out = Vec::new();
        let wanted = self.layout.rules;
        self.body
            .for_each(|f| {
                if f.number == wanted {
                    out.push(super::rules::decode(f.as_message()?)?);
                }
                Ok(())
            })
            .map_err(|e| self.err(e))?;
        Ok(out)
    }

    /// ncu's label of every metric the result's sections show, as (metric name, label), the first
    /// label given to a name kept; empty when the result holds no sections.
    pub fn section_labels(&self) -> Result<Vec<(String, String)>, ReportFileError> {
        let mut out = Vec::new();
        let Some(wanted) = self.layout.sections else {
            return Ok(out);
        };
        self.body
            .for_each(|f| {
                if f.number == wanted {
                    super::sections::collect_labels(f.as_message()?, &mut out);
                }
                Ok(())
            })
            .map_err(|e| self.err(e))?;
        Ok(out)
    }

    /// The Python call stack (`--call-stack-type python`), innermost frame first as ncu stores it;
    /// `None` when it was not captured.
    pub fn python_stack(&self) -> Result<Option<Vec<CallFrame>>, ReportFileError> {
        self.stack(self.layout.python_stack)
    }

    /// The native CPU call stack (`--call-stack`), `None` when not captured.
    pub fn cpu_stack(&self) -> Result<Option<Vec<CallFrame>>, ReportFileError> {
        self.stack(self.layout.cpu_stack)
    }

    fn stack(&self, number: u32) -> Result<Option<Vec<CallFrame>>, ReportFileError> {
        match self.find(number).map_err(|e| self.err(e))? {
            Some(c) => super::stack::decode(c).map(Some).map_err(|e| self.err(e)),
            None => Ok(None),
        }
    }

    /// A decode error of this result, naming the file.
    pub fn err(&self, e: WireError) -> ReportFileError {
        ReportFileError::malformed(self.path, e)
    }

    /// The last occurrence of an embedded-message field (protobuf's rule for a repeated singular field).
    fn find(&self, number: u32) -> Result<Option<Cursor<'a>>, WireError> {
        let mut found = None;
        self.body.for_each(|f| {
            if f.number == number {
                found = Some(f.as_message()?);
            }
            Ok(())
        })?;
        Ok(found)
    }
}
