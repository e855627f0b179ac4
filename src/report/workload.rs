//! Whether two runs ran the same workload, judged by the kernels they ran: the share of distinct
//! kernel names both have, over the names either has (Jaccard index). Names are compared without
//! namespace qualifiers and integer casts, the parts a profiler's short form of a demangled name
//! drops (`at::native::foo<(int)4>` and `at::foo<4>` are one kernel), so a report read from a CSV
//! export and one read from the same capture's report file compare equal.
//!
//! The threshold, [`MIN_KERNEL_OVERLAP`], is documented in docs/running.md. On the project's real
//! captures, one training step captured on H100 (report file) and on H200 (CSV export) shares 100% of
//! its kernels, the same step with and without DDP 62%, and a GPT-2 step and that training step
//! under 10%.

use std::collections::BTreeSet;
use std::sync::OnceLock;

use regex::Regex;

use super::model::{Report, Scope};

/// Below this share of shared distinct kernels, two runs are taken for different workloads.
pub const MIN_KERNEL_OVERLAP: f64 = 0.5;

/// How much two kernel sets overlap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KernelOverlap {
    /// Distinct kernels both runs ran.
    pub shared: usize,
    /// Distinct kernels either run ran.
    pub either: usize,
}

impl KernelOverlap {
    /// The overlap of two lists of kernel names; `None` when either is empty (nothing to judge: a
    /// profiler that lists no kernels, or a run that ran none).
    pub fn of<'a>(
        a: impl IntoIterator<Item = &'a str>,
        b: impl IntoIterator<Item = &'a str>,
    ) -> Option<KernelOverlap> {
        let a: BTreeSet<String> = a.into_iter().map(normalise).collect();
        let b: BTreeSet<String> = b.into_iter().map(normalise).collect();
        if a.is_empty() || b.is_empty() {
            return None;
        }
        Some(KernelOverlap {
            shared: a.intersection(&b).count(),
            either: a.union(&b).count(),
        })
    }

    /// Shared over either, 0..1.
    pub fn share(&self) -> f64 {
        self.shared as f64 / self.either as f64
    }

    /// Whether the runs look like different workloads.
    pub fn is_low(&self) -> bool {
        self.share() < MIN_KERNEL_OVERLAP
    }

    /// `3 of 14 distinct kernels (21%)`, `items` the profiler's word for its results.
    pub fn describe(&self, items: &str) -> String {
        format!(
            "{} of {} distinct {items} ({:.0}%)",
            self.shared,
            self.either,
            self.share() * 100.0
        )
    }
}

/// Why the scopes of one merged report look like unrelated runs: devices of different models, or a
/// group of scopes whose kernels overlap the first group's too little. Scopes are grouped by launcher
/// rank where every scope has one (a rank's processes ran one program), else each scope stands alone.
/// Empty when they look like one workload, or when no kernels are listed (nothing to judge).
pub fn unrelated_scopes(report: &Report) -> Vec<String> {
    let mut why = Vec::new();
    let models = report.run.platform.models();
    if models.len() > 1 {
        why.push(format!(
            "they ran on different GPUs ({})",
            models.join(", ")
        ));
    }
    let by_rank = report.scopes.iter().all(|s| s.rank.is_some());
    let mut groups: Vec<(String, Vec<&str>)> = Vec::new();
    for scope in &report.scopes {
        let label = match (by_rank, scope.rank) {
            (true, Some(rank)) => format!("rank {rank}"),
            _ => format!("`{}`", scope.label),
        };
        let names = scope_kernels(scope);
        match groups.iter_mut().find(|(l, _)| *l == label) {
            Some((_, known)) => known.extend(names),
            None => groups.push((label, names)),
        }
    }
    if let Some(((first, reference), rest)) = groups.split_first() {
        for (label, names) in rest {
            let overlap = KernelOverlap::of(reference.iter().copied(), names.iter().copied());
            if let Some(o) = overlap.filter(KernelOverlap::is_low) {
                why.push(format!(
                    "{label} shares only {} with {first} (one workload shares at least {:.0}%)",
                    o.describe(report.item_noun.many),
                    MIN_KERNEL_OVERLAP * 100.0
                ));
            }
        }
    }
    why
}

fn scope_kernels(scope: &Scope) -> Vec<&str> {
    scope
        .regions
        .iter()
        .flat_map(|r| &r.kernels)
        .chain(&scope.outside_regions.kernels)
        .map(|k| k.name.as_str())
        .collect()
}

/// A kernel name without namespace qualifiers and integer casts.
fn normalise(name: &str) -> String {
    static PARTS: OnceLock<Option<Regex>> = OnceLock::new();
    let parts = PARTS.get_or_init(|| {
        Regex::new(
            r"\((?:unsigned |signed )?(?:int|long|long long|short|char|bool)\)|\b[A-Za-z_][A-Za-z0-9_]*::",
        )
        .ok()
    });
    match parts {
        Some(re) => re.replace_all(name, "").into_owned(),
        None => name.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_short_and_a_full_demangled_name_are_one_kernel() {
        let full = "void at::native::vectorized_elementwise_kernel<(int)4, at::native::CUDAFunctorOnSelf_add<float>, std::array<char *, (unsigned long)2>>(int, T2, T3)";
        let short = "void at::vectorized_elementwise_kernel<4, at::CUDAFunctorOnSelf_add<float>, std::array<char *, 2>>(int, T2, T3)";
        let o = KernelOverlap::of([full], [short]).unwrap();
        assert_eq!((o.shared, o.either), (1, 1));
    }

    #[test]
    fn overlap_is_shared_over_either_and_low_below_half() {
        let o = KernelOverlap::of(["a", "b", "c"], ["b", "c", "d"]).unwrap();
        assert_eq!((o.shared, o.either), (2, 4));
        assert!(!o.is_low(), "exactly 50% is not low");
        let o = KernelOverlap::of(["a", "b"], ["c", "b", "d"]).unwrap();
        assert!(o.is_low());
        assert_eq!(o.describe("kernels"), "1 of 4 distinct kernels (25%)");
        assert_eq!(KernelOverlap::of([], ["a"]), None);
    }
}
