//! Turning captures into readable profiles: `view` for each NEFF/NTFF pair (into `views/` of a run or
//! report directory), and the list of what was viewed (`neuron-views.json`), which tells a Neuron run
//! directory apart and says which rank, process and core each profile came from.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::process::{run_watched, Failure, Flow, ProfilerError};
use crate::profiler::neuron::capture::cli::{resolve_program, view_output, NeuronCli, ViewInput};
use crate::profiler::neuron::capture::completion::{Completion, SETTLE};
use crate::profiler::neuron::capture::inspect::CapturePair;
use crate::profiler::neuron::capture::pipeline::NeuronPipeline;
use crate::profiler::neuron::capture::pipeline::ViewFormat;
// What capture hands the readers; named here too, as the manifest lists them.
pub use crate::profiler::neuron::readers::viewed::Viewed;

use crate::file_kind;
use crate::file_kind::FileError;
use crate::report::inside;
pub use crate::run::{NEURON_VIEWS_DIR as VIEWS_DIR, NEURON_VIEWS_MANIFEST as MANIFEST};

#[derive(Debug, Serialize, Deserialize)]
struct Manifest {
    profiles: Vec<Viewed>,
}

/// Writes the manifest into `dir`, outputs relative to it.
pub fn write_manifest(dir: &Path, viewed: &[Viewed]) -> Result<()> {
    let profiles = viewed
        .iter()
        .map(|v| Viewed {
            output: v.output.strip_prefix(dir).unwrap_or(&v.output).into(),
            ..v.clone()
        })
        .collect();
    let path = dir.join(MANIFEST);
    let text = serde_json::to_string_pretty(&Manifest { profiles })
        .map_err(|e| Error::Usage(format!("could not serialise {}: {e}", path.display())))?;
    std::fs::write(&path, text + "\n").map_err(|source| Error::Write { path, source })
}

/// The largest manifest read: one line per profile viewed.
const MANIFEST_LIMIT: u64 = 16 << 20;

/// The manifest of a Neuron run directory, outputs resolved against it; `None` when `dir` is not one.
pub fn read_manifest(dir: &Path) -> Result<Option<Vec<Viewed>>> {
    let path = dir.join(MANIFEST);
    // A stranger's directory may hold anything under the name: not a link, a FIFO or a device.
    let text = file_kind::read_small(
        &path,
        MANIFEST_LIMIT,
        "the list of profiles a Neuron run viewed",
        "restore it or report on the `views/` outputs directly",
    )
    .map_err(|e| match e {
        FileError::Refused { reason } => Error::Usage(format!("{}: {reason}", path.display())),
        FileError::Io { source } => {
            Error::Usage(format!("could not read {}: {source}", path.display()))
        }
    })?;
    let Some(text) = text else {
        return Ok(None);
    };
    let manifest: Manifest = serde_json::from_str(&text).map_err(|e| {
        Error::Usage(format!(
            "{}: line {}: {e}; the file lists the profiles a Neuron run viewed: restore it or report on the `views/` outputs directly",
            path.display(),
            e.line()
        ))
    })?;
    // A run lists only its own `views/` outputs: an entry reaching outside the directory would read
    // whatever file a stranger's directory names.
    let outside = manifest.profiles.iter().find(|v| {
        !v.output
            .components()
            .all(|c| matches!(c, std::path::Component::Normal(_)))
    });
    if let Some(v) = outside {
        return Err(Error::Usage(format!(
            "{}: lists `{}`, which is not inside the run directory; the file lists only a Neuron run's own `views/` outputs: restore it or report on those outputs directly",
            path.display(),
            v.output.display()
        )));
    }
    Ok(Some(
        manifest
            .profiles
            .into_iter()
            .map(|v| Viewed {
                output: dir.join(&v.output),
                ..v
            })
            .collect(),
    ))
}

/// The scope of one inspect pair: its process and NeuronCore (several NEFFs of one process keep
/// their hash apart).
pub fn pair_viewed(pair: &CapturePair, rank: Option<u32>, several_neffs: bool) -> Viewed {
    let hash = if several_neffs {
        format!(", neff {}", pair.hash)
    } else {
        String::new()
    };
    Viewed {
        label: format!("pid {}, NeuronCore {}{hash}", pair.pid, pair.vnc),
        rank,
        process_id: Some(u64::from(pair.pid)),
        device: Some(format!("NeuronCore {}", pair.vnc)),
        output: PathBuf::new(),
        command: Vec::new(),
    }
}

