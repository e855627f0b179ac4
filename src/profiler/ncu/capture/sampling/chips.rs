//! How many replay passes the in-process engine's metrics take on this machine's GPUs, for
//! `--dry-run`, and whether their chips know every metric, checked before the workload starts: the
//! GPUs `nvidia-smi` names, each mapped to CUPTI's chip name, and the count from CUPTI's host API
//! (no GPU work, no CUDA context; a libcupti and the driver library to load).

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use cupti_trace::deep::{pass_count, PassCountError};

/// The GPUs `nvidia-smi` names (a word of the name) and CUPTI's name for their chip.
const CHIPS: [(&str, &str); 15] = [
    ("H100", "GH100"),
    ("H200", "GH100"),
    ("H800", "GH100"),
    ("H20", "GH100"),
    ("GH200", "GH100"),
    ("A100", "GA100"),
    ("A800", "GA100"),
    ("A30", "GA100"),
    ("B100", "GB100"),
    ("B200", "GB100"),
    ("GB200", "GB100"),
    ("A10", "GA102"),
    ("L40", "AD102"),
    ("L40S", "AD102"),
    ("L4", "AD104"),
];

/// The chips to count for when no GPU is named here: the data-center generations.
const WITHOUT_A_GPU: [&str; 3] = ["GA100", "GH100", "GB100"];

/// CUPTI's chip name for a GPU as `nvidia-smi` names it (`NVIDIA H200` → `GH100`).
pub fn chip_of(gpu: &str) -> Option<&'static str> {
    gpu.split([' ', '-'])
        .find_map(|word| CHIPS.iter().find(|(name, _)| *name == word))
        .map(|(_, chip)| *chip)
}

/// How long `nvidia-smi` may take to list the GPUs before the check goes without them.
const LISTING_TIMEOUT: Duration = Duration::from_secs(10);

/// The names of the GPUs the workload will see, once each, in `nvidia-smi`'s order; empty where
/// none is listed (no `nvidia-smi`, or it did not answer in time). Asked once per process.
fn local_gpus() -> &'static [String] {
    static GPUS: OnceLock<Vec<String>> = OnceLock::new();
    GPUS.get_or_init(list_gpus)
}

fn list_gpus() -> Vec<String> {
    let listing = duct::cmd!(
        "nvidia-smi",
        "--query-gpu=index,uuid,name",
        "--format=csv,noheader"
    )
    .stderr_null()
    .stdout_capture()
    .unchecked()
    .start()
    .ok()
    .and_then(|handle| match handle.wait_timeout(LISTING_TIMEOUT) {
        Ok(Some(out)) => Some(String::from_utf8_lossy(&out.stdout).into_owned()),
        _ => {
            let _ = handle.kill();
            None
        }
    })
    .unwrap_or_default();
    let visible = std::env::var("CUDA_VISIBLE_DEVICES").ok();
    visible_gpus(&listing, visible.as_deref())
}

/// The names in `nvidia-smi`'s `index, uuid, name` lines of the GPUs `CUDA_VISIBLE_DEVICES`
/// leaves visible (indices or UUIDs, as CUDA reads it; unset: all), once each.
fn visible_gpus(listing: &str, visible: Option<&str>) -> Vec<String> {
    let shown = |index: &str, uuid: &str| match visible {
        None => true,
        Some(list) => list
            .split(',')
            .map(str::trim)
            .any(|v| v == index || (v.starts_with("GPU-") && uuid.starts_with(v))),
    };
    let mut names: Vec<String> = Vec::new();
    for line in listing.lines() {
        let mut fields = line.splitn(3, ',').map(str::trim);
        let (Some(index), Some(uuid), Some(name)) = (fields.next(), fields.next(), fields.next())
        else {
            continue;
        };
        if shown(index, uuid) && !names.iter().any(|n| n == name) {
            names.push(name.to_string());
        }
    }
    names
}

/// What one replay pass of a profiled launch costs in process, in milliseconds: the least and the
/// most measured on an H200 (docs/performance.md, "What a launch profiled in process costs": 213 ms
/// for 9 passes on a small model, 417 ms on GPT-2, whose larger memory each pass saves and restores).
const PASS_COST_MS: (f64, f64) = (24.0, 46.0);

