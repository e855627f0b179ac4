//! Command-line arguments (clap derive), mirroring what the user typed; `app` resolves them.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

/// Profile only the NVTX-marked regions of a GPU workload with Nsight Compute, and report per region.
///
/// Mark the code regions with NVTX ranges (`torch.cuda.nvtx.range_push`/`range_pop`), run the
/// workload after `--`, and read report.md in the run directory profile-run prints.
#[derive(Debug, Parser)]
#[command(
    name = "profile-run",
    version,
    args_conflicts_with_subcommands = true,
    after_help = SHORT_HELP,
    after_long_help = LONG_HELP,
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    #[command(flatten)]
    pub global: GlobalArgs,
    #[command(flatten)]
    pub profile: ProfileArgs,
}

/// `profile-run -h`: the three commands to start with.
const SHORT_HELP: &str = "Start with (no GPU needed for the last two):\n  \
    profile-run -c ncu/trace -- python train.py        time per region, at the unprofiled run's cost\n  \
    profile-run report RUN_DIR                         render a run again, or a CSV/.ncu-rep/trace\n  \
    profile-run diff BASE_RUN NEW_RUN --fail-above 5   gate CI on a regression\n\n\
    `--help` lists the presets and exit codes.";

/// `profile-run --help`: the recommended commands, every shipped preset and the exit codes. A unit
/// test checks that every embedded preset is listed.
const LONG_HELP: &str = "The three ways to profile:\n  \
    profile-run -c ncu/trace -- python train.py      every kernel's in-place time per region, at the\n                                                   \
    cost of the unprofiled run (CUPTI trace; start here)\n  \
    profile-run -c ncu/sampled -- python train.py    exact times plus deep metrics (throughput, memory)\n                                                   \
    per region from a sample of launches, with error bars\n  \
    profile-run -c ncu/default -- python train.py    every kernel replayed by Nsight Compute: exact deep\n                                                   \
    metrics, slowest; narrow it with regions.include=[...]\n\n\
    Then: profile-run report RUN_DIR, profile-run merge RANK_DIRS --out DIR, profile-run diff A B --fail-above 5.\n\n\
    Presets (-c NAME; layer several, later wins; `config show -c NAME` shows one):\n  \
    ncu/trace        time only, in place, through the CUPTI injection library\n  \
    ncu/sampled      trace timing plus deep metrics once per distinct launch\n  \
    ncu/default      Speed-Of-Light metrics, every kernel replayed (the base of all ncu presets)\n  \
    ncu/compute      SM busyness, pipe use (tensor cores, FMA) and occupancy\n  \
    ncu/memory       memory traffic and how well the caches serve it\n  \
    ncu/full         every section ncu ships: the most detail, the slowest\n  \
    ncu/pytorch      regions named by operator under torch.autograd.profiler.emit_nvtx\n  \
    ncu/distributed  jobs of several ranks (torchrun, srun, mpirun): per rank, NCCL kept apart\n  \
    neuron/default   Trainium/Inferentia: a framework workload, regions between collectives\n  \
    neuron/neff      Trainium/Inferentia: one compiled NEFF\n\n\
    Exit codes: 0 ok, 1 internal error, 2 usage or config error, 3 profiler not found or could not start,\n\
    4 workload or profiler failed, 5 export could not be parsed, 6 regression gate failed (diff),\n\
    128+n interrupted by signal n.";

/// Flags every command takes, before or after its name (`profile-run -q -c ncu/memory report X`
/// and `profile-run report X -q -c ncu/memory` alike).
#[derive(Debug, Clone, Args)]
pub struct GlobalArgs {
    /// Preset file (or embedded preset name such as `ncu/memory`); repeat to layer, later wins.
    #[arg(long = "config", short = 'c', value_name = "FILE", global = true)]
    pub configs: Vec<PathBuf>,
    /// No progress display and no program output on the terminal (both still go to the log); only
    /// warnings, errors and the final report path.
    #[arg(long, short = 'q', global = true)]
    pub quiet: bool,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Render the report again from a run directory, a report file (.ncu-rep[.gz], read without ncu),
    /// CSV exports or a Neuron profile (JSON, summary, Parquet directory, inspect output).
    Report(ReportArgs),
    /// Combine the per-rank directories of a multi-process run (or several runs) into one report;
    /// takes what `report` takes, a shared run directory with `rank*` subdirectories included. Writes
    /// into `--out`, else a fresh directory under `output.root`, never into an input.
    Merge(ReportArgs),
    /// Compare run B against run A (the baseline): per-region time and metric changes, regions added
    /// and removed, and regression gates (exit 6 when one fails).
    Diff(DiffArgs),
    /// Inspect the resolved configuration.
    #[command(subcommand)]
    Config(ConfigCommand),
    /// Internal: kills profiler PID (started at STARTED, clock ticks since boot) and everything it
    /// started when profile-run dies without standing the watcher down (src/process/watchdog.rs).
    #[command(name = "__watch-profiler", hide = true)]
    WatchProfiler { pid: u32, started: u64 },
}

