//! The trace pass: the workload run unprofiled with the injection library, the CUDA driver and NVTX
//! both pointed at it (`CUDA_INJECTION64_PATH`, `NVTX_INJECTION64_PATH`: the library hands NVTX to
//! the libcupti the process loaded, so ranges reach the same CUPTI instance as the kernels), and the
//! run directory's `trace/` as `PROFILE_RUN_TRACE_DIR`. Children inherit the environment, so every
//! CUDA process writes its own `cupti.<pid>.trace`; one that could not load CUPTI writes
//! `cupti.<pid>.error` saying where it looked. Whether a file can be the library at all is in
//! `injection`.
//!
//! Floor: profiler (see `crate::profiler`): imports run, process, analysis, insights, report,
//! config, region and the ground floor, and its own profiler's rooms.

mod injection;

use std::path::{Path, PathBuf};

use crate::config::{Config, TimingSource};
use crate::error::Result;
use crate::file_kind;
use crate::process::{Failure, Finished, ProfilerError};
use crate::profiler::ncu::capture::run::diagnose;
use crate::profiler::ncu::plan::FirstPass;
use crate::profiler::ncu::readers::trace::TraceInput;
use crate::run::{trace_checks, PassSpec, RunDir, Slot};

use self::injection::Unusable;

/// The run directory's folder of trace files.
pub const TRACE_DIR: &str = "trace";

/// The trace pass's log (the workload's output), in the run directory.
pub const LOG: &str = "trace.log";

/// The injection library's file name, as `cargo build --release` writes it beside profile-run.
pub const LIBRARY_FILE: &str = "libcupti_trace.so";

/// The injection library: `pipeline.ncu.trace.library`, else the file beside the running binary.
pub fn library(config: &Config) -> PathBuf {
    if let Some(path) = &config.pipeline.ncu.trace.library {
        return PathBuf::from(path);
    }
    std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(|dir| dir.join(LIBRARY_FILE)))
        .unwrap_or_else(|| PathBuf::from(LIBRARY_FILE))
}

/// Settles `pipeline.ncu.timing: auto`: the trace when the injection library is usable, else ncu's
/// timing pass; the note says why ncu times the kernels. Other values stay as they are.
pub fn settle_timing(config: &mut Config) -> Option<String> {
    if config.pipeline.ncu.timing != TimingSource::Auto {
        return None;
    }
    let path = library(config);
    if let Some((key, exprs)) = raw_nvtx(config) {
        config.pipeline.ncu.timing = TimingSource::Ncu;
        return Some(format!(
            "pipeline.ncu.timing is `auto` and pipeline.ncu.ncu_cli.nvtx.{key} holds raw ncu expressions ({exprs}), which only ncu evaluates, so ncu's timing pass times every kernel; write them as regions.{key} patterns to time by the trace"
        ));
    }
    match injection::check(&path) {
        Ok(()) => {
            config.pipeline.ncu.timing = TimingSource::Trace;
            None
        }
        Err(unusable) => {
            config.pipeline.ncu.timing = TimingSource::Ncu;
            let why = match unusable {
                injection::Unusable::Missing => "was not found".to_string(),
                injection::Unusable::Wrong(what) => what,
            };
            Some(format!(
                "pipeline.ncu.timing is `auto` and the injection library {} {why}, so ncu's timing pass times every kernel (about 12 ms a kernel, against the unprofiled run's cost for the trace): build it with `cargo build --release` and keep it beside profile-run, or set pipeline.ncu.timing=ncu to choose ncu's pass",
                path.display()
            ))
        }
    }
}

/// Fails (exit 3, with the fix) when the injection library is missing or is not a 64-bit ELF shared
/// object.
pub fn check_library(config: &Config) -> Result<()> {
    let path = library(config);
    let (problem, fix) = match injection::check(&path) {
        Ok(()) => return Ok(()),
        Err(Unusable::Missing) => (
            "was not found (pipeline.ncu.timing=trace loads it into the workload)".to_string(),
            missing_fix(),
        ),
        Err(Unusable::Wrong(what)) => (
            what,
            "point pipeline.ncu.trace.library at the libcupti_trace.so that `cargo build --release` writes into target/release/ of profile-run's source tree, or time with ncu instead (pipeline.ncu.timing=ncu)".to_string(),
        ),
    };
    Err(ProfilerError::RequiredFile {
        what: "the CUPTI injection library".into(),
        path: path.display().to_string(),
        problem,
        fix,
    }
    .into())
}