/// A file stem for a pair's `view` output that no other pair shares.
pub fn pair_stem(pair: &CapturePair) -> String {
    let ts = pair
        .timestamp
        .as_deref()
        .map_or(String::new(), |t| format!("_{t}"));
    format!(
        "pid{}{ts}_{}_instid{}_vnc{}",
        pair.pid, pair.hash, pair.instid, pair.vnc
    )
}

/// Runs `view` on `input` into `views/<stem>` under `dir`, its output logged to `views/<stem>.log`;
/// returns what it wrote. A failure is exit 4 with the log's tail.
pub fn view_one(
    pipeline: &NeuronPipeline,
    input: &ViewInput,
    dir: &Path,
    stem: &str,
    grace: Duration,
    mut viewed: Viewed,
) -> Result<Viewed> {
    let path_env = std::env::var_os("PATH");
    let program = resolve_program(pipeline, path_env.as_deref())?;
    // `view` writes wherever it is told, following links: its output and log are checked to lie
    // inside `dir` through real folders, and not to be links themselves.
    let format = pipeline.view.format;
    let inside = |name: String| inside::unlinked_target(dir, &Path::new(VIEWS_DIR).join(name));
    let out = inside(format.file_name(stem))?;
    let log = inside(format!("{stem}.log"))?;
    let home = std::env::var_os("HOME");
    let cli = NeuronCli::view(
        &program,
        pipeline,
        input,
        format,
        &out,
        home.as_deref(),
        path_env.as_deref(),
    )?;
    let name = program.to_string_lossy().into_owned();
    // Parquet `view` serves a UI once its tables are written and never exits by itself.
    let mut completion = (format == ViewFormat::Parquet).then(|| Completion::new(&out, SETTLE));
    let finished = run_watched(
        &name,
        cli.expression(),
        &log,
        grace,
        &mut |_| Flow::Continue,
        &mut || {
            completion
                .as_mut()
                .map_or(Flow::Continue, Completion::check)
        },
    )
    .map_err(|e| not_started(e, &name, "pipeline.neuron.executable", &log))?;
    let failed = |cause: String| -> Error {
        ProfilerError::Failed(Box::new(Failure {
            what: format!("`{}`", cli.shell_line()),
            code: finished
                .code
                .map_or(String::new(), |c| format!(" (exit code {c})")),
            cause,
            fix: "run the command above by hand to see the tool's own message; check that the NEFF is the one the NTFF was captured from and that the Neuron tools match the runtime".into(),
            log: log.clone(),
            tail: log_tail(&log),
        }))
        .into()
    };
    // Ended by profile-run once its tables were whole and settled: its exit says nothing more.
    let ended_complete = finished.ended_when_complete && finished.interrupted_by.is_none();
    if !finished.success() && !ended_complete {
        return Err(failed("the profile could not be post-processed".into()));
    }
    let Some(written) = view_output(&out) else {
        return Err(failed(format!(
            "it ended without writing {} (nor {}@latest)",
            out.display(),
            out.display()
        )));
    };
    viewed.output = written;
    viewed.command = std::iter::once(name).chain(cli.argv()).collect();
    Ok(viewed)
}

/// A program that could not be started at all, with `named_by`, what names it (a setting of
/// Neuron's, or the command after `--`); other errors pass through.
pub fn not_started(e: ProfilerError, program: &str, named_by: &str, log: &Path) -> ProfilerError {
    let why = match e {
        ProfilerError::NotFound { .. } => "not found on PATH".to_string(),
        ProfilerError::Spawn { source, .. } => source.to_string(),
        other => return other,
    };
    ProfilerError::Failed(Box::new(Failure {
        what: format!("starting `{program}`"),
        code: String::new(),
        cause: why,
        fix: format!("check {named_by}: the program must exist and be executable on this machine"),
        log: log.to_path_buf(),
        tail: String::new(),
    }))
}

/// The last lines of a log, indented for an error message.
pub fn log_tail(log: &Path) -> String {
    let text = crate::run::read_run_text(log);
    let lines: Vec<&str> = text.lines().collect();
    let tail = &lines[lines.len().saturating_sub(8)..];
    if tail.is_empty() {
        return String::new();
    }
    format!("\n  last lines:\n    {}", tail.join("\n    "))
}
