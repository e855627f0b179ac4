//! The flame graph of GPU time by Python call stack: the scope at the bottom, each region above its
//! parent with a width proportional to its inclusive time, children side by side in tree order, so
//! the Python frames (and the ranges they ran in) that spent the GPU time stand out as wide towers.
//! Drawn for scopes whose regions come from `stack_frames`; the gap beside a region's children is its
//! self time (results launched from that frame itself, or without a Python stack).

use std::collections::HashMap;
use std::fmt::Write as _;

use super::draw::{legend, legend_extra, n, open, value, TOP};
use super::time_of;
use crate::region::RegionKind;
use crate::report::format::{self, escape_html as esc};
use crate::report::model::Scope;

/// The origin the regioner gives regions made from call-stack frames.
pub(super) const FRAME_ORIGIN: &str = "stack_frames";
const LEFT: f64 = 8.0;
const WIDTH: f64 = 1144.0;
const BAR: f64 = 18.0;
/// Pixels per character of a label inside a bar (12 px sans-serif, on average).
const CHAR: f64 = 7.0;
const FRAME_COLOURS: [&str; 3] = ["#E69F00", "#D55E00", "#F0C05A"];
const RANGE_COLOUR: &str = "#56B4E9";

const LEGEND: &str = "Width: inclusive GPU time · orange: Python frame (single-child chains \
     collapsed into the innermost frame) · blue: range · hover for the full path; a bar too narrow \
     for a readable name shows none. Children are laid end to end: the report holds totals, not \
     timestamps.";
/// The fewest characters of a name worth showing in a bar: fewer read as noise (`fo…`).
const MIN_LABEL: usize = 8;

/// Whether a scope has call-stack regions to draw.
pub(super) fn has_frames(scope: &Scope) -> bool {
    scope
        .regions
        .iter()
        .any(|r| r.kind == RegionKind::Stack && r.origin == FRAME_ORIGIN)
}

/// A placed bar: region index, depth from the bottom, start and width in time.
struct Bar {
    region: usize,
    level: usize,
    start: f64,
    width: f64,
}

/// Lays the stack regions out: each child starts where its previous sibling ended, from its parent's
/// start.
fn bars(scope: &Scope, time: &str) -> Vec<Bar> {
    let mut next_start: HashMap<Option<&str>, f64> = HashMap::new();
    let mut start_of: HashMap<&str, f64> = HashMap::new();
    let mut out = Vec::new();
    for (i, r) in scope.regions.iter().enumerate() {
        if r.kind != RegionKind::Stack {
            continue;
        }
        let width = time_of(&r.inclusive, time);
        let parent = r.parent.as_deref();
        let parent_start = match parent {
            Some(p) => match start_of.get(p) {
                Some(s) => *s,
                None => continue, // its parent was not drawn
            },
            None => 0.0,
        };
        let start = *next_start.entry(parent).or_insert(parent_start);
        next_start.insert(parent, start + width);
        start_of.insert(r.path.as_str(), start);
        out.push(Bar {
            region: i,
            level: r.segments.len(),
            start,
            width,
        });
    }
    out
}

/// The flame graph of one scope.
pub(super) fn flame_chart(scope: &Scope, time: &str, unit: &str, id: &str, title: &str) -> String {
    let total = time_of(&scope.total.metrics, time);
    let bars = bars(scope, time);
    let levels = bars.iter().map(|b| b.level).max().unwrap_or(0);
    let base = TOP + BAR * levels as f64;
    let height = base + BAR + 48.0 + legend_extra(LEGEND);
    let desc = format!(
        "GPU time by Python call stack: the scope ({}) at the bottom, each region above the one it \
         ran in, its width its inclusive time; orange bars are Python frames, blue ones ranges; the \
         gap beside a bar's children is its self time.",
        value(total, unit)
    );
    let mut out = String::new();
    open(&mut out, id, title, &desc, height);
    let px = |t: f64| if total > 0.0 { t / total * WIDTH } else { 0.0 };
    bar(
        &mut out,
        (LEFT, base, WIDTH),
        "#999999",
        &format!("{} — {}", scope.label, value(total, unit)),
        &scope.label,
    );
    for b in &bars {
        let r = &scope.regions[b.region];
        let colour = if r.origin == FRAME_ORIGIN {
            FRAME_COLOURS[b.level % FRAME_COLOURS.len()]
        } else {
            RANGE_COLOUR
        };
        let tip = format!(
            "{} — {} ({} of the scope), {} result(s)",
            r.segments.join(" / "),
            value(b.width, unit),
            format::share(r.time_share),
            r.kernel_count
        );
        let y = base - BAR * b.level as f64;
        bar(
            &mut out,
            (LEFT + px(b.start), y, px(b.width)),
            colour,
            &tip,
            &r.name,
        );
    }
    legend(&mut out, base + BAR + 24.0, LEGEND);
    out.push_str("</svg>");
    out
}

/// One bar with its tooltip, and its name inside when it fits.
fn bar(out: &mut String, (x, y, w): (f64, f64, f64), colour: &str, tip: &str, name: &str) {
    let _ = writeln!(
        out,
        "<g><title>{}</title>\n<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{colour}\" \
         stroke=\"#ffffff\"/>",
        esc(tip),
        n(x),
        n(y),
        n(w.max(0.5)),
        n(BAR - 1.0)
    );
    let fits = ((w - 6.0) / CHAR).floor().max(0.0) as usize;
    if fits >= name.chars().count() || fits >= MIN_LABEL {
        let _ = writeln!(
            out,
            "<text x=\"{}\" y=\"{}\" fill=\"#1a1a1a\">{}</text>",
            n(x + 3.0),
            n(y + 13.0),
            esc(&format::shorten(name, fits))
        );
    }
    out.push_str("</g>\n");
}
