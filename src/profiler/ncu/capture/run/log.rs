//! Reading ncu's live log: `==PROF==` progress lines and the known failure messages, each turned into
//! a cause and a fix the user can act on.

pub use crate::run::NCU_LOG as LOG;

/// What a `==PROF==` line tells about progress.
#[derive(Debug, Clone, PartialEq)]
pub enum Progress {
    Connected {
        process: String,
    },
    /// `Profiling "kernel" - 3: 0%....50%....100% - 10 passes`
    Profiling {
        name: String,
        index: u64,
    },
    Disconnected {
        process: String,
    },
    Other(String),
}

/// Parses a `==PROF==` line; `None` for any other line.
pub fn parse_prof(line: &str) -> Option<Progress> {
    let rest = line.strip_prefix("==PROF==")?.trim();
    if let Some(p) = rest.strip_prefix("Connected to process ") {
        return Some(Progress::Connected {
            process: p.trim().to_string(),
        });
    }
    if let Some(p) = rest.strip_prefix("Disconnected from process ") {
        return Some(Progress::Disconnected {
            process: p.trim().to_string(),
        });
    }
    if let Some(p) = rest.strip_prefix("Profiling ") {
        // `"name" - 3: …` — the name is quoted and may contain anything but a quote.
        if let Some(body) = p.strip_prefix('"') {
            if let Some((name, tail)) = body.split_once('"') {
                let index = tail
                    .trim_start_matches([' ', '-'])
                    .split(':')
                    .next()
                    .and_then(|n| n.trim().parse().ok())
                    .unwrap_or(0);
                return Some(Progress::Profiling {
                    name: name.to_string(),
                    index,
                });
            }
        }
    }
    Some(Progress::Other(rest.to_string()))
}

/// A recognised failure: what happened and how to fix it.
#[derive(Debug, Clone, PartialEq)]
pub struct Diagnosis {
    pub cause: String,
    pub fix: String,
}

/// Known failure signatures in ncu's log, most specific first.
pub fn diagnose(log: &str) -> Vec<Diagnosis> {
    let mut found = Vec::new();
    let mut add = |cause: &str, fix: &str| {
        found.push(Diagnosis {
            cause: cause.to_string(),
            fix: fix.to_string(),
        })
    };
    if log.contains("ERR_NVGPUCTRPERM") {
        add(
            "ncu may not read the GPU performance counters (ERR_NVGPUCTRPERM)",
            "run as root, or allow profiling for all users with the driver option NVreg_RestrictProfilingToAdminUsers=0 \
             (modprobe config, then reload the driver); in a container add `--cap-add SYS_ADMIN`",
        );
    }
    if log.contains("Unsupported API during capture") {
        let api = log
            .lines()
            .find(|l| l.contains("Unsupported API during capture"))
            .and_then(|l| {
                l.split_once('(')
                    .map(|(_, r)| r.trim_end_matches(')').to_string())
            })
            .unwrap_or_default();
        add(
            &format!(
                "range replay could not capture a range: the program called a CUDA API that range replay does not support inside it{}",
                if api.is_empty() { String::new() } else { format!(" ({api})") }
            ),
            "warm up outside the range (first CUDA call, allocator, cuBLAS/cuDNN handles, stream-ordered allocations) \
             or use pipeline.ncu.ncu_cli.replay_mode=kernel (or app-range, which does not capture API calls)",
        );
    }
    if log.contains("Skipping invalid capture range")
        && !log.contains("Unsupported API during capture")
    {
        add(
            "range replay skipped a range it could not capture (`Skipping invalid capture range`)",
            RANGE_REPLAY_FIX,
        );
    }
    if log.contains("No kernels were profiled") {
        add(
            "ncu profiled no kernel: the filters matched nothing",
            "check regions.include against the range names the program pushes (push/pop ranges need a trailing `/`, \
             which regions.include adds for you; `@` in a name must be escaped); with nvtx.push_pop_scope=thread, kernels \
             launched from other threads (PyTorch backward) fall outside the range; check kernel_name / launch_skip / launch_count",
        );
    }
    if log.contains("No ranges were profiled") {
        add(
            "ncu profiled no range: no NVTX range matched under range replay",
            "check regions.include / nvtx.include against the range names; push/pop ranges need a trailing `/`",
        );
    }
    if log.contains("Launching the workload is taking more time than expected") {
        add(
            "the workload stalled under the profiler; with several processes this is usually a collective (NCCL) kernel \
             waiting for peers while ncu serialises kernels",
            "use the distributed preset (`--config ncu/distributed`: NCCL kernels excluded from profiling), or range replay \
             around the code between collectives",
        );
    }
    if log.contains("Failed to initialize the profiler") || log.contains("LibraryNotLoaded") {
        add(
            "ncu could not initialise its profiling library on this machine",
            "check that the driver supports profiling here (some sandboxed runtimes do not) and that ncu matches the driver",
        );
    }
    found
}

/// What to run instead when range replay cannot capture a range.
const RANGE_REPLAY_FIX: &str = "profile the same ranges with kernel replay \
     (pipeline.ncu.ncu_cli.replay_mode=kernel, same regions.include: every kernel is replayed on its own and \
     the report still gives each range its totals), or keep range replay on a forward-only range (no backward \
     pass, no optimizer step, no .item()/.cpu()/synchronize inside it) after a warm-up step outside it";

