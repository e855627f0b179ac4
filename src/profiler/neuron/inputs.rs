//! Neuron inputs of `profile-run report`, told apart by content: a Neuron run directory (its
//! `neuron-views.json`), a `view` output (full JSON, summary JSON, summary text, Parquet directory)
//! or an inspect output directory (viewed first, into the report's directory); or a system
//! profile: its Parquet directory, or a directory holding several instances'
//! `<instance-id>_pid_<pid>/` outputs on shared storage, read as one run with a scope per worker;
//! and their report ([`FoundCaptures`]). It sits beside `readers/` and takes from `capture/` only
//! the views a run left and the viewing of an inspect output.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::analysis::RunContext;
use crate::config::Config;
use crate::error::{Error, Result};
use crate::profiler::adapter::FoundCaptures;
use crate::profiler::job::Analysed;
use crate::profiler::neuron::capture::view_inspect_dir;
use crate::profiler::neuron::capture::views::{read_manifest, Viewed};
use crate::profiler::neuron::observe;
use crate::profiler::neuron::plan::NeuronPlan;
use crate::profiler::neuron::readers::parquet::system::{self, system_dirs};
use crate::profiler::neuron::readers::recognise::{recognise, InputKind};
use crate::run::{is_compressed_csv, read_record, RunRecord};

/// The Neuron profiles named by `report` arguments, with the run they came from.
#[derive(Debug, Clone)]
pub struct NeuronInputs {
    pub viewed: Vec<Viewed>,
    pub context: RunContext,
    /// The run directory of the first input, when it is one.
    pub run_dir: Option<PathBuf>,
    /// System-profile directories (every instance's and process's), read as one run; when there
    /// are any, `viewed` is empty.
    pub system: Vec<PathBuf>,
}

impl FoundCaptures for NeuronInputs {
    type Plan = NeuronPlan;

    fn run_dir(&self) -> Option<&Path> {
        self.run_dir.as_deref()
    }

    /// Several Neuron profiles are each a scope of their own, never merged into one.
    fn merges_captures(&self) -> bool {
        false
    }

    /// The report of the profiles, and the top-level keys each left unused (for `-v`); a system
    /// profile's instances and processes read as one run, each directory once.
    fn analyze(&self, plan: &NeuronPlan, config: &Config, fingerprint: String) -> Result<Analysed> {
        let context = RunContext {
            config_fingerprint: fingerprint,
            ..self.context.clone()
        };
        if self.system.is_empty() {
            let (report, details) = observe::report::report_with_details(
                config,
                &plan.regions,
                &self.viewed,
                &context,
            )?;
            return Ok(Analysed { report, details });
        }
        let profile = system::read_all(&self.system)?;
        let sources: Vec<String> = profile
            .sources
            .iter()
            .map(|d| d.display().to_string())
            .collect();
        let report =
            observe::workers::system::report(config, &plan.regions, &profile, &sources, &context)?;
        Ok(Analysed {
            report,
            details: Vec::new(),
        })
    }
}

/// How one argument is read, or `None` when it is no Neuron input.
enum Kind {
    RunDir(Vec<Viewed>),
    Readable,
    /// A folder of `view` outputs, in natural name order.
    Folder(Vec<PathBuf>),
    Inspect,
    /// System-profile directories.
    System(Vec<PathBuf>),
}

fn kind(path: &Path) -> Result<Option<Kind>> {
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    if ["ncu-rep", "csv"].contains(&ext) || is_compressed_csv(path) || is_ncu_csv(path) {
        return Ok(None);
    }
    if path.is_dir() {
        if let Some(viewed) = read_manifest(path)? {
            return Ok(Some(Kind::RunDir(viewed)));
        }
        // Told by its tables (`SystemProfileEvents`), before a Parquet directory or an inspect
        // output's `_pid_` directories are taken for a device profile.
        let dirs = system_dirs(path);
        if !dirs.is_empty() {
            return Ok(Some(Kind::System(dirs)));
        }
    }
    Ok(match recognise(path) {
        Ok(InputKind::InspectDir) => Some(Kind::Inspect),
        Ok(InputKind::ProfileFolder(files)) => Some(Kind::Folder(files)),
        Ok(_) => Some(Kind::Readable),
        Err(_) => None,
    })
}

/// A `--page raw` or `details` CSV export under another name: its header opens with `"ID",`. Its
/// cells may hold `{` and quotes, which the JSON sniffing of [`recognise`] must not see.
fn is_ncu_csv(path: &Path) -> bool {
    use std::io::Read;
    let mut head = [0u8; 5];
    path.is_file()
        && std::fs::File::open(path)
            .and_then(|mut f| f.read_exact(&mut head))
            .is_ok()
        && &head == b"\"ID\","
}

/// `None` when no argument is a Neuron input (they are someone else's); an error when only some are.
/// Inspect output directories are viewed into `dest()` (the report's directory).
pub fn resolve_inputs(
    paths: &[PathBuf],
    config: &Config,
    dest: &mut dyn FnMut() -> Result<PathBuf>,
) -> Result<Option<NeuronInputs>> {
    let kinds = paths.iter().map(|p| kind(p)).collect::<Result<Vec<_>>>()?;
    if kinds.iter().all(Option::is_none) {
        return Ok(None);
    }
    if let Some(i) = kinds.iter().position(Option::is_none) {
        return Err(Error::Usage(format!(
            "`{}` is not a Neuron profile while other inputs are; report Neuron and ncu captures separately",
            paths[i].display()
        )));
    }
    let mut out = NeuronInputs {
        viewed: Vec::new(),
        context: RunContext::default(),
        run_dir: None,
        system: Vec::new(),
    };
    let grace = Duration::from_secs(config.pipeline.signal_grace_seconds);
    for (i, (path, kind)) in paths.iter().zip(kinds).enumerate() {
        match kind.expect("every input is a Neuron one") {
            Kind::RunDir(viewed) => {
                if i == 0 {
                    out.context = run_context(path)?;
                    out.run_dir = Some(path.clone());
                }
                out.viewed.extend(viewed);
            }
            Kind::System(dirs) => out.system.extend(dirs),
            Kind::Readable => out.viewed.push(as_viewed(path)),
            Kind::Folder(files) => out.viewed.extend(files.iter().map(|f| as_viewed(f))),
            Kind::Inspect => {
                let dir = dest()?;
                out.viewed.extend(view_inspect_dir(
                    &config.pipeline.neuron,
                    path,
                    &dir,
                    None,
                    grace,
                )?);
            }
        }
    }
    if !out.system.is_empty() && !out.viewed.is_empty() {
        return Err(Error::Usage(
            "a system profile and device profiles cannot be one report: report the system profile \
             (its workers and collectives) and the device profiles (their instructions) separately"
                .into(),
        ));
    }
    Ok(Some(out))
}

/// A `view` output given as it is: its path is its label.
fn as_viewed(path: &Path) -> Viewed {
    Viewed {
        label: path.display().to_string(),
        rank: None,
        process_id: None,
        device: None,
        output: path.to_path_buf(),
        command: Vec::new(),
    }
}

/// What the run directory's `run.json` says about the run (empty when it is missing or does not
/// parse); one that is a link, a FIFO, a device or too large to be a record is refused unread.
fn run_context(dir: &Path) -> Result<RunContext> {
    let record: Option<RunRecord> = read_record(dir)?.and_then(|t| serde_json::from_str(&t).ok());
    Ok(record.map_or_else(RunContext::default, |r| {
        r.context(r.config_fingerprint.clone())
    }))
}