/// [`pass_count`] once per chip and metric set in this process: the start check and `--dry-run`'s
/// line ask for the same counts.
fn counted(chip: &str, metrics: &[String]) -> Result<u32, PassCountError> {
    type Counts = HashMap<(String, Vec<String>), Result<u32, PassCountError>>;
    static COUNTS: OnceLock<Mutex<Counts>> = OnceLock::new();
    let key = (chip.to_string(), metrics.to_vec());
    let mut counts = COUNTS
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    counts
        .entry(key)
        .or_insert_with(|| pass_count(chip, metrics))
        .clone()
}

/// Points `cupti_trace`'s loader at `pipeline.ncu.trace.libcupti`, the copy to load where none is
/// found by its usual names.
fn aim_at(libcupti: Option<&str>) {
    if let Some(path) = libcupti {
        cupti_trace::prefer_libcupti(path);
    }
}

/// The first of this machine's GPUs whose chip refuses one of `metrics`, with CUPTI's reason and
/// the fix: the in-process engine would run the whole workload and collect nothing. Where the
/// metrics cannot be checked here (no GPU named, no libcupti or driver library), nothing is said:
/// the library names a refused metric in the trace.
pub fn refused(metrics: &[String], libcupti: Option<&str>) -> Option<String> {
    aim_at(libcupti);
    first_refusal(local_gpus(), |chip| counted(chip, metrics))
}

/// [`refused`] over `gpus`, each chip's metrics counted by `count`.
fn first_refusal(
    gpus: &[String],
    count: impl Fn(&str) -> Result<u32, PassCountError>,
) -> Option<String> {
    gpus.iter().find_map(|gpu| {
        let chip = chip_of(gpu)?;
        match count(chip) {
            Err(PassCountError::Refused(why)) => Some(format!(
                "the in-process engine cannot collect the report's metrics on this machine's {gpu} ({chip}): {why}, as the libcupti profile-run loads counts them; drop it from report.metrics (or its group from report.sections), set pipeline.ncu.sampling.deep_engine=ncu, or point pipeline.ncu.trace.libcupti at the workload's own libcupti if it is newer"
            )),
            Ok(_) | Err(PassCountError::Unavailable(_)) => None,
        }
    })
}

/// `--dry-run`'s line on the passes `metrics` take: for each local GPU (or, with none, each
/// data-center chip), its chip's count, or why none could be counted, and the deep cost that gives
/// each stratum of `samples` profiled launches. `libcupti`: `pipeline.ncu.trace.libcupti`, the copy
/// to load where none is found by its usual names.
pub fn passes_line(metrics: &[String], samples: u32, libcupti: Option<&str>) -> String {
    aim_at(libcupti);
    let gpus = local_gpus();
    let targets: Vec<(String, Option<&str>)> = match gpus.is_empty() {
        true => WITHOUT_A_GPU
            .iter()
            .map(|chip| (chip.to_string(), Some(*chip)))
            .collect(),
        false => gpus
            .iter()
            .map(|gpu| {
                (
                    format!("{gpu} ({})", chip_of(gpu).unwrap_or("?")),
                    chip_of(gpu),
                )
            })
            .collect(),
    };
    let mut counts = Vec::new();
    let mut most_passes = None;
    let mut failures: Vec<String> = Vec::new();
    for (label, chip) in &targets {
        match chip.map(|chip| counted(chip, metrics)) {
            None => counts.push(format!("{label}: a chip profile-run does not know")),
            Some(Ok(passes)) => {
                counts.push(format!("{label}: {passes} passes"));
                most_passes = most_passes.max(Some(passes));
            }
            Some(Err(why)) => {
                counts.push(format!("{label}: not counted"));
                let why = why.to_string();
                if !failures.contains(&why) {
                    failures.push(why);
                }
            }
        }
    }
    let here = match gpus.is_empty() {
        true => "no GPU named by nvidia-smi here; ",
        false => "",
    };
    // What profile-run cannot load here says nothing of the run, whose counters use the libcupti
    // the workload loads.
    let why = match failures.is_empty() {
        true => String::new(),
        false => format!(
            " ({}; this count alone: in the run the counters use the workload's own libcupti)",
            failures.join("; ")
        ),
    };
    format!(
        "# {here}each profiled launch replays its kernel once per pass: {}{why}, by CUPTI's host API; {}",
        counts.join(", "),
        cost_estimate(samples, most_passes)
    )
}

