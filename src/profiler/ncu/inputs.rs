//! ncu's inputs to `report` / `merge` / `diff`, found again: run directories (single or per-rank),
//! raw CSV exports and `.ncu-rep` files, each capture read once however it is named, and the
//! captures a run just made (`captured`); the one place that chooses ncu's reader. Under
//! `pipeline.ncu.reader: native` a report file (a run's `profile.ncu-rep`, or a bare `.ncu-rep[.gz]`)
//! is read as it is; under `csv` it is exported to CSV pages with ncu first. It sits beside
//! `readers/`, above `observe/`, and takes from `capture/` only what a run left (its pages
//! exported, its traces listed, its ranks' deep passes).
//!
//! Floor: profiler (see `crate::profiler`): imports run, process, analysis, insights, report,
//! config, region and the ground floor, and its own profiler's rooms.

use std::path::{Path, PathBuf};

use crate::analysis::RunContext;
use crate::config::{Config, ReportReader};
use crate::console::{err_line, escape_controls};
use crate::error::{Error, Result};
use crate::file_kind::{is_past_limit, open_text, Checks, Limit, Links};
use crate::profiler::adapter::FoundCaptures;
use crate::profiler::job::Analysed;
use crate::profiler::ncu::observe::hints::add_deep_mismatch;
use crate::profiler::ncu::observe::report_source::{analyze_report_files, ReportInput};
use crate::profiler::ncu::observe::source::{analyze_exports, ExportSet};
use crate::profiler::ncu::observe::trace::source::analyze_traces;
use crate::profiler::ncu::plan::NcuPlan;
use crate::profiler::ncu::readers::export::ExportError;
use crate::profiler::ncu::readers::trace::{imported, TraceInput};
use crate::report::model::Report;
use crate::run::{
    check_in_run, is_compressed_csv, ncu_export_stem, ncu_report_file, read_record, trace_checks,
    RECORD_FILE,
};
use crate::run::{RunRecord, REPORT_BASE};

use crate::profiler::ncu::capture::run::export_pages::export_pages;
use crate::profiler::ncu::capture::sampling::{self, ranks};
use crate::profiler::ncu::capture::trace;

pub mod captured;
mod copies;
mod rank_dirs;

/// The captures found, all of one kind: one report reads one kind of source.
#[derive(Debug, Clone)]
pub enum Captures {
    /// CSV exports: raw pages, each with its details page where there is one.
    Exports(Vec<ExportSet>),
    /// Report files read as they are (`pipeline.ncu.reader: native`), each with its deep pass.
    ReportFiles(Vec<ReportInput>),
    /// The CUPTI traces of runs timed by the trace (`trace/cupti.<pid>.trace`), and the deep pass
    /// of a sampled one.
    Traces {
        traces: Vec<TraceInput>,
        /// Each deep pass's report file with its run's rank: one for a run, one per rank that
        /// ran its own in a `merge` of per-rank runs.
        deep: Vec<(PathBuf, Option<u32>)>,
    },
}

/// ncu's captures found from `report` / `merge` arguments, with their run metadata.
#[derive(Debug, Clone)]
pub struct NcuInputs {
    pub captures: Captures,
    pub context: RunContext,
    /// The run directory the first input belongs to (the input itself, or the directory of an export
    /// that holds a `run.json`); `None` for a bare export.
    pub run_dir: Option<PathBuf>,
}

/// Whether ncu's report files are read as they are (`pipeline.ncu.reader: native`) rather than
/// exported to CSV pages first: the one place the setting is read.
pub fn reads_report_files(config: &Config) -> bool {
    config.pipeline.ncu.reader == ReportReader::Native
}

impl NcuInputs {
    /// The report of these captures: the one place that chooses ncu's reader. CUPTI traces of a
    /// traced run (with a sampled run's deep pass); report files read as they are
    /// (`pipeline.ncu.reader: native` put them here); CSV pages otherwise.
    pub fn read(&self, plan: &NcuPlan, config: &Config, context: &RunContext) -> Result<Report> {
        let reading = &plan.reading();
        match &self.captures {
            Captures::Traces { traces, deep } => {
                let planned = (reading, &plan.first_index);
                let mut report = analyze_traces(planned, config, traces, deep, context)?;
                add_deep_mismatch(&mut report);
                Ok(report)
            }
            Captures::Exports(exports) => analyze_exports(reading, exports, context),
            Captures::ReportFiles(reports) => analyze_report_files(reading, reports, context),
        }
    }
}

impl FoundCaptures for NcuInputs {
    type Plan = NcuPlan;

