//! Interval arithmetic on `[start, end)` nanosecond spans: union (busy time on an engine whose
//! instructions overlap), clipping to a region's windows, total length.

/// Sorted, merged intervals; empty ones dropped. Touching intervals merge.
pub fn union(mut ivs: Vec<(u64, u64)>) -> Vec<(u64, u64)> {
    ivs.retain(|(s, e)| e > s);
    ivs.sort_unstable();
    let mut out: Vec<(u64, u64)> = Vec::with_capacity(ivs.len());
    for (s, e) in ivs {
        match out.last_mut() {
            Some(last) if s <= last.1 => last.1 = last.1.max(e),
            _ => out.push((s, e)),
        }
    }
    out
}

/// Total length of disjoint intervals.
pub fn length(ivs: &[(u64, u64)]) -> u64 {
    ivs.iter().map(|(s, e)| e - s).sum()
}

/// The parts of `[s, e)` inside the sorted, disjoint `windows`.
pub fn clip(s: u64, e: u64, windows: &[(u64, u64)]) -> impl Iterator<Item = (u64, u64)> + '_ {
    windows
        .iter()
        .map(move |&(ws, we)| (s.max(ws), e.min(we)))
        .filter(|(a, b)| b > a)
}

/// Whether `t` lies in one of the windows.
pub fn contains(windows: &[(u64, u64)], t: u64) -> bool {
    windows.iter().any(|&(s, e)| s <= t && t < e)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn union_merges_overlaps_and_touching_spans() {
        assert_eq!(
            union(vec![(5, 9), (0, 3), (2, 4), (9, 10), (7, 7)]),
            vec![(0, 4), (5, 10)]
        );
        assert_eq!(length(&union(vec![(0, 10), (4, 6)])), 10);
    }

    #[test]
    fn clip_keeps_only_the_inside() {
        let w = [(10, 20), (30, 40)];
        assert_eq!(
            clip(15, 35, &w).collect::<Vec<_>>(),
            vec![(15, 20), (30, 35)]
        );
        assert_eq!(clip(0, 10, &w).count(), 0);
        assert!(contains(&w, 10) && !contains(&w, 20));
    }
}
