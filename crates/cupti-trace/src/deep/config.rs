//! What the environment asks the in-process counters for: `PROFILE_RUN_DEEP_METRICS` (a comma list
//! of ncu metric names; unset or empty: no counters, tracing only), `PROFILE_RUN_DEEP_SAMPLES` (how
//! many launches of each launch key and NVTX range stack to profile), `PROFILE_RUN_DEEP_FIRST`
//! (whether a stratum's first launch is one of them: `1` by default), `PROFILE_RUN_DEEP_RANKS` (the
//! launcher ranks that profile: a comma list; unset, every process), `PROFILE_RUN_DEEP_IN_RANGES`
//! (profile only launches made inside some NVTX range: the report's regions name ranges, so a
//! kernel outside every range is in none of them), `PROFILE_RUN_DEEP_GRAPHS` (also profile CUDA
//! graph launches) and `PROFILE_RUN_DEEP_DEBUG` (print each launch callback and each profiled
//! launch's cost by phase).

/// The variables read, for messages and tests.
pub const METRICS_VAR: &str = "PROFILE_RUN_DEEP_METRICS";
pub const SAMPLES_VAR: &str = "PROFILE_RUN_DEEP_SAMPLES";
pub const FIRST_VAR: &str = "PROFILE_RUN_DEEP_FIRST";
pub const RANKS_VAR: &str = "PROFILE_RUN_DEEP_RANKS";
pub const IN_RANGES_VAR: &str = "PROFILE_RUN_DEEP_IN_RANGES";
pub const GRAPHS_VAR: &str = "PROFILE_RUN_DEEP_GRAPHS";
pub const DEBUG_VAR: &str = "PROFILE_RUN_DEEP_DEBUG";

/// Launches profiled per (launch key, range stack) when `PROFILE_RUN_DEEP_SAMPLES` is unset.
pub const DEFAULT_SAMPLES: u32 = 3;
/// The most: the rule profiles launch 2^(samples-1) last, which must fit a u32 ordinal.
pub const MAX_SAMPLES: u32 = 31;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    pub metrics: Vec<String>,
    pub samples: u32,
    /// Whether each stratum's first launch is profiled (else it is left as warm-up).
    pub first: bool,
    /// The launcher ranks that profile; `None`: every process. A process of another rank traces
    /// and names the metrics, and profiles nothing.
    pub ranks: Option<Vec<u32>>,
    /// Launches made while no NVTX range is open are never profiled.
    pub in_ranges: bool,
    pub graphs: bool,
    pub debug: bool,
}

/// The configuration `get` (an environment lookup) gives; `None` when no metric is asked for.
pub fn from_env(get: impl Fn(&str) -> Option<String>) -> Result<Option<Config>, String> {
    let Some(list) = get(METRICS_VAR).filter(|l| !l.trim().is_empty()) else {
        return Ok(None);
    };
    let mut metrics: Vec<String> = Vec::new();
    for (at, raw) in list.split(',').enumerate() {
        let name = raw.trim();
        if name.is_empty() {
            return Err(format!(
                "{METRICS_VAR}={list:?}: entry {} is empty; give ncu metric names separated by single commas",
                at + 1
            ));
        }
        if let Some(bad) = name
            .chars()
            .find(|c| !(c.is_ascii_alphanumeric() || *c == '_' || *c == '.'))
        {
            return Err(format!(
                "{METRICS_VAR}: {name:?} holds {bad:?}; an ncu metric name is letters, digits, `_` and `.` (sm__throughput.avg.pct_of_peak_sustained_elapsed)"
            ));
        }
        if !metrics.iter().any(|m| m == name) {
            metrics.push(name.to_string());
        }
    }
    let samples = match get(SAMPLES_VAR).filter(|s| !s.trim().is_empty()) {
        None => DEFAULT_SAMPLES,
        Some(raw) => match raw.trim().parse::<u32>() {
            Ok(n) if (1..=MAX_SAMPLES).contains(&n) => n,
            _ => {
                return Err(format!(
                    "{SAMPLES_VAR}={raw:?}: give a whole number from 1 to {MAX_SAMPLES} (launches profiled per launch key and range stack), or unset it for {DEFAULT_SAMPLES}"
                ))
            }
        },
    };
    Ok(Some(Config {
        metrics,
        samples,
        first: flag(&get, FIRST_VAR, true)?,
        ranks: ranks(&get)?,
        in_ranges: flag(&get, IN_RANGES_VAR, false)?,
        graphs: flag(&get, GRAPHS_VAR, false)?,
        debug: flag(&get, DEBUG_VAR, false)?,
    }))
}

