//! `NcuCli`: the argv for an ncu profiling run, and the commands for its CSV exports and version: the
//! only places ncu's command lines are built. Nothing here spawns anything.
//!
//! Every key of `pipeline.ncu.ncu_cli` maps to one ncu flag, always in the long form and in a fixed order
//! (the order of [`NcuCliConfig`]'s keys), so the same config always gives the same command line. Values
//! are separate arguments and never pass through a shell: a value with spaces or `;` stays one argument.
//! `-f` (overwrite) is never passed: each run writes into a fresh directory.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::config::{Config, NcuCliConfig, PushPopScope, ReplayMode};
use crate::profiler::ncu::nvtx::NvtxPlan;

/// One ncu profiling command.
#[derive(Debug, Clone, PartialEq)]
pub struct NcuCli {
    program: String,
    ncu: NcuCliConfig,
    plan: NvtxPlan,
    report_base: PathBuf,
    workload: Vec<String>,
}

impl NcuCli {
    /// `report_base` is the `-o` value: ncu appends `.ncu-rep`.
    pub fn profile(
        config: &Config,
        plan: &NvtxPlan,
        report_base: &Path,
        workload: &[String],
    ) -> NcuCli {
        NcuCli {
            program: config.pipeline.ncu.executable.clone(),
            ncu: config.pipeline.ncu.ncu_cli.clone(),
            plan: plan.clone(),
            report_base: report_base.to_path_buf(),
            workload: workload.to_vec(),
        }
    }

    /// The same command with other flags writing to another report (a pass of a sampled run).
    pub fn with_flags(self, ncu: NcuCliConfig, report_base: &Path) -> NcuCli {
        NcuCli {
            ncu,
            report_base: report_base.to_path_buf(),
            ..self
        }
    }

    /// The same command profiling only `devices` (`--devices 0,2`): the deep ranks of a launch.
    pub fn on_devices(mut self, devices: &str) -> NcuCli {
        self.ncu.devices = Some(devices.to_string());
        self
    }

    /// The devices it profiles (`--devices`); `None`: every device.
    pub fn devices(&self) -> Option<&str> {
        self.ncu.devices.as_deref()
    }

    /// The ncu executable (`pipeline.ncu.executable`).
    pub fn program(&self) -> &str {
        &self.program
    }

    /// The arguments, without the program. A non-UTF-8 report path is shown lossily here; the
    /// [`expression`](Self::expression) passes it unchanged.
    pub fn argv(&self) -> Vec<String> {
        self.argv_os()
            .into_iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect()
    }

    /// The command, ready to run: no shell, each argument verbatim.
    pub fn expression(&self) -> duct::Expression {
        duct::cmd(&self.program, self.argv_os())
    }

    /// The whole command line, program included, quoted for a POSIX shell (for logs and `--dry-run`).
    pub fn shell_line(&self) -> String {
        let mut words = vec![self.program.clone()];
        words.extend(self.argv());
        shell_words::join(words)
    }

    /// Configurations that run but will not do what the user most likely meant.
    pub fn warnings(&self) -> Vec<String> {
        let mut out = self.plan.warnings.clone();
        let ncu = &self.ncu;
        let range_replay = matches!(ncu.replay_mode, ReplayMode::Range | ReplayMode::AppRange);
        if !ncu.nvtx.enabled && !self.plan.is_empty() {
            out.push(
                "NVTX filters are set but `pipeline.ncu.ncu_cli.nvtx.enabled` is false, so they are not \
                 passed (ncu accepts NVTX flags only with --nvtx). Set it to true to profile only those regions"
                    .into(),
            );
        }
        if range_replay && self.plan.include.is_empty() {
            out.push(format!(
                "range replay needs --nvtx-include ranges to define what to replay: with \
                 `replay_mode: {}` and no include, only cu(da)ProfilerStart/Stop ranges are replayed. \
                 Set `regions.include`",
                ncu.replay_mode.as_ncu()
            ));
        }
        if range_replay {
            out.extend(nested_includes(&self.plan.include));
        }
        if !ncu.range_replay_options.is_empty() && ncu.replay_mode != ReplayMode::Range {
            out.push(format!(
                "`range_replay_options` apply only to `replay_mode: range`, not `{}`",
                ncu.replay_mode.as_ncu()
            ));
        }
        let communicator_set = ncu.communicator.is_some()
            || ncu.communicator_num_peers.is_some()
            || ncu.communicator_tcp_hostname.is_some()
            || ncu.communicator_tcp_port.is_some()
            || ncu.lockstep_kernel_launch;
        if communicator_set {
            out.push(
                "--communicator* / --lockstep-kernel-launch are not listed by `ncu --help` of ncu \
                 2025.3.1; check that the installed ncu accepts them"
                    .into(),
            );
        }
        out
    }

    pub fn argv_os(&self) -> Vec<OsString> {
        let mut args: Vec<OsString> = self.flags().into_iter().map(OsString::from).collect();
        args.push("-o".into());
        args.push(self.report_base.clone().into_os_string());
        args.extend(self.ncu.extra_args.iter().map(OsString::from));
        // ncu's usage is `ncu [options] [program] [program-arguments]`: the first non-option word starts
        // the workload, so no `--` is needed (or understood).
        args.extend(self.workload.iter().map(OsString::from));
        args
    }