    fn run_dir(&self) -> Option<&Path> {
        self.run_dir.as_deref()
    }

    /// Several exports or report files are the ranks of one job, merged; the traces of one run are
    /// its processes, not captures to merge.
    fn merges_captures(&self) -> bool {
        match &self.captures {
            Captures::Exports(exports) => exports.len() > 1,
            Captures::ReportFiles(reports) => reports.len() > 1,
            Captures::Traces { .. } => false,
        }
    }

    fn analyze(&self, plan: &NcuPlan, config: &Config, fingerprint: String) -> Result<Analysed> {
        let context = RunContext {
            config_fingerprint: fingerprint,
            ..self.context.clone()
        };
        Ok(Analysed {
            report: self.read(plan, config, &context)?,
            details: Vec::new(),
        })
    }
}

/// The files already taken by earlier arguments, by file identity (device and inode), so the same
/// capture given twice (two paths, a symlink, a run directory and its own export) is refused instead
/// of counted twice.
/// Byte copies (`cp -r rank1 rank2`) of the primary captures (the timing pass, export or trace
/// that defines a rank) are told by content once every input is found ([`copies::Copies`]).
#[derive(Default)]
struct Claimed {
    files: std::collections::HashMap<(u64, u64), String>,
    copies: copies::Copies,
}

impl Claimed {
    /// Takes the primary capture `file` for `argument` (see [`Claimed::claim_part`]); it is also
    /// compared by content with the other primary captures.
    fn claim(&mut self, file: &Path, argument: &Path) -> Result<()> {
        if let Some(len) = self.claim_part(file, argument)? {
            self.copies.add(file, len);
        }
        Ok(())
    }

    /// Takes `file` for `argument`; an error naming both arguments when an earlier one took it.
    /// A secondary file (a deep report, a worker's or a top-up's) is checked by identity only: two
    /// deep passes may well write the same bytes (the same kernels, metrics and sampled launches),
    /// and the rank they belong to is told apart by its primary capture. Its size once taken.
    fn claim_part(&mut self, file: &Path, argument: &Path) -> Result<Option<u64>> {
        use std::os::unix::fs::MetadataExt;
        let Ok(meta) = std::fs::metadata(file) else {
            return Ok(None);
        };
        let id = (meta.dev(), meta.ino());
        let argument = argument.display().to_string();
        if let Some(earlier) = self.files.get(&id) {
            let how = if *earlier == argument {
                format!("`{argument}` is given twice")
            } else {
                format!(
                    "`{earlier}` and `{argument}` name the same capture ({})",
                    file.display()
                )
            };
            return Err(Error::Usage(format!(
                "{how}, so its results would be counted twice; give each capture once"
            )));
        }
        self.files.insert(id, argument);
        Ok(Some(meta.len()))
    }

    /// The deep pass of a sampled capture whose timing pass is `timing`, taken for `argument`;
    /// `None` for a capture made in one pass.
    /// A deep sibling that is not a regular file (a directory, a FIFO, a device) is named in a note
    /// and left unread, so the capture is reported from its timing pass alone.
    fn deep_sibling(&mut self, timing: &Path, argument: &Path) -> Result<Option<PathBuf>> {
        let deep = match sampling::deep_sibling(timing) {
            Some(sampling::Sibling::File(deep)) => deep,
            Some(sampling::Sibling::NotAFile(deep, kind)) => {
                err_line(&format!(
                    "note: {} {kind}, not a report file: its deep metrics are left out and {} is reported from its timing pass alone",
                    escape_controls(&deep.display().to_string()),
                    escape_controls(&timing.display().to_string()),
                ));
                return Ok(None);
            }
            None => return Ok(None),
        };
        self.claim_deep(&deep, argument)?;
        Ok(Some(deep))
    }

    /// Takes a deep report, its workers' and its top-up's, by identity alone.
    fn claim_deep(&mut self, deep: &Path, argument: &Path) -> Result<()> {
        self.claim_part(deep, argument)?;
        for worker in sampling::worker_siblings(deep) {
            self.claim_part(&worker, argument)?;
        }
        Ok(())
    }
}

/// The capture made of exported pages (needs `raw`; `details` is optional).
fn set_from_pages(pages: Vec<(String, PathBuf)>, rank: Option<u32>) -> Option<ExportSet> {
    let page = |name: &str| {
        pages
            .iter()
            .find(|(p, _)| p == name)
            .map(|(_, path)| path.clone())
    };
    Some(ExportSet {
        raw: page("raw")?,
        details: page("details"),
        rank,
    })
}

