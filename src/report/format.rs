//! The report's one number format (report.md, report.html, charts, insight messages, gates): scaled numbers with units, percentages, and Markdown escaping of
//! text the user or the workload controls (range names, kernel names, commands).
//!
//! Pure string functions; `markdown` registers them as template filters. report.json never goes through
//! here: it keeps exact base-unit values and exact names.
//!
//! Floor: report (see `crate::report`): imports the ground floor only.

mod digits;
mod prose;
mod text;

use digits::count_or_significant;
pub use digits::significant;
pub use prose::{escape_md_prose, prose_html};
pub use text::{
    code_span, cut_long, escape_html, escape_md, plain_name, shorten, slug, visible,
    MAX_SHOWN_CHARS,
};

/// A recorded profiler version as a reader should take it: some profilers record no version but the
/// path of the library they loaded, which is said as such rather than shown as if it were a version.
pub fn profiler_version(recorded: &str) -> String {
    if is_library_path(recorded) {
        format!("no version recorded, library {recorded}")
    } else {
        recorded.to_string()
    }
}

/// The profiler as the run line names it: its name and version (`name 1.2.3`), or its name and the
/// library it recorded instead (`name (no version recorded; library /…/lib.so)`); a version that
/// names the tool itself (`rocprofv3 CSV trace`) stands alone.
pub fn profiler(name: &str, version: Option<&str>) -> String {
    match version {
        Some(v) if is_library_path(v) => format!("{name} (no version recorded; library {v})"),
        Some(v) if v.starts_with(&format!("{name} ")) => v.to_string(),
        Some(v) => format!("{name} {v}"),
        None => name.to_string(),
    }
}

/// A path, or a library's bare name (`libfoo`, recorded where its path could not be read): never a
/// version number.
fn is_library_path(recorded: &str) -> bool {
    // A version may carry a path of its own (`2.27.33.0%kaena-tools/2.27@5d9c0b9`): it starts with
    // a digit, a path or library never does here.
    let version = recorded.starts_with(|c: char| c.is_ascii_digit());
    !version && (recorded.contains(['/', '\\']) || recorded.starts_with("lib"))
}

/// Shown for a value no result had.
pub const MISSING: &str = "—";

/// A metric value in the unit a person would pick: `ns` → ns/µs/ms/s, `byte` → B/KB/MB/GB
/// (decimal), `byte/ns` and `byte/second` → B/s…GB/s, `hz` → kHz/MHz/GHz, `%` with 1–2
/// significant digits, anything else with thousands separators and its unit (a fraction that would
/// read `0.00` with three significant digits instead).
pub fn value(value: Option<f64>, unit: &str) -> String {
    let Some(v) = value else {
        return MISSING.to_string();
    };
    if !v.is_finite() {
        return format!("{v}");
    }
    match unit {
        "ns" => scaled(v, TIME_STEPS, "ns"),
        "byte" => scaled(v, BYTE_STEPS, "B"),
        "byte/ns" => scaled(v * 1e9, BYTE_RATE_STEPS, "B/s"),
        "byte/second" => scaled(v, BYTE_RATE_STEPS, "B/s"),
        "hz" => scaled(v, HZ_STEPS, "Hz"),
        "%" => format!("{}%", significant(v)),
        "" => count_or_significant(v),
        other => format!("{} {other}", count_or_significant(v)),
    }
}

/// A distinct (attribute) value for people: a number with more digits than a reader can use shows
/// four significant ones (`0.0004734848484848485` → `0.0004735`); integers and text stay as they are.
/// report.json keeps the exact text.
pub fn attribute(text: &str) -> String {
    let Ok(v) = text.parse::<f64>() else {
        return text.to_string();
    };
    if !v.is_finite() || v.fract() == 0.0 || v == 0.0 {
        return text.to_string();
    }
    let decimals = (3 - v.abs().log10().floor() as i32).clamp(0, 12) as usize;
    let shown = format!("{v:.decimals$}");
    let shown = shown.trim_end_matches('0').trim_end_matches('.');
    if shown.len() < text.len() {
        shown.to_string()
    } else {
        text.to_string()
    }
}

/// The unit a row of values reads in: the largest finite magnitude among them picks the step
/// (`ms` for 8,000,000 ns), `factor` first turns the base unit into the steps' (`byte/ns` → B/s).
struct RowUnit<'u> {
    base: &'u str,
    factor: f64,
    step: Option<&'static (f64, &'static str)>,
}

