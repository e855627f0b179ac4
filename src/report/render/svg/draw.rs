//! Drawing primitives shared by the charts: sizes, colours by depth, the `<svg>` opening with its
//! title and description, the scaled time axis, indented labels and the legend line.

use std::fmt::Write as _;

use crate::report::format::{self, escape_html as esc};
use crate::report::model::Region;

/// Colours by region depth (Okabe–Ito, distinguishable with the common colour-vision deficiencies).
const DEPTH_COLOURS: [&str; 6] = [
    "#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00",
];
const WIDTH: f64 = 1160.0;
const LABEL_X: f64 = 8.0;
pub(super) const PLOT_X: f64 = 300.0;
const PLOT_W: f64 = 440.0;
pub(super) const VALUE_X: f64 = 752.0;
pub(super) const ROW: f64 = 22.0;
pub(super) const TOP: f64 = 64.0;
/// Characters of a label at depth 0; deeper labels lose what their indentation takes.
const LABEL_CHARS: usize = 40;
const FONT: &str =
    "font-family=\"system-ui, -apple-system, 'Segoe UI', sans-serif\" font-size=\"12\"";

pub(super) fn colour(depth: usize) -> &'static str {
    DEPTH_COLOURS[depth % DEPTH_COLOURS.len()]
}

/// Fixed two decimals: coordinates print the same on every platform.
pub(super) fn n(v: f64) -> String {
    format!("{v:.2}")
}

pub(super) fn value(v: f64, unit: &str) -> String {
    format::value(Some(v), unit)
}

/// The opening of a chart: `<svg>` with its size, `<title>`, `<desc>` and heading.
pub(super) fn open(out: &mut String, id: &str, title: &str, desc: &str, height: f64) {
    let _ = write!(
        out,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\" \
         role=\"img\" aria-labelledby=\"{id}-title {id}-desc\" {FONT}>\n\
         <title id=\"{id}-title\">{t}</title>\n<desc id=\"{id}-desc\">{d}</desc>\n\
         <rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n\
         <text x=\"{LABEL_X}\" y=\"22\" font-size=\"15\" font-weight=\"600\" fill=\"#1a1a1a\">{t}</text>\n",
        w = n(WIDTH),
        h = n(height),
        t = esc(&format::shorten(title, 140)),
        d = esc(desc),
    );
}

/// The time axis over the plot: ticks at round values in a scaled unit, with grid lines down to
/// `bottom`.
pub(super) fn axis(out: &mut String, extent: f64, unit: &str, bottom: f64) {
    let (factor, label) = axis_unit(extent, unit);
    let step = nice_step(extent / factor / 5.0);
    // Clamped: a zero or subnormal step must not ask `format!` for a precision it panics on.
    let decimals = (-step.log10().floor()).clamp(0.0, 12.0) as usize;
    let y = TOP - 10.0;
    let _ = writeln!(
        out,
        "<g class=\"axis\" fill=\"#444444\"><text x=\"{}\" y=\"{}\" text-anchor=\"end\">time ({})</text>",
        n(PLOT_X - 24.0),
        n(y),
        esc(&label)
    );
    let mut k = 0.0f64;
    loop {
        let at = k * step * factor;
        if at > extent * 1.000_001 || k > 50.0 {
            break;
        }
        let x = PLOT_X + scale(at, extent);
        let _ = writeln!(
            out,
            "<line x1=\"{x}\" y1=\"{y1}\" x2=\"{x}\" y2=\"{y2}\" stroke=\"#dddddd\"/>\
             <text x=\"{x}\" y=\"{ty}\" text-anchor=\"middle\">{v:.decimals$}</text>",
            x = n(x),
            y1 = n(y + 4.0),
            y2 = n(bottom),
            ty = n(y),
            v = k * step,
        );
        k += 1.0;
    }
    out.push_str("</g>\n");
}