/// The details export that belongs to a raw one: the same name with its last `raw` replaced by
/// `details` (`export_raw.csv` → `export_details.csv`, `manual_raw.csv` → `manual_details.csv`).
pub fn sibling_details(raw: &Path) -> Option<PathBuf> {
    let name = raw.file_name()?.to_str()?;
    let at = name.rfind("raw")?;
    let details = raw.with_file_name(format!("{}details{}", &name[..at], &name[at + 3..]));
    details.is_file().then_some(details)
}

/// Resolves run directories (single or per-rank), raw CSV exports and `.ncu-rep` files. An `.ncu-rep`
/// is exported into `export_dir(its run directory, if any)`: the report's own directory (`--out`),
/// or the run directory when the report is written there; never beside a bare input, which may lie
/// in a source tree, nor into a run directory the report is not written into.
pub fn resolve_inputs(
    inputs: &[PathBuf],
    config: &Config,
    export_dir: &mut dyn FnMut(Option<&Path>) -> Result<PathBuf>,
) -> Result<NcuInputs> {
    let mut exports = Vec::new();
    let mut reports = Vec::new();
    let mut traces = TracedRuns::default();
    let mut context = RunContext::default();
    let mut claimed = Claimed::default();
    let native = reads_report_files(config);
    for input in inputs {
        if input.is_dir() {
            let mut found = RunDirInputs {
                argument: input,
                config,
                exports: &mut exports,
                reports: &mut reports,
                traces: &mut traces,
                context: &mut context,
                claimed: &mut claimed,
                export_dir: &mut *export_dir,
            };
            found.collect(input)?;
        } else if native && input.is_file() && is_report_file(input) {
            claimed.claim(input, input)?;
            reports.push(ReportInput {
                deep: claimed.deep_sibling(input, input)?,
                path: input.clone(),
                rank: rank_beside(input, &mut context)?,
            });
        } else if input.is_file() && is_trace_file(input) {
            claimed.claim(input, input)?;
            traces.inputs.push(TraceInput {
                path: input.clone(),
                rank: None,
                checks: trace_checks(None, config.pipeline.ncu.trace.max_mib),
                part: None,
            });
        } else if let Some(found) =
            imported::trace_inputs(input, config.pipeline.ncu.trace.max_mib, &mut || {
                export_dir(None)
            })?
        {
            claimed.claim(input, input)?;
            traces.inputs.extend(found);
        } else if input.extension().is_some_and(|e| e == "ncu-rep") {
            claimed.claim(input, input)?;
            let dir = export_dir(run_dir_of(input).as_deref())?;
            exports.extend(set_from_pages(export_pages(config, input, &dir)?, None));
        } else if input.is_file() && is_compressed_csv(input) {
            claimed.claim(input, input)?;
            exports.push(decompressed_export(input, &export_dir(None)?, config)?);
        } else if input.is_file() {
            claimed.claim(input, input)?;
            exports.push(ExportSet {
                raw: input.clone(),
                details: sibling_details(input),
                rank: rank_beside(input, &mut context)?,
            });
        } else {
            return Err(not_an_input(input));
        }
    }
    // Every input found: a capture given twice, as a copy or under a repeated rank, is refused
    // before anything is read.
    claimed.copies.check()?;
    crate::analysis::check_ranks_once(&context.ranks).map_err(Error::Usage)?;
    if !traces.inputs.is_empty() {
        return traces.finish(inputs, exports.is_empty() && reports.is_empty(), context);
    }
    if exports.is_empty() && reports.is_empty() {
        return Err(Error::Usage(format!(
            "no report file or raw export found in {}; a run directory holds profile.ncu-rep (or export_raw.csv)",
            inputs.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
        )));
    }
    if !exports.is_empty() && !reports.is_empty() {
        return Err(Error::Usage(format!(
            "these inputs mix report files ({}) and CSV exports ({}), which one report cannot combine; give only one kind, or set pipeline.ncu.reader=csv to export the report files with ncu first",
            reports[0].path.display(),
            exports[0].raw.display()
        )));
    }
    let captures = match reports.is_empty() {
        true => Captures::Exports(exports),
        false => Captures::ReportFiles(reports),
    };
    Ok(NcuInputs {
        captures,
        context,
        run_dir: run_dir_of(&inputs[0]),
    })
}

