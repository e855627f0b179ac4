//! `view --output-format summary-text`: a `| Group | Name | Value |` table whose group cell is printed
//! once per group, values with units (`53.78 ms`, `4.334 GiB`, `85.22 %`), then a memory-usage table
//! that is not read. Values are converted to the summary-json units: seconds, bytes, FLOPs, 0–1
//! fractions. The tool prints "Spill" as "Syncill"; names are repaired.

use std::path::Path;

use crate::profiler::neuron::error::{NeuronError, NeuronResult as Result};
use crate::profiler::neuron::readers::model::Summary;
use crate::profiler::neuron::readers::summary_json::{check_text, check_value, Entry, Scalar};

/// The summary and what could not be converted (unknown units are kept as text, with a note).
#[derive(Debug, Clone, PartialEq)]
pub struct SummaryText {
    pub summary: Summary,
    pub notes: Vec<String>,
}

pub fn read(path: &Path) -> Result<SummaryText> {
    let text = std::fs::read_to_string(path).map_err(|e| NeuronError::io(path, e))?;
    parse(path, &text)
}

pub fn parse(path: &Path, text: &str) -> Result<SummaryText> {
    let profile_id = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut out = SummaryText {
        summary: Summary {
            profile_id,
            ..Summary::default()
        },
        notes: Vec::new(),
    };
    let mut in_table = false;
    let mut group = String::new();
    for (n, line) in text.lines().enumerate() {
        let line_no = n + 1;
        let Some(cells) = cells(line) else {
            if in_table {
                break; // the metric table ended; what follows is the memory-usage table
            }
            continue;
        };
        if cells.is_empty() {
            continue; // a rule line such as `+-----+` or `|-----|`
        }
        if !in_table {
            in_table = is_header(&cells);
            continue;
        }
        if is_header(&cells) {
            continue;
        }
        let [g, name, value] = cells.as_slice() else {
            return Err(NeuronError::parse(
                path,
                format!("line {line_no}"),
                format!(
                    "expected 3 cells (Group | Name | Value), found {}",
                    cells.len()
                ),
            ));
        };
        if !g.is_empty() {
            group = g.to_string();
        }
        let name = repair(name);
        let key = if out.summary.metrics.contains_key(name.as_str())
            || out.summary.text.contains_key(&name)
        {
            format!("{group}.{name}")
        } else {
            name
        };
        store(&mut out, key, value, path, line_no)?;
    }
    if !in_table {
        return Err(NeuronError::parse(
            path,
            format!("line {}", text.lines().count()),
            "no `| Group | Name | Value |` table found; is this `view --output-format summary-text` output?",
        ));
    }
    Ok(out)
}

/// Stores one row's value, checked as summary-json's are: a negative, NaN or infinite number, or a
/// measure whose value is not a number, is refused naming the line and the key.
fn store(
    out: &mut SummaryText,
    key: String,
    value: &str,
    path: &Path,
    line_no: usize,
) -> Result<()> {
    let refused =
        |message: String| NeuronError::parse(path, format!("line {line_no}, key `{key}`"), message);
    let entry = match convert(value) {
        Converted::Number(v) => check_value(&key, Scalar::Number(v)),
        Converted::Missing => Ok(Entry::Number(None)),
        // `NaN`, `inf` and words land here: numbers and measures are checked as text.
        Converted::Text => check_text(&key, value),
        Converted::UnknownUnit(unit) => {
            if let Some(Ok(x)) = leading_number(value) {
                check_value(&key, Scalar::Number(x)).map_err(&refused)?;
            }
            out.notes.push(format!(
                "{}: line {line_no}: unit `{unit}` of `{key}` is not known; kept as text",
                path.display()
            ));
            Ok(Entry::Text(value.to_string()))
        }
    }
    .map_err(&refused)?;
    match entry {
        Entry::Number(v) => {
            out.summary.metrics.insert(key.into(), v);
        }
        Entry::Text(t) => {
            out.summary.text.insert(key, t);
        }
    }
    Ok(())
}

/// The cells of a `|`-delimited row, `Some(vec![])` for a rule line, `None` for anything else.
fn cells(line: &str) -> Option<Vec<String>> {
    let t = line.trim();
    if t.starts_with('+') && t.chars().all(|c| matches!(c, '+' | '-' | '=')) {
        return Some(Vec::new());
    }
    let inner = t.strip_prefix('|')?.strip_suffix('|')?;
    if inner
        .chars()
        .all(|c| matches!(c, '|' | '-' | '+' | '=' | ':' | ' '))
    {
        return Some(Vec::new());
    }
    Some(inner.split('|').map(|c| c.trim().to_string()).collect())
}