/// A pixel offset in the plot for a value on a `0..extent` axis.
pub(super) fn scale(v: f64, extent: f64) -> f64 {
    if extent > 0.0 {
        (v / extent * PLOT_W).clamp(0.0, PLOT_W)
    } else {
        0.0
    }
}

/// The unit an axis up to `extent` reads best in, and what one of it is in the base unit.
fn axis_unit(extent: f64, unit: &str) -> (f64, String) {
    if unit == "ns" {
        for (factor, label) in [(1e9, "s"), (1e6, "ms"), (1e3, "µs")] {
            if extent >= factor {
                return (factor, label.to_string());
            }
        }
    }
    (1.0, unit.to_string())
}

/// 1, 2 or 5 times a power of ten, at least `raw`.
fn nice_step(raw: f64) -> f64 {
    if !(raw.is_finite() && raw > 0.0) {
        return 1.0;
    }
    let power = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * power)
        .find(|s| *s >= raw * 0.999_999)
        .unwrap_or(10.0 * power)
}

/// A region's label: indented by depth, shortened, the full path in the row's tooltip.
pub(super) fn label(out: &mut String, region: &Region, y: f64) {
    let depth = region.depth.min(8);
    let chars = LABEL_CHARS.saturating_sub(2 * depth).max(12);
    let _ = writeln!(
        out,
        "<text x=\"{}\" y=\"{}\" fill=\"#1a1a1a\">{}</text>",
        n(LABEL_X + 12.0 * depth as f64),
        n(y + 12.0),
        esc(&format::shorten(&format::plain_name(&region.name), chars))
    );
}

/// Characters of an 11 px legend line that fit the chart's width.
const LEGEND_CHARS: usize = 170;
/// The distance between two legend lines.
const LEGEND_LINE: f64 = 14.0;

/// The legend, wrapped at word boundaries to the chart's width (never cut off at its right edge).
pub(super) fn legend(out: &mut String, y: f64, text: &str) {
    let _ = write!(
        out,
        "<text x=\"{LABEL_X}\" y=\"{}\" fill=\"#555555\" font-size=\"11\">",
        n(y)
    );
    for (i, line) in legend_lines(text).iter().enumerate() {
        let dy = if i == 0 { 0.0 } else { LEGEND_LINE };
        let _ = write!(
            out,
            "<tspan x=\"{LABEL_X}\" dy=\"{}\">{}</tspan>",
            n(dy),
            esc(line)
        );
    }
    out.push_str("</text>\n");
}

/// The height the legend's lines past the first take.
pub(super) fn legend_extra(text: &str) -> f64 {
    LEGEND_LINE * legend_lines(text).len().saturating_sub(1) as f64
}

fn legend_lines(text: &str) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    for word in text.split(' ') {
        if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > LEGEND_CHARS {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    lines.push(line);
    lines
}

#[cfg(test)]
mod tests {
    use super::{axis_unit, legend_lines, nice_step, LEGEND_CHARS};

    #[test]
    fn legends_wrap_at_words_within_the_width() {
        let text = "word ".repeat(80);
        let lines = legend_lines(text.trim());
        assert_eq!(lines.len(), 3);
        assert!(lines.iter().all(|l| l.chars().count() <= LEGEND_CHARS));
        assert_eq!(lines.join(" "), text.trim());
    }

    #[test]
    fn axis_steps_are_round_in_a_scaled_unit() {
        assert_eq!(nice_step(0.23), 0.5);
        assert_eq!(nice_step(1.0), 1.0);
        assert_eq!(nice_step(130.0), 200.0);
        assert_eq!(nice_step(0.0), 1.0);
        assert_eq!(axis_unit(1.15e6, "ns"), (1e6, "ms".to_string()));
        assert_eq!(axis_unit(583.0e3, "ns"), (1e3, "µs".to_string()));
        assert_eq!(axis_unit(800.0, "ns"), (1.0, "ns".to_string()));
        assert_eq!(axis_unit(5e6, "cycle"), (1.0, "cycle".to_string()));
    }
}
