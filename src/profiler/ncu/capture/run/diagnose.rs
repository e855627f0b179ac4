//! Why an ncu run failed, in the user's terms: ncu's log read for known causes, the workload's exit
//! code, or the signal that ended ncu, each with the fix.

use crate::process::{Failure, Finished, ProfilerError};
use crate::run::read_record;
use crate::run::RunDir;

use super::log;

/// Explains a failed ncu run (`what`: `profiling`, or a pass of a sampled run) from its exit status
/// and its log, kept at `log_path`.
pub fn failure(
    what: &str,
    finished: &Finished,
    (log_text, log_path): (&str, std::path::PathBuf),
    run: &RunDir,
    partial_report: bool,
) -> ProfilerError {
    let mut diagnoses = log::diagnose(log_text);
    // Under range replay the likely cause is the range itself; the log's own words are part of it.
    let results = if partial_report { None } else { Some(0) };
    if let Some(d) = log::range_replay(log_text, &replay_mode(run), finished.code, results) {
        diagnoses.insert(0, d);
    }
    let workload_code = log::application_exit_code(log_text);
    let (cause, fix) = match diagnoses.first() {
        Some(d) => (d.cause.clone(), d.fix.clone()),
        None if workload_code.is_some() => (
            format!(
                "the workload exited with an error{}",
                workload_code.map(shell_signal_note).unwrap_or_default()
            ),
            "run the workload without profile-run to see its own error; its output is in the log"
                .to_string(),
        ),
        None if finished.killed_by.is_some() => (
            format!(
                "ncu was killed by signal {}",
                signal_name(finished.killed_by.unwrap_or_default())
            ),
            "if the OOM killer or a batch system's limit stopped it, give the job more memory or time; \
             otherwise profile fewer kernels (tighter regions.include, fewer sections) and keep the log \
             for a bug report to NVIDIA"
                .to_string(),
        ),
        None if !partial_report => (
            "ncu wrote no report".to_string(),
            "see the log for ncu's own message".to_string(),
        ),
        None => (
            "ncu exited with an error".to_string(),
            "see the log for ncu's own message".to_string(),
        ),
    };
    let mut code = match (workload_code, finished.code, finished.killed_by) {
        (Some(w), _, _) => format!(" (workload exit code {w})"),
        (None, Some(c), _) => format!(" (ncu exit code {c})"),
        (None, None, Some(s)) => format!(" (killed by signal {s})"),
        _ => String::new(),
    };
    if partial_report {
        code.push_str(&format!(
            "; a partial report from what was captured is in {}",
            run.root().display()
        ));
    }
    ProfilerError::Failed(Box::new(Failure {
        what: what.into(),
        code,
        cause,
        fix,
        log: log_path,
        tail: log_tail(log_text),
    }))
}

/// The notes a report of a range or app-range replay gets when ncu failed or profiled nothing: the
/// likely cause and what to run instead (empty otherwise).
pub fn replay_notes(run: &RunDir, exit_code: Option<i32>, results: u64) -> Vec<String> {
    let log_text = crate::run::read_run_text(&run.path(log::LOG));
    log::range_replay(&log_text, &replay_mode(run), exit_code, Some(results))
        .map(|d| vec![format!("{} Fix: {}.", d.cause, d.fix)])
        .unwrap_or_default()
}

/// The `--replay-mode` of the ncu command the run recorded in run.json (`kernel`, ncu's default, when
/// absent or unreadable).
fn replay_mode(run: &RunDir) -> String {
    let text = read_record(run.root()).ok().flatten().unwrap_or_default();
    let record: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
    let args: Vec<&str> = record["profiler_command"]
        .as_array()
        .map(|a| a.iter().filter_map(|v| v.as_str()).collect())
        .unwrap_or_default();
    args.windows(2)
        .find(|w| w[0] == "--replay-mode")
        .map_or("kernel", |w| w[1])
        .to_string()
}

/// How much of a log's end is read for its last lines: a workload may print gigabytes.
const LOG_END_BYTES: u64 = 64 * 1024;

/// The longest line of a log shown in an error (characters); the rest is counted, not printed.
const LOG_LINE_CHARS: usize = 300;

/// The end of a log file (its last [`LOG_END_BYTES`]), read without reading the rest; empty when it
/// cannot be read.
pub fn read_log_end(path: &std::path::Path) -> String {
    use std::io::{Read, Seek, SeekFrom};
    // Through the checked open: a FIFO in the log's place must not block the run.
    let checks = crate::file_kind::Checks {
        links: crate::file_kind::Links::Refuse,
        ..crate::file_kind::Checks::unbounded()
    };
    let Ok(mut file) = crate::file_kind::open_checked(path, &checks) else {
        return String::new();
    };
    let len = file.metadata().map_or(0, |m| m.len());
    let mut end = Vec::new();
    let read = file
        .seek(SeekFrom::Start(len.saturating_sub(LOG_END_BYTES)))
        .and_then(|_| file.take(LOG_END_BYTES).read_to_end(&mut end));
    match read {
        Ok(_) => String::from_utf8_lossy(&end).into_owned(),
        Err(_) => String::new(),
    }
}

/// The last lines of a log, formatted for an error message, each cut at [`LOG_LINE_CHARS`]; empty
/// for an empty log.
pub fn log_tail(log_text: &str) -> String {
    let tail: Vec<String> = log_text.lines().rev().take(8).map(cut_line).collect();
    if tail.is_empty() {
        return String::new();
    }
    format!(
        "\n  last lines of the log:\n    {}",
        tail.into_iter().rev().collect::<Vec<_>>().join("\n    ")
    )
}

/// A log line cut to [`LOG_LINE_CHARS`] characters, saying how much was left out.
fn cut_line(line: &str) -> String {
    match line.char_indices().nth(LOG_LINE_CHARS) {
        None => line.to_string(),
        Some((at, _)) => format!(
            "{}… ({} more bytes, in the log)",
            &line[..at],
            line.len() - at
        ),
    }
}

/// `11 (SIGSEGV)`, or just the number for a signal this platform does not name.
fn signal_name(signal: i32) -> String {
    match nix::sys::signal::Signal::try_from(signal) {
        Ok(s) => format!("{signal} ({})", s.as_str()),
        Err(_) => signal.to_string(),
    }
}

/// For an exit code above 128, which shells and ncu report for a process killed by signal
/// `code - 128`: ` (139 = 128 + 11: killed by signal 11 (SIGSEGV))`.
fn shell_signal_note(code: i32) -> String {
    match code.checked_sub(128) {
        Some(signal) if (1..=64).contains(&signal) => {
            format!(
                " ({code} = 128 + {signal}: killed by signal {})",
                signal_name(signal)
            )
        }
        _ => String::new(),
    }
}
