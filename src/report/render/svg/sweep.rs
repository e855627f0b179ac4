//! The sweep chart of a report whose scopes are whole profiles (a folder of them): each profile's
//! total time and MFU, against the number in its file name when every profile has a different one
//! (`gemm_k512.json` → 512, the last number), else against its order. Two panels, one
//! line each, every point with its profile in a tooltip.

use std::fmt::Write as _;

use super::draw::{legend, n, open, value};
use crate::report::format::{self, escape_html as esc};
use crate::report::model::Report;

/// The share metric drawn beside the time, when the profiles have it.
const MFU: &str = "mfu_estimated_percent";
const LEFT: f64 = 96.0;
const RIGHT: f64 = 1100.0;
const PANEL: f64 = 180.0;
const GAP: f64 = 64.0;
const FIRST: f64 = 56.0;

/// What a panel draws: the value of a point, its unit and the panel's name.
type Series<'a> = (fn(&Point) -> Option<f64>, &'a str, &'a str);

/// One profile of the sweep.
struct Point {
    x: f64,
    label: String,
    time: Option<f64>,
    mfu: Option<f64>,
}

/// The last run of digits in the file name of a scope's label.
fn number_in(label: &str) -> Option<f64> {
    let name = label.rsplit(['/', '\\']).next().unwrap_or(label);
    let stem = name.rsplit_once('.').map_or(name, |(s, _)| s);
    let digits: String = stem
        .chars()
        .rev()
        .skip_while(|c| !c.is_ascii_digit())
        .take_while(char::is_ascii_digit)
        .collect();
    digits.chars().rev().collect::<String>().parse().ok()
}

/// The points and what the x axis is; `None` with fewer than two profiles or no time metric.
fn points(report: &Report, time: &str) -> Option<(Vec<Point>, &'static str)> {
    if report.scopes.len() < 2 {
        return None;
    }
    let numbers: Vec<Option<f64>> = report.scopes.iter().map(|s| number_in(&s.label)).collect();
    let mut distinct: Vec<f64> = numbers.iter().flatten().copied().collect();
    distinct.sort_by(f64::total_cmp);
    distinct.dedup();
    let by_number = distinct.len() == numbers.len();
    let out = report
        .scopes
        .iter()
        .zip(&numbers)
        .enumerate()
        .map(|(i, (s, num))| Point {
            x: if by_number {
                num.unwrap_or(0.0)
            } else {
                (i + 1) as f64
            },
            label: s.label.clone(),
            time: s.total.metrics.get(time).and_then(|v| v.value),
            mfu: s.total.metrics.get(MFU).and_then(|v| v.value),
        })
        .collect();
    Some((
        out,
        if by_number {
            "the number in the file name"
        } else {
            "profile order"
        },
    ))
}

/// Whether the report gets a sweep chart.
pub(super) fn has_sweep(report: &Report, time: &str) -> bool {
    report.item_noun.own_totals && points(report, time).is_some()
}

/// The chart, drawn.
pub(super) fn sweep_chart(
    report: &Report,
    time: &str,
    unit: &str,
    id: &str,
    title: &str,
) -> String {
    let Some((mut pts, axis)) = points(report, time) else {
        return String::new();
    };
    pts.sort_by(|a, b| a.x.total_cmp(&b.x));
    let with_mfu = pts.iter().any(|p| p.mfu.is_some());
    let panels = if with_mfu { 2.0 } else { 1.0 };
    let height = FIRST + panels * (PANEL + GAP) + 24.0;
    let desc = format!(
        "Each profile's total time{} against {axis}; hover a point for its profile.",
        if with_mfu { " and MFU" } else { "" }
    );
    let mut out = String::new();
    open(&mut out, id, title, &desc, height);
    let (lo, hi) = (pts[0].x, pts[pts.len() - 1].x);
    let px = |x: f64| {
        if hi > lo {
            LEFT + (x - lo) / (hi - lo) * (RIGHT - LEFT)
        } else {
            (LEFT + RIGHT) / 2.0
        }
    };
    let series = |p: &Point| p.time;
    panel(
        &mut out,
        &pts,
        &px,
        (series, unit, "total time"),
        FIRST,
        "#0072B2",
    );
    if with_mfu {
        let top = FIRST + PANEL + GAP;
        panel(
            &mut out,
            &pts,
            &px,
            (|p: &Point| p.mfu, "%", "MFU"),
            top,
            "#D55E00",
        );
    }
    legend(
        &mut out,
        height - 12.0,
        &format!(
            "x: {axis} ({} … {}); one point per profile.",
            fmt_x(lo),
            fmt_x(hi)
        ),
    );
    out.push_str("</svg>");
    out
}

fn fmt_x(x: f64) -> String {
    format::count(x)
}

/// One panel: its heading, a baseline, the y range at the left, the line and its points.
fn panel(
    out: &mut String,
    pts: &[Point],
    px: &dyn Fn(f64) -> f64,
    (get, unit, what): Series,
    top: f64,
    colour: &str,
) {
    let values: Vec<f64> = pts.iter().filter_map(get).collect();
    let max = values.iter().copied().fold(0.0, f64::max);
    let py = |v: f64| {
        let share = if max > 0.0 { v / max } else { 0.0 };
        top + PANEL - share * PANEL
    };
    let bottom = top + PANEL;
    let _ = writeln!(
        out,
        "<g fill=\"#444444\"><text x=\"{}\" y=\"{}\" font-weight=\"600\">{}</text>\n\
         <line x1=\"{l}\" y1=\"{b}\" x2=\"{r}\" y2=\"{b}\" stroke=\"#999999\"/>\n\
         <line x1=\"{l}\" y1=\"{t}\" x2=\"{r}\" y2=\"{t}\" stroke=\"#dddddd\"/>\n\
         <text x=\"{lt}\" y=\"{t}\" text-anchor=\"end\">{}</text>\n\
         <text x=\"{lt}\" y=\"{b}\" text-anchor=\"end\">0</text></g>",
        n(LEFT),
        n(top - 10.0),
        esc(what),
        esc(&value(max, unit)),
        l = n(LEFT),
        r = n(RIGHT),
        b = n(bottom),
        t = n(top),
        lt = n(LEFT - 6.0),
    );
    let line: Vec<String> = pts
        .iter()
        .filter_map(|p| Some(format!("{},{}", n(px(p.x)), n(py(get(p)?)))))
        .collect();
    let _ = writeln!(
        out,
        "<polyline fill=\"none\" stroke=\"{colour}\" stroke-width=\"1.5\" points=\"{}\"/>",
        line.join(" ")
    );
    for p in pts {
        let Some(v) = get(p) else { continue };
        let _ = writeln!(
            out,
            "<circle cx=\"{}\" cy=\"{}\" r=\"3\" fill=\"{colour}\"><title>{}: {} {}</title></circle>",
            n(px(p.x)),
            n(py(v)),
            esc(&p.label),
            esc(what),
            esc(&value(v, unit))
        );
    }
}

#[cfg(test)]
mod tests {
    use super::number_in;

    #[test]
    fn the_last_number_of_the_file_name_is_the_x_value() {
        assert_eq!(number_in("runs/a1/gemm_m64_k512.json"), Some(512.0));
        assert_eq!(number_in("gemm_k1024"), Some(1024.0));
        assert_eq!(number_in("dir9/profile.json"), None);
    }
}
