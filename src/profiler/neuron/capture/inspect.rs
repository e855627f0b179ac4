//! Framework workloads: the runtime's inspect environment, and discovery of what it wrote. Output lands
//! in `<dir>/<instance-id>_pid_<pid>/[<timestamp>/]`, a `neff_<hash>.neff` paired with each
//! `<hash>_instid_<i>_vnc_<N>.ntff` of the same hash (one per NeuronCore/rank) in the same process tree.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::profiler::neuron::capture::pipeline::{Framework, InspectOptions};
use crate::profiler::neuron::error::{NeuronError, NeuronResult as Result};

/// The variables to add to the workload's environment, and what the user should know.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct InspectPlan {
    pub env: Vec<(String, String)>,
    pub warnings: Vec<String>,
}

pub fn inspect_env(opts: &InspectOptions, output_dir: &Path) -> InspectPlan {
    let mut plan = InspectPlan::default();
    let mut set = |k: &str, v: &str| plan.env.push((k.to_string(), v.to_string()));
    match opts.framework {
        Framework::Pytorch => {
            set("NEURON_RT_INSPECT_ENABLE", "1");
            set(
                "NEURON_RT_INSPECT_DEVICE_PROFILE",
                opts.device_profile.as_env(),
            );
        }
        // JAX profiles through jax.profiler.trace; the runtime's switch would profile twice.
        Framework::Jax => {}
    }
    set(
        "NEURON_RT_INSPECT_OUTPUT_DIR",
        &output_dir.to_string_lossy(),
    );
    if opts.system_profile {
        set("NEURON_RT_INSPECT_SYSTEM_PROFILE", "1");
    }
    if let Some(nc) = &opts.event_filter_nc {
        set("NEURON_RT_INSPECT_EVENT_FILTER_NC", nc);
    }
    if let Some(t) = &opts.event_filter_type {
        set("NEURON_RT_INSPECT_EVENT_FILTER_TYPE", t);
    }
    if opts.debug_info {
        set("XLA_IR_DEBUG", "1");
        set("XLA_HLO_DEBUG", "1");
    }
    if opts.nki_debug {
        set("NEURON_FRAMEWORK_DEBUG", "1");
    }
    if opts.framework == Framework::Jax {
        plan.warnings.push(
            "JAX: wrap the steps to profile in `jax.profiler.trace(...)`; NEURON_RT_INSPECT_ENABLE is \
             not set for JAX"
                .into(),
        );
    }
    plan
}

/// One NEFF/NTFF pair found in an inspect output directory.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct CapturePair {
    pub instance_id: String,
    pub pid: u32,
    /// The `<timestamp>` directory level, when there is one.
    pub timestamp: Option<String>,
    pub hash: String,
    pub instid: u32,
    pub vnc: u32,
    pub neff: PathBuf,
    pub ntff: PathBuf,
}

/// Pairs found, and NTFFs without their NEFF (reported, not fatal).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Discovery {
    pub pairs: Vec<CapturePair>,
    pub unpaired: Vec<PathBuf>,
}

/// `<instance-id>_pid_<pid>` → (instance id, pid).
fn process_dir(name: &str) -> Option<(String, u32)> {
    let (inst, pid) = name.rsplit_once("_pid_")?;
    Some((inst.to_string(), pid.parse().ok()?))
}

/// `<hash>_instid_<i>_vnc_<N>.ntff` → (hash, i, N).
fn ntff_name(name: &str) -> Option<(String, u32, u32)> {
    let stem = name.strip_suffix(".ntff")?;
    let (hash, rest) = stem.split_once("_instid_")?;
    let (instid, vnc) = rest.split_once("_vnc_")?;
    Some((hash.to_string(), instid.parse().ok()?, vnc.parse().ok()?))
}

fn entries(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).map_err(|e| NeuronError::io(dir, e))? {
        out.push(e.map_err(|e| NeuronError::io(dir, e))?.path());
    }
    out.sort();
    Ok(out)
}

fn file_name(p: &Path) -> String {
    p.file_name()
        .unwrap_or_default()
        .to_string_lossy()
        .into_owned()
}

/// Every NEFF/NTFF pair under an inspect output directory, sorted by process, timestamp, hash, core.
pub fn discover(dir: &Path) -> Result<Discovery> {
    let mut out = Discovery::default();
    for proc_dir in entries(dir)?.into_iter().filter(|p| p.is_dir()) {
        let Some((instance_id, pid)) = process_dir(&file_name(&proc_dir)) else {
            continue;
        };
        // the process directory itself, then each timestamp directory
        let mut levels = vec![(None, proc_dir.clone())];
        for sub in entries(&proc_dir)?.into_iter().filter(|p| p.is_dir()) {
            levels.push((Some(file_name(&sub)), sub));
        }
        let mut neffs: BTreeMap<String, PathBuf> = BTreeMap::new();
        let mut ntffs = Vec::new();
        for (ts, level) in &levels {
            for f in entries(level)?.into_iter().filter(|p| p.is_file()) {
                let name = file_name(&f);
                if let Some(hash) = name
                    .strip_prefix("neff_")
                    .and_then(|n| n.strip_suffix(".neff"))
                {
                    neffs.insert(hash.to_string(), f);
                } else if let Some(parsed) = ntff_name(&name) {
                    ntffs.push((ts.clone(), parsed, f));
                }
            }
        }
        for (timestamp, (hash, instid, vnc), ntff) in ntffs {
            match neffs.get(&hash) {
                Some(neff) => out.pairs.push(CapturePair {
                    instance_id: instance_id.clone(),
                    pid,
                    timestamp,
                    hash,
                    instid,
                    vnc,
                    neff: neff.clone(),
                    ntff,
                }),
                None => out.unpaired.push(ntff),
            }
        }
    }
    out.pairs.sort();
    Ok(out)
}
