//! `NcuCli` argv and NVTX expressions, asserted without running ncu.

use std::path::Path;

use profile_run::config::{
    CacheControl, CallStackType, ClockControl, Communicator, Config, FilterMode, GraphProfiling,
    KernelNameForm, ReplayMode, TargetProcesses, DEFAULT_PRESET,
};
use profile_run::profiler::ncu::capture::run::cli;
use profile_run::profiler::ncu::nvtx;
use profile_run::region::RegionFilter;

fn default_config() -> Config {
    serde_yaml::from_str(DEFAULT_PRESET).expect("default preset parses")
}

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

/// The NVTX expressions of a configuration, through the region filter the plan builds once.
fn nvtx_plan(config: &Config) -> Result<nvtx::NvtxPlan, String> {
    let r = &config.regions;
    let filter = RegionFilter::new(&r.include, &r.exclude, r.domain.as_deref())
        .map_err(|e| e.to_string())?;
    nvtx::plan(&filter, &config.pipeline.ncu.ncu_cli.nvtx).map_err(|e| e.to_string())
}

fn build(config: &Config, workload: &[&str]) -> cli::NcuCli {
    let plan = nvtx_plan(config).expect("plan");
    cli::NcuCli::profile(
        config,
        &plan,
        Path::new("/runs/r1/profile"),
        &strings(workload),
    )
}

fn converted(patterns: &[&str], domain: Option<&str>) -> Vec<String> {
    let mut config = default_config();
    config.regions.include = strings(patterns);
    config.regions.domain = domain.map(str::to_string);
    nvtx_plan(&config).expect("plan").include
}

#[test]
fn kernel_replay_argv_from_the_default_preset() {
    let mut config = default_config();
    config.regions.include = strings(&["train_step/forward", "decode"]);
    let ncu = build(&config, &["python", "train.py", "--steps", "5"]);
    assert_eq!(ncu.program(), "ncu");
    assert_eq!(
        ncu.argv(),
        strings(&[
            "--nvtx",
            "--nvtx-include",
            "train_step/forward/",
            "--nvtx-include",
            "decode/",
            "--nvtx-push-pop-scope",
            "process",
            "--replay-mode",
            "kernel",
            "--section",
            "SpeedOfLight",
            "--section",
            "LaunchStats",
            "--target-processes",
            "all",
            "--clock-control",
            "none",
            "-o",
            "/runs/r1/profile",
            "python",
            "train.py",
            "--steps",
            "5",
        ])
    );
    assert!(!ncu
        .argv()
        .iter()
        .any(|a| a == "-f" || a == "--force-overwrite"));
    assert!(ncu.warnings().is_empty(), "{:?}", ncu.warnings());
}

/// Range replay with every ncu_cli setting given a value.
fn every_flag_set() -> Config {
    let mut config = default_config();
    config.regions.include = strings(&["LLM@prefill"]);
    config.regions.exclude = strings(&["warmup"]);
    let c = &mut config.pipeline.ncu.ncu_cli;
    c.replay_mode = ReplayMode::Range;
    c.nvtx.include = strings(&["decode/"]);
    c.nvtx.exclude = strings(&["io/"]);
    c.range_filter = Some(":[2-4]:".into());
    c.range_replay_options = strings(&["enable-greedy-sync", "disable-host-restore"]);
    c.set = Some("full".into());
    c.sections = strings(&["SpeedOfLight"]);
    c.metrics = strings(&["gpu__time_duration.sum", "dram__bytes_read.sum"]);
    c.target_processes = Some(TargetProcesses::ApplicationOnly);
    c.target_processes_filter = Some("python".into());
    c.kernel_name = Some("regex:^(?!nccl)".into());
    c.kernel_name_base = Some(KernelNameForm::Demangled);
    c.kernel_id = Some("::foo:2".into());
    c.launch_skip = Some(3);
    c.launch_skip_before_match = Some(1);
    c.launch_count = Some(10);
    c.filter_mode = Some(FilterMode::PerGpu);
    c.devices = Some("0,1".into());
    c.clock_control = Some(ClockControl::Base);
    c.cache_control = Some(CacheControl::None);
    c.graph_profiling = Some(GraphProfiling::Graph);
    c.communicator = Some(Communicator::Tcp);
    c.communicator_num_peers = Some(2);
    c.communicator_tcp_hostname = Some("localhost".into());
    c.communicator_tcp_port = Some(50000);
    c.lockstep_kernel_launch = true;
    c.call_stack = true;
    c.call_stack_type = vec![CallStackType::Native, CallStackType::Python];
    c.import_source = Some(true);
    c.apply_rules = Some(false);
    c.check_exit_code = Some(false);
    c.extra_args = strings(&["--verbose"]);
    config
}

