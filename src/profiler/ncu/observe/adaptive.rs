//! What the report says of an adaptive sampled run (`pipeline.ncu.sampling.adaptive`): the settings
//! and counts `run.json` recorded when the run sized its deep samples, the keys and top-up results
//! read back from the report files, and the note that sums them up.

use crate::analysis::AdaptiveRecord;
use crate::report::model::AdaptiveSampling;

/// report.json's account of the adaptive samples: `recorded` is what the run recorded (`None` for
/// a run that was not adaptive, or a bare capture); `keys` and `topup_results` come from the deep
/// and top-up report files.
pub fn sampling(
    recorded: Option<&AdaptiveRecord>,
    keys: u64,
    topup_results: u64,
) -> AdaptiveSampling {
    AdaptiveSampling {
        adaptive: recorded.is_some() || topup_results > 0,
        error: recorded.map(|r| r.error),
        max_samples: recorded.map(|r| r.max_samples),
        keys,
        keys_topped_up: recorded.map(|r| r.keys_topped_up),
        keys_capped: recorded.map(|r| r.keys_capped),
        topup_results,
    }
}

/// The note on how many keys were topped up and how many the budget held below their n; a second
/// one when the top-up pass failed.
pub fn notes(recorded: Option<&AdaptiveRecord>, sampling: &AdaptiveSampling) -> Vec<String> {
    let Some(r) = recorded else {
        return if sampling.topup_results > 0 {
            vec![format!(
                "Adaptive samples: a top-up pass added {} deep results to the deep pass's.",
                sampling.topup_results
            )]
        } else {
            Vec::new()
        };
    };
    if let Some(why) = &r.sizing_failed {
        return vec![format!(
            "Adaptive samples were asked for, but the deep samples could not be sized ({why}): every key has launch_count deep samples."
        )];
    }
    // Older runs took the extra samples in a top-up pass; runs since, in the deep pass itself, one
    // worker per sample count.
    let taken = match sampling.topup_results {
        0 if !r.topup_failed => {
            "took them in the deep pass itself (one ncu worker per sample count, run at once)"
                .to_string()
        }
        results => format!("were topped up ({results} more deep results)"),
    };
    let mut notes = vec![format!(
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
    )];
    if r.topup_failed {
        notes.push(format!(
            "The top-up pass failed: the deep metrics come from the deep pass alone, and the {} keys that needed more samples have the deep pass's. Its log (ncu.topup.log in the run directory) says why.",
            r.keys_topped_up
        ));
    }
    notes
}
