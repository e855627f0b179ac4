//! Command-line arguments (clap derive), mirroring what the user typed; `app` resolves them.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

/// Profile only the NVTX-marked regions of a GPU workload with Nsight Compute, and report per region.
#[derive(Debug, Parser)]
#[command(
    name = "profile-run",
    version,
    args_conflicts_with_subcommands = true,
    after_help = "Examples:\n  \
        profile-run --config conf/ncu/default.yaml regions.include='[train_step]' -- python train.py\n  \
        profile-run --dry-run pipeline.ncu.ncu_cli.replay_mode=range -- python train.py\n  \
        profile-run report profile-output/20261122-101500-3f9a2c\n  \
        profile-run config show --origin --config conf/ncu/memory.yaml\n\n\
        Exit codes: 0 ok, 1 internal error, 2 usage or config error, 3 profiler not found or could not start,\n\
        4 workload or profiler failed, 5 export could not be parsed, 6 regression gate failed (diff),\n\
        128+n interrupted by signal n."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    #[command(flatten)]
    pub profile: ProfileArgs,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Render the report again from a run directory, a report file (.ncu-rep[.gz], read without ncu),
    /// CSV exports or a Neuron profile (JSON, summary, Parquet directory, inspect output).
    Report(ReportArgs),
    /// Combine the per-rank directories of a multi-process run (or several runs) into one report;
    /// takes what `report` takes, a shared run directory with `rank*` subdirectories included.
    Merge(ReportArgs),
    /// Compare run B against run A (the baseline): per-region time and metric changes, regions added
    /// and removed, and regression gates (exit 6 when one fails).
    Diff(DiffArgs),
    /// Inspect the resolved configuration.
    #[command(subcommand)]
    Config(ConfigCommand),
}

/// Configuration sources shared by every command.
#[derive(Debug, Clone, Args)]
pub struct ConfigArgs {
    /// Preset file (or embedded preset name such as `ncu/memory`); repeat to layer, later wins.
    #[arg(long = "config", short = 'c', value_name = "FILE")]
    pub configs: Vec<PathBuf>,
    /// `dotted.key=value` overrides (value parsed as YAML), applied last.
    #[arg(value_name = "KEY=VALUE")]
    pub overrides: Vec<String>,
}

#[derive(Debug, Args)]
pub struct ProfileArgs {
    #[command(flatten)]
    pub config: ConfigArgs,
    /// Print the ncu command line and the run directory, run nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// No progress display; only errors and the final report path.
    #[arg(long, short = 'q')]
    pub quiet: bool,
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
    /// Fail (exit 6) when a metric of a region grew by more than PCT percent; repeatable.
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
    /// Preset used to render a run directory that has no report.json yet; repeatable.
    #[arg(long = "config", short = 'c', value_name = "FILE")]
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
    /// Replace an existing report.md / report.json in the output directory (never done without it).
    #[arg(long)]
    pub force: bool,
    /// Preset file (or embedded preset name such as `ncu/memory`); repeat to layer, later wins.
    #[arg(long = "config", short = 'c', value_name = "FILE")]
    pub configs: Vec<PathBuf>,
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
}

#[derive(Debug, Subcommand)]
pub enum ConfigCommand {
    /// Print the resolved configuration as YAML.
    Show {
        /// Say where each value came from (file, environment variable, override, built-in default).
        #[arg(long)]
        origin: bool,
        #[command(flatten)]
        config: ConfigArgs,
    },
}
