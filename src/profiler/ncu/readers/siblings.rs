//! Which report files of a sampled capture belong together: the deep pass's beside the timing
//! pass's (`NAME.deep.ncu-rep[.gz]` beside `NAME.ncu-rep[.gz]`), a top-up pass's beside the deep
//! pass's (`NAME.topup.ncu-rep[.gz]`, left out), the deep pass's other workers' beside its worker 0's
//! (`NAME.deep.1.ncu-rep[.gz]`, …), how many launches of each configuration the deep pass
//! skipped and which kernel names it was limited to, from its recorded command line. Both the capture (resolving inputs) and the readers of a
//! sampled capture ask.

use crate::file_kind;

/// A deep pass's report file found beside a timing pass's.
#[derive(Debug, Clone, PartialEq)]
pub enum Sibling {
    File(std::path::PathBuf),
    /// Something by that name that is not a regular file, with what it is (`is a FIFO (named pipe)`).
    NotAFile(std::path::PathBuf, &'static str),
}

/// How many launches of each distinct launch the deep pass skipped, from its command line
/// (`--launch-skip N`; 0 when absent).
pub fn skipped(deep_command: &[String]) -> u32 {
    deep_command
        .iter()
        .skip_while(|a| *a != "--launch-skip")
        .nth(1)
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

/// The mangled names the deep pass was limited to, from its command line (`--kernel-name`, as
/// `pipeline.ncu.sampling.min_time_share` sets it: `regex:^(?:…)$`, or a plain name); `None` when
/// it was not limited, or the pattern is not one this reader can repeat.
pub fn kept_names(deep_command: &[String]) -> Option<regex::Regex> {
    let pattern = deep_command
        .iter()
        .skip_while(|a| *a != "--kernel-name")
        .nth(1)?;
    match pattern.strip_prefix("regex:") {
        Some(expression) => regex::Regex::new(expression).ok(),
        None => regex::Regex::new(&format!("^{}$", regex::escape(pattern))).ok(),
    }
}

/// The deep pass's report file beside a timing pass's `NAME.ncu-rep[.gz]`: `NAME.deep.ncu-rep[.gz]`.
pub fn deep_sibling(timing: &std::path::Path) -> Option<Sibling> {
    let name = timing.file_name()?.to_str()?;
    let (stem, ext) = [".ncu-rep.gz", ".ncu-rep"]
        .iter()
        .find_map(|ext| name.strip_suffix(ext).map(|stem| (stem, *ext)))?;
    if stem.ends_with(".deep") {
        return None;
    }
    let deep = timing.with_file_name(format!("{stem}.deep{ext}"));
    if let Some(kind) = file_kind::not_a_file(&deep) {
        return Some(Sibling::NotAFile(deep, kind));
    }
    deep.is_file().then_some(Sibling::File(deep))
}

/// The report files of a deep pass's other workers beside worker 0's `NAME.deep.ncu-rep[.gz]`:
/// `NAME.deep.1.ncu-rep[.gz]`, `NAME.deep.2…`, in order, as long as each is a regular file (a
/// deep pass run as several ncu workers, `capture::sampling::workers`).
pub fn worker_siblings(deep: &std::path::Path) -> Vec<std::path::PathBuf> {
    let Some(name) = deep.file_name().and_then(|n| n.to_str()) else {
        return Vec::new();
    };
    let Some((stem, ext)) = [".deep.ncu-rep.gz", ".deep.ncu-rep"]
        .iter()
        .find_map(|ext| {
            name.strip_suffix(ext)
                .map(|stem| (stem, &ext[".deep".len()..]))
        })
    else {
        return Vec::new();
    };
    (1..)
        .map(|i| deep.with_file_name(format!("{stem}.deep.{i}{ext}")))
        .take_while(|p| file_kind::not_a_file(p).is_none() && p.is_file())
        .collect()
}

/// The mangled names a deep pass run as several workers was limited to: every worker's
/// `--kernel-name` (see [`kept_names`]) in one expression; `None` when some worker was not limited
/// or a pattern cannot be repeated here.
pub fn kept_names_of_all(commands: &[Vec<String>]) -> Option<regex::Regex> {
    let each: Option<Vec<regex::Regex>> = commands.iter().map(|c| kept_names(c)).collect();
    let each = each.filter(|each| !each.is_empty())?;
    let joined: Vec<String> = each.iter().map(|r| format!("(?:{})", r.as_str())).collect();
    regex::Regex::new(&joined.join("|")).ok()
}

/// A top-up pass's report file beside a deep pass's `NAME.deep.ncu-rep[.gz]`:
/// `NAME.topup.ncu-rep[.gz]`, when it is a regular file (a run that took its adaptive samples in a
/// pass after the deep pass); the readers leave it out with a note.
pub fn topup_sibling(deep: &std::path::Path) -> Option<std::path::PathBuf> {
    let name = deep.file_name()?.to_str()?;
    let (stem, ext) = [".deep.ncu-rep.gz", ".deep.ncu-rep"]
        .iter()
        .find_map(|ext| {
            name.strip_suffix(ext)
                .map(|stem| (stem, &ext[".deep".len()..]))
        })?;
    let topup = deep.with_file_name(format!("{stem}.topup{ext}"));
    // Only a regular file: anything else in its place (a directory, a FIFO that would block the
    // read) is not a top-up capture.
    (file_kind::not_a_file(&topup).is_none() && topup.is_file()).then_some(topup)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_deep_capture_lies_beside_its_timing_capture() {
        let dir = tempfile::tempdir().unwrap();
        let timing = dir.path().join("step.ncu-rep.gz");
        std::fs::write(&timing, b"x").unwrap();
        assert_eq!(deep_sibling(&timing), None);
        let deep = dir.path().join("step.deep.ncu-rep.gz");
        std::fs::write(&deep, b"x").unwrap();
        assert_eq!(deep_sibling(&timing), Some(Sibling::File(deep.clone())));
        assert_eq!(
            deep_sibling(&deep),
            None,
            "a deep capture has no deep sibling"
        );
        assert_eq!(topup_sibling(&deep), None, "no top-up pass ran");
        let topup = dir.path().join("step.topup.ncu-rep.gz");
        std::fs::write(&topup, b"x").unwrap();
        assert_eq!(topup_sibling(&deep), Some(topup));
        assert_eq!(topup_sibling(&timing), None, "a timing capture has none");
        assert!(
            worker_siblings(&deep).is_empty(),
            "a deep pass of one worker"
        );
        let (one, two, four) = (
            dir.path().join("step.deep.1.ncu-rep.gz"),
            dir.path().join("step.deep.2.ncu-rep.gz"),
            dir.path().join("step.deep.4.ncu-rep.gz"),
        );
        for p in [&one, &two, &four] {
            std::fs::write(p, b"x").unwrap();
        }
        assert_eq!(
            worker_siblings(&deep),
            [one, two],
            "in order, while they last"
        );
        std::fs::remove_file(&deep).unwrap();
        std::fs::create_dir(&deep).unwrap();
        assert_eq!(
            deep_sibling(&timing),
            Some(Sibling::NotAFile(deep.clone(), "is a directory")),
            "a directory in its place is named, not skipped"
        );
    }
}

#[cfg(test)]
mod kept {
    use super::*;

    fn command(pattern: &str) -> Vec<String> {
        ["ncu", "--kernel-name", pattern, "--launch-count", "1"]
            .map(String::from)
            .to_vec()
    }

    #[test]
    fn every_workers_names_are_kept_or_none_is_limited() {
        let all = kept_names_of_all(&[command("regex:^(?:_Z4gemm)$"), command("_Z4norm")]).unwrap();
        assert!(all.is_match("_Z4gemm") && all.is_match("_Z4norm"));
        assert!(!all.is_match("_Z4copy"));
        let unlimited = vec!["ncu".to_string(), "--launch-count".into(), "1".into()];
        assert!(kept_names_of_all(&[command("_Z4norm"), unlimited]).is_none());
        assert!(kept_names_of_all(&[]).is_none());
    }
}
