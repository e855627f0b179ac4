//! ncu's own metric labels from a result's section layouts: every section names the metrics it shows
//! with a label (`gpu__time_duration.sum` → `Duration`), in its header and in its body's tables.

use super::wire::{Cursor, Value};

/// Nesting depth searched below a section: header → metric is two levels, body → item → table →
/// metric four; the margin covers layouts not seen yet without walking arbitrary bytes forever.
const MAX_DEPTH: usize = 8;

/// Adds to `out` every (metric name, label) pair found in one section message, in the order ncu
/// lists them (the header's metrics before the body's), skipping names already present so the
/// header's label wins over a chart's shorter one (`Compute (SM) Throughput`, not `Compute (SM) [%]`).
pub(crate) fn collect_labels(section: Cursor<'_>, out: &mut Vec<(String, String)>) {
    walk(section, 0, out);
}

fn walk(message: Cursor<'_>, depth: usize, out: &mut Vec<(String, String)>) {
    if depth > MAX_DEPTH {
        return;
    }
    let mut name = None;
    let mut label = None;
    let mut children = Vec::new();
    // A payload that is not a message (a string, packed numbers) fails to parse as one: nothing to take.
    let parsed = message.for_each(|f| {
        if let Value::Bytes(bytes, _) = f.value {
            match f.number {
                1 if name.is_none() => name = std::str::from_utf8(bytes).ok(),
                2 if label.is_none() => label = std::str::from_utf8(bytes).ok(),
                _ => {}
            }
            if let Ok(child) = f.as_message() {
                children.push(child);
            }
        }
        Ok(())
    });
    if parsed.is_err() {
        return;
    }
    if let (Some(name), Some(label)) = (name, label) {
        if is_metric_name(name) && is_label(label) {
            if !out.iter().any(|(n, _)| n == name) {
                out.push((name.to_string(), label.to_string()));
            }
            return;
        }
    }
    for child in children {
        walk(child, depth + 1, out);
    }
}

/// ncu metric names: `unit__counter[.rollup…]`, lower case.
fn is_metric_name(text: &str) -> bool {
    text.contains("__")
        && text
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'.')
}

fn is_label(text: &str) -> bool {
    !text.is_empty() && text.len() <= 80 && !text.chars().any(char::is_control)
}
