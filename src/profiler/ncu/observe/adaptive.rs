//! What the report says of an adaptive sampled run (`pipeline.ncu.sampling.adaptive`): the settings
//! and counts `run.json` recorded when the run sized its deep samples, the keys read back from the
//! report files, and the note that sums them up.

use crate::analysis::AdaptiveRecord;
use crate::report::model::AdaptiveSampling;

/// report.json's account of the adaptive samples: `recorded` is what the run recorded (`None` for
/// a run that was not adaptive, or a bare capture); `keys` come from the deep report files.
pub fn sampling(recorded: Option<&AdaptiveRecord>, keys: u64) -> AdaptiveSampling {
    AdaptiveSampling {
        adaptive: recorded.is_some(),
        error: recorded.map(|r| r.error),
        max_samples: recorded.map(|r| r.max_samples),
        keys,
        keys_topped_up: recorded.map(|r| r.keys_topped_up),
        keys_capped: recorded.map(|r| r.keys_capped),
    }
}

/// The note on how many keys needed more samples and how many the budget held below their n.
/// `topup_left_out`: the run took the extra samples in a top-up pass, whose file is not read.
pub fn notes(recorded: Option<&AdaptiveRecord>, topup_left_out: bool) -> Vec<String> {
    let Some(r) = recorded else {
        return Vec::new();
    };
    if let Some(why) = &r.sizing_failed {
        return vec![format!(
            "Adaptive samples were asked for, but the deep samples could not be sized ({why}): every key has launch_count deep samples."
        )];
    }
    let taken = match topup_left_out {
        false => "took them in the deep pass itself (one ncu worker per sample count, run at once)",
        true => "were to take them in a top-up pass, which is not read",
    };
    vec![format!(
        "Adaptive samples (n = ⌈(1.96·CV/{error})²⌉ per launch key{scaled}, CV from its first-pass durations, at most max_samples = {max}): {up} of {keys} keys needed more deep samples than launch_count and {taken}; {capped} stayed below their n because of max_samples (docs/attribution.md, \"Adaptive samples per launch key\").",
        error = r.error,
        scaled = if r.per_region {
            " times the largest share of a region's time the key holds"
        } else {
            ""
        },
        max = r.max_samples,
        up = r.keys_topped_up,
        keys = r.keys,
        capped = r.keys_capped,
    )]
}