#[test]
fn range_replay_argv_with_every_flag_set() {
    let config = every_flag_set();
    let ncu = build(&config, &["./app"]);
    assert_eq!(
        ncu.argv(),
        strings(&[
            "--nvtx",
            "--nvtx-include",
            r"LLM\@prefill/",
            "--nvtx-include",
            "decode/",
            "--nvtx-exclude",
            "warmup/",
            "--nvtx-exclude",
            "io/",
            "--nvtx-push-pop-scope",
            "process",
            "--replay-mode",
            "range",
            "--range-filter",
            ":[2-4]:",
            "--range-replay-options",
            "enable-greedy-sync,disable-host-restore",
            "--set",
            "full",
            "--section",
            "SpeedOfLight",
            "--metrics",
            "gpu__time_duration.sum,dram__bytes_read.sum",
            "--target-processes",
            "application-only",
            "--target-processes-filter",
            "python",
            "--kernel-name",
            "regex:^(?!nccl)",
            "--kernel-name-base",
            "demangled",
            "--kernel-id",
            "::foo:2",
            "--launch-skip",
            "3",
            "--launch-skip-before-match",
            "1",
            "--launch-count",
            "10",
            "--filter-mode",
            "per-gpu",
            "--devices",
            "0,1",
            "--clock-control",
            "base",
            "--cache-control",
            "none",
            "--graph-profiling",
            "graph",
            "--communicator",
            "tcp",
            "--communicator-num-peers",
            "2",
            "--communicator-tcp-hostname",
            "localhost",
            "--communicator-tcp-port",
            "50000",
            "--lockstep-kernel-launch",
            "--call-stack",
            "--call-stack-type",
            "native",
            "--call-stack-type",
            "python",
            "--import-source",
            "yes",
            "--apply-rules",
            "no",
            "--check-exit-code",
            "no",
            "-o",
            "/runs/r1/profile",
            "--verbose",
            "./app",
        ])
    );
}

#[test]
fn every_flag_is_one_ncu_knows() {
    let help = std::fs::read_to_string(crate::common::fixture("ncu/h100-2025.3.1/ncu_help.txt"))
        .expect("ncu --help fixture");
    let mut config = default_config();
    let c = &mut config.pipeline.ncu.ncu_cli;
    c.range_filter = Some("x".into());
    c.range_replay_options = strings(&["x"]);
    c.set = Some("x".into());
    c.metrics = strings(&["x"]);
    c.target_processes_filter = Some("x".into());
    c.kernel_name = Some("x".into());
    c.kernel_name_base = Some(KernelNameForm::Function);
    c.kernel_id = Some("x".into());
    c.launch_skip = Some(1);
    c.launch_skip_before_match = Some(1);
    c.launch_count = Some(1);
    c.filter_mode = Some(FilterMode::Global);
    c.devices = Some("x".into());
    c.cache_control = Some(CacheControl::All);
    c.graph_profiling = Some(GraphProfiling::Node);
    c.call_stack = true;
    c.call_stack_type = vec![CallStackType::Native];
    c.import_source = Some(true);
    c.apply_rules = Some(true);
    c.check_exit_code = Some(true);
    config.regions.exclude = strings(&["x"]);
    config.regions.include = strings(&["x"]);
    let ncu = build(&config, &[]);
    for flag in ncu.argv().iter().filter(|a| a.starts_with("--")) {
        assert!(
            help.contains(&format!("--{} ", &flag[2..])) || help.contains(&format!("{flag} ]")),
            "{flag} is not in ncu 2025.3.1 --help"
        );
    }
}

#[test]
fn app_range_without_includes_warns() {
    let mut config = default_config();
    config.pipeline.ncu.ncu_cli.replay_mode = ReplayMode::AppRange;
    let ncu = build(&config, &["./app"]);
    let argv = ncu.argv();
    let i = argv.iter().position(|a| a == "--replay-mode").unwrap();
    assert_eq!(argv[i + 1], "app-range");
    assert!(!argv.iter().any(|a| a == "--nvtx-include"));
    let warnings = ncu.warnings();
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("range replay needs --nvtx-include")),
        "{warnings:?}"
    );
}

#[test]
fn range_replay_warns_about_nested_includes() {
    let mut config = default_config();
    config.pipeline.ncu.ncu_cli.replay_mode = ReplayMode::Range;
    config.regions.include = strings(&["LLM@prefill", "LLM@prefill/attn"]);
    let warnings = build(&config, &["./app"]).warnings();
    assert!(
        warnings
            .iter()
            .any(|w| w.contains(r"`LLM\@prefill/attn/` lies inside `LLM\@prefill/`")),
        "{warnings:?}"
    );
}

