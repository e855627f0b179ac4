//! A native reader for Nsight Compute report files (`.ncu-rep`, plain or gzip-compressed), so a report
//! can be analysed without ncu and without losing what the CSV pages drop (launching thread ids,
//! NVTX range instance ids, call stacks).
//!
//! The reader streams: it holds one block of the file at a time (a few tens of KB in ncu's files) plus
//! the string table, and hands each result to a visitor as a borrowed [`ResultRecord`]. Launch facts
//! are decoded eagerly; metrics, NVTX state, rule results and stacks are decoded only when asked for.
//! The layout of the file and what is read from it is written down in docs/ncu-report-format.md.
//!
//! What the CSV reader (`ncu::readers::export::raw`) takes from a row, a record gives as: `ID` →
//! [`ResultRecord::index`]; process id, name and host → [`ResultRecord::process`]; `Device` →
//! [`ResultRecord::device_id`]; `Kernel Name` → [`KernelNames::display`] (the full demangled name,
//! which ncu's CSV shortens) or `range` for [`ResultKind::Range`]; a metric column →
//! [`ResultRecord::metric`]; the push/pop cell → the [`NvtxThread`]s of [`ResultRecord::nvtx`] with
//! [`NvtxThread::has_ranges`], in order (the cell concatenates them; [`ResultRecord::thread_id`] says
//! which one launched the kernel); the start/end cell → [`NvtxState::start_end`]; the details page's
//! rule rows → [`ResultRecord::rule_results`] with [`RuleMessage::plain_text`].
//!
//! ```no_run
//! use profile_run::profiler::ncu::readers::report_file::ReportFile;
//! let mut report = ReportFile::open("profile.ncu-rep".as_ref())?;
//! let mut total_ns = 0.0;
//! report.for_each_result(|r| {
//!     total_ns += r.metric_f64("gpu__time_duration.sum")?.unwrap_or(0.0);
//!     Ok::<_, profile_run::profiler::ncu::readers::report_file::ReportFileError>(())
//! })?;
//! # Ok::<_, profile_run::profiler::ncu::readers::report_file::ReportFileError>(())
//! ```
//!
//! Floor: profiler (see `crate::profiler`): imports run, process, analysis, insights, report,
//! config, region and the ground floor, and its own profiler's rooms.

mod block;
mod error;
mod framing;
mod metrics;
mod nvtx;
mod nvtx_attributes;
mod nvtx_names;
mod record;
mod result;
mod rules;
mod sections;
mod stack;
mod strings;
mod wire;

use std::io::Read;
use std::path::Path;

pub use block::{DeviceInfo, SessionInfo, DEFAULT_MAX_BLOCK_BYTES};
pub use error::{ReportFileError, KNOWN_VERSIONS};
pub use metrics::{Metric, MetricIter, RecordedValue};
pub use nvtx::{
    NvtxAttributes, NvtxMessage, NvtxPayload, NvtxRange, NvtxState, NvtxThread, PushPopStack,
    StartEndRange, DEFAULT_DOMAIN,
};
pub use record::{KernelNames, ProcessInfo, ResultKind, ResultRecord};
pub use rules::{RuleMessage, RuleResult, RuleResultSeverity, Speedup, SpeedupKind};
pub use stack::CallFrame;
pub use wire::WireError;

use block::BlockReader;
use framing::Framed;

/// An open report file whose header has been read and whose version is known.
pub struct ReportFile {
    version: u32,
    blocks: BlockReader,
}

/// Counts of what one pass over the file saw.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReadSummary {
    pub blocks: u64,
    pub results: u64,
    pub kernel_results: u64,
    pub range_results: u64,
}

impl ReportFile {
    /// Opens a report and reads its file header. A file that is not a report, or whose version this
    /// reader does not know, is an error here, before any result is read.
    pub fn open(path: &Path) -> Result<ReportFile, ReportFileError> {
        ReportFile::open_limited(path, block::DEFAULT_MAX_BLOCK_BYTES)
    }

    /// [`Self::open`], refusing any block header or payload longer than `max_block` bytes before it
    /// is read (decompressed blocks included).
    pub fn open_limited(path: &Path, max_block: u64) -> Result<ReportFile, ReportFileError> {
        ReportFile::start(Framed::open(path)?, max_block)
    }

    /// Reads a report from any byte stream (plain or gzip-compressed); `name` is what errors call it.
    /// Without a file size, lengths are checked as the bytes arrive instead of up front.
    pub fn from_reader(
        name: &Path,
        reader: impl Read + Send + 'static,
    ) -> Result<ReportFile, ReportFileError> {
        ReportFile::start(
            Framed::new(name, reader, None)?,
            block::DEFAULT_MAX_BLOCK_BYTES,
        )
    }

    fn start(mut framed: Framed, max_block: u64) -> Result<ReportFile, ReportFileError> {
        let path = framed.path().to_path_buf();
        framed.read_magic()?;
        let version = block::read_file_header(&mut framed)?;
        if !KNOWN_VERSIONS.contains(&version) {
            return Err(ReportFileError::unknown_version(&path, version));
        }
        Ok(ReportFile {
            version,
            blocks: BlockReader::new(framed, max_block),
        })
    }

    /// The file format version (`FileHeader.Version`; 7 for ncu 2025.x).
    pub fn version(&self) -> u32 {
        self.version
    }

    pub fn path(&self) -> &Path {
        self.blocks.path()
    }

    /// The devices listed in the session details read so far; complete after [`Self::for_each_result`]
    /// (ncu writes them in blocks between results).
    pub fn devices(&self) -> &[DeviceInfo] {
        &self.blocks.session().devices
    }

    /// The session details read so far (devices, versions); complete after
    /// [`Self::for_each_result`] (ncu 2025.3.1 writes them after the first result's block).
    pub fn session(&self) -> &SessionInfo {
        self.blocks.session()
    }

    /// Visits every result in file order. The visitor's error type only needs to absorb
    /// [`ReportFileError`]; returning an error stops the pass and hands that error back.
    pub fn for_each_result<E, F>(&mut self, mut visit: F) -> Result<ReadSummary, E>
    where
        E: From<ReportFileError>,
        F: FnMut(&ResultRecord<'_>) -> Result<(), E>,
    {
        let mut summary = ReadSummary::default();
        while self.blocks.next_block()? {
            summary.blocks += 1;
            self.blocks.for_each_in_block(&mut summary, &mut visit)?;
        }
        Ok(summary)
    }
}
