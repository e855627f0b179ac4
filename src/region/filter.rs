//! Kernel selection: include/exclude glob patterns on kernel names (exclude wins; no include = all).
//!
//! Decisions are cached per distinct name, so a profile with a million results and a few hundred kernel
//! names matches each name once. Per-pattern hit counts let the report say which pattern matched nothing.

use crate::fast_map::FastMap;

use globset::{Glob, GlobBuilder, GlobSet, GlobSetBuilder};
use thiserror::Error;

#[derive(Debug, Error)]
#[error("invalid kernel pattern {pattern:?} in report.kernels.{list}: {source}")]
pub struct PatternError {
    pub list: &'static str,
    pub pattern: String,
    #[source]
    pub source: globset::Error,
}

#[derive(Debug, Clone)]
pub struct KernelFilter {
    include: Vec<String>,
    exclude: Vec<String>,
    include_set: GlobSet,
    exclude_set: GlobSet,
    use_function_name: bool,
    include_hits: Vec<u64>,
    exclude_hits: Vec<u64>,
    decisions: FastMap<String, bool>,
}

fn build(list: &'static str, patterns: &[String]) -> Result<GlobSet, PatternError> {
    let mut builder = GlobSetBuilder::new();
    for pattern in patterns {
        // Kernel names contain `/`-free C++ signatures; `*` must cross `::` and `<…>`, so no
        // path-separator semantics.
        let glob: Glob = GlobBuilder::new(pattern)
            .literal_separator(false)
            .build()
            .map_err(|source| PatternError {
                list,
                pattern: pattern.clone(),
                source,
            })?;
        builder.add(glob);
    }
    builder.build().map_err(|source| PatternError {
        list,
        pattern: patterns.join(", "),
        source,
    })
}

impl KernelFilter {
    /// `use_function_name`: match patterns against the base function name instead of the demangled
    /// signature.
    pub fn new(
        include: &[String],
        exclude: &[String],
        use_function_name: bool,
    ) -> Result<KernelFilter, PatternError> {
        Ok(KernelFilter {
            include_set: build("include", include)?,
            exclude_set: build("exclude", exclude)?,
            include: include.to_vec(),
            exclude: exclude.to_vec(),
            use_function_name,
            include_hits: vec![0; include.len()],
            exclude_hits: vec![0; exclude.len()],
            decisions: FastMap::default(),
        })
    }

    /// True when every kernel is selected (no patterns at all).
    pub fn is_all(&self) -> bool {
        self.include.is_empty() && self.exclude.is_empty()
    }

    pub fn selects(&mut self, kernel: &str) -> bool {
        if let Some(&decision) = self.decisions.get(kernel) {
            return decision;
        }
        let subject = if self.use_function_name {
            function_name(kernel)
        } else {
            kernel
        };
        let included_by = self.include_set.matches(subject);
        let excluded_by = self.exclude_set.matches(subject);
        for &i in &included_by {
            self.include_hits[i] += 1;
        }
        for &i in &excluded_by {
            self.exclude_hits[i] += 1;
        }
        let included = self.include.is_empty() || !included_by.is_empty();
        let decision = included && excluded_by.is_empty();
        self.decisions.insert(kernel.to_string(), decision);
        decision
    }

    /// Patterns that matched no kernel name, as (`include`|`exclude`, pattern).
    pub fn unmatched(&self) -> Vec<(&'static str, &str)> {
        let inc = self
            .include
            .iter()
            .zip(&self.include_hits)
            .filter(|(_, &h)| h == 0)
            .map(|(p, _)| ("include", p.as_str()));
        let exc = self
            .exclude
            .iter()
            .zip(&self.exclude_hits)
            .filter(|(_, &h)| h == 0)
            .map(|(p, _)| ("exclude", p.as_str()));
        inc.chain(exc).collect()
    }
}