fn ranks(get: &impl Fn(&str) -> Option<String>) -> Result<Option<Vec<u32>>, String> {
    let Some(list) = get(RANKS_VAR).filter(|l| !l.trim().is_empty()) else {
        return Ok(None);
    };
    let parsed: Result<Vec<u32>, _> = list.split(',').map(|r| r.trim().parse::<u32>()).collect();
    parsed.map(Some).map_err(|_| {
        format!("{RANKS_VAR}={list:?}: give rank numbers separated by commas (0,4), or unset it for every rank")
    })
}

/// Whether a process of launcher rank `rank` profiles: every process when no ranks are named, and a
/// process no launcher gave a rank (it is no rank of a job the list could name).
pub fn profiles(config: &Config, rank: Option<u32>) -> bool {
    match (&config.ranks, rank) {
        (Some(ranks), Some(rank)) => ranks.contains(&rank),
        _ => true,
    }
}

/// A `1`/`0` variable; unset or empty: `unset`.
fn flag(get: &impl Fn(&str) -> Option<String>, var: &str, unset: bool) -> Result<bool, String> {
    match get(var).as_deref().map(str::trim) {
        None | Some("") => Ok(unset),
        Some("0") => Ok(false),
        Some("1") => Ok(true),
        Some(other) => Err(format!("{var}={other:?}: give 1 (on) or 0 (off)")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let pairs: Vec<(String, String)> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |k| pairs.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone())
    }

    #[test]
    fn no_metrics_means_tracing_only() {
        assert_eq!(from_env(env(&[])), Ok(None));
        assert_eq!(from_env(env(&[(METRICS_VAR, "  ")])), Ok(None));
        assert_eq!(from_env(env(&[(SAMPLES_VAR, "x")])), Ok(None));
    }

    #[test]
    fn a_metric_list_with_defaults() {
        let got = from_env(env(&[(
            METRICS_VAR,
            "sm__throughput.avg.pct_of_peak_sustained_elapsed, dram__bytes.sum,dram__bytes.sum",
        )]))
        .unwrap()
        .unwrap();
        assert_eq!(
            got.metrics,
            [
                "sm__throughput.avg.pct_of_peak_sustained_elapsed",
                "dram__bytes.sum"
            ],
            "trimmed, repeats once"
        );
        assert_eq!(
            (got.samples, got.first, got.in_ranges, got.graphs, got.debug),
            (3, true, false, false, false)
        );
        let got = from_env(env(&[
            (METRICS_VAR, "dram__bytes.sum"),
            (SAMPLES_VAR, "5"),
            (FIRST_VAR, "0"),
            (IN_RANGES_VAR, "1"),
            (GRAPHS_VAR, "1"),
        ]))
        .unwrap()
        .unwrap();
        assert_eq!(
            (got.samples, got.first, got.in_ranges, got.graphs),
            (5, false, true, true)
        );
    }

    #[test]
    fn deep_ranks_choose_the_processes_that_profile() {
        let every = from_env(env(&[(METRICS_VAR, "a.sum")])).unwrap().unwrap();
        assert!(profiles(&every, Some(3)) && profiles(&every, None));
        let some = from_env(env(&[(METRICS_VAR, "a.sum"), (RANKS_VAR, "0, 4")]))
            .unwrap()
            .unwrap();
        assert_eq!(some.ranks, Some(vec![0, 4]));
        assert!(profiles(&some, Some(4)) && !profiles(&some, Some(1)));
        assert!(profiles(&some, None), "a process with no launcher rank");
        let e = from_env(env(&[(METRICS_VAR, "a.sum"), (RANKS_VAR, "0;1")])).unwrap_err();
        assert!(
            e.contains("PROFILE_RUN_DEEP_RANKS=\"0;1\": give rank numbers"),
            "{e}"
        );
    }

    #[test]
    fn bad_values_name_the_variable_and_the_fix() {
        let cases = [
            (vec![(METRICS_VAR, "a.sum,,b.sum")], "entry 2 is empty"),
            (vec![(METRICS_VAR, "a.sum;b.sum")], "holds ';'"),
            (
                vec![(METRICS_VAR, "a.sum"), (SAMPLES_VAR, "0")],
                "PROFILE_RUN_DEEP_SAMPLES=\"0\": give a whole number from 1 to 31",
            ),
            (
                vec![(METRICS_VAR, "a.sum"), (SAMPLES_VAR, "32")],
                "from 1 to 31",
            ),
            (
                vec![(METRICS_VAR, "a.sum"), (FIRST_VAR, "no")],
                "PROFILE_RUN_DEEP_FIRST=\"no\": give 1 (on) or 0 (off)",
            ),
            (
                vec![(METRICS_VAR, "a.sum"), (GRAPHS_VAR, "yes")],
                "PROFILE_RUN_DEEP_GRAPHS=\"yes\": give 1 (on) or 0 (off)",
            ),
        ];
        for (pairs, want) in cases {
            let e = from_env(env(&pairs)).unwrap_err();
            assert!(e.contains(want), "{pairs:?}: {e}");
        }
    }
}