    /// Every configured flag, in [`NcuCliConfig`] order.
    fn flags(&self) -> Vec<String> {
        let c = &self.ncu;
        let mut f = Flags::default();
        // Every NVTX flag requires `--nvtx`; real ncu refuses to start otherwise
        // (`==ERROR== --nvtx-push-pop-scope requires --nvtx`), so without it none is passed.
        if c.nvtx.enabled {
            f.switch("--nvtx", true);
            f.each("--nvtx-include", &self.plan.include);
            f.each("--nvtx-exclude", &self.plan.exclude);
            f.opt(
                "--nvtx-push-pop-scope",
                c.nvtx.push_pop_scope.map(|s| match s {
                    PushPopScope::Thread => "thread",
                    PushPopScope::Process => "process",
                }),
            );
        }
        f.opt("--replay-mode", Some(c.replay_mode.as_ncu()));
        f.opt("--range-filter", c.range_filter.as_ref());
        f.list("--range-replay-options", &c.range_replay_options);
        f.opt("--set", c.set.as_ref());
        f.each("--section", &c.sections);
        f.list("--metrics", &c.metrics);
        f.opt("--target-processes", c.target_processes.as_ref());
        f.opt(
            "--target-processes-filter",
            c.target_processes_filter.as_ref(),
        );
        f.opt("--kernel-name", c.kernel_name.as_ref());
        f.opt("--kernel-name-base", c.kernel_name_base.as_ref());
        f.opt("--kernel-id", c.kernel_id.as_ref());
        f.opt("--launch-skip", c.launch_skip);
        f.opt("--launch-skip-before-match", c.launch_skip_before_match);
        f.opt("--launch-count", c.launch_count);
        f.opt("--filter-mode", c.filter_mode.as_ref());
        f.opt("--devices", c.devices.as_ref());
        f.opt("--clock-control", c.clock_control.as_ref());
        f.opt("--cache-control", c.cache_control.as_ref());
        f.opt("--graph-profiling", c.graph_profiling.as_ref());
        f.opt("--communicator", c.communicator.as_ref());
        f.opt("--communicator-num-peers", c.communicator_num_peers);
        f.opt(
            "--communicator-tcp-hostname",
            c.communicator_tcp_hostname.as_ref(),
        );
        f.opt("--communicator-tcp-port", c.communicator_tcp_port);
        f.switch("--lockstep-kernel-launch", c.lockstep_kernel_launch);
        f.switch("--call-stack", c.call_stack);
        f.each("--call-stack-type", &c.call_stack_type);
        f.opt("--import-source", c.import_source.map(yes_no));
        f.opt("--apply-rules", c.apply_rules.map(yes_no));
        f.opt("--check-exit-code", c.check_exit_code.map(yes_no));
        f.0
    }
}

/// Arguments for `ncu --import REPORT --csv --page PAGE`. Run it with `LC_ALL=C` (the caller sets the
/// environment) so numbers keep one format. The kernel name is pinned to the demangled signature, whatever
/// an ncu config file says; `report.kernels.name_base` is applied afterwards by the region core.
/// The report path goes through as the OS gave it, so a non-UTF-8 path reaches ncu unchanged.
pub fn export_args(config: &Config, report: &Path, page: &str) -> Vec<OsString> {
    vec![
        "--import".into(),
        report.as_os_str().to_owned(),
        "--csv".into(),
        "--page".into(),
        page.into(),
        "--print-units".into(),
        config.pipeline.ncu.export.print_units.as_str().into(),
        "--print-kernel-base".into(),
        "demangled".into(),
    ]
}

/// Arguments for `ncu --version`.
pub fn version_args() -> Vec<String> {
    vec!["--version".into()]
}

/// `ncu --import REPORT --csv --page PAGE …` ready to run: [`export_args`] with `LC_ALL=C`, output
/// captured, exit status left to the caller.
pub fn import_command(config: &Config, report: &Path, page: &str) -> duct::Expression {
    duct::cmd(
        &config.pipeline.ncu.executable,
        export_args(config, report, page),
    )
    .env("LC_ALL", "C")
    .stdout_capture()
    .stderr_capture()
    .unchecked()
}

/// `ncu --version` ready to run, its output (stderr included) captured.
pub fn version_command(program: &str) -> duct::Expression {
    duct::cmd(program, version_args())
        .stderr_to_stdout()
        .stdout_capture()
        .unchecked()
}

fn yes_no(b: bool) -> &'static str {
    if b {
        "yes"
    } else {
        "no"
    }
}

/// Range replay reports only the outermost of nested included ranges (seen on ncu 2025.3.1).
fn nested_includes(include: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    for inner in include {
        for outer in include {
            if inner != outer && inner.starts_with(outer.as_str()) {
                out.push(format!(
                    "range replay reports only the outermost of nested ranges: `{inner}` lies inside \
                     `{outer}` and will not get results of its own; profile it in a separate run"
                ));
            }
        }
    }
    out
}

#[derive(Default)]
struct Flags(Vec<String>);

impl Flags {
    fn switch(&mut self, flag: &str, on: bool) {
        if on {
            self.0.push(flag.into());
        }
    }

    fn opt(&mut self, flag: &str, value: Option<impl ToString>) {
        if let Some(v) = value {
            self.0.push(flag.into());
            self.0.push(v.to_string());
        }
    }

    fn each(&mut self, flag: &str, values: &[impl std::fmt::Display]) {
        for v in values {
            self.opt(flag, Some(v));
        }
    }

    /// One flag with a comma-joined value; left out when empty.
    fn list(&mut self, flag: &str, values: &[String]) {
        if !values.is_empty() {
            self.opt(flag, Some(values.join(",")));
        }
    }
}
