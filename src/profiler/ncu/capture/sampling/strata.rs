//! How far into a key's launches the deep pass profiles when the key ran different work (its
//! first-pass durations fall into several strata, `observe::strata`): far enough that every stratum
//! gets samples of its own. `workers::needs` takes the larger of this and the key's own count.

use crate::config::{ErrorScope, SamplingConfig};
use crate::profiler::ncu::observe::launch_durations::{KeyDurations, LaunchDurations};
use crate::profiler::ncu::observe::strata::covering_count;

use super::{samples_needed, samples_needed_in_regions};

/// The launches of a key that ran different work (its durations fall into several strata) that an
/// adaptive deep pass profiles per process so that every stratum gets its own samples: each
/// stratum's own n from its own spread (at least `launch_count`, at most `max_samples` each). The
/// deep pass profiles a key's first launches, so a stratum that comes late costs the launches before
/// it. 0 for a key of one stratum, and without adaptive samples (`launch_count` per key, as asked;
/// the join still splits the key, and a stratum the samples missed is estimated from another).
pub(crate) fn stratum_count(
    key: &KeyDurations,
    sampling: &SamplingConfig,
    skipped: u32,
    durations: &LaunchDurations,
) -> u32 {
    let strata = key.strata();
    if strata.is_one() || !sampling.adaptive {
        return 0;
    }
    let budget = sampling.budget();
    let need = |s: usize| -> u32 {
        let cv = key.stratum_cv(&strata, s);
        let n = match sampling.error_scope {
            ErrorScope::Key => samples_needed(cv, sampling.error),
            ErrorScope::Region => {
                samples_needed_in_regions(cv, sampling.error, durations.largest_share(key))
            }
        };
        n.clamp(sampling.launch_count, budget)
    };
    let cap = budget.saturating_mul(strata.count() as u32);
    covering_count(&key.in_launch_order(), &strata, skipped, need, (1, cap))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profiler::ncu::capture::sampling::tests::config;
    use crate::profiler::ncu::observe::report_source::twins::Shape;

    /// The launches the deep pass profiles of one key with these durations (one process), with
    /// launch_count 1 and max_samples 4.
    fn count(adaptive: bool, durations: &[f64], skipped: u32) -> u32 {
        let mut sampling = config().pipeline.ncu.sampling;
        (
            sampling.adaptive,
            sampling.launch_count,
            sampling.max_samples,
        ) = (adaptive, 1, 4);
        (sampling.error, sampling.error_scope) = (0.05, ErrorScope::Key);
        let mut d = LaunchDurations::default();
        for ns in durations {
            d.add("_Z4gemm", Shape::of_grid(1), (7, Some(0)), *ns, &[]);
        }
        let (_, _, key) = d.keys().next().unwrap();
        stratum_count(key, &sampling, skipped, &d)
    }

    #[test]
    fn a_key_of_two_kinds_of_work_profiles_far_enough_to_sample_each() {
        // One GEMM key: attn's launches at 48 µs, mlp's at 73 µs, alternating as layers do. Each
        // stratum is steady (n = 1 each): the first two launches; the pooled spread (cv 0.22)
        // would ask for max_samples of the mixture instead.
        let layers = [48.0, 73.0, 48.2, 73.1, 47.9, 72.8];
        assert_eq!(count(true, &layers, 0), 2);
        // Skipping the cold start shifts the reach by one.
        assert_eq!(count(true, &layers, 1), 2);
        // Every attn launch first: the first mlp launch is the fourth.
        let grouped = [48.0, 48.2, 47.9, 73.0, 73.1, 72.8];
        assert_eq!(count(true, &grouped, 0), 4);
        // A stratum that varies takes its own n: mlp's cv of about 0.1 asks for all 3 of its
        // launches, the last of them the sixth.
        let varied = [48.0, 48.2, 47.9, 66.0, 73.1, 80.0];
        assert_eq!(count(true, &varied, 0), 6);
        // Without adaptive samples every key takes launch_count, as asked (0: no say here).
        assert_eq!(count(false, &grouped, 0), 0);
        // One kind of work: no say either, however the durations jitter.
        assert_eq!(count(true, &[48.0, 48.5, 47.5, 49.0], 0), 0);
    }
}
