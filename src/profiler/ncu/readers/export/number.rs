//! Numbers in ncu's CSV exports, and what to do with the locale-formatted ones.
//!
//! ncu prints numbers the C way with `,` grouping thousands (`9,661`, `2,601,960,784.31`) even with
//! `--csv`, and profile-run exports with `LC_ALL=C`. An export made by hand under another locale can
//! hold other shapes:
//! - `.` as the decimal point with `'`, `’`, a space or a no-break space grouping (`1'234.5`,
//!   `1 234.5`) is read: in such an export no other value can mean something else;
//! - a decimal comma (`1.234,5`, `1 234,5`, `0,5`, `1.234.567`) is refused, because in such an export
//!   `1,234` means 1.234 and cannot be told apart from ncu's `1,234` (1234). Re-export with `LC_ALL=C`.

/// One cell of a metric column.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Number {
    Value(f64),
    /// Empty or `n/a`.
    Missing,
    /// Not a number (an attribute such as a name or a tuple): kept as text.
    Text,
    /// A number written with a decimal comma, which cannot be read reliably.
    DecimalComma,
}

/// Characters that group thousands in some locale. `.` is not among them: only a decimal-comma
/// locale groups with `.`, and those are refused.
const GROUPING: &[char] = &[',', '\'', '’', ' ', '\u{a0}', '\u{202f}'];

/// Reads one cell.
pub fn classify(raw: &[u8]) -> Number {
    if let Some(v) = short_decimal(raw) {
        return Number::Value(v);
    }
    let Ok(text) = std::str::from_utf8(raw) else {
        return Number::Text;
    };
    let text = text.trim();
    if text.is_empty() || text == "n/a" {
        return Number::Missing;
    }
    let unsigned = text.strip_prefix(['-', '+']).unwrap_or(text);
    // An exponent only ever follows a plain C mantissa.
    let (mantissa, exponent) = match unsigned.find(['e', 'E']) {
        Some(at) => (&unsigned[..at], &unsigned[at..]),
        None => (unsigned, ""),
    };
    if let Ok(v) = text.parse() {
        return Number::Value(v);
    }
    if !exponent.is_empty() {
        return Number::Text;
    }
    if let Some(v) = c_grouped(text.as_bytes()) {
        return Number::Value(v);
    }
    match grouped_shape(mantissa) {
        Some(Shape::Grouped(separator)) => {
            let digits: String = text.chars().filter(|&c| c != separator).collect();
            digits.parse().map_or(Number::Text, Number::Value)
        }
        Some(Shape::DecimalComma) => Number::DecimalComma,
        None => Number::Text,
    }
}

/// The value of a cell when it is a number.
pub fn parse(raw: &[u8]) -> Option<f64> {
    match classify(raw) {
        Number::Value(v) => Some(v),
        _ => None,
    }
}

/// ncu's own shape, `-1,234,567.25`, read without allocating: the same digits [`grouped_shape`]
/// would keep, parsed the same way. `None` for anything else.
fn c_grouped(text: &[u8]) -> Option<f64> {
    let mut buf = [0u8; 64];
    if text.len() > buf.len() {
        return None;
    }
    let (sign, body) = match text.first() {
        Some(&s @ (b'-' | b'+')) => (Some(s), &text[1..]),
        _ => (None, text),
    };
    let (integer, fraction) = match body.iter().position(|&b| b == b'.') {
        Some(at) => (&body[..at], Some(&body[at + 1..])),
        None => (body, None),
    };
    let mut groups = integer.split(|&b| b == b',');
    let first = groups.next()?;
    let mut len = 0;
    let mut push = |bytes: &[u8]| {
        buf[len..len + bytes.len()].copy_from_slice(bytes);
        len += bytes.len();
    };
    if let Some(s) = sign {
        push(&[s]);
    }
    if !(1..=3).contains(&first.len()) || !first.iter().all(u8::is_ascii_digit) {
        return None;
    }
    push(first);
    let mut grouped = false;
    for group in groups {
        if group.len() != 3 || !group.iter().all(u8::is_ascii_digit) {
            return None;
        }
        push(group);
        grouped = true;
    }
    if let Some(fraction) = fraction {
        if fraction.is_empty() || !fraction.iter().all(u8::is_ascii_digit) {
            return None;
        }
        push(b".");
        push(fraction);
    }
    if !grouped {
        return None;
    }
    std::str::from_utf8(&buf[..len]).ok()?.parse().ok()
}