fn row_unit<'u>(values: &[Option<f64>], unit: &'u str) -> RowUnit<'u> {
    let largest = values
        .iter()
        .flatten()
        .filter(|v| v.is_finite())
        .fold(0.0f64, |m, v| m.max(v.abs()));
    let (steps, base, factor): (&'static [(f64, &'static str)], &'u str, f64) = match unit {
        "ns" => (TIME_STEPS, "ns", 1.0),
        "byte" => (BYTE_STEPS, "B", 1.0),
        "byte/ns" => (BYTE_RATE_STEPS, "B/s", 1e9),
        "byte/second" => (BYTE_RATE_STEPS, "B/s", 1.0),
        "hz" => (HZ_STEPS, "Hz", 1.0),
        other => (&[], other, 1.0),
    };
    let step = steps
        .iter()
        .find(|(threshold, _)| largest * factor >= *threshold);
    RowUnit { base, factor, step }
}

/// The number a value of `values`' row is multiplied by to read in the unit [`scaled_row`] picks
/// for it (`0.001` for nanoseconds shown in µs): what an interval's half width is scaled by to sit
/// beside its value.
pub fn row_scale(values: &[Option<f64>], unit: &str) -> f64 {
    let row = row_unit(values, unit);
    match row.step {
        Some((threshold, _)) => row.factor / threshold,
        None => row.factor,
    }
}

/// An interval's half width in its row's unit (already scaled): two significant digits.
pub fn half_width(scaled_half: f64) -> String {
    number(uncertainty(scaled_half))
}

/// A value and its interval's half width in the one unit the value reads best in
/// (`464.80 µs ± 12 µs`, `12.2% ± 0.55%`).
pub fn value_with_half(v: f64, half: f64, unit: &str) -> String {
    let (label, cells) = scaled_row(&[Some(v)], unit);
    let half = half_width(half * row_scale(&[Some(v)], unit));
    let suffix = match label.as_str() {
        "" => String::new(),
        "%" => "%".to_string(),
        other => format!(" {other}"),
    };
    format!("{}{suffix} ± {half}{suffix}", cells[0])
}

/// One unit for a row of values (a metric's inclusive and exclusive value), picked from the largest
/// magnitude among them, and the values as bare numbers in it: the `Unit` column then names the unit
/// the numbers are shown in (`ms` beside `8.00` and `0.50`), never a base unit they are not in.
pub fn scaled_row(values: &[Option<f64>], unit: &str) -> (String, Vec<String>) {
    let RowUnit { base, factor, step } = row_unit(values, unit);
    if unit == "%" {
        let cells = values
            .iter()
            .map(|v| match v {
                None => MISSING.to_string(),
                Some(v) if !v.is_finite() => format!("{v}"),
                Some(v) => significant(*v),
            })
            .collect();
        return ("%".to_string(), cells);
    }
    let cells = values
        .iter()
        .map(|v| match (v, step) {
            (None, _) => MISSING.to_string(),
            (Some(v), _) if !v.is_finite() => format!("{v}"),
            // A value that would read 0.00 in the row's unit carries its own (never `0.00 ms`
            // for 2.7 µs).
            (Some(v), Some((threshold, _)))
                if *v != 0.0 && (v * factor / threshold).abs() < 0.005 =>
            {
                value(Some(*v), unit)
            }
            (Some(v), Some((threshold, _))) => fixed(v * factor / threshold, 2),
            (Some(v), None) => count_or_significant(v * factor),
        })
        .collect();
    let label = step.map_or(base, |(_, label)| label);
    (label.to_string(), cells)
}

const TIME_STEPS: &[(f64, &str)] = &[(1e9, "s"), (1e6, "ms"), (1e3, "µs")];
const HZ_STEPS: &[(f64, &str)] = &[(1e9, "GHz"), (1e6, "MHz"), (1e3, "kHz")];
const BYTE_STEPS: &[(f64, &str)] = &[(1e12, "TB"), (1e9, "GB"), (1e6, "MB"), (1e3, "KB")];
const BYTE_RATE_STEPS: &[(f64, &str)] =
    &[(1e12, "TB/s"), (1e9, "GB/s"), (1e6, "MB/s"), (1e3, "KB/s")];

