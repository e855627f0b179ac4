//! The instances chart: per region, the spread of its visits' inclusive times (fastest, median,
//! 90th percentile, slowest) on one axis.

use std::fmt::Write as _;

use super::draw::{axis, colour, label, legend, n, open, scale, value, PLOT_X, ROW, TOP, VALUE_X};
use super::instances;
use crate::report::format::{self, escape_html as esc};
use crate::report::model::{Percentiles, Region, Scope};

pub(super) fn instances_chart(
    scope: &Scope,
    rows: &[usize],
    unit: &str,
    id: &str,
    title: &str,
) -> String {
    let extent = rows
        .iter()
        .filter_map(|&i| instances(&scope.regions[i]))
        .map(|inst| inst.max)
        .fold(0.0, f64::max);
    let height = TOP + ROW * rows.len() as f64 + 48.0;
    let desc = "Per region, the inclusive time of each visit: whisker from the fastest to the \
                slowest visit, box from the median to the 90th percentile, a circle at the slowest \
                visit when it lies beyond the 90th percentile.";
    let mut out = String::new();
    open(&mut out, id, title, desc, height);
    let bottom = TOP + ROW * rows.len() as f64;
    axis(&mut out, extent, unit, bottom);
    for (row, &i) in rows.iter().enumerate() {
        let region = &scope.regions[i];
        if let Some(inst) = instances(region) {
            instance_row(
                &mut out,
                region,
                inst,
                TOP + ROW * row as f64,
                (extent, unit),
            );
        }
    }
    legend(
        &mut out,
        bottom + 24.0,
        "Whisker: fastest to slowest visit · box: median to p90 · bold line: median · circle: \
         slowest visit beyond p90.",
    );
    out.push_str("</svg>");
    out
}

/// One region's row at height `y`: whisker from the fastest to the slowest visit, box from the
/// median to p90, a circle at the slowest visit beyond p90, and the figures beside it.
fn instance_row(
    out: &mut String,
    region: &Region,
    inst: &Percentiles,
    y: f64,
    (extent, unit): (f64, &str),
) {
    let [min, median, p90, max] = [inst.min, inst.median, inst.p90, inst.max];
    let px = |v: f64| n(PLOT_X + scale(v, extent));
    let c = colour(region.depth);
    let tip = format!(
        "{} — {} visit(s): min {}, median {}, p90 {}, max {}",
        region.segments.join(" / "),
        inst.count,
        value(min, unit),
        value(median, unit),
        value(p90, unit),
        value(max, unit)
    );
    let _ = writeln!(out, "<g><title>{}</title>", esc(&tip));
    label(out, region, y);
    let mid = n(y + 8.0);
    let _ = writeln!(
        out,
        "<line x1=\"{}\" y1=\"{mid}\" x2=\"{}\" y2=\"{mid}\" stroke=\"#555555\"/>\n\
         <line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#555555\"/>\n\
         <rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"12\" fill=\"{c}\" fill-opacity=\"0.5\" stroke=\"{c}\"/>\n\
         <line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#1a1a1a\" stroke-width=\"2\"/>",
        px(min),
        px(max),
        px(min),
        n(y + 3.0),
        px(min),
        n(y + 13.0),
        px(median),
        n(y + 2.0),
        n((scale(p90, extent) - scale(median, extent)).max(1.0)),
        px(median),
        n(y + 1.0),
        px(median),
        n(y + 15.0),
    );
    if max > p90 {
        let _ = writeln!(
            out,
            "<circle cx=\"{}\" cy=\"{mid}\" r=\"3.5\" fill=\"#ffffff\" stroke=\"#D55E00\" stroke-width=\"1.5\"/>",
            px(max)
        );
    }
    let _ = writeln!(
        out,
        "<text x=\"{}\" y=\"{}\" fill=\"#333333\">{} visits · median {} · p90 {} · max {}</text>\n</g>",
        n(VALUE_X),
        n(y + 12.0),
        format::count(inst.count as f64),
        esc(&value(median, unit)),
        esc(&value(p90, unit)),
        esc(&value(max, unit)),
    );
}
