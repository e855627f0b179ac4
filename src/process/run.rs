//! Spawning a program with duct (no shell: every argument verbatim), reading its merged stdout and
//! stderr line by line into a log file and a callback, and collecting its exit status.

use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::process::ExitStatusExt;
use std::path::Path;

use super::{ProfilerError, SignalGuard};

/// How the program ended.
#[derive(Debug, Clone)]
pub struct Finished {
    /// Exit code, when it exited normally.
    pub code: Option<i32>,
    /// Signal that killed it, if any.
    pub killed_by: Option<i32>,
    /// Signal profile-run itself received while waiting, if any.
    pub interrupted_by: Option<i32>,
}

impl Finished {
    pub fn success(&self) -> bool {
        self.code == Some(0)
    }
}

/// Runs `command` (named `program` in messages), writes every output line to `log` and hands it to
/// `on_line`.
pub fn run_streaming(
    program: &str,
    command: duct::Expression,
    log: &Path,
    on_line: &mut dyn FnMut(&str),
) -> Result<Finished, ProfilerError> {
    let mut log_file = File::create(log).map_err(|source| ProfilerError::Spawn {
        program: program.to_string(),
        source,
    })?;
    let expression = command.stderr_to_stdout().unchecked();
    let guard = SignalGuard::install().map_err(|source| ProfilerError::Spawn {
        program: program.to_string(),
        source,
    })?;
    let reader = expression.reader().map_err(|source| match source.kind() {
        std::io::ErrorKind::NotFound => ProfilerError::NotFound {
            program: program.to_string(),
            hint: String::new(),
        },
        _ => ProfilerError::Spawn {
            program: program.to_string(),
            source,
        },
    })?;
    guard.watch(reader.pids());
    let mut lines = BufReader::new(&reader);
    let mut buf = Vec::new();
    loop {
        buf.clear();
        match lines.read_until(b'\n', &mut buf) {
            Ok(0) => break,
            Ok(_) => {
                // Keep the log byte-exact; show the line lossily decoded.
                let _ = log_file.write_all(&buf);
                let line = String::from_utf8_lossy(&buf);
                on_line(line.trim_end_matches(['\n', '\r']));
            }
            // EINTR from our own signal handling: keep reading until the profiler closes its output.
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        }
    }
    let _ = log_file.flush();
    let output = loop {
        match reader.try_wait() {
            Ok(Some(output)) => break output.status,
            Ok(None) => std::thread::sleep(std::time::Duration::from_millis(20)),
            Err(source) => {
                return Err(ProfilerError::Spawn {
                    program: program.to_string(),
                    source,
                })
            }
        }
    };
    Ok(Finished {
        code: output.code(),
        killed_by: output.signal(),
        interrupted_by: guard.received(),
    })
}