/// The deep cost of one stratum: `samples` launches × `passes` × [`PASS_COST_MS`]. The strata are
/// the run's own (its launch keys in each range stack), known once it runs.
fn cost_estimate(samples: u32, passes: Option<u32>) -> String {
    let (least, most) = PASS_COST_MS;
    let per_pass = format!("{least:.0}–{most:.0} ms a pass measured on an H200");
    match passes {
        Some(passes) => {
            let seconds = |ms: f64| f64::from(samples * passes) * ms / 1e3;
            format!(
                "estimated deep cost {samples} launch(es) × {passes} passes × {per_pass} = {:.2}–{:.2} s per stratum (a launch key in one range stack, a repeated block's counted once), times the strata the run launches: 78 on GPT-2 with 4 layers (docs/performance.md)",
                seconds(least),
                seconds(most)
            )
        }
        None => {
            format!("the deep cost is {samples} launch(es) per stratum × the passes × {per_pass}")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_gpu_is_named_by_a_word_of_its_name() {
        assert_eq!(chip_of("NVIDIA H200"), Some("GH100"));
        assert_eq!(chip_of("NVIDIA H100 80GB HBM3"), Some("GH100"));
        assert_eq!(chip_of("NVIDIA H20"), Some("GH100"));
        assert_eq!(chip_of("NVIDIA A100-SXM4-80GB"), Some("GA100"));
        assert_eq!(chip_of("NVIDIA L40S"), Some("AD102"));
        assert_eq!(chip_of("NVIDIA B200"), Some("GB100"));
        assert_eq!(
            chip_of("NVIDIA GeForce RTX 4090"),
            None,
            "no word of it is listed"
        );
        assert_eq!(chip_of("NVIDIA A10G"), None, "A10G is not A10");
    }

    #[test]
    fn only_the_gpus_cuda_makes_visible_are_checked() {
        let listing = "0, GPU-aaaa-1111, NVIDIA H200\n1, GPU-bbbb-2222, NVIDIA H200\n2, GPU-cccc-3333, NVIDIA A100-SXM4-80GB\nnot a line\n";
        let h200 = vec!["NVIDIA H200".to_string()];
        let both = vec![
            "NVIDIA H200".to_string(),
            "NVIDIA A100-SXM4-80GB".to_string(),
        ];
        assert_eq!(
            visible_gpus(listing, None),
            both,
            "unset: all, each name once"
        );
        assert_eq!(visible_gpus(listing, Some("1")), h200);
        assert_eq!(visible_gpus(listing, Some("0, 2")), both);
        assert_eq!(
            visible_gpus(listing, Some("GPU-cccc")),
            both[1..].to_vec(),
            "a UUID prefix"
        );
        assert!(
            visible_gpus(listing, Some("")).is_empty(),
            "empty: none visible"
        );
    }

    #[test]
    fn a_metric_the_local_chip_refuses_stops_the_run_with_the_fix() {
        let gpus = [
            "NVIDIA GeForce RTX 4090",
            "NVIDIA A100-SXM4-80GB",
            "NVIDIA H200",
        ]
        .map(String::from);
        let count = |chip: &str| match chip {
            "GA100" => Err(PassCountError::Unavailable("no driver library".into())),
            "GH100" => Err(PassCountError::Refused(
                "CUPTI does not know the metric \"sm__thruput\"".into(),
            )),
            _ => Ok(9),
        };
        let why = first_refusal(&gpus, count).unwrap();
        assert!(
            why.contains("NVIDIA H200 (GH100)") && why.contains("\"sm__thruput\""),
            "{why}"
        );
        assert!(why.contains("deep_engine=ncu"), "{why}");
        assert_eq!(
            first_refusal(&gpus[..2], count),
            None,
            "unknown chips and no host API say nothing"
        );
        assert_eq!(first_refusal(&gpus, |_| Ok(9)), None);
    }

    #[test]
    fn the_deep_cost_is_samples_times_passes_times_the_measured_pass_cost() {
        let line = cost_estimate(1, Some(9));
        assert!(
            line.contains("1 launch(es) × 9 passes × 24–46 ms"),
            "{line}"
        );
        assert!(line.contains("= 0.22–0.41 s per stratum"), "{line}");
        let line = cost_estimate(3, Some(9));
        assert!(line.contains("= 0.65–1.24 s per stratum"), "{line}");
        assert!(!cost_estimate(2, None).contains('='), "no count, no figure");
    }
}