/// Configuration sources shared by every command.
#[derive(Debug, Clone, Args)]
pub struct ConfigArgs {
    /// The global `--config` files (see [`GlobalArgs`]).
    #[arg(skip)]
    pub configs: Vec<PathBuf>,
    /// `dotted.key=value` overrides (value parsed as YAML), applied last.
    #[arg(value_name = "KEY=VALUE")]
    pub overrides: Vec<String>,
}

#[derive(Debug, Args)]
pub struct ProfileArgs {
    #[command(flatten)]
    pub config: ConfigArgs,
    /// Print the profiler's command lines and the run directory, then check that the profiler
    /// starts (`ncu --version`) and the workload's program exists; run no workload, write nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// The global `--quiet` (see [`GlobalArgs`]).
    #[arg(skip)]
    pub quiet: bool,
    /// Not a profiling flag (`report` and `merge` take it): refused by name.
    #[arg(long, hide = true)]
    pub force: bool,
    /// The workload to profile, after `--`.
    #[arg(last = true, value_name = "COMMAND")]
    pub workload: Vec<String>,
}

#[derive(Debug, Args)]
pub struct DiffArgs {
    /// The baseline: a run directory or a report.json.
    #[arg(value_name = "RUN_A")]
    pub a: PathBuf,
    /// The run compared against it: a run directory or a report.json.
    #[arg(value_name = "RUN_B")]
    pub b: PathBuf,
    /// Fail (exit 6) when a region got slower by more than PCT percent (beyond the runs' own spread
    /// of visit times, when both reports know it).
    #[arg(long, value_name = "PCT")]
    pub fail_above: Option<String>,
    /// Fail (exit 6) when a metric of a region grew by more than PCT percent; NAME is the raw metric
    /// name or the label report tables show (`"DRAM Throughput:5"`); repeatable.
    #[arg(long = "gate-metric", value_name = "NAME:PCT")]
    pub gate_metrics: Vec<String>,
    /// Compare runs whose recorded profiler, settings, metrics or devices differ (refused otherwise).
    #[arg(long)]
    pub allow_incomparable: bool,
    /// What goes to stdout: a table, or the JSON a tracker reads.
    #[arg(long, value_enum, default_value = "table")]
    pub format: DiffFormat,
    /// Also write the JSON to FILE.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// The global `--config` files: used to render a run directory that has no report.json yet.
    #[arg(skip)]
    pub configs: Vec<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum DiffFormat {
    Table,
    Json,
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Run directories, `.ncu-rep[.gz]` report files (read without ncu), `--page raw` CSV exports, or
    /// Neuron profiles (recognised by content), and `dotted.key=value` overrides (an argument with
    /// `=` that is not an existing path).
    #[arg(required = true, value_name = "INPUT | KEY=VALUE")]
    pub items: Vec<String>,
    /// Where report.md and report.json go (default: the run directory, or a fresh sub-directory of it
    /// when it holds a report already; a fresh directory under output.root for a bare export).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Read a run directory's recorded config.yaml whole: also the keys that name a program, its
    /// arguments, a file or a directory (`pipeline.ncu.executable`, `report.template`, …), which are
    /// otherwise left out. Only for run directories you made yourself.
    #[arg(long)]
    pub trust_run_config: bool,
    /// Merge inputs that look unrelated (different GPU models, or kernel sets that overlap less
    /// than one workload's do), which is refused otherwise.
    #[arg(long)]
    pub allow_incomparable: bool,
    /// Replace an existing report in the output directory (never done without it).
    #[arg(long)]
    pub force: bool,
    /// Also say on stderr what was read but not used (a Neuron profile's top-level keys profile-run
    /// has no use for).
    #[arg(long, short = 'v')]
    pub verbose: bool,
    /// The global `--config` files.
    #[arg(skip)]
    pub configs: Vec<PathBuf>,
    /// Set for `merge`: its report never goes into an input directory.
    #[arg(skip)]
    pub merging: bool,
}

impl Cli {
    /// Parses the process's arguments, global flags before the command's name included.
    pub fn from_env() -> Cli {
        Cli::parse_from(global_flags_after_command(std::env::args_os().collect()))
    }