/// Why a range or app-range replay ended with an error or without results: what ncu's log says, and
/// what such a range usually holds that range replay cannot capture. `None` under kernel replay, and
/// when the run exited cleanly with results.
pub fn range_replay(
    log: &str,
    replay_mode: &str,
    exit_code: Option<i32>,
    results: Option<u64>,
) -> Option<Diagnosis> {
    if !matches!(replay_mode, "range" | "app-range") {
        return None;
    }
    let failed = exit_code.is_some_and(|c| c != 0);
    if !failed && results != Some(0) {
        return None;
    }
    // ncu's errors say why; its warnings only when there is no error, and never the ones every run
    // prints (unlocked clocks, the pointer to the documentation).
    let lines = |prefix: &'static str| {
        log.lines()
            .map(str::trim)
            .filter(move |l| l.starts_with(prefix))
            .filter(|l| {
                !l.contains("returned an error code")
                    && !l.contains("unmodified GPU clocks")
                    && !l.contains(" See https://")
            })
    };
    let mut said: Vec<&str> = lines("==ERROR==").take(3).collect();
    if said.is_empty() {
        said = lines("==WARNING==").take(3).collect();
    }
    let outcome = match (exit_code.filter(|c| *c != 0), results) {
        (Some(c), Some(0)) => format!("ncu exited with code {c} and no results"),
        (Some(c), _) => format!("ncu exited with code {c}"),
        (None, _) => "ncu profiled no range".to_string(),
    };
    let log_says = if said.is_empty() {
        "its log names no cause".to_string()
    } else {
        format!("its log says `{}`", said.join("`, `"))
    };
    Some(Diagnosis {
        cause: format!(
            "{replay_mode} replay could not capture the range: {outcome}; {log_says}. A range that holds a \
             backward pass (its kernels come from PyTorch's autograd thread), a host synchronisation \
             (.item(), .cpu(), cudaDeviceSynchronize, blocking copies) or CUDA calls range replay does not \
             support (initialisation, allocations, graph or stream-ordered memory management) cannot be \
             saved and replayed as one unit; on an H100 a range around a PyTorch training step's backward \
             pass ended with exit code 9 and no results"
        ),
        fix: RANGE_REPLAY_FIX.to_string(),
    })
}

/// The workload's own exit code, when ncu reports one (`The application returned an error code (N)`).
pub fn application_exit_code(log: &str) -> Option<i32> {
    log.lines()
        .find_map(|l| l.split_once("returned an error code (").map(|(_, r)| r))
        .and_then(|r| r.split(')').next())
        .and_then(|n| n.trim().parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prof_lines_from_a_real_run() {
        assert_eq!(
            parse_prof(r#"==PROF== Profiling "reduce_kernel" - 2: 0%....50%....100% - 10 passes"#),
            Some(Progress::Profiling {
                name: "reduce_kernel".into(),
                index: 2
            })
        );
        assert_eq!(
            parse_prof("==PROF== Connected to process 1493 (/usr/bin/python3.12)"),
            Some(Progress::Connected {
                process: "1493 (/usr/bin/python3.12)".into()
            })
        );
        assert_eq!(parse_prof("done 1049088.0"), None);
    }

    #[test]
    fn known_failures_are_explained() {
        let log = "==ERROR== Unsupported API during capture (cuInit)\n==WARNING== Skipping invalid capture range";
        let d = diagnose(log);
        assert_eq!(d.len(), 1);
        assert!(d[0].cause.contains("cuInit"));
        assert!(d[0].fix.contains("replay_mode=kernel"));
        assert!(
            diagnose("==ERROR== ERR_NVGPUCTRPERM - The user does not have permission")[0]
                .fix
                .contains("SYS_ADMIN")
        );
        assert!(diagnose("all good").is_empty());
    }

    #[test]
    fn a_real_range_replay_of_a_backward_pass_is_explained_by_its_errors() {
        // ncu 2025.3.1 on an H100, range replay of a GPT-2 training step (gpt2_captures.sh rangebw).
        let log =
            include_str!("../../../../../tests/fixtures/ncu/h100-2025.3.1-gpt2/rangebw.ncu.log");
        let d = range_replay(log, "range", Some(9), Some(0)).unwrap();
        assert!(d
            .cause
            .contains("Unsupported API during capture (cuKernelSetAttribute)"));
        assert!(!d.cause.contains("unmodified GPU clocks"), "{}", d.cause);
        assert!(d.fix.contains("replay_mode=kernel"));
    }

    #[test]
    fn a_failed_range_replay_says_what_the_log_says_and_what_to_run_instead() {
        let log = "==PROF== Connected to process 1 (python3)\n==WARNING== Skipping invalid capture range\n";
        let d = range_replay(log, "range", Some(9), Some(0)).unwrap();
        assert!(
            d.cause.contains("exit code 9 and no results"),
            "{}",
            d.cause
        );
        assert!(d
            .cause
            .contains("`==WARNING== Skipping invalid capture range`"));
        assert!(d.cause.contains("backward pass"));
        assert!(d.fix.contains("replay_mode=kernel"));
        assert!(d.fix.contains("forward-only"));
        assert!(range_replay("", "app-range", Some(0), Some(0))
            .unwrap()
            .cause
            .contains("no range"));
        assert_eq!(range_replay(log, "kernel", Some(9), Some(0)), None);
        assert_eq!(range_replay(log, "range", Some(0), Some(12)), None);
        assert!(diagnose(log)[0]
            .cause
            .contains("Skipping invalid capture range"));
    }

    #[test]
    fn workload_exit_code_is_found() {
        assert_eq!(
            application_exit_code("==ERROR== The application returned an error code (3)."),
            Some(3)
        );
        assert_eq!(application_exit_code("nothing"), None);
    }
}
