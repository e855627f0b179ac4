//! Which regions the user asked for: with `regions.include` set, the tree holds the named ranges, what
//! is nested in them and their enclosing ranges; every other range (another domain's, an unrelated
//! start/end range) is set aside so it cannot sit beside the user's ranges with 100% of the time.

use regex::Regex;

/// The include patterns, each one anchored regex per level.
#[derive(Debug, Clone, Default)]
pub struct RequestedRegions {
    patterns: Vec<Vec<Regex>>,
}

impl RequestedRegions {
    pub fn new(patterns: Vec<Vec<Regex>>) -> RequestedRegions {
        RequestedRegions { patterns }
    }

    /// True when no pattern is given: every region is wanted.
    pub fn is_empty(&self) -> bool {
        self.patterns.is_empty()
    }

    /// A region is named by a pattern when the pattern's levels match the innermost segments of its
    /// path (`forward` names `train_step/forward`; `train_step/forward` names it too).
    pub fn names(&self, segments: &[String]) -> bool {
        self.patterns.iter().any(|levels| {
            levels.len() <= segments.len()
                && levels
                    .iter()
                    .zip(&segments[segments.len() - levels.len()..])
                    .all(|(level, segment)| level.is_match(segment))
        })
    }

    /// For each region (path segments, grouped by a tree key such as push/pop vs start/end), whether
    /// it stays: it is named, nested in a named region, or encloses one.
    pub fn keep<K: PartialEq>(&self, regions: &[(K, &[String])]) -> Vec<bool> {
        if self.is_empty() {
            return vec![true; regions.len()];
        }
        let named: Vec<&(K, &[String])> = regions
            .iter()
            .filter(|(_, segments)| self.names(segments))
            .collect();
        regions
            .iter()
            .map(|(kind, segments)| {
                named.iter().any(|(named_kind, named_segments)| {
                    named_kind == kind
                        && (named_segments.starts_with(segments)
                            || segments.starts_with(named_segments))
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn requested(patterns: &[&[&str]]) -> RequestedRegions {
        RequestedRegions::new(
            patterns
                .iter()
                .map(|levels| {
                    levels
                        .iter()
                        .map(|l| Regex::new(&format!("^(?:{l})$")).unwrap())
                        .collect()
                })
                .collect(),
        )
    }

    fn path(text: &str) -> Vec<String> {
        text.split('/').map(str::to_string).collect()
    }

    #[test]
    fn named_nested_and_enclosing_regions_stay_and_other_trees_go() {
        // The torchrun capture's tree: the user's ranges beside NCCL's never-popped range.
        let paths: Vec<Vec<String>> = [
            "train_step",
            "train_step/forward",
            "train_step/forward/layer0",
            "train_step/backward",
            "NCCL@ncclCommInitRankConfig",
        ]
        .iter()
        .map(|p| path(p))
        .collect();
        let regions: Vec<(u8, &[String])> = paths.iter().map(|p| (0, p.as_slice())).collect();
        let keep = requested(&[&["forward"]]).keep(&regions);
        assert_eq!(keep, [true, true, true, false, false]);
        let keep = requested(&[&["train_step"]]).keep(&regions);
        assert_eq!(keep, [true, true, true, true, false]);
        assert_eq!(RequestedRegions::default().keep(&regions), [true; 5]);
    }

    #[test]
    fn trees_of_another_kind_do_not_mix() {
        let step = path("step");
        let regions: Vec<(u8, &[String])> = vec![(0, &step), (1, &step)];
        assert_eq!(requested(&[&["step"]]).keep(&regions), [true, true]);
        let epoch = path("epoch");
        let regions: Vec<(u8, &[String])> = vec![(0, &step), (1, &epoch)];
        assert_eq!(requested(&[&["step"]]).keep(&regions), [true, false]);
    }
}