#[test]
fn filters_without_nvtx_enabled_warn() {
    let mut config = default_config();
    config.pipeline.ncu.ncu_cli.nvtx.enabled = false;
    config.regions.include = strings(&["decode"]);
    let ncu = build(&config, &["./app"]);
    assert!(!ncu.argv().iter().any(|a| a == "--nvtx"));
    assert!(ncu.warnings().iter().any(|w| w.contains("nvtx.enabled")));
}

#[test]
fn hostile_workload_args_stay_single_arguments() {
    let mut config = default_config();
    config.pipeline.ncu.ncu_cli.kernel_name = Some("my kernel; rm -rf ~".into());
    let workload = [
        "python",
        "-c",
        "print('hi'); import os",
        "; rm -rf ~",
        "$(id)",
        "a b",
    ];
    let ncu = build(&config, &workload);
    let argv = ncu.argv();
    assert_eq!(
        &argv[argv.len() - workload.len()..],
        &strings(&workload)[..]
    );
    assert!(argv.iter().any(|a| a == "my kernel; rm -rf ~"));
    let line = ncu.shell_line();
    assert!(line.starts_with("ncu --nvtx"));
    let mut expected = vec!["ncu".to_string()];
    expected.extend(argv);
    assert_eq!(shell_words::split(&line).unwrap(), expected);
    assert!(line.contains("'; rm -rf ~'"), "{line}");
}

#[test]
fn region_names_are_escaped() {
    assert_eq!(
        converted(&["LLM@prefill", "a,b", "x[1]", "p+q", r"lit\*"], None),
        [r"LLM\@prefill/", r"a\,b/", r"x\[1\]/", r"p\+q/", r"lit\*/"]
    );
    assert_eq!(nvtx::escape_name("a*b"), r"a\*b");
    assert_eq!(nvtx::escape_name("a/b"), r"a\/b");
}

#[test]
fn globs_become_regex_and_nesting_is_kept() {
    assert_eq!(
        converted(
            &["decode*", "train_step/forward", "train_step/layer?", "*"],
            None
        ),
        [
            "regex:decode.*/",
            "train_step/forward/",
            "regex:train_step/layer./",
            "regex:.*/"
        ]
    );
    assert_eq!(converted(&["regex:dec.*"], None), ["regex:dec.*/"]);
}

#[test]
fn domain_is_prefixed_only_when_set() {
    assert_eq!(converted(&["prefill"], Some("LLM")), ["LLM@prefill/"]);
    assert_eq!(converted(&["a/b"], Some("LLM")), ["LLM@a/b/"]);
    assert_eq!(converted(&["prefill"], None), ["prefill/"]);
}

#[test]
fn empty_patterns_are_errors() {
    let mut config = default_config();
    config.regions.exclude = strings(&["a//b"]);
    let err = nvtx_plan(&config).unwrap_err();
    assert!(err.contains("regions.exclude[0]"), "{err}");
}

#[test]
fn raw_expressions_are_linted_not_changed() {
    let mut config = default_config();
    config.pipeline.ncu.ncu_cli.nvtx.include = strings(&["decode", "LLM@prefill/"]);
    let plan = nvtx_plan(&config).unwrap();
    assert_eq!(plan.include, ["decode", "LLM@prefill/"]);
    assert!(
        plan.warnings[0].contains("write `decode/`"),
        "{:?}",
        plan.warnings
    );
    assert!(
        plan.warnings[1].contains(r"`LLM\@prefill/`"),
        "{:?}",
        plan.warnings
    );
    assert!(nvtx::lint_raw("a@b@c/")[0].contains("only one domain"));
}

#[test]
fn export_and_version_args() {
    let config = default_config();
    assert_eq!(
        cli::export_args(&config, Path::new("/runs/r1/profile.ncu-rep"), "raw"),
        os_strings(&[
            "--import",
            "/runs/r1/profile.ncu-rep",
            "--csv",
            "--page",
            "raw",
            "--print-units",
            "base",
            "--print-kernel-base",
            "demangled",
        ])
    );
    assert_eq!(cli::version_args(), ["--version"]);
}

#[cfg(unix)]
#[test]
fn a_non_utf8_report_path_reaches_the_export_unchanged() {
    use std::os::unix::ffi::OsStrExt;
    let config = default_config();
    let path = Path::new(std::ffi::OsStr::from_bytes(
        b"/runs/caf\xe9/profile.ncu-rep",
    ));
    let args = cli::export_args(&config, path, "details");
    assert_eq!(args[1].as_bytes(), b"/runs/caf\xe9/profile.ncu-rep");
}

fn os_strings(list: &[&str]) -> Vec<std::ffi::OsString> {
    list.iter().map(Into::into).collect()
}
