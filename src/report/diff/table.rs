//! The diff as a plain-text table for a terminal: the verdict, each gate, then per matched scope one
//! row per region (time in both runs, the change, per-visit medians and noise when known, and the
//! gated metrics' changes), and the regions only one run has.

use std::fmt::Write;

use super::{Diff, GateStatus, OneSided, RegionDiff, Side, Verdict};
use crate::console;
use crate::report::format::{cut_long, value};

pub fn table(diff: &Diff) -> String {
    let mut out = String::new();
    let verdict = match diff.verdict {
        Verdict::Pass => "PASS",
        Verdict::Fail => "FAIL",
        Verdict::NotGated => "NO GATE",
    };
    let _ = writeln!(out, "{verdict} — {}", diff.summary);
    let _ = writeln!(out, "A: {}\nB: {}", diff.a, diff.b);
    for d in &diff.incomparable {
        let _ = writeln!(out, "differs: {}: A {} | B {}", d.what, d.a, d.b);
    }
    for w in &diff.warnings {
        let _ = writeln!(out, "warning: {w}");
    }
    for gate in &diff.gates {
        let status = format!("{:?}", gate.status).to_lowercase();
        let _ = writeln!(out, "gate {} — {status}: {}", gate.gate, gate.why);
        for f in gate
            .findings
            .iter()
            .filter(|f| f.status == GateStatus::Fail)
        {
            let _ = writeln!(out, "  {} / {}: {}", f.scope, f.region, f.why);
        }
    }
    let gated: Vec<&str> = diff
        .gates
        .iter()
        .filter_map(|g| g.metric.as_deref())
        .collect();
    for scope in &diff.scopes {
        let _ = writeln!(out, "\n{}", scope.key);
        let mut header = vec![
            "region".to_string(),
            "time A".into(),
            "time B".into(),
            "Δ time".into(),
            "median Δ (noise)".into(),
        ];
        header.extend(gated.iter().map(|g| format!("Δ {g}")));
        let mut rows = vec![header];
        // The largest time changes first, either way: what a reader looks for.
        let mut regions: Vec<&RegionDiff> = scope.regions.iter().collect();
        regions.sort_by(|x, y| size(y).total_cmp(&size(x)));
        rows.extend(regions.iter().map(|r| row(r, &diff.time_unit, &gated)));
        out.push_str(&align(&rows));
        let time = diff.time_metric.as_deref();
        for r in &scope.one_sided {
            let _ = writeln!(out, "{}", one_sided(r, time));
        }
    }
    for key in &diff.scopes_added {
        let _ = writeln!(out, "\n+ scope {key} (only in B)");
    }
    for key in &diff.scopes_removed {
        let _ = writeln!(out, "\n- scope {key} (only in A)");
    }
    for note in &diff.notes {
        let _ = writeln!(out, "\nnote: {note}");
    }
    out
}

/// How much a region's time changed, for ordering: a region new from zero counts as the largest.
fn size(r: &RegionDiff) -> f64 {
    r.time
        .as_ref()
        .map_or(0.0, |t| t.delta_pct.map_or(f64::INFINITY, f64::abs))
}

/// `+ path (new in B: 12.50% of the scope)` or `- path (gone from A: …)`.
fn one_sided(r: &OneSided, time: Option<&str>) -> String {
    let (mark, words) = match r.side {
        Side::New => ("+", "new in B"),
        Side::Gone => ("-", "gone from A"),
    };
    let share = time
        .and_then(|t| r.share_pct.get(t))
        .map_or(String::new(), |s| format!(": {s:.2}% of the scope's time"));
    format!(
        "  {mark} {} ({words}{share})",
        console::escape_controls(&cut_long(&r.path))
    )
}

fn pct(p: Option<f64>) -> String {
    p.map_or("new".into(), |p| format!("{p:+.2}%"))
}

fn row(r: &RegionDiff, unit: &str, gated: &[&str]) -> Vec<String> {
    let time = r.time.as_ref();
    let mut cells = vec![
        // Cut and escaped here, not only when printed, so the columns line up with what is shown;
        // the diff's JSON keeps the whole path.
        console::escape_controls(&cut_long(&r.path)).into_owned(),
        value(time.map(|t| t.a), unit),
        value(time.map(|t| t.b), unit),
        time.map_or("—".into(), |t| pct(t.delta_pct)),
        r.per_visit.as_ref().map_or("—".into(), |v| {
            // No spread (single visits) means the noise is unknown, not zero, as the gate says.
            let noise = if v.noise > 0.0 {
                value(Some(v.noise), unit)
            } else {
                "unknown".into()
            };
            format!("{} ({noise})", pct(v.median.delta_pct))
        }),
    ];
    for g in gated {
        let m = r.metrics.iter().find(|m| m.name == *g);
        cells.push(m.map_or("—".into(), |m| pct(m.change.delta_pct)));
    }
    cells
}

/// Left-aligned columns, two spaces apart, indented by two. Padding is written out rather than
/// asked of `format!`, whose width argument panics past 65,535 (a region path can be longer).
fn align(rows: &[Vec<String>]) -> String {
    let widths: Vec<usize> = (0..rows[0].len())
        .map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
        .collect();
    let mut out = String::new();
    for r in rows {
        let line: Vec<String> = r
            .iter()
            .zip(&widths)
            .map(|(cell, w)| {
                let pad = w.saturating_sub(cell.chars().count());
                format!("{cell}{}", " ".repeat(pad))
            })
            .collect();
        let _ = writeln!(out, "  {}", line.join("  ").trim_end());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_column_wider_than_a_format_width_is_padded_without_panicking() {
        let wide = "p".repeat(70_000);
        let rows = vec![
            vec!["region".to_string(), "time".to_string()],
            vec![wide.clone(), "1 ns".to_string()],
        ];
        let text = align(&rows);
        let header = text.lines().next().unwrap();
        assert_eq!(header, format!("  region{}  time", " ".repeat(70_000 - 6)));
        assert!(text.contains(&format!("  {wide}  1 ns")));
    }
}
