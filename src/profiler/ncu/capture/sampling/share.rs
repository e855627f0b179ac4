//! Deep samples only where they can matter (`pipeline.ncu.sampling.min_time_share`; docs/running.md,
//! "Sampled runs"): the launch keys whose first-pass time is below that share of every region they
//! appear in are left out of the deep pass, which is told the mangled names it keeps in one
//! `--kernel-name regex:^(?:…)$`. Their kernels keep their first-pass times; no deep result has
//! their key, so their deep metrics are not measured, and never copied from another key.
//!
//! ncu's launch filter selects by name, not by launch configuration: a name is left out only when
//! every key with that name is under the share, so a small key whose name a larger key shares is
//! profiled with it (and measured).

use crate::config::{NcuCliConfig, SamplingConfig};
use crate::profiler::ncu::observe::launch_durations::LaunchDurations;

/// Why `min_time_share` cannot be used, naming the key; `None` when it can (or is 0).
pub fn refusal(sampling: &SamplingConfig, cli: &NcuCliConfig) -> Option<String> {
    let share = sampling.min_time_share;
    // NaN is in no range: refused with the rest.
    if !(0.0..1.0).contains(&share) {
        return Some(format!(
            "pipeline.ncu.sampling.min_time_share is {share}, but it is the share of a region's time under which a launch key is left out of the deep pass and must lie in [0, 1); set it to 0.01 for 1%, or 0 to leave nothing out"
        ));
    }
    if share > 0.0 && cli.kernel_name.is_some() {
        return Some(
            "pipeline.ncu.sampling.min_time_share is above 0 and pipeline.ncu.ncu_cli.kernel_name is set, but the deep pass keeps its launch keys with --kernel-name, which takes one pattern; set kernel_name=null (choose kernels with report.kernels) or min_time_share=0"
                .into(),
        );
    }
    None
}

/// Which mangled names of the first pass's launch keys the deep pass profiles.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DeepSelection {
    /// Names with at least one key at or above the share, each once, in first-seen order.
    pub kept: Vec<String>,
    /// Names whose every key is below the share, each once, in first-seen order.
    pub left_out: Vec<String>,
    /// Launch keys of the first pass, and how many of them the names left out hold.
    pub keys: (u64, u64),
}

/// Splits the first pass's names by `share` (`durations`: every key's time per region).
pub(crate) fn select(durations: &LaunchDurations, share: f64) -> DeepSelection {
    let mut names: Vec<(&str, bool)> = Vec::new();
    let mut keys_of: Vec<&str> = Vec::new();
    for (name, _, key) in durations.keys() {
        keys_of.push(name);
        let small = durations.below_share(key, share);
        match names.iter_mut().find(|(n, _)| *n == name) {
            Some((_, all_small)) => *all_small &= small,
            None => names.push((name, small)),
        }
    }
    let (left_out, kept): (Vec<_>, Vec<_>) = names.into_iter().partition(|(_, small)| *small);
    let own = |list: Vec<(&str, bool)>| -> Vec<String> {
        list.into_iter().map(|(n, _)| n.to_string()).collect()
    };
    let left_out = own(left_out);
    let keys_left_out = keys_of.iter().filter(|n| left_out.iter().any(|l| l == *n));
    DeepSelection {
        kept: own(kept),
        keys: (keys_of.len() as u64, keys_left_out.count() as u64),
        left_out,
    }
}

#[cfg(test)]
mod tests {
    use super::super::refusal as refusal_of;
    use super::super::tests::config;
    use super::*;
    use crate::config::KernelNameForm;
    use crate::profiler::ncu::observe::report_source::twins::Shape;

    #[test]
    fn a_share_outside_zero_to_one_is_refused_naming_the_key() {
        let mut c = config();
        assert_eq!(c.pipeline.ncu.sampling.min_time_share, 0.0, "the default");
        for bad in [1.0, -0.1, 2.0, f64::NAN] {
            c.pipeline.ncu.sampling.min_time_share = bad;
            let why = refusal_of(&c).expect("refused");
            assert!(
                why.contains("pipeline.ncu.sampling.min_time_share is") && why.contains("[0, 1)"),
                "{why}"
            );
        }
        c.pipeline.ncu.sampling.min_time_share = 0.01;
        assert_eq!(refusal_of(&c), None);
        c.pipeline.ncu.ncu_cli.kernel_name = Some("regex:^_Z.*gemm".into());
        c.pipeline.ncu.ncu_cli.kernel_name_base = Some(KernelNameForm::Mangled);
        let why = refusal_of(&c).expect("one --kernel-name");
        assert!(why.contains("kernel_name=null"), "{why}");
    }

    #[test]
    fn a_name_is_left_out_only_when_every_key_with_it_is_small_everywhere() {
        let mut d = LaunchDurations::default();
        let step = vec![vec!["step".to_string()]];
        let p = (1, Some(0));
        d.add("_Z4gemm", Shape::of_grid(1), p, 900.0, &step);
        d.add("_Z4norm", Shape::of_grid(1), p, 5.0, &step);
        // One small and one large configuration of one name: ncu cannot keep one without the other.
        d.add("_Z3add", Shape::of_grid(1), p, 5.0, &step);
        d.add("_Z3add", Shape::of_grid(2), p, 90.0, &step);
        let at_1 = select(&d, 0.01);
        assert_eq!(at_1.kept, ["_Z4gemm", "_Z3add"]);
        assert_eq!(at_1.left_out, ["_Z4norm"]);
        assert_eq!(at_1.keys, (4, 1), "four keys, one left out");
        let nothing = select(&d, 0.0);
        assert!(nothing.left_out.is_empty());
        assert_eq!(nothing.kept.len(), 3);
        let kept = super::super::workers::Worker {
            names: Some(at_1.kept.clone()),
            count: 1,
            keys: 3,
            cost: 3,
        };
        let flags = super::super::workers::worker_flags(&config().pipeline.ncu.ncu_cli, &kept);
        assert_eq!(
            flags.kernel_name.as_deref(),
            Some("regex:^(?:_Z4gemm|_Z3add)$")
        );
        assert_eq!(flags.kernel_name_base, Some(KernelNameForm::Mangled));
    }
}
