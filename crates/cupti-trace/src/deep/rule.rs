//! Which launches are profiled: the library's own deterministic rule, per stratum. A stratum is a
//! launch key (kernel name, grid, block) together with the NVTX range stack of the launching thread,
//! so one kernel in two regions is two strata. Within a stratum the launches are counted from 0 and
//! launches 1, 2, 4, … 2^(samples-1) are profiled: the first is left as warm-up (cold caches, lazy
//! module loading), and doubling spreads the samples over a run of any length without knowing it.

use std::collections::HashMap;

/// What makes launches one stratum. Names and stacks are kept as hashes ([`fnv`]): the library
/// only counts them, the trace says what they were.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Stratum {
    /// The kernel's name (CUPTI's `symbolName`), or a CUDA graph's executable handle.
    pub name: u64,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    /// The launching thread's NVTX push/pop stack ([`super::stack::Frames::hash`]).
    pub stack: u64,
}

/// Whether the launch with this ordinal (0: a stratum's first) is profiled.
pub fn chosen(ordinal: u32, samples: u32) -> bool {
    ordinal.is_power_of_two() && ordinal.trailing_zeros() < samples
}

/// Counts each stratum's launches and says which to profile.
#[derive(Debug, Default)]
pub struct Sampler {
    samples: u32,
    seen: HashMap<Stratum, u32>,
}

impl Sampler {
    pub fn new(samples: u32) -> Self {
        Sampler {
            samples,
            seen: HashMap::new(),
        }
    }

    /// Counts one launch of `stratum`; true when it is to be profiled.
    pub fn launch(&mut self, stratum: Stratum) -> bool {
        let count = self.seen.entry(stratum).or_insert(0);
        let ordinal = *count;
        *count = count.saturating_add(1);
        chosen(ordinal, self.samples)
    }
}

/// FNV-1a, 64 bits: stable across runs and builds, unlike std's hasher.
pub fn fnv(bytes: impl IntoIterator<Item = u8>) -> u64 {
    bytes.into_iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
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
    fn the_first_launch_is_warm_up_and_samples_double() {
        let picked: Vec<u32> = (0..100).filter(|&n| chosen(n, 3)).collect();
        assert_eq!(picked, [1, 2, 4]);
        let picked: Vec<u32> = (0..100).filter(|&n| chosen(n, 5)).collect();
        assert_eq!(picked, [1, 2, 4, 8, 16]);
        assert!(!chosen(0, 31) && chosen(1 << 30, 31) && !chosen(1 << 31, 31));
    }

    #[test]
    fn one_kernel_in_two_regions_is_two_strata() {
        let mut s = Sampler::new(2);
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
    fn names_hash_stably() {
        assert_eq!(fnv(*b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv(*b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_ne!(fnv(*b"attn"), fnv(*b"mlp"));
    }
}
