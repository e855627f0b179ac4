//! The one percentile every table and diagnosis uses: linear between closest ranks (numpy's default),
//! over values already sorted.

/// Linear interpolation between closest ranks (numpy's default) over sorted values; `None` for none.
pub fn percentile(sorted: &[f64], p: f64) -> Option<f64> {
    let last = sorted.len().checked_sub(1)?;
    let pos = p.clamp(0.0, 1.0) * last as f64;
    let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
    Some(sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo as f64))
}