/// The base function name of a demangled C++ kernel signature:
/// `void at::native::foo<float, 4>(int, T2)` → `foo`. Names that are not signatures come back as is.
pub fn function_name(demangled: &str) -> &str {
    let bytes = demangled.as_bytes();
    // Cut the parameter list: the first `(` at template depth 0 that is not part of
    // `(anonymous namespace)`.
    let mut depth = 0i32;
    let mut end = demangled.len();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'<' => depth += 1,
            b'>' => depth -= 1,
            b'(' if depth == 0 => {
                if demangled[i..].starts_with("(anonymous namespace)") {
                    i += "(anonymous namespace)".len();
                    continue;
                }
                end = i;
                break;
            }
            _ => {}
        }
        i += 1;
    }
    let head = &demangled[..end];
    // Drop trailing template arguments, then everything up to the last `::` or space at depth 0.
    let mut depth = 0i32;
    let mut name_end = head.len();
    let mut start = 0;
    for (idx, ch) in head.char_indices() {
        match ch {
            '<' => {
                if depth == 0 {
                    name_end = idx;
                }
                depth += 1;
            }
            '>' => depth -= 1,
            ' ' | ':' if depth == 0 => {
                start = idx + 1;
                name_end = head.len();
            }
            _ => {}
        }
    }
    let start = start.min(name_end);
    let name = head[start..name_end].trim();
    if name.is_empty() {
        return demangled;
    }
    if is_generic(name) {
        // `gemvx::kernel`, `cutlass::Kernel2`: the scope is what tells such a kernel apart.
        if let Some(scope) = head[..start].strip_suffix("::") {
            let from = scope
                .rfind([' ', ':'])
                .map_or(0, |i| i + 1)
                .min(scope.len());
            if from < scope.len() && !scope[from..].contains(['<', '>']) {
                return head[from..name_end].trim();
            }
        }
    }
    name
}

/// A function name that says nothing of what the kernel does (`kernel`, `Kernel2`, `device_kernel`).
fn is_generic(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    let stem = lower.trim_end_matches(|c: char| c.is_ascii_digit());
    matches!(
        stem,
        "kernel" | "device_kernel" | "global_kernel" | "kernel_"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generic_kernel_names_keep_their_scope() {
        assert_eq!(
            function_name("void gemvx::kernel<int, int, float, float, float, float, false, true, true, false, 7, false, cublasGemvParamsEx<int, cublasGemvTensorStridedBatched<const float>, cublasGemvTensorStridedBatched<const float>, cublasGemvTensorStridedBatched<float>, float>>(T13, T6, T6)"),
            "gemvx::kernel"
        );
        assert_eq!(
            function_name(
                "void cutlass::Kernel2<cutlass_80_simt_sgemm_128x64_8x5_nn_align1>(T1::Params)"
            ),
            "cutlass::Kernel2"
        );
        assert_eq!(function_name("void kernel<4>(int)"), "kernel");
        assert_eq!(
            function_name("void at::native::reduce_kernel<128, 4>(T3)"),
            "reduce_kernel"
        );
    }

    #[test]
    fn function_names_of_real_pytorch_kernels() {
        assert_eq!(
            function_name("void vectorized_elementwise_kernel<4, CUDAFunctorOnSelf_add<float>, std::array<char *, 2>>(int, T2, T3)"),
            "vectorized_elementwise_kernel"
        );
        assert_eq!(
            function_name("void at::native::(anonymous namespace)::softmax_warp_forward<float, float, float, 10, false>(T2 *, const T1 *, int, int, int)"),
            "softmax_warp_forward"
        );
        assert_eq!(
            function_name("ampere_sgemm_128x64_nn"),
            "ampere_sgemm_128x64_nn"
        );
        assert_eq!(function_name("range"), "range");
    }

    #[test]
    fn exclude_wins_and_empty_include_means_all() {
        let mut f = KernelFilter::new(&[], &["*reduce*".into()], false).unwrap();
        assert!(f.selects("void vectorized_elementwise_kernel<4>(int)"));
        assert!(!f.selects("void reduce_kernel<512>(T3)"));

        let mut f =
            KernelFilter::new(&["*elementwise*".into()], &["*elementwise*".into()], false).unwrap();
        assert!(!f.selects("void vectorized_elementwise_kernel<4>(int)"));
    }

    #[test]
    fn unmatched_patterns_are_reported() {
        let mut f = KernelFilter::new(&["*gemm*".into(), "*reduce*".into()], &[], true).unwrap();
        assert!(f.selects("void reduce_kernel<512>(T3)"));
        assert_eq!(f.unmatched(), vec![("include", "*gemm*")]);
    }
}