/// How to get the library where it is looked for: `cargo install` builds profile-run alone, so an
/// installed binary has none beside it until one is built and put there.
fn missing_fix() -> String {
    let beside = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(|dir| format!(" ({})", dir.display())))
        .unwrap_or_default();
    format!(
        "build it with `cargo build --release` in profile-run's source tree (it lands in target/release/, beside the profile-run built there) and put it beside this profile-run{beside}, or set pipeline.ncu.trace.library to its path; or time with ncu instead (pipeline.ncu.timing=ncu)"
    )
}

/// The environment the workload runs with, in order. Its paths are absolute: a workload that
/// changes directory must still find the library and write its trace into the run directory.
pub fn environment(config: &Config, dir: &Path) -> Vec<(String, String)> {
    let absolute = |path: PathBuf| std::path::absolute(&path).unwrap_or(path);
    let library = absolute(library(config)).display().to_string();
    let mut env = vec![
        (
            cupti_trace::TRACE_DIR_VAR.to_string(),
            absolute(dir.join(TRACE_DIR)).display().to_string(),
        ),
        ("CUDA_INJECTION64_PATH".to_string(), library.clone()),
        ("NVTX_INJECTION64_PATH".to_string(), library),
    ];
    if let Some(libcupti) = &config.pipeline.ncu.trace.libcupti {
        // A bare name (`libcupti.so.13`) is the loader's to search for; a path is made absolute.
        let libcupti = match libcupti.contains('/') {
            true => absolute(PathBuf::from(libcupti)).display().to_string(),
            false => libcupti.clone(),
        };
        env.push((cupti_trace::LIBCUPTI_VAR.to_string(), libcupti));
    }
    env
}

/// The trace pass, planned: the workload with the injection library's environment and `extra`
/// (the in-process deep metrics' variables); its line in command.txt and `--dry-run` and its
/// command in run.json are `env VAR=… workload…`.
pub fn pass(
    config: &Config,
    dir: &Path,
    workload: &[String],
    extra: Vec<(String, String)>,
) -> PassSpec {
    let mut env = environment(config, dir);
    env.extend(extra);
    PassSpec::of_workload("the trace pass", Slot::First, workload, LOG).with_env(env)
}

/// Why a trace pass that did not succeed failed: the workload's own exit (no profiler ran), with the
/// fix; `partial_report`: a report of what the traces hold was written.
pub fn failure(run: &RunDir, finished: &Finished, partial_report: bool) -> ProfilerError {
    // A process that could not load CUPTI stops itself at its first CUDA call (the injection
    // library's exit status 86): what it wrote says why, which the workload's own exit does not.
    let (_, errors) = listing(&run.path(TRACE_DIR));
    if let Some(error) = errors.first() {
        return cupti_failure(error, " (stopped at its first CUDA call)");
    }
    let log = run.path(LOG);
    let text = diagnose::read_log_end(&log);
    let (mut code, cause) = match (finished.code, finished.killed_by) {
        (_, Some(signal)) => (
            format!(" (killed by signal {signal})"),
            format!("the workload was killed by signal {signal}"),
        ),
        (Some(code), None) => (
            format!(" (workload exit code {code})"),
            "the workload exited with an error".to_string(),
        ),
        (None, None) => (String::new(), "the workload did not finish".to_string()),
    };
    if partial_report {
        code.push_str(&format!(
            "; a partial report from the traces written is in {}",
            run.root().display()
        ));
    }
    let tail = diagnose::log_tail(&text);
    ProfilerError::Failed(Box::new(Failure {
        what: "the traced run".into(),
        code,
        cause,
        fix: "run the workload without profile-run to see its own error; its output is in the log"
            .into(),
        log,
        tail,
    }))
}

/// The traces in run directory `dir`'s `trace/`, in process-id order (none: not a traced run), each
/// to be read bounded by `max_mib` and through no link out of `dir`.
pub fn traces_in(dir: &Path, rank: Option<u32>, max_mib: u64) -> Vec<TraceInput> {
    let (traces, _) = listing(&dir.join(TRACE_DIR));
    traces
        .into_iter()
        .map(|(_, path)| TraceInput {
            path,
            rank,
            checks: trace_checks(Some(dir), max_mib),
            part: None,
        })
        .collect()
}