    /// Hands the global `--config` files to the command given; `--force` on a profiling run is an
    /// error (the message for exit 2).
    pub fn resolve(mut self) -> Result<Cli, String> {
        let configs = self.global.configs.clone();
        if self.profile.force {
            return Err(
                "--force applies to `report` and `merge` (a profiling run always writes a fresh run directory)"
                    .into(),
            );
        }
        match &mut self.command {
            Some(Command::Report(args) | Command::Merge(args)) => args.configs = configs,
            Some(Command::Diff(args)) => args.configs = configs,
            Some(Command::Config(ConfigCommand::Show { config, .. })) => config.configs = configs,
            Some(Command::WatchProfiler { .. }) => {}
            None => {
                self.profile.config.configs = configs;
                self.profile.quiet = self.global.quiet;
            }
        }
        Ok(self)
    }
}

/// The command names, as typed.
const COMMANDS: [&str; 5] = ["report", "merge", "diff", "config", "help"];

/// Moves global flags typed before a command's name to just after it: `profile-run -q report X`
/// becomes `profile-run report -q X`. The profiling command takes free `KEY=VALUE` arguments, so once
/// a flag has been read at the top level clap takes `report` for one of them; after the name, the
/// global flags are the command's own. Anything else is left exactly as typed.
pub fn global_flags_after_command(args: Vec<std::ffi::OsString>) -> Vec<std::ffi::OsString> {
    let mut flags = 0;
    let mut i = 1;
    while let Some(arg) = args.get(i).and_then(|a| a.to_str()) {
        let width = match arg {
            "-q" | "--quiet" | "-v" | "--verbose" | "--force" => 1,
            "-c" | "--config" => 2,
            _ if arg.starts_with("--config=") || (arg.starts_with("-c") && arg.len() > 2) => 1,
            _ => break,
        };
        i += width;
        flags += width;
    }
    match args.get(i).and_then(|a| a.to_str()) {
        Some(name) if flags > 0 && COMMANDS.contains(&name) => {
            let mut moved = Vec::with_capacity(args.len());
            moved.push(args[0].clone());
            moved.push(args[i].clone());
            moved.extend_from_slice(&args[1..i]);
            moved.extend_from_slice(&args[i + 1..]);
            moved
        }
        _ => args,
    }
}

impl ReportArgs {
    /// Splits the positional arguments into inputs and overrides. An argument that names an existing
    /// path is an input even if it contains `=`.
    pub fn split(&self) -> (Vec<PathBuf>, ConfigArgs) {
        let (overrides, inputs): (Vec<&String>, Vec<&String>) = self
            .items
            .iter()
            .partition(|item| item.contains('=') && !std::path::Path::new(item.as_str()).exists());
        (
            inputs.into_iter().map(PathBuf::from).collect(),
            ConfigArgs {
                configs: self.configs.clone(),
                overrides: overrides.into_iter().cloned().collect(),
            },
        )
    }
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    #[test]
    fn command_line_definition_is_consistent() {
        super::Cli::command().debug_assert();
    }

    #[test]
    fn long_help_lists_every_embedded_preset() {
        for name in crate::config::preset_names() {
            let listed = super::LONG_HELP
                .lines()
                .any(|l| l.trim_start().starts_with(&format!("{name} ")));
            assert!(listed, "`--help` does not list the preset {name}");
        }
    }

    fn moved(args: &[&str]) -> Vec<String> {
        let args = args.iter().map(std::ffi::OsString::from).collect();
        super::global_flags_after_command(args)
            .into_iter()
            .map(|a| a.into_string().unwrap())
            .collect()
    }

    #[test]
    fn global_flags_before_a_command_move_after_its_name() {
        assert_eq!(
            moved(&["p", "-q", "-c", "ncu/memory", "report", "x", "--out", "d"]),
            ["p", "report", "-q", "-c", "ncu/memory", "x", "--out", "d"]
        );
        assert_eq!(
            moved(&["p", "--config=a.yaml", "--force", "merge", "r"]),
            ["p", "merge", "--config=a.yaml", "--force", "r"]
        );
        // Profiling: nothing moves, `report` after an override is an override's business.
        let profiling = ["p", "-q", "regions.include=[a]", "--", "python", "report"];
        assert_eq!(moved(&profiling), profiling);
        let plain = ["p", "report", "x", "-q"];
        assert_eq!(moved(&plain), plain);
    }
}

#[derive(Debug, Subcommand)]
pub enum ConfigCommand {
    /// Print the keys the given presets and overrides set, as YAML (`--all`: every key).
    Show {
        /// Say where each value came from (file, environment variable, override, built-in default).
        #[arg(long)]
        origin: bool,
        /// Every key of the resolved configuration, the default preset's included.
        #[arg(long)]
        all: bool,
        #[command(flatten)]
        config: ConfigArgs,
    },
}