/// The error for an input that is no file or directory, naming what an input can be.
fn not_an_input(input: &Path) -> Error {
    let override_hint = if input.to_string_lossy().contains('/') {
        ""
    } else {
        " (an override is written `dotted.key=value`)"
    };
    Error::Usage(format!(
        "{} does not exist; give a run directory, a `--page raw` CSV export, an .ncu-rep, a CUPTI trace (cupti.<pid>.trace), a PyTorch profiler trace (.json[.gz]), an Nsight Systems export (.sqlite, .nsys-rep) or a rocprofv3 kernel trace (kernel_trace.csv){override_hint}",
        input.display()
    ))
}

/// A gzip-compressed CSV export and its details page (compressed or not), decompressed into `dir`
/// (the report's directory, never beside the input): the CSV reader reads a page in parallel chunks,
/// which needs a file it can seek in.
fn decompressed_export(input: &Path, dir: &Path, config: &Config) -> Result<ExportSet> {
    let checks = Checks {
        links: Links::Follow,
        limit: Limit {
            bytes: config.pipeline.ncu.max_export_mib.saturating_mul(1 << 20),
            fix: "if the export is genuine, raise pipeline.ncu.max_export_mib (in your own --config or on the command line)",
        },
    };
    let raw = gunzip_into(input, dir, &checks)?;
    let details = match sibling_details(input) {
        Some(d) if is_compressed_csv(&d) => Some(gunzip_into(&d, dir, &checks)?),
        other => other,
    };
    Ok(ExportSet {
        raw,
        details,
        rank: None,
    })
}

/// Decompresses `input` (`X.csv.gz`) to `dir/X.csv`, checked and bounded by `checks`; a damaged
/// stream, or one that inflates past the limit, is an error naming the file.
fn gunzip_into(input: &Path, dir: &Path, checks: &Checks) -> Result<PathBuf> {
    let name = input
        .file_name()
        .and_then(|n| n.to_str())
        .map_or("export.csv", |n| &n[..n.len() - ".gz".len()]);
    let out = dir.join(name);
    let io_error = |path: &Path, source: std::io::Error| {
        Error::from(ExportError::Io {
            path: path.to_path_buf(),
            source,
        })
    };
    let mut reader = open_text(input, checks).map_err(|e| io_error(input, e.into()))?;
    let mut writer =
        std::io::BufWriter::new(std::fs::File::create(&out).map_err(|e| io_error(&out, e))?);
    std::io::copy(&mut reader, &mut writer).map_err(|e| {
        let _ = std::fs::remove_file(&out);
        let why = match is_past_limit(&e) {
            true => e.to_string(),
            false => format!("not a readable gzip stream ({e})"),
        };
        io_error(input, std::io::Error::new(e.kind(), why))
    })?;
    Ok(out)
}

/// The runs among the inputs that were timed by the CUPTI trace.
#[derive(Default)]
struct TracedRuns {
    inputs: Vec<TraceInput>,
    /// The deep passes of those that were sampled, with their run's rank.
    deep: Vec<(PathBuf, Option<u32>)>,
}

impl TracedRuns {
    /// Traced runs are read alone: not beside ncu captures, and with one deep pass at most.
    fn finish(self, inputs: &[PathBuf], alone: bool, context: RunContext) -> Result<NcuInputs> {
        if !alone {
            return Err(Error::Usage(
                "these inputs mix runs timed by the CUPTI trace with ncu captures, whose times were measured differently; report them apart".into(),
            ));
        }
        ranks::check_deep_passes(&self.deep)?;
        Ok(NcuInputs {
            captures: Captures::Traces {
                traces: self.inputs,
                deep: self.deep,
            },
            context,
            run_dir: run_dir_of(&inputs[0]),
        })
    }
}

/// `….trace` or `….trace.gz`: a process's CUPTI trace (`cupti.<pid>.trace` in a traced run's
/// `trace/` directory, copied anywhere); its first line says whether it really is one.
fn is_trace_file(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.ends_with(".trace") || n.ends_with(".trace.gz"))
}

/// `R.ncu-rep` or `R.ncu-rep.gz`: what the native reader opens (plain or gzip-compressed).
fn is_report_file(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.ends_with(".ncu-rep") || n.ends_with(".ncu-rep.gz"))
}

/// The run directory `input` is or lies in: a directory given as input, or the directory of a file
/// beside a `run.json`.
fn run_dir_of(input: &Path) -> Option<PathBuf> {
    if input.is_dir() {
        return Some(input.to_path_buf());
    }
    let parent = input
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    parent
        .join(RECORD_FILE)
        .is_file()
        .then(|| parent.to_path_buf())
}