/// The trace files (pid, path) and error files of a trace directory, each sorted.
fn listing(dir: &Path) -> (Vec<(u64, PathBuf)>, Vec<PathBuf>) {
    let mut traces = Vec::new();
    let mut errors = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        let pid = |suffix: &str| -> Option<u64> {
            name.strip_prefix("cupti.")?
                .strip_suffix(suffix)?
                .parse()
                .ok()
        };
        if let Some(pid) = pid(".trace").or_else(|| pid(".trace.gz")) {
            traces.push((pid, path));
        } else if pid(".error").is_some() {
            errors.push(path);
        }
    }
    traces.sort();
    errors.sort();
    (traces, errors)
}

/// Why the in-process counters collected nothing in any traced process, from the library's
/// `cupti.<pid>.no-counters` files in trace directory `dir` (no trace is read): `Some` when every
/// process that wrote a trace wrote one too, with the first one's reason; `None` when some process
/// did not (it profiled launches, or never tried), or no trace was written.
pub fn counters_unavailable(dir: &Path) -> Option<String> {
    let (traces, _) = listing(dir);
    let cue = |pid: u64| dir.join(format!("cupti.{pid}{}", cupti_trace::NO_COUNTERS_SUFFIX));
    if traces.is_empty() || !traces.iter().all(|(pid, _)| cue(*pid).is_file()) {
        return None;
    }
    let first = cue(traces[0].0);
    let text = file_kind::read_small(&first, ERROR_FILE_LIMIT, "a counters note", "remove it")
        .ok()
        .flatten()
        .unwrap_or_default();
    Some(match text.trim() {
        "" => format!("{} gives no reason", first.display()),
        why => why.to_string(),
    })
}

/// The most of a `cupti.<pid>.error` file read: its one line lists every libcupti looked for.
const ERROR_FILE_LIMIT: u64 = 64 * 1024;

/// A process could not trace: the reason its `cupti.<pid>.error` file gives (which names every
/// libcupti looked for), with the fix.
fn cupti_failure(error: &Path, code: &str) -> ProfilerError {
    // The library writes one line naming what it looked for; a workload could write anything there.
    let text =
        match file_kind::read_small(error, ERROR_FILE_LIMIT, "a trace error file", "remove it") {
            Ok(text) => text.unwrap_or_default(),
            Err(e) => format!("{}: {}", error.display(), std::io::Error::from(e)),
        };
    trace_failure(
        text.trim().to_string(),
        code.to_string(),
        error.to_path_buf(),
    )
}

fn trace_failure(cause: String, code: String, log: PathBuf) -> ProfilerError {
    ProfilerError::Failed(Box::new(Failure {
        what: "the CUPTI trace".into(),
        code,
        cause,
        fix: "set pipeline.ncu.trace.libcupti to the libcupti the workload uses (torch ships its own: <env>/lib/python3.*/site-packages/nvidia/cu13/lib/libcupti.so.13), or time with ncu instead (pipeline.ncu.timing=ncu)".into(),
        log,
        tail: String::new(),
    }))
}

/// The traces a run wrote, in process-id order; an error when a process could not load CUPTI or no
/// process wrote a trace.
pub fn traces(
    run: &RunDir,
    rank: Option<u32>,
    max_mib: u64,
) -> std::result::Result<Vec<TraceInput>, ProfilerError> {
    let dir = run.path(TRACE_DIR);
    let (traces, errors) = listing(&dir);
    if let Some(error) = errors.first() {
        return Err(cupti_failure(error, ""));
    }
    if traces.is_empty() {
        return Err(trace_failure(
            format!(
                "no process wrote a trace into {}: the workload started no CUDA context, or the CUDA driver did not load the injection library",
                dir.display()
            ),
            String::new(),
            run.path(LOG),
        ));
    }
    Ok(traces
        .into_iter()
        .map(|(_, path)| TraceInput {
            path,
            rank,
            checks: trace_checks(Some(run.root()), max_mib),
            part: None,
        })
        .collect())
}

