//! The CUPTI trace file format, defined once: the injection library (`crates/cupti-trace`) writes it
//! and profile-run's reader (`src/profiler/ncu/readers/trace.rs`) reads it through this crate, so the
//! two cannot drift apart. Pure and free of dependencies; the reader adds the file and the line number
//! to a [`LineError`], and checks what needs more than one line (name order, kernel names).
//!
//! Format, version 3: UTF-8 lines, fields separated by one tab (shown as two spaces below); text
//! fields escape backslash, tab, newline and carriage return as `\\` `\t` `\n` `\r`; `-` stands for a
//! missing value (a text that is `-` itself is written `\-`) ([`text`]).
//!
//! ```text
//! profile-run-cupti-trace  3
//! process  PID  HOST  NAME  LIBCUPTI  RANK|-  WORLD-SIZE|-
//! name  INDEX  MANGLED-KERNEL-NAME
//! kernel  CORRELATION  START  END  DEVICE  CONTEXT  STREAM  GX  GY  GZ  BX  BY  BZ  REGISTERS  STATIC-SMEM  DYNAMIC-SMEM  NAME-INDEX
//! api  CORRELATION  THREAD  START  END  runtime|driver  CBID
//! range  ID  push-pop|start-end  THREAD  START  END|-  DOMAIN|-  NAME|-
//! deep-set  DEVICE  CHIP  PASSES
//! metric  INDEX  NCU-METRIC-NAME
//! profiled  CORRELATION  RANGES  COST-NS
//! value  CORRELATION  RANGE  METRIC-INDEX  VALUE
//! deep-error  TEXT
//! end  LINES
//! ```
//!
//! The five records between `range` and `end` ([`deep`]) are the counters the library collected
//! inside the process when asked to (`PROFILE_RUN_DEEP_METRICS`): each `profiled` launch's kernels
//! (`RANGE` 0 for a kernel launch) with one `value` per metric, found by the launch's correlation id.
//! Version 2 is version 3 without them; a version 2 trace reads as one with none.
//!
//! `end` is the writer's last line, and `LINES` counts the lines before it (the first line
//! included): a trace that does not end with it was cut short, and one whose count is wrong lost or
//! gained lines. Version 1 is version 2 without the `end` line (its writer could not say it had
//! finished); it is still read.
//!
//! `RANK` and `WORLD-SIZE` (the process's place in its job, from its launcher's environment) came
//! after the format's first traces: a `process` line that stops before them (as one with neither
//! known is written) reads as `-`.
//!
//! Times are CUPTI timestamps in ns (one clock for kernels, API calls and markers). Grid, block and
//! shared-memory sizes are never negative. Fields past a record's last are ignored.

pub mod deep;
mod fields;
mod records;
pub mod text;

pub use deep::{DeepError, DeepSet, Metric, Profiled, Value};
pub use fields::LineError;
pub use records::{Api, ApiKind, End, Kernel, Name, Process, Range, RangeKind, Record};

/// The first field of a trace's first line.
pub const MAGIC: &str = "profile-run-cupti-trace";

/// The format version this crate writes, the second field of the first line.
pub const VERSION: u32 = 3;

/// The oldest version this crate reads: version 1, which has no `end` line.
pub const OLDEST_VERSION: u32 = 1;

/// Appends the first line of a trace.
pub fn write_header(out: &mut String) {
    out.push_str(MAGIC);
    out.push('\t');
    out.push_str(&VERSION.to_string());
    out.push('\n');
}

/// Checks a trace's first line (without its newline) and returns its format version.
pub fn check_header(line: &str) -> Result<u32, LineError> {
    let mut parts = line.split('\t');
    if parts.next() != Some(MAGIC) {
        return Err(LineError(format!(
            "expected `{MAGIC}<TAB>{VERSION}` as the first line"
        )));
    }
    match parts.next() {
        Some(version) => match version.parse::<u32>() {
            Ok(known) if (OLDEST_VERSION..=VERSION).contains(&known) => Ok(known),
            _ => Err(LineError(format!(
                "format version {version:?}, but this profile-run reads versions {OLDEST_VERSION} to {VERSION}"
            ))),
        },
        None => Err(LineError(format!(
            "expected `{MAGIC}<TAB>{VERSION}` as the first line"
        ))),
    }
}

#[cfg(test)]
mod tests;
