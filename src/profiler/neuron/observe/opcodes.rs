//! Where a region's instruction time goes, by engine and opcode: the list a region's table shows as
//! its top instructions, longest first. Semaphore waits (`EVENT_SEMAPHORE`, see `Instruction::is_busy`) are waits, not work, and
//! would top every list with the time an engine sat idle: they are left out, as from busy time.

use std::collections::HashMap;

use serde::Serialize;

use crate::profiler::neuron::readers::model::{Engine, NeuronProfile};

/// One opcode on one engine within a region: how often it ran and for how long in all.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OpcodeTime {
    /// `Tensor`, `Vector`, … as the profile names the engine (`—` when it names none).
    pub engine: String,
    pub opcode: String,
    pub count: u64,
    /// Σ instruction durations, ns (instructions on one engine may overlap).
    pub time_ns: u64,
}

/// The instructions `members` (indices into the profile's) by engine and opcode, longest first.
pub fn opcode_times(profile: &NeuronProfile, members: &[usize]) -> Vec<OpcodeTime> {
    let mut by_key: HashMap<(String, &str), (u64, u64)> = HashMap::new();
    for &n in members {
        let Some(ins) = profile.instructions.get(n).filter(|i| i.is_busy()) else {
            continue;
        };
        let engine = ins
            .engine
            .as_ref()
            .map_or_else(|| "—".to_string(), engine_name);
        let entry = by_key.entry((engine, ins.opcode.as_str())).or_default();
        entry.0 += 1;
        entry.1 += ins.end_ns.saturating_sub(ins.start_ns);
    }
    let mut out: Vec<OpcodeTime> = by_key
        .into_iter()
        .map(|((engine, opcode), (count, time_ns))| OpcodeTime {
            engine,
            opcode: opcode.to_string(),
            count,
            time_ns,
        })
        .collect();
    out.sort_by(|a, b| {
        b.time_ns
            .cmp(&a.time_ns)
            .then_with(|| (&a.engine, &a.opcode).cmp(&(&b.engine, &b.opcode)))
    });
    out
}

pub(super) fn engine_name(e: &Engine) -> String {
    use crate::profiler::neuron::readers::model::Engine;
    match e {
        Engine::Tensor => "Tensor",
        Engine::TensorMatrix => "TensorMatrix",
        Engine::Vector => "Vector",
        Engine::Scalar => "Scalar",
        Engine::GpSimd => "GpSimd",
        Engine::Sync => "Sync",
        Engine::Other(name) => name,
    }
    .to_string()
}