/// Why `timing: trace` cannot run with these settings, naming the key and the fix; `None` when it can.
/// Only ncu evaluates its raw NVTX expressions, and no ncu filters a trace.
pub fn refusal(config: &Config, first: FirstPass) -> Option<String> {
    if first == FirstPass::Ncu {
        return None;
    }
    let (key, exprs) = raw_nvtx(config)?;
    Some(format!(
        "pipeline.ncu.ncu_cli.nvtx.{key} holds raw ncu expressions ({exprs}), which only ncu evaluates, but pipeline.ncu.timing is `trace`; write them as regions.{key} patterns, or set pipeline.ncu.timing=ncu"
    ))
}

/// The first of `pipeline.ncu.ncu_cli.nvtx.include`/`exclude` that holds raw ncu expressions: its
/// key and the expressions, which no trace can evaluate.
fn raw_nvtx(config: &Config) -> Option<(&'static str, String)> {
    let nvtx = &config.pipeline.ncu.ncu_cli.nvtx;
    [("include", &nvtx.include), ("exclude", &nvtx.exclude)]
        .into_iter()
        .find(|(_, e)| !e.is_empty())
        .map(|(key, exprs)| (key, exprs.join(", ")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::DEFAULT_PRESET;

    #[test]
    fn counters_are_unavailable_only_where_every_traced_process_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let write = |name: &str, text: &str| std::fs::write(dir.path().join(name), text).unwrap();
        assert_eq!(counters_unavailable(dir.path()), None, "no trace");
        write("cupti.7.trace", "");
        write("cupti.9.trace", "");
        write(
            "cupti.9.no-counters",
            "libcupti.so.12 has no cuptiRangeProfilerEnable\n",
        );
        assert_eq!(counters_unavailable(dir.path()), None, "process 7 profiled");
        write("cupti.7.no-counters", "");
        assert_eq!(
            counters_unavailable(dir.path()).as_deref(),
            Some(
                format!(
                    "{} gives no reason",
                    dir.path().join("cupti.7.no-counters").display()
                )
                .as_str()
            ),
            "the first process's file, which says nothing"
        );
        write("cupti.7.no-counters", "device 0 cannot be range-profiled\n");
        assert_eq!(
            counters_unavailable(dir.path()).as_deref(),
            Some("device 0 cannot be range-profiled")
        );
    }

    #[test]
    fn raw_ncu_expressions_are_refused_under_trace_timing() {
        let mut config: Config = serde_yaml::from_str(DEFAULT_PRESET).unwrap();
        config.pipeline.ncu.ncu_cli.nvtx.include = vec!["[train_step/".into()];
        assert_eq!(
            refusal(&config, FirstPass::Ncu),
            None,
            "ncu timing evaluates them"
        );
        let why = refusal(&config, FirstPass::Trace).unwrap();
        assert!(why.contains("pipeline.ncu.ncu_cli.nvtx.include"), "{why}");
        assert!(why.contains("regions.include"), "{why}");
        config.pipeline.ncu.ncu_cli.nvtx.include.clear();
        assert_eq!(refusal(&config, FirstPass::Trace), None);
    }

    #[test]
    fn the_workload_runs_with_both_injections_aimed_at_the_library() {
        let mut config: Config = serde_yaml::from_str(DEFAULT_PRESET).unwrap();
        config.pipeline.ncu.trace.library = Some("/opt/lib/libcupti_trace.so".into());
        config.pipeline.ncu.trace.libcupti = Some("/opt/cupti/libcupti.so.13".into());
        let env = environment(&config, Path::new("/runs/r"));
        let get = |k: &str| {
            env.iter()
                .find(|(key, _)| key == k)
                .map(|(_, v)| v.as_str())
        };
        assert_eq!(get("PROFILE_RUN_TRACE_DIR"), Some("/runs/r/trace"));
        assert_eq!(
            get("CUDA_INJECTION64_PATH"),
            Some("/opt/lib/libcupti_trace.so")
        );
        assert_eq!(get("NVTX_INJECTION64_PATH"), get("CUDA_INJECTION64_PATH"));
        assert_eq!(
            get("PROFILE_RUN_LIBCUPTI"),
            Some("/opt/cupti/libcupti.so.13")
        );
        let line = pass(
            &config,
            Path::new("/runs/r"),
            &["python3".into(), "a b.py".into()],
            Vec::new(),
        )
        .line;
        assert!(
            line.starts_with("env 'PROFILE_RUN_TRACE_DIR=/runs/r/trace' "),
            "{line}"
        );
        assert!(line.ends_with("python3 'a b.py'"), "{line}");
    }
}