fn is_header(cells: &[String]) -> bool {
    let lower: Vec<String> = cells.iter().map(|c| c.to_ascii_lowercase()).collect();
    lower == ["group", "name", "value"]
}

/// "Syncill" is how the tool prints "spill" (`Syncill_save_bytes`): the name is repaired to the
/// summary's own field name (`spill_save_bytes`, as the JSON summary spells it), so it meets the
/// metrics, labels and rules that know that name.
fn repair(name: &str) -> String {
    name.replace("Syncill", "spill")
        .replace("syncill", "spill")
        .replace("SYNCILL", "spill")
}

#[derive(Debug, PartialEq)]
enum Converted {
    Number(f64),
    Missing,
    Text,
    UnknownUnit(String),
}

/// `53.78 ms` → 0.05378; `85.22 %` → 0.8522; `4.334 GiB` → bytes; `654.344 GFLOPS` → FLOPs.
fn convert(value: &str) -> Converted {
    let v = value.trim();
    if v.is_empty()
        || matches!(
            v.to_ascii_lowercase().as_str(),
            "n/a" | "na" | "-" | "none" | "null"
        )
    {
        return Converted::Missing;
    }
    let Some(Ok(x)) = leading_number(v) else {
        return Converted::Text;
    };
    let unit = v[number_end(v)..].trim();
    match scale(unit) {
        Some(f) => Converted::Number(x * f),
        None => Converted::UnknownUnit(unit.to_string()),
    }
}

/// Where the number a value starts with ends (digits, sign, decimal point, exponent, thousands commas).
fn number_end(v: &str) -> usize {
    v.find(|c: char| !(c.is_ascii_digit() || matches!(c, '.' | '-' | '+' | 'e' | 'E' | ',')))
        .unwrap_or(v.len())
}

/// The number a value starts with, before its unit; `None` where it starts with none.
fn leading_number(value: &str) -> Option<std::result::Result<f64, std::num::ParseFloatError>> {
    let v = value.trim();
    let end = number_end(v);
    (end > 0).then(|| v[..end].replace(',', "").parse::<f64>())
}

fn scale(unit: &str) -> Option<f64> {
    const KI: f64 = 1024.0;
    Some(match unit {
        "" | "B" | "bytes" | "flops/byte" | "FLOPS" | "flops" | "x" => 1.0,
        "s" | "sec" => 1.0,
        "ms" => 1e-3,
        "us" | "µs" => 1e-6,
        "ns" => 1e-9,
        "%" => 0.01,
        "KiB" => KI,
        "MiB" => KI * KI,
        "GiB" => KI * KI * KI,
        "TiB" => KI * KI * KI * KI,
        "KB" => 1e3,
        "MB" => 1e6,
        "GB" => 1e9,
        "KFLOPS" => 1e3,
        "MFLOPS" => 1e6,
        "GFLOPS" => 1e9,
        "TFLOPS" => 1e12,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_convert_to_base_units() {
        let n = |s| match convert(s) {
            Converted::Number(x) => x,
            other => panic!("{s}: {other:?}"),
        };
        assert!((n("53.78 ms") - 0.05378).abs() < 1e-12);
        assert!((n("322.1 us") - 322.1e-6).abs() < 1e-15);
        assert_eq!(n("2 GiB"), 2.0 * 1024.0 * 1024.0 * 1024.0);
        assert_eq!(n("340.5 KiB"), 340.5 * 1024.0);
        assert_eq!(n("654.5 GFLOPS"), 654.5e9);
        assert!((n("85.22 %") - 0.8522).abs() < 1e-12);
        assert_eq!(n("69.75 flops/byte"), 69.75);
        assert_eq!(n("18935"), 18935.0);
        assert_eq!(convert("N/A"), Converted::Missing);
        assert_eq!(
            convert("3.1 parsecs"),
            Converted::UnknownUnit("parsecs".into())
        );
        assert_eq!(convert("2.29.18.0%kaena"), Converted::Text);
    }

    #[test]
    fn syncill_is_spill() {
        assert_eq!(repair("Syncill_reload_bytes"), "spill_reload_bytes");
        assert_eq!(repair("syncill_save_bytes"), "spill_save_bytes");
    }
}