/// The first step whose threshold the magnitude reaches, with 2 decimals; else the base unit as a
/// count.
fn scaled(v: f64, steps: &[(f64, &str)], base: &str) -> String {
    for (threshold, unit) in steps {
        if v.abs() >= *threshold {
            return format!("{} {unit}", fixed(v / threshold, 2));
        }
    }
    format!("{} {base}", count(v))
}

/// An interval's half width as people read one: two significant digits (`35,386.97` → `35,000`,
/// `0.5517` → `0.55`), since more would claim a precision the estimate does not have.
pub fn uncertainty(half: f64) -> f64 {
    if !half.is_finite() || half == 0.0 {
        return half;
    }
    let scale = 10f64.powi(1 - half.abs().log10().floor() as i32);
    (half * scale).round() / scale
}

/// A bare number with no unit to scale by (a ratio, a factor, a delta): four significant digits,
/// thousands separators, no exponent (`2,621,440`, `102.7`, `0.0004735`); the one format messages,
/// gates and tables share.
pub fn number(v: f64) -> String {
    if !v.is_finite() {
        return format!("{v}");
    }
    if v == 0.0 {
        return "0".to_string();
    }
    let decimals = (3 - v.abs().log10().floor() as i32).clamp(0, 12) as usize;
    let text = format!("{v:.decimals$}");
    let text = if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.')
    } else {
        &text
    };
    group_thousands(text)
}

/// Integers with thousands separators; fractions with 2 decimals, so that a column of them lines up
/// (`1,404,946.30` beside `115,612.54`).
pub fn count(v: f64) -> String {
    if !v.is_finite() {
        return format!("{v}");
    }
    if v.fract() == 0.0 && v.abs() < 1e18 {
        return group_thousands(&format!("{}", v as i64));
    }
    fixed(v, 2)
}

/// Fixed decimals, thousands separators on the integer part.
pub(crate) fn fixed(v: f64, decimals: usize) -> String {
    group_thousands(&format!("{v:.decimals$}"))
}

