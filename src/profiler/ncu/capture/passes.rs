//! ncu's passes as plain data for the run's executor: the run's ncu command line, a pass under ncu
//! from a command line, and the workload run unprofiled in a rank's place.

use std::path::Path;

use crate::config::Config;
use crate::profiler::ncu::nvtx::NvtxPlan;
use crate::run::{PassSpec, Slot, REPORT_BASE};

use super::run::cli::NcuCli;

/// The run's ncu command line before any sampling flags: every ncu pass starts from it.
pub fn ncu_cli(nvtx: &NvtxPlan, config: &Config, dir: &Path, workload: &[String]) -> NcuCli {
    NcuCli::profile(config, nvtx, &dir.join(REPORT_BASE), workload)
}

/// A pass of `cli` under ncu, recorded in `slot`, logging to `log`; `outputs`: the files it
/// writes (its report file), kept aside if it fails and runs again.
pub fn under_ncu(
    name: &str,
    slot: Slot,
    cli: &NcuCli,
    log: &str,
    outputs: Vec<String>,
) -> PassSpec {
    PassSpec {
        name: name.to_string(),
        slot,
        program: cli.program().to_string(),
        args: cli.argv_os(),
        env: Vec::new(),
        command: std::iter::once(cli.program().to_string())
            .chain(cli.argv())
            .collect(),
        line: cli.shell_line(),
        log: log.to_string(),
        outputs,
        expected: None,
        status: None,
        watched: true,
    }
}

/// The workload itself, unprofiled, logging to `log`, with `status` on the progress line: a rank's
/// step where it takes no deep pass, so that its peers' collectives complete.
pub fn unprofiled(workload: &[String], slot: Slot, log: &str, status: String) -> PassSpec {
    let name = "the unprofiled run of this rank's deep-pass step";
    PassSpec {
        status: Some(status),
        ..PassSpec::of_workload(name, slot, workload, log)
    }
}
