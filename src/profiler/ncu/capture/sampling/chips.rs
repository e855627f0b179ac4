//! How many replay passes the in-process engine's metrics take on this machine's GPUs, for
//! `--dry-run`, and whether their chips know every metric, checked before the workload starts: the
//! GPUs `nvidia-smi` names, each mapped to CUPTI's chip name, and the count from CUPTI's host API
//! (no GPU work, no CUDA context; a libcupti and the driver library to load).

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

/// This machine's GPUs' names, once each, in `nvidia-smi`'s order; empty without one.
fn local_gpus() -> Vec<String> {
    let listed = duct::cmd!("nvidia-smi", "--query-gpu=name", "--format=csv,noheader")
        .stderr_null()
        .unchecked()
        .read()
        .unwrap_or_default();
    let mut names: Vec<String> = Vec::new();
    for name in listed.lines().map(str::trim).filter(|l| !l.is_empty()) {
        if !names.iter().any(|n| n == name) {
            names.push(name.to_string());
        }
    }
    names
}

/// Points `cupti_trace`'s loader at `pipeline.ncu.trace.libcupti`, the copy to load where none is
/// found by its usual names.
fn aim_at(libcupti: Option<&str>) {
    if let Some(path) = libcupti {
        // The library's loader reads the trace pass's variable; profile-run has started no thread
        // of its own yet.
        std::env::set_var(cupti_trace::LIBCUPTI_VAR, path);
    }
}

/// The first of this machine's GPUs whose chip refuses one of `metrics`, with CUPTI's reason and
/// the fix: the in-process engine would run the whole workload and collect nothing. Where the
/// metrics cannot be checked here (no GPU named, no libcupti or driver library), nothing is said:
/// the library names a refused metric in the trace.
pub fn refused(metrics: &[String], libcupti: Option<&str>) -> Option<String> {
    aim_at(libcupti);
    first_refusal(&local_gpus(), |chip| pass_count(chip, metrics))
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
                "the in-process engine cannot collect the report's metrics on this machine's {gpu} ({chip}): {why}; drop it from report.metrics (or its group from report.sections), or set pipeline.ncu.sampling.deep_engine=ncu"
            )),
            Ok(_) | Err(PassCountError::Unavailable(_)) => None,
        }
    })
}

/// `--dry-run`'s line on the passes `metrics` take: for each local GPU (or, with none, each
/// data-center chip), its chip's count, or why none could be counted. `libcupti`:
/// `pipeline.ncu.trace.libcupti`, the copy to load where none is found by its usual names.
pub fn passes_line(metrics: &[String], libcupti: Option<&str>) -> String {
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
    let mut failures: Vec<String> = Vec::new();
    for (label, chip) in &targets {
        match chip.map(|chip| pass_count(chip, metrics)) {
            None => counts.push(format!("{label}: a chip profile-run does not know")),
            Some(Ok(passes)) => counts.push(format!("{label}: {passes} passes")),
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
    let why = match failures.is_empty() {
        true => String::new(),
        false => format!(" ({})", failures.join("; ")),
    };
    format!(
        "# {here}each profiled launch replays its kernel once per pass: {}{why}, by CUPTI's host API; on an H200 at 9 passes a profiled launch costs about 0.2–0.4 s (docs/performance.md)",
        counts.join(", ")
    )
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
}