/// Exact powers of ten up to the largest one an `f64` holds exactly.
const POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// The common cell, `1,234,567.25` or `4.383888`, read in one pass: digits (ncu's `,` grouping
/// checked as [`c_grouped`] does) and an optional fraction, with at most 2^53 as the digits read as
/// an integer. Both that integer and the power of ten are exact in an `f64`, so one division gives
/// the correctly rounded value, the same one `str::parse` gives. `None` for anything else, which
/// the general path then reads.
fn short_decimal(raw: &[u8]) -> Option<f64> {
    let (negative, body) = match raw.first()? {
        b'-' => (true, &raw[1..]),
        b'+' => (false, &raw[1..]),
        _ => (false, raw),
    };
    let mut digits: u64 = 0;
    let mut count = 0usize;
    let mut fraction_digits: Option<usize> = None;
    // Digits in the current integer group, and whether a `,` was seen.
    let mut group = 0usize;
    let mut grouped = false;
    for &b in body {
        match b {
            b'0'..=b'9' => {
                count += 1;
                if count > 19 {
                    return None;
                }
                digits = digits * 10 + u64::from(b - b'0');
                match fraction_digits.as_mut() {
                    Some(n) => *n += 1,
                    None => group += 1,
                }
            }
            b',' if fraction_digits.is_none() => {
                // The first group holds 1 to 3 digits, every later one exactly 3.
                if group == 0 || group > 3 || (grouped && group != 3) {
                    return None;
                }
                grouped = true;
                group = 0;
            }
            b'.' if fraction_digits.is_none() => fraction_digits = Some(0),
            _ => return None,
        }
    }
    let integer_ok = group > 0 && (!grouped || group == 3);
    let fraction = match fraction_digits {
        Some(0) => return None,
        Some(n) => n,
        None => 0,
    };
    if !integer_ok || digits > 1 << 53 || fraction >= POW10.len() {
        return None;
    }
    let value = digits as f64 / POW10[fraction];
    Some(if negative { -value } else { value })
}

enum Shape {
    /// Thousands grouped with this character, `.` (if any) the decimal point.
    Grouped(char),
    DecimalComma,
}