/// The exports of one run-directory argument (a run, or a shared directory of `rank*` runs).
struct RunDirInputs<'a> {
    argument: &'a Path,
    config: &'a Config,
    exports: &'a mut Vec<ExportSet>,
    reports: &'a mut Vec<ReportInput>,
    traces: &'a mut TracedRuns,
    context: &'a mut RunContext,
    claimed: &'a mut Claimed,
    /// Where a run's report file is exported (`resolve_inputs`).
    export_dir: &'a mut dyn FnMut(Option<&Path>) -> Result<PathBuf>,
}

impl RunDirInputs<'_> {
    fn collect(&mut self, dir: &Path) -> Result<()> {
        let raw = dir.join(format!("{}.csv", ncu_export_stem("raw")));
        let report = dir.join(ncu_report_file(REPORT_BASE));
        // The run's .ncu-rep is the same capture as its export: either given again is refused.
        for file in [&raw, &report] {
            check_in_run(file, dir)?;
            if file.is_file() {
                self.claimed.claim(file, self.argument)?;
            }
        }
        let mut rank = None;
        if let Some(record) = run_record(dir)? {
            rank = record.rank.as_ref().map(|r| r.rank);
            let this = record.context(self.context.config_fingerprint.clone());
            // Every rank is kept, so a missing, partial or repeated one is named, not averaged in;
            // the rest of the context is the first run's.
            let ranks = this.ranks.iter().map(|r| with_run(r, dir));
            self.context.ranks.extend(ranks);
            if self.context.command.is_empty() {
                let ranks = std::mem::take(&mut self.context.ranks);
                let mut notes = std::mem::take(&mut self.context.notes);
                notes.extend(this.notes.iter().cloned());
                *self.context = RunContext {
                    ranks,
                    notes,
                    ..this
                };
            }
        }
        let traced = trace::traces_in(dir, rank, self.config.pipeline.ncu.trace.max_mib);
        for trace in &traced {
            self.claimed.claim(&trace.path, self.argument)?;
        }
        if !traced.is_empty() {
            self.traces.inputs.extend(traced);
            let deep = dir.join(format!("{}.ncu-rep", sampling::DEEP_REPORT_BASE));
            check_in_run(&deep, dir)?;
            if let Some(rank) = rank {
                ranks::count_deep_rank(&mut self.context.deep_ranks, rank, deep.is_file());
            }
            if deep.is_file() {
                self.claimed.claim_deep(&deep, self.argument)?;
                self.traces.deep.push((deep, rank));
            }
            return Ok(());
        }
        // The native reader prefers the report file itself; an export made earlier is the same
        // capture and is read only when the report file is gone.
        if reads_report_files(self.config) && report.is_file() {
            let deep = self.claimed.deep_sibling(&report, self.argument)?;
            self.reports.push(ReportInput {
                path: report,
                rank,
                deep,
            });
            return Ok(());
        }
        if raw.is_file() {
            self.exports.push(ExportSet {
                details: sibling_details(&raw),
                raw,
                rank,
            });
            return Ok(());
        }
        if report.is_file() {
            let into = (self.export_dir)(Some(dir))?;
            let pages = export_pages(self.config, &report, &into)?;
            self.exports.extend(set_from_pages(pages, rank));
            return Ok(());
        }
        for rank_dir in rank_dirs::rank_dirs(dir, &mut self.context.notes)? {
            self.collect(&rank_dir)?;
        }
        Ok(())
    }
}

/// `dir`'s `run.json`, where it has one that reads as a run record.
fn run_record(dir: &Path) -> Result<Option<RunRecord>> {
    Ok(read_record(dir)?.and_then(|text| serde_json::from_str::<RunRecord>(&text).ok()))
}

/// A rank as its run recorded it, with the run directory that says so.
fn with_run(rank: &crate::analysis::RankRun, dir: &Path) -> crate::analysis::RankRun {
    crate::analysis::RankRun {
        run: Some(dir.to_path_buf()),
        ..rank.clone()
    }
}

/// The rank the `run.json` beside a capture file records (an export or report file given by its
/// own path), kept with the other ranks so that it is checked as a run directory's would be.
fn rank_beside(file: &Path, context: &mut RunContext) -> Result<Option<u32>> {
    let Some(dir) = run_dir_of(file) else {
        return Ok(None);
    };
    let Some(record) = run_record(&dir)? else {
        return Ok(None);
    };
    let ranks = record.context(String::new()).ranks;
    context
        .ranks
        .extend(ranks.iter().map(|r| with_run(r, &dir)));
    Ok(record.rank.map(|r| r.rank))
}
