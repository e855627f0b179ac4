//! What `report` and `merge` refuse before reading anything or making a directory: an input that does
//! not exist (named as missing), one that is no file to read (a FIFO or a device: refused by kind
//! before any reader opens it, which could block or never end), and JSON that is no capture: an
//! empty object (`{}`) and profile-run's own report.json, which `diff` compares and a run directory
//! re-renders.

use std::io::Read;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::file_kind::special_kind;

/// How much of a file is looked at to tell what it is.
const HEAD: u64 = 64 * 1024;

/// Refuses an input that is a FIFO, a device or a socket, by kind and without opening it: every
/// reader (ncu's, Neuron's, `diff`'s report.json) would block in `open()` or read without end.
pub fn check_readable(input: &Path) -> Result<()> {
    match special_kind(input) {
        Some(kind) => Err(Error::Usage(format!(
            "{} {kind}, not a file profile-run can read; give a run directory, a `--page raw` CSV export, an .ncu-rep, a Neuron profile or a report.json",
            input.display()
        ))),
        None => Ok(()),
    }
}

/// `R_raw.csv.gz`: a gzip-compressed CSV export, by its name. Every profiler tells it apart so: ncu
/// decompresses it before reading, the others leave it to ncu.
pub fn is_compressed_csv(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.to_ascii_lowercase().ends_with(".csv.gz"))
}

/// Refuses the first input that is missing, no file to read, or JSON profile-run cannot report on.
pub fn check_report_inputs(inputs: &[PathBuf]) -> Result<()> {
    for input in inputs {
        check_one(input)?;
    }
    Ok(())
}

fn check_one(input: &Path) -> Result<()> {
    if std::fs::symlink_metadata(input).is_err() {
        let shown = input.to_string_lossy();
        let a_file_name = [".ncu-rep", ".gz", ".csv", ".json"]
            .iter()
            .any(|ext| shown.ends_with(ext));
        let override_hint = if shown.contains('/') || a_file_name {
            ""
        } else {
            " (an override is written `dotted.key=value`)"
        };
        return Err(Error::Usage(format!(
            "{} does not exist; give a run directory, an .ncu-rep[.gz], a `--page raw` CSV export (.csv or .csv.gz), a CUPTI trace (cupti.<pid>.trace[.gz]) or a Neuron profile{override_hint}",
            input.display()
        )));
    }
    check_readable(input)?;
    if !input.is_file() {
        return Ok(());
    }
    let mut head = Vec::new();
    // An unreadable file is left to the reader that owns it, which names the error.
    let Ok(file) = std::fs::File::open(input) else {
        return Ok(());
    };
    if file.take(HEAD).read_to_end(&mut head).is_err() {
        return Ok(());
    }
    match json_kind(&head) {
        JsonKind::EmptyObject => Err(Error::Usage(format!(
            "{}: an empty JSON object (`{{}}`) holds no profile; give a Neuron `view` output (json, summary-json), an .ncu-rep or a `--page raw` CSV export",
            input.display()
        ))),
        JsonKind::OwnReport => Err(Error::Usage(format!(
            "{}: this is a report.json written by profile-run, not a capture; compare two with `profile-run diff A.json B.json`, or re-render or combine runs by giving `profile-run report`/`merge` their run directories or captures",
            input.display()
        ))),
        JsonKind::Other => Ok(()),
    }
}

#[derive(Debug, PartialEq, Eq)]
enum JsonKind {
    EmptyObject,
    OwnReport,
    Other,
}

/// What a file's first bytes say it is, as far as these refusals go.
fn json_kind(head: &[u8]) -> JsonKind {
    let text = String::from_utf8_lossy(head);
    let text = text.trim_start_matches('\u{feff}').trim();
    let Some(body) = text.strip_prefix('{') else {
        return JsonKind::Other;
    };
    if body.trim() == "}" {
        return JsonKind::EmptyObject;
    }
    // profile-run writes `schema_version` first and `generator` second; a report re-serialised by
    // another tool may reorder keys, so both are looked for anywhere in the head.
    let generator = key_starts_with(text, "\"generator\"", "\"profile-run");
    if text.contains("\"schema_version\"") && generator {
        return JsonKind::OwnReport;
    }
    JsonKind::Other
}

/// Whether `key` is followed (after `:` and spaces) by a string starting with `value`.
fn key_starts_with(text: &str, key: &str, value: &str) -> bool {
    text.match_indices(key).any(|(at, _)| {
        let rest = text[at + key.len()..].trim_start();
        rest.strip_prefix(':')
            .is_some_and(|v| v.trim_start().starts_with(value))
    })
}

#[cfg(test)]
mod tests {
    use super::{json_kind, JsonKind};

    #[test]
    fn empty_objects_and_own_reports_are_told_apart_from_profiles() {
        assert_eq!(json_kind(b"{}\n"), JsonKind::EmptyObject);
        assert_eq!(json_kind(b"  {\n }  "), JsonKind::EmptyObject);
        let own =
            b"{\n  \"schema_version\": 4,\n  \"generator\": \"profile-run 0.1.0\",\n  \"run\": {}";
        assert_eq!(json_kind(own), JsonKind::OwnReport);
        assert_eq!(json_kind(b"{\"summary\": [{}]}"), JsonKind::Other);
        assert_eq!(
            json_kind(b"{\"schema_version\": 1, \"generator\": \"other\"}"),
            JsonKind::Other
        );
        assert_eq!(json_kind(b"\"ID\",\"Process ID\""), JsonKind::Other);
    }
}
