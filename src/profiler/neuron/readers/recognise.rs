//! Telling Neuron inputs apart by content and shape, not by extension: a full-JSON profile, a
//! summary-json, a summary-text table, a Parquet profile directory, or an inspect output directory
//! (which needs `view` before it can be read). [`load`] reads any readable one into the profile model.

use std::io::Read;
use std::path::{Path, PathBuf};

use super::{parquet, profile_json, summary_json, summary_text};
use crate::profiler::neuron::error::{NeuronError, Result};
use crate::profiler::neuron::readers::model::NeuronProfile;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InputKind {
    /// `view --output-format json`.
    ProfileJson,
    /// `view --output-format summary-json`.
    SummaryJson,
    /// `view --output-format summary-text`.
    SummaryText,
    /// A directory of Parquet tables (the path may be its parent holding one `<name>@latest/`).
    ParquetDir(PathBuf),
    /// `NEURON_RT_INSPECT_OUTPUT_DIR`: NEFF/NTFF pairs to `view` first.
    InspectDir,
}

/// Top-level keys only the full profile has.
const PROFILE_KEYS: &[&str] = &[
    "summary",
    "instruction",
    "dma",
    "cc_ops",
    "active_time",
    "semaphore_update",
    "metadata",
    "layer_summary",
    "stack_frame_function_name",
    "warnings",
    "profile_info",
];

/// How much of a file is looked at: enough for the log lines and the first key.
const HEAD: u64 = 64 * 1024;

pub fn recognise(path: &Path) -> Result<InputKind> {
    let meta = std::fs::metadata(path).map_err(|e| NeuronError::io(path, e))?;
    if meta.is_dir() {
        return recognise_dir(path);
    }
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or_default();
    if ext.eq_ignore_ascii_case("ntff") || ext.eq_ignore_ascii_case("neff") {
        return Err(NeuronError::Unrecognised {
            path: path.into(),
            message: "a NEFF or NTFF alone cannot be read: `neuron-explorer view -n NEFF -s NTFF` turns the \
                      pair into a profile; pass the inspect output directory or the `view` output"
                .into(),
        });
    }
    let mut head = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(HEAD).read_to_end(&mut head))
        .map_err(|e| NeuronError::io(path, e))?;
    let text = String::from_utf8_lossy(&head);
    let table = text.lines().any(|l| {
        let cells: Vec<String> = l
            .split('|')
            .map(|c| c.trim().to_ascii_lowercase())
            .collect();
        cells.len() >= 5 && cells[1..4] == ["group", "name", "value"]
    });
    if let Some(start) = text.find('{') {
        if let Some(key) = first_key(&text[start + 1..]) {
            return Ok(if PROFILE_KEYS.contains(&key.as_str()) {
                InputKind::ProfileJson
            } else {
                InputKind::SummaryJson
            });
        }
        if text[start + 1..].trim_start().starts_with('}') {
            return Ok(InputKind::ProfileJson); // `{}`: an empty profile
        }
    }
    if table {
        return Ok(InputKind::SummaryText);
    }
    Err(NeuronError::Unrecognised {
        path: path.into(),
        message:
            "not a Neuron profile: expected `view` output (json, summary-json, summary-text), a \
                  Parquet profile directory or an inspect output directory"
                .into(),
    })
}

/// The first object key after `{`, if the text starts with one.
fn first_key(after_brace: &str) -> Option<String> {
    let t = after_brace.trim_start();
    let body = t.strip_prefix('"')?;
    let mut escaped = false;
    let end = body.char_indices().find(|&(_, c)| {
        let stop = c == '"' && !escaped;
        escaped = c == '\\' && !escaped;
        stop
    })?;
    serde_json::from_str(&t[..end.0 + 2]).ok()
}

fn recognise_dir(dir: &Path) -> Result<InputKind> {
    let entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| NeuronError::io(dir, e))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    let name = |p: &Path| {
        p.file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned()
    };
    if entries.iter().any(|p| name(p).ends_with(".parquet")) {
        return Ok(InputKind::ParquetDir(dir.into()));
    }
    let latest: Vec<&PathBuf> = entries
        .iter()
        .filter(|p| p.is_dir() && name(p).ends_with("@latest"))
        .collect();
    if let [one] = latest.as_slice() {
        return Ok(InputKind::ParquetDir((*one).clone()));
    }
    let inspect = entries.iter().any(|p| {
        let n = name(p);
        (p.is_dir() && n.contains("_pid_")) || n.ends_with(".ntff") || n.ends_with(".neff")
    });
    if inspect {
        return Ok(InputKind::InspectDir);
    }
    Err(NeuronError::Unrecognised {
        path: dir.into(),
        message: format!(
            "{} directory: no Parquet tables, no single `<name>@latest/`, no `<instance>_pid_<pid>/` \
             inspect output",
            if latest.len() > 1 { "ambiguous" } else { "not a Neuron profile" }
        ),
    })
}

/// Read any recognised input that needs no `view` run.
pub fn load(path: &Path) -> Result<NeuronProfile> {
    match recognise(path)? {
        InputKind::ProfileJson => profile_json::read(path),
        InputKind::SummaryJson => Ok(NeuronProfile {
            source: path.into(),
            summaries: summary_json::read(path)?,
            ..NeuronProfile::default()
        }),
        InputKind::SummaryText => {
            let t = summary_text::read(path)?;
            Ok(NeuronProfile {
                source: path.into(),
                summaries: vec![t.summary],
                notes: t.notes,
                ..NeuronProfile::default()
            })
        }
        InputKind::ParquetDir(dir) => parquet::read(&dir),
        InputKind::InspectDir => Err(NeuronError::Unrecognised {
            path: path.into(),
            message: "an inspect output directory holds NEFF/NTFF pairs that need `neuron-explorer view` \
                      first; profile-run's Neuron driver runs it for each pair"
                .into(),
        }),
    }
}
