//! Which launches are profiled: the library's own deterministic rule, per stratum. A stratum is a
//! launch key (kernel name, grid, block) together with the NVTX ranges open on every thread and on
//! the launching one ([`super::stack::ProcessFrames`]), so one kernel in two regions is two
//! strata; a range's name counts with its runs of digits folded ([`fold_digits`]), so `layer0/attn` and `layer7/attn` are one stratum and a model's depth does
//! not multiply its samples (the report splits them again where their durations differ). Within a
//! stratum the launches are counted from 0 and launches 0, 1, 3, 7, … 2^(samples-1) − 1 are
//! profiled, so a stratum that runs once (a prefill, a one-off kernel) is measured too; with the
//! first left as warm-up (`PROFILE_RUN_DEEP_FIRST=0`: cold caches bias stall reasons) launches 1, 2,
//! 4, … 2^(samples-1). Doubling spreads the samples over a run of any length without knowing it. Collective kernels (NCCL's) are never profiled:
//! replaying one on its own would wait for peers that do not replay it.

use std::collections::HashMap;

/// What makes launches one stratum. Names and stacks are kept as hashes ([`fnv`]): the library
/// only counts them, the trace says what they were.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Stratum {
    /// The kernel's name (CUPTI's `symbolName`), or a CUDA graph's executable handle.
    pub name: u64,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    /// The NVTX push/pop ranges the launch ran under ([`super::stack::ProcessFrames::hash`]).
    pub stack: u64,
}

/// Whether the launch with this ordinal (0: a stratum's first) is profiled: with `first`, the
/// launches 2^k − 1 (0, 1, 3, …), else 2^k (1, 2, 4, …), k below `samples`.
pub fn chosen(ordinal: u32, samples: u32, first: bool) -> bool {
    let Some(counted) = ordinal.checked_add(u32::from(first)) else {
        return false;
    };
    counted.is_power_of_two() && counted.trailing_zeros() < samples
}

/// Counts each stratum's launches and says which to profile.
#[derive(Debug, Default)]
pub struct Sampler {
    samples: u32,
    /// Whether a stratum's first launch is among the profiled ones.
    first: bool,
    seen: HashMap<Stratum, u32>,
}

impl Sampler {
    pub fn new(samples: u32, first: bool) -> Self {
        Sampler {
            samples,
            first,
            seen: HashMap::new(),
        }
    }

    /// Counts one launch of `stratum`; true when it is to be profiled.
    pub fn launch(&mut self, stratum: Stratum) -> bool {
        let count = self.seen.entry(stratum).or_insert(0);
        let ordinal = *count;
        *count = count.saturating_add(1);
        chosen(ordinal, self.samples, self.first)
    }
}

/// A range name's characters with every run of ASCII digits as one `#`: the name a repeated block's
/// ranges share (`layer12/attn` → `layer#/attn`), for units of any width (bytes, UTF-16, UTF-32).
pub fn fold_digits<U: Copy + Into<u32> + From<u8>>(
    units: impl IntoIterator<Item = U>,
) -> impl Iterator<Item = U> {
    let mut in_digits = false;
    units.into_iter().filter_map(move |u| {
        let digit = (u32::from(b'0')..=u32::from(b'9')).contains(&u.into());
        let first = digit && !in_digits;
        in_digits = digit;
        match (digit, first) {
            (false, _) => Some(u),
            (true, true) => Some(U::from(b'#')),
            (true, false) => None,
        }
    })
}

/// Whether a kernel name is a collective's (NCCL's device kernels, `ncclDevKernel_…`, mangled or
/// not): the library never profiles those.
pub fn is_collective(name: &[u8]) -> bool {
    let unmangled = match name.strip_prefix(b"_Z") {
        Some(rest) => &rest[rest.iter().take_while(|b| b.is_ascii_digit()).count()..],
        None => name,
    };
    unmangled.starts_with(b"nccl")
}

/// FNV-1a's offset basis: the hash of no bytes.
pub const FNV_EMPTY: u64 = 0xcbf2_9ce4_8422_2325;

/// FNV-1a, 64 bits: stable across runs and builds, unlike std's hasher.
pub fn fnv(bytes: impl IntoIterator<Item = u8>) -> u64 {
    bytes.into_iter().fold(FNV_EMPTY, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stratum(name: &str, stack: u64) -> Stratum {
        Stratum {
            name: fnv(name.bytes()),
            grid: [32, 32, 1],
            block: [256, 1, 1],
            stack,
        }
    }

    #[test]
    fn samples_double_from_the_first_launch_or_after_it() {
        let picked = |samples, first| -> Vec<u32> {
            (0..100).filter(|&n| chosen(n, samples, first)).collect()
        };
        assert_eq!(picked(3, true), [0, 1, 3]);
        assert_eq!(picked(1, true), [0], "a stratum that runs once is measured");
        assert_eq!(picked(3, false), [1, 2, 4]);
        assert_eq!(picked(5, false), [1, 2, 4, 8, 16]);
        assert!(!chosen(0, 31, false) && chosen(1 << 30, 31, false) && !chosen(1 << 31, 31, false));
        assert!(chosen((1 << 30) - 1, 31, true) && !chosen(u32::MAX, 31, true));
    }

    #[test]
    fn one_kernel_in_two_regions_is_two_strata() {
        let mut s = Sampler::new(2, false);
        let attn = stratum("_Z4gemm", 1);
        let mlp = stratum("_Z4gemm", 2);
        let mut got = Vec::new();
        for _ in 0..4 {
            got.push((s.launch(attn), s.launch(mlp)));
        }
        assert_eq!(
            got,
            [(false, false), (true, true), (true, true), (false, false)]
        );
        let other = Stratum {
            grid: [64, 32, 1],
            ..attn
        };
        assert!(
            !s.launch(other),
            "another grid is another stratum, at its warm-up"
        );
    }

    #[test]
    fn repeated_blocks_fold_into_one_name() {
        let fold = |s: &str| String::from_utf8(fold_digits(s.bytes()).collect()).unwrap();
        assert_eq!(fold("layer12/attn"), "layer#/attn");
        assert_eq!(fold("layer0/attn"), fold("layer7/attn"));
        assert_eq!(fold("fc1"), "fc#");
        assert_ne!(fold("attn"), fold("mlp"));
        assert_eq!(fold("step 3 of 10"), "step # of #");
        let wide: Vec<u32> = fold_digits("h3".chars().map(u32::from)).collect();
        assert_eq!(wide, [u32::from('h'), u32::from('#')]);
    }

    #[test]
    fn nccl_kernels_are_collectives() {
        assert!(is_collective(b"ncclDevKernel_AllReduce_Sum_f32_RING_LL"));
        assert!(is_collective(
            b"_Z24ncclDevKernel_AllReduce_Sum_f32_RING_LL24ncclDevKernelArgsStorageILm4096EE"
        ));
        assert!(!is_collective(b"_Z4gemmPf"));
        assert!(!is_collective(b"ampere_sgemm_128x64_nn"));
    }

    #[test]
    fn names_hash_stably() {
        assert_eq!(fnv(*b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv(*b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_ne!(fnv(*b"attn"), fnv(*b"mlp"));
    }
}
