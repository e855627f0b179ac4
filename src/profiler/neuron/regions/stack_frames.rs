//! Regions along NKI kernel invocations. Each instruction's stack frames give a call chain (kernel entry
//! first, through `parent_stack_frame_id`; without parents, `stack_frame_ids` is taken as outermost
//! first). The frame at the chosen depth names the region; consecutive instructions (in start order)
//! with the same frame are one invocation. An instruction without that frame ends the invocation if it
//! starts after the invocation's last end; one running alongside (another engine) does not.

use std::collections::HashMap;

use super::{number, RegionSpan, Regions, Selection};
use crate::profiler::neuron::model::{Instruction, NeuronProfile};
use crate::profiler::neuron::settings::RegionMethod;

struct Frames<'a> {
    by_id: HashMap<u64, (&'a str, Option<u64>)>,
}

impl Frames<'_> {
    /// The call chain of an instruction, outermost first, as frame ids.
    fn chain(&self, ins: &Instruction) -> Vec<u64> {
        let has_parents = ins
            .stack_frame_ids
            .iter()
            .any(|id| self.by_id.get(id).is_some_and(|f| f.1.is_some()));
        if !has_parents {
            return ins.stack_frame_ids.clone();
        }
        let walk = |mut id: u64| {
            let mut out = vec![id];
            while let Some(&(_, Some(parent))) = self.by_id.get(&id) {
                if out.contains(&parent) {
                    break; // a cycle in broken data: stop rather than loop
                }
                out.push(parent);
                id = parent;
            }
            out.reverse();
            out
        };
        ins.stack_frame_ids
            .iter()
            .map(|&id| walk(id))
            .max_by_key(Vec::len)
            .unwrap_or_default()
    }

    fn name(&self, id: u64) -> String {
        self.by_id
            .get(&id)
            .map_or_else(|| format!("frame {id}"), |f| f.0.to_string())
    }
}

struct Run {
    key: String,
    start: u64,
    end: u64,
    members: Vec<usize>,
}

pub(super) fn generate(profile: &NeuronProfile, depth: usize) -> Regions {
    if profile
        .instructions
        .iter()
        .all(|i| i.stack_frame_ids.is_empty())
    {
        return Regions {
            spans: Vec::new(),
            notes: vec![format!(
                "no instruction in {} carries NKI stack frames: method `stack_frames` needs NKI kernels \
                 compiled with NEURON_FRAMEWORK_DEBUG=1",
                profile.source.display()
            )],
        };
    }
    let frames = Frames {
        by_id: profile
            .stack_frames
            .iter()
            .map(|f| (f.id, (f.function.as_str(), f.parent)))
            .collect(),
    };
    let runs = invocations(profile, &frames, depth);
    let mut spans: Vec<RegionSpan> = runs
        .into_iter()
        .map(|r| RegionSpan {
            name: r.key.clone(),
            base: r.key,
            index: 0,
            method: RegionMethod::StackFrames,
            start_ns: r.start,
            end_ns: r.end,
            selection: Selection::Instructions(r.members),
        })
        .collect();
    number(&mut spans);
    for s in &mut spans {
        s.name = format!("{}[{}]", s.base, s.index);
    }
    let notes = if spans.is_empty() {
        vec![format!("no stack frame chain is deeper than depth {depth}; lower `neuron.regions.stack_frames.depth`")]
    } else {
        Vec::new()
    };
    Regions { spans, notes }
}

/// Consecutive instructions (start order) under the same frame at `depth`, as described above.
fn invocations(profile: &NeuronProfile, frames: &Frames, depth: usize) -> Vec<Run> {
    let mut runs: Vec<Run> = Vec::new();
    let mut current: Option<Run> = None;
    for (i, ins) in profile.instructions.iter().enumerate() {
        let key = frames.chain(ins).get(depth).map(|&id| frames.name(id));
        current = match (current, key) {
            (Some(mut run), Some(k)) if run.key == k => {
                run.end = run.end.max(ins.end_ns);
                run.members.push(i);
                Some(run)
            }
            (cur, Some(k)) => {
                runs.extend(cur);
                Some(Run {
                    key: k,
                    start: ins.start_ns,
                    end: ins.end_ns,
                    members: vec![i],
                })
            }
            (Some(run), None) if ins.start_ns >= run.end => {
                runs.push(run);
                None
            }
            (cur, None) => cur,
        };
    }
    runs.extend(current);
    runs
}