/// The shape of an unsigned mantissa that is not a plain number; `None` when it is not a number at
/// all (`(128, 1, 1)`, `1 2`, `127.0.0.1`).
fn grouped_shape(mantissa: &str) -> Option<Shape> {
    if !mantissa
        .chars()
        .all(|c| c.is_ascii_digit() || c == '.' || GROUPING.contains(&c))
    {
        return None;
    }
    let groups: Vec<&str> = mantissa.split(|c: char| !c.is_ascii_digit()).collect();
    let separators: Vec<char> = mantissa.chars().filter(|c| !c.is_ascii_digit()).collect();
    if groups.iter().any(|g| g.is_empty()) {
        return None;
    }
    // The C shape with any grouping character: `d{1,3}(Gddd)*(.d+)?`.
    let (integer_seps, integer_groups) = match separators.last() {
        Some('.') => (
            &separators[..separators.len() - 1],
            &groups[..groups.len() - 1],
        ),
        _ => (&separators[..], &groups[..]),
    };
    let &first = integer_seps.first()?;
    let c_shape = first != '.'
        && integer_seps.iter().all(|&s| s == first)
        && (1..=3).contains(&integer_groups[0].len())
        && integer_groups[1..].iter().all(|g| g.len() == 3);
    if c_shape {
        return Some(Shape::Grouped(first));
    }
    let dots = separators.iter().filter(|&&s| s == '.').count();
    let dot_grouped = dots >= 2 && groups[1..].iter().all(|g| g.len() == 3);
    if separators.contains(&',') || dot_grouped {
        return Some(Shape::DecimalComma);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(text: &str) -> Number {
        classify(text.as_bytes())
    }

    #[test]
    fn ncu_c_locale_numbers() {
        assert_eq!(c("9,661"), Number::Value(9661.0));
        assert_eq!(c("2,601,960,784.31"), Number::Value(2_601_960_784.31));
        assert_eq!(c("4.383888"), Number::Value(4.383888));
        assert_eq!(c("-1,234"), Number::Value(-1234.0));
        assert_eq!(c("1e+10"), Number::Value(1e10));
        assert_eq!(c(" 12 "), Number::Value(12.0));
        assert_eq!(c("n/a"), Number::Missing);
        assert_eq!(c(""), Number::Missing);
    }

    #[test]
    fn the_c_shape_reads_like_the_general_path() {
        for text in [
            "9,661",
            "-2,601,960,784.31",
            "+1,000",
            "12,345.000001",
            "1,234.",
            "1234,567",
            "1,23",
            ",123",
            "1,,234",
        ] {
            let general = match grouped_shape(text.trim_start_matches(['-', '+'])) {
                Some(Shape::Grouped(sep)) => text.replace(sep, "").parse().ok(),
                _ => None,
            };
            assert_eq!(c_grouped(text.as_bytes()), general, "{text}");
        }
    }

    /// What `classify` gives without its fast path.
    fn general(text: &str) -> Option<f64> {
        text.parse().ok().or_else(|| c_grouped(text.as_bytes()))
    }

    #[test]
    fn the_short_path_reads_exactly_like_the_general_one() {
        for text in [
            "0",
            "-0",
            "+7",
            "007",
            "4.383888",
            "2,601,960,784.31",
            "9,007,199,254,740,992",
            "9007199254740993",
            "0.1",
            "123456789012345.6",
            "1.0000000000000000000001",
            "0.0000000000000000000001",
            "1,234",
            "999,999.999",
            "17976931348623157",
        ] {
            let fast = short_decimal(text.as_bytes());
            if let Some(v) = fast {
                assert_eq!(Some(v.to_bits()), general(text).map(f64::to_bits), "{text}");
            }
        }
        for text in [
            "1.", ".5", "1,23", "1234,567", ",1", "1,,2", "1.2.3", "1e5", "", "-", "1 2",
        ] {
            assert_eq!(short_decimal(text.as_bytes()), None, "{text}");
        }
    }

    proptest::proptest! {
        #[test]
        fn short_path_agrees_with_the_general_one(
            sign in proptest::sample::select(vec!["", "-", "+"]),
            integer in 0u64..10_000_000_000_000,
            fraction in proptest::option::of("[0-9]{1,12}"),
            group in proptest::bool::ANY,
        ) {
            let mut text = sign.to_string();
            let digits = integer.to_string();
            if group {
                let head = digits.len() % 3;
                let mut parts = Vec::new();
                if head > 0 { parts.push(&digits[..head]); }
                parts.extend((head..digits.len()).step_by(3).map(|i| &digits[i..i + 3]));
                text.push_str(&parts.join(","));
            } else {
                text.push_str(&digits);
            }
            if let Some(f) = &fraction {
                text.push('.');
                text.push_str(f);
            }
            let expected = general(&text).map(f64::to_bits);
            proptest::prop_assert!(expected.is_some(), "{}", text);
            if let Some(v) = short_decimal(text.as_bytes()) {
                proptest::prop_assert_eq!(Some(v.to_bits()), expected, "{}", text);
            }
            proptest::prop_assert_eq!(classify(text.as_bytes()), Number::Value(f64::from_bits(expected.unwrap())));
        }
    }

    #[test]
    fn unambiguous_groupings_are_read() {
        assert_eq!(c("1'234.5"), Number::Value(1234.5));
        assert_eq!(c("1’234’567"), Number::Value(1_234_567.0));
        assert_eq!(c("1 234.5"), Number::Value(1234.5));
        assert_eq!(c("1\u{a0}234"), Number::Value(1234.0));
        assert_eq!(c("12\u{202f}345.25"), Number::Value(12345.25));
    }

    #[test]
    fn decimal_commas_are_refused() {
        for text in [
            "1.234,5",
            "1 234,5",
            "0,5",
            "1234,56",
            "1.234.567",
            "1'234,5",
        ] {
            assert_eq!(c(text), Number::DecimalComma, "{text}");
        }
    }

    #[test]
    fn other_text_stays_text() {
        for text in ["(128, 1, 1)", "1 2", "127.0.0.1", "No-CC", "1,,2", "1e5,0"] {
            assert_eq!(c(text), Number::Text, "{text}");
        }
        assert_eq!(classify(b"\xff1"), Number::Text);
    }
}