fn group_thousands(text: &str) -> String {
    let (sign, rest) = match text.strip_prefix('-') {
        Some(rest) => ("-", rest),
        None => ("", text),
    };
    let (int, frac) = match rest.split_once('.') {
        Some((i, f)) => (i, Some(f)),
        None => (rest, None),
    };
    let mut out = String::from(sign);
    for (i, ch) in int.chars().enumerate() {
        if i > 0 && (int.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(ch);
    }
    if let Some(frac) = frac {
        out.push('.');
        out.push_str(frac);
    }
    out
}

/// A share 0..1 as a percentage: `12.3%`, `<0.1%` for tiny non-zero shares, `—` when unknown.
pub fn share(share: Option<f64>) -> String {
    match share {
        None => MISSING.to_string(),
        Some(s) if !s.is_finite() => MISSING.to_string(),
        Some(s) if s > 0.0 && s < 0.0005 => "<0.1%".to_string(),
        // -0.0 and rounding noise below zero read as a plain zero.
        Some(s) if s <= 0.0 && s > -0.0005 => "0.0%".to_string(),
        Some(s) => format!("{:.1}%", s * 100.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_recorded_library_is_not_shown_as_a_version() {
        assert_eq!(profiler("prof", Some("2025.3.1.0")), "prof 2025.3.1.0");
        assert_eq!(
            profiler("trace", Some("/x/libtrace.so.13")),
            "trace (no version recorded; library /x/libtrace.so.13)"
        );
        assert_eq!(
            profiler("trace", Some("libtrace")),
            "trace (no version recorded; library libtrace)"
        );
        assert_eq!(profiler("trace", None), "trace");
        assert_eq!(
            profiler("rocprofv3", Some("rocprofv3 CSV trace")),
            "rocprofv3 CSV trace",
            "a version that names the tool is not preceded by its name again"
        );
        assert_eq!(profiler_version("2025.3.1.0"), "2025.3.1.0");
        // Neuron's tools write their build beside the version.
        let neuron = "2.27.33.0%kaena-tools/2.27@5d9c0b9";
        assert_eq!(
            profiler("neuron-explorer", Some(neuron)),
            format!("neuron-explorer {neuron}")
        );
    }

    #[test]
    fn a_value_and_its_half_width_read_in_one_unit() {
        assert_eq!(
            value_with_half(464_800.0, 12_345.0, "ns"),
            "464.80 µs ± 12 µs"
        );
        assert_eq!(value_with_half(12.2241, 0.5517, "%"), "12.2% ± 0.55%");
        assert_eq!(
            value_with_half(906_150.0, 35_386.97, "cycle"),
            "906,150 cycle ± 35,000 cycle"
        );
        assert_eq!(value_with_half(7.0, 0.015, "%"), "7.00% ± 0.015%");
    }

    #[test]
    fn half_widths_keep_two_significant_digits() {
        assert_eq!(uncertainty(35_386.97), 35_000.0);
        assert_eq!(uncertainty(0.5517), 0.55);
        assert_eq!(uncertainty(1.07), 1.1);
        assert_eq!(uncertainty(0.0), 0.0);
    }

    #[test]
    fn long_attribute_numbers_show_four_significant_digits() {
        assert_eq!(attribute("0.0004734848484848485"), "0.0004735");
        assert_eq!(attribute("0.08333333333333333"), "0.08333");
        assert_eq!(attribute("12.345678"), "12.35");
        assert_eq!(attribute("0.48"), "0.48");
        assert_eq!(attribute("1024"), "1024");
        assert_eq!(attribute("(1, 1, 1)"), "(1, 1, 1)");
    }

    #[test]
    fn bare_numbers_keep_four_significant_digits_and_no_exponent() {
        assert_eq!(number(102.7027), "102.7");
        assert_eq!(number(0.15), "0.15");
        assert_eq!(number(2_621_440.0), "2,621,440");
        assert_eq!(number(0.0004734848), "0.0004735");
        assert_eq!(number(-1234.6), "-1,235");
        assert_eq!(number(0.0), "0");
    }

    #[test]
    fn values_scale_to_human_units() {
        assert_eq!(value(Some(850.0), "ns"), "850 ns");
        assert_eq!(value(Some(12_345.0), "ns"), "12.35 µs");
        assert_eq!(value(Some(2.5e9), "ns"), "2.50 s");
        assert_eq!(value(Some(1_500_000.0), "byte"), "1.50 MB");
        assert_eq!(value(Some(1.2), "byte/ns"), "1.20 GB/s");
        assert_eq!(value(Some(1.755e9), "hz"), "1.75 GHz");
        assert_eq!(value(Some(45.678), "%"), "45.7%");
        assert_eq!(value(Some(4.5678), "%"), "4.57%");
        assert_eq!(value(Some(1_234_567.0), ""), "1,234,567");
        assert_eq!(value(Some(1234.5), "cycle"), "1,234.50 cycle");
        assert_eq!(count(1_404_946.3), "1,404,946.30");
        assert_eq!(value(None, "byte"), MISSING);
        assert_eq!(count(-1234.0), "-1,234");
    }

    #[test]
    fn a_row_shares_one_unit_picked_from_its_largest_value() {
        let row = |values: &[Option<f64>], unit| scaled_row(values, unit);
        assert_eq!(
            row(&[Some(8e6), Some(5e5)], "ns"),
            ("ms".into(), vec!["8.00".into(), "0.50".into()])
        );
        assert_eq!(
            row(&[Some(850.0), None], "ns"),
            ("ns".into(), vec!["850".into(), MISSING.into()])
        );
        assert_eq!(
            row(&[Some(1.2), Some(0.6)], "byte/ns"),
            ("GB/s".into(), vec!["1.20".into(), "0.60".into()])
        );
        assert_eq!(
            row(&[Some(42.125), Some(4.0)], "%"),
            ("%".into(), vec!["42.1".into(), "4.00".into()])
        );
        assert_eq!(
            row(&[Some(12e6), Some(75e4)], "cycle"),
            ("cycle".into(), vec!["12,000,000".into(), "750,000".into()])
        );
        assert_eq!(
            row(&[Some(8e6), Some(2_700.0), Some(0.0)], "ns"),
            (
                "ms".into(),
                vec!["8.00".into(), "2.70 µs".into(), "0.00".into()]
            )
        );
        assert_eq!(
            row(&[Some(0.0), Some(0.0)], "byte"),
            ("B".into(), vec!["0".into(), "0".into()])
        );
    }

    #[test]
    fn shares_read_as_percentages() {
        assert_eq!(share(Some(0.1234)), "12.3%");
        assert_eq!(share(Some(0.0001)), "<0.1%");
        assert_eq!(share(Some(0.0)), "0.0%");
        assert_eq!(share(Some(-0.0)), "0.0%");
        assert_eq!(share(None), MISSING);
    }
}
