//! Numbers that keep the digits a reader compares: percentages and rates with three significant
//! digits, and no non-zero value shown as `0.00`.

use super::{count, fixed};

/// Three significant digits, at least none after the point (`0.00489`, `0.0733`, `87.7`, `1,235`):
/// a percentage or rate keeps the digits a reader compares, and a non-zero value never reads `0.00`.
pub fn significant(v: f64) -> String {
    if !v.is_finite() {
        return format!("{v}");
    }
    if v == 0.0 {
        return "0".to_string();
    }
    let decimals = (2 - v.abs().log10().floor() as i32).clamp(0, 15) as usize;
    fixed(v, decimals)
}

/// [`count`], except a non-zero value that would read `0.00` keeps three significant digits.
pub(super) fn count_or_significant(v: f64) -> String {
    if v != 0.0 && v.abs() < 0.005 {
        significant(v)
    } else {
        count(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn three_significant_digits_never_round_a_small_value_to_zero() {
        assert_eq!(significant(0.00489), "0.00489");
        assert_eq!(significant(0.0733), "0.0733");
        assert_eq!(significant(87.654), "87.7");
        assert_eq!(significant(1234.7), "1,235");
        assert_eq!(significant(0.0), "0");
        assert_eq!(count_or_significant(0.0024), "0.00240");
        assert_eq!(count_or_significant(56.889), "56.89");
    }
}
