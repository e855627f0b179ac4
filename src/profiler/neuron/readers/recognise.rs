//! Telling Neuron inputs apart by content and shape, not by extension: a full-JSON profile, a
//! summary-json, a summary-text table, a Parquet profile directory, or an inspect output directory
//! (which needs `view` before it can be read). [`load`] reads any readable one into the profile model.

use std::io::Read;
use std::path::{Path, PathBuf};

use super::{parquet, profile_json, summary_json, summary_text};
use crate::profiler::neuron::error::{NeuronError, NeuronResult as Result};
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
    /// A folder of `view` outputs (a sweep, say): each file one profile, in natural name order
    /// (`x136` before `x1000`).
    ProfileFolder(Vec<PathBuf>),
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
    // profiler 2.27's further keys, in no fixed order: any of them may come first
    "summary_groups",
    "summary_group_order",
    "terminology",
    "neff_header",
    "neff_node",
    "model_info",
    "nc_mem_usage",
    "dma_queues_info",
    "dma_throughput",
    "instruction_usage",
    "pending_dma",
    "ham",
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
        if let Some((key, value)) = first_key(&text[start + 1..]) {
            // A key of a later release may come first: its list beside the lists a profile is made of.
            if PROFILE_KEYS.contains(&key.as_str())
                || (value == Some('[') && has_profile_lists(&text[start..]))
            {
                return Ok(InputKind::ProfileJson);
            }
            // A summary-json maps profile ids to objects of metrics; JSON whose first value is
            // anything else (profile-run's own report.json and run.json) is no Neuron profile.
            if value == Some('{') {
                return Ok(InputKind::SummaryJson);
            }
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

/// Whether the head of a document names `summary`, `instruction` or `layer_summary` as a key.
fn has_profile_lists(text: &str) -> bool {
    ["\"summary\"", "\"instruction\"", "\"layer_summary\""]
        .iter()
        .any(|key| {
            text.match_indices(key)
                .any(|(at, k)| text[at + k.len()..].trim_start().starts_with(':'))
        })
}

/// The first object key after `{`, if the text starts with one, and the first character of its value.
fn first_key(after_brace: &str) -> Option<(String, Option<char>)> {
    let t = after_brace.trim_start();
    let body = t.strip_prefix('"')?;
    let mut escaped = false;
    let end = body.char_indices().find(|&(_, c)| {
        let stop = c == '"' && !escaped;
        escaped = c == '\\' && !escaped;
        stop
    })?;
    let key = serde_json::from_str(&t[..end.0 + 2]).ok()?;
    let value = t[end.0 + 2..].trim_start().strip_prefix(':')?;
    Some((key, value.trim_start().chars().next()))
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
    // `view` outputs first: a sweep keeps each profile's NTFF beside its JSON.
    let mut profiles: Vec<PathBuf> = entries
        .iter()
        .filter(|p| p.is_file() && is_view_output(p))
        .cloned()
        .collect();
    if !profiles.is_empty() {
        profiles.sort_by_key(|p| natural_key(&name(p)));
        return Ok(InputKind::ProfileFolder(profiles));
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

/// A `.json` or `.txt` file that reads as a `view` output.
fn is_view_output(path: &Path) -> bool {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or_default();
    ["json", "txt"].iter().any(|e| ext.eq_ignore_ascii_case(e))
        && matches!(
            recognise(path),
            Ok(InputKind::ProfileJson | InputKind::SummaryJson | InputKind::SummaryText)
        )
}

/// Runs of digits compare as numbers, the rest as text: `x136` < `x1000`.
pub fn natural_key(name: &str) -> Vec<(String, u128)> {
    let mut out = Vec::new();
    let mut text = String::new();
    let mut chars = name.chars().peekable();
    while let Some(c) = chars.next() {
        if c.is_ascii_digit() {
            let mut digits = c.to_string();
            while let Some(d) = chars.next_if(char::is_ascii_digit) {
                digits.push(d);
            }
            out.push((
                std::mem::take(&mut text),
                digits.parse().unwrap_or(u128::MAX),
            ));
        } else {
            text.push(c);
        }
    }
    out.push((text, 0));
    out
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
        InputKind::ProfileFolder(_) => Err(NeuronError::Unrecognised {
            path: path.into(),
            message: "a folder of profiles is read one profile at a time: pass it to `profile-run \
                      report`, which gives each profile its own scope"
                .into(),
        }),
        InputKind::InspectDir => Err(NeuronError::Unrecognised {
            path: path.into(),
            message: "an inspect output directory holds NEFF/NTFF pairs that need `neuron-explorer view` \
                      first; profile-run's Neuron driver runs it for each pair"
                .into(),
        }),
    }
}
