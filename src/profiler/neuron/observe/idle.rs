//! Where the device sat idle: active time (an engine running a busy instruction, or a DMA queue
//! moving data: the profile's own `total_active_time` counts both) and the gaps in which no engine
//! runs a busy instruction, with what comes before and after each and what waits in it. Semaphore
//! waits are waiting, never busy. Computed once per profile, then clipped to each region's windows.

use std::collections::BTreeSet;

use crate::profiler::neuron::readers::model::intervals::{length, union};
use crate::profiler::neuron::readers::model::{Instruction, NeuronProfile};
use crate::report::idle::{Gap, Idle};

/// How many gaps a scope or region lists.
const GAPS_SHOWN: usize = 3;
/// How far back the search for what ends before a gap looks, in instructions: instructions are
/// sorted by start, so the one ending last before a gap is among the last few that start before it.
const LOOK_BACK: usize = 4096;

/// The profile's timeline reduced to what idle time needs, built once.
pub struct Timeline<'p> {
    profile: &'p NeuronProfile,
    /// Union of engine busy and DMA intervals.
    active: Vec<(u64, u64)>,
    /// The spans of `[0, end)` with no engine busy.
    gaps: Vec<(u64, u64)>,
    /// The instructions that wait (indices).
    waits: Vec<usize>,
    longest_dma_ns: u64,
    end_ns: u64,
}

impl<'p> Timeline<'p> {
    /// `None` for a profile without a timeline (a summary alone).
    pub fn of(profile: &'p NeuronProfile) -> Option<Timeline<'p>> {
        if profile.instructions.is_empty() && profile.active_periods.is_empty() {
            return None;
        }
        // The profile's own record of engine activity where it has one, else the busy instructions.
        let engine_busy = if profile.active_periods.is_empty() {
            union(
                profile
                    .instructions
                    .iter()
                    .filter(|i| i.is_busy())
                    .map(|i| (i.start_ns, i.end_ns))
                    .collect(),
            )
        } else {
            union(
                profile
                    .active_periods
                    .iter()
                    .map(|a| (a.start_ns, a.end_ns))
                    .collect(),
            )
        };
        let dma = profile.dma.iter().map(|d| (d.start_ns, d.end_ns));
        let active = union(engine_busy.iter().copied().chain(dma).collect());
        let end_ns = profile
            .bounds()
            .map_or(0, |b| b.1)
            .max(active.last().map_or(0, |a| a.1));
        let mut gaps = Vec::new();
        let mut at = 0;
        for &(s, e) in &engine_busy {
            if s > at {
                gaps.push((at, s));
            }
            at = at.max(e);
        }
        if end_ns > at {
            gaps.push((at, end_ns));
        }
        Some(Timeline {
            profile,
            waits: (0..profile.instructions.len())
                .filter(|&n| !profile.instructions[n].is_busy())
                .collect(),
            longest_dma_ns: profile
                .dma
                .iter()
                .map(|d| d.end_ns.saturating_sub(d.start_ns))
                .max()
                .unwrap_or(0),
            active,
            gaps,
            end_ns,
        })
    }

    /// The whole profile's window.
    pub fn window(&self) -> Vec<(u64, u64)> {
        vec![(0, self.end_ns)]
    }

    /// Active and idle time over `windows` (sorted, disjoint) and its largest gaps.
    pub fn idle(&self, windows: &[(u64, u64)]) -> Idle {
        let window_ns = length(windows);
        let active_ns = clipped_length(&self.active, windows);
        // Each window looks only at the gaps that reach into it (both lists are sorted).
        let mut pieces: Vec<(u64, u64, usize)> = Vec::new();
        for &(ws, we) in windows {
            let from = self.gaps.partition_point(|g| g.1 <= ws);
            for (n, &(s, e)) in self.gaps.iter().enumerate().skip(from) {
                if s >= we {
                    break;
                }
                pieces.push((s.max(ws), e.min(we), n));
            }
        }
        pieces.sort_by(|a, b| (b.1 - b.0).cmp(&(a.1 - a.0)).then(a.0.cmp(&b.0)));
        pieces.truncate(GAPS_SHOWN);
        Idle {
            window_ns: window_ns as f64,
            active_ns: active_ns as f64,
            idle_ns: window_ns.saturating_sub(active_ns) as f64,
            busy_share: (window_ns > 0).then(|| active_ns as f64 / window_ns as f64),
            gaps: pieces
                .into_iter()
                .map(|(s, e, n)| self.gap(s, e, self.gaps[n]))
                .collect(),
        }
    }

    /// The gap piece `[s, e)` of the whole gap `whole`: its neighbours are the whole gap's.
    fn gap(&self, s: u64, e: u64, whole: (u64, u64)) -> Gap {
        let p = self.profile;
        let waiting: BTreeSet<String> = self
            .waits
            .iter()
            .map(|&n| &p.instructions[n])
            .filter(|i| i.start_ns < e && i.end_ns > s)
            .map(name)
            .collect();
        let from = p
            .dma
            .partition_point(|d| d.start_ns.saturating_add(self.longest_dma_ns) < s);
        let dma: Vec<_> = p.dma[from..]
            .iter()
            .take_while(|d| d.start_ns < e)
            .filter(|d| d.end_ns > s)
            .collect();
        let collectives: BTreeSet<String> = p
            .collectives
            .iter()
            .filter(|c| c.start_ns < e && c.end_ns > s)
            .map(|c| c.operation.clone())
            .collect();
        Gap {
            start_ns: s,
            length_ns: e - s,
            before: self.before(whole.0),
            after: self.after(whole.1),
            waiting: waiting.into_iter().collect(),
            dma_queues: dma
                .iter()
                .map(|d| queue_base(&d.queue).to_string())
                .collect::<BTreeSet<_>>()
                .into_iter()
                .collect(),
            dma_active_ns: length(&union(
                dma.iter()
                    .map(|d| (d.start_ns.max(s), d.end_ns.min(e)))
                    .collect(),
            )),
            collectives: collectives.into_iter().collect(),
        }
    }

    /// The busy instruction, DMA transfer or collective that ends last at or before `t`.
    fn before(&self, t: u64) -> Option<String> {
        let p = self.profile;
        let upto = p.instructions.partition_point(|i| i.start_ns <= t);
        let instruction = p.instructions[..upto]
            .iter()
            .rev()
            .take(LOOK_BACK)
            .filter(|i| i.is_busy() && i.end_ns <= t)
            .max_by_key(|i| i.end_ns)
            .map(|i| (i.end_ns, name(i)));
        let upto = p.dma.partition_point(|d| d.start_ns <= t);
        let dma = p.dma[..upto]
            .iter()
            .rev()
            .take(LOOK_BACK)
            .filter(|d| d.end_ns <= t)
            .max_by_key(|d| d.end_ns)
            .map(|d| (d.end_ns, format!("DMA {}", d.queue)));
        let collective = p
            .collectives
            .iter()
            .filter(|c| c.end_ns <= t)
            .max_by_key(|c| c.end_ns)
            .map(|c| (c.end_ns, format!("collective {}", c.operation)));
        [instruction, dma, collective]
            .into_iter()
            .flatten()
            .max_by_key(|(end, _)| *end)
            .map(|(_, n)| n)
    }

    /// The busy instruction, DMA transfer or collective that starts first at or after `t`.
    fn after(&self, t: u64) -> Option<String> {
        let p = self.profile;
        let from = p.instructions.partition_point(|i| i.start_ns < t);
        let instruction = p.instructions[from..]
            .iter()
            .find(|i| i.is_busy())
            .map(|i| (i.start_ns, name(i)));
        let from = p.dma.partition_point(|d| d.start_ns < t);
        let dma = p.dma[from..]
            .first()
            .map(|d| (d.start_ns, format!("DMA {}", d.queue)));
        let collective = p
            .collectives
            .iter()
            .filter(|c| c.start_ns >= t)
            .min_by_key(|c| c.start_ns)
            .map(|c| (c.start_ns, format!("collective {}", c.operation)));
        // On a tie the instruction: it is what the engines were waiting to run.
        [instruction, dma, collective]
            .into_iter()
            .flatten()
            .min_by_key(|(start, _)| *start)
            .map(|(_, n)| n)
    }
}

/// `Tensor MATMUL`: the engine as the profile names it, then the opcode.
fn name(i: &Instruction) -> String {
    match &i.engine {
        Some(e) => format!("{} {}", super::opcodes::engine_name(e), i.opcode),
        None => i.opcode.clone(),
    }
}

/// A DMA queue without its ring on one DMA engine (`qSyncSpillReload0-Q1-E7` → `qSyncSpillReload0-Q1`):
/// a queue spreads over up to 16 engines, and a gap names the queue once.
fn queue_base(queue: &str) -> &str {
    match queue.rsplit_once("-E") {
        Some((base, ring))
            if !base.is_empty() && !ring.is_empty() && ring.bytes().all(|b| b.is_ascii_digit()) =>
        {
            base
        }
        _ => queue,
    }
}

/// Length of the sorted, disjoint `spans` inside the sorted, disjoint `windows`.
fn clipped_length(spans: &[(u64, u64)], windows: &[(u64, u64)]) -> u64 {
    windows
        .iter()
        .map(|&(ws, we)| {
            let from = spans.partition_point(|s| s.1 <= ws);
            spans[from..]
                .iter()
                .take_while(|s| s.0 < we)
                .map(|&(s, e)| e.min(we).saturating_sub(s.max(ws)))
                .sum::<u64>()
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profiler::neuron::readers::model::{DmaTransfer, Engine};

    fn ins(engine: Engine, opcode: &str, s: u64, e: u64) -> Instruction {
        Instruction {
            start_ns: s,
            end_ns: e,
            engine: Some(engine),
            opcode: opcode.to_string(),
            ..Default::default()
        }
    }

    fn profile() -> NeuronProfile {
        NeuronProfile {
            instructions: vec![
                ins(Engine::Tensor, "MATMUL", 0, 10),
                ins(Engine::Vector, "EVENT_SEMAPHORE", 10, 990),
                ins(Engine::Scalar, "ACTIVATE", 990, 1000),
            ],
            dma: vec![DmaTransfer {
                start_ns: 20,
                end_ns: 60,
                queue: "qSyncIO-E3".to_string(),
                bytes: 64.0,
            }],
            ..Default::default()
        }
    }

    #[test]
    fn a_semaphore_wait_is_idle_and_named_in_its_gap() {
        let p = profile();
        let t = Timeline::of(&p).unwrap();
        let idle = t.idle(&t.window());
        assert_eq!((idle.window_ns, idle.active_ns), (1000.0, 60.0));
        assert_eq!(idle.idle_ns, 940.0);
        let gap = &idle.gaps[0];
        assert_eq!((gap.start_ns, gap.length_ns), (10, 980));
        assert_eq!(gap.before.as_deref(), Some("Tensor MATMUL"));
        assert_eq!(gap.after.as_deref(), Some("Scalar ACTIVATE"));
        assert_eq!(gap.waiting, vec!["Vector EVENT_SEMAPHORE"]);
        assert_eq!(gap.dma_queues, vec!["qSyncIO"]);
        assert_eq!(gap.dma_active_ns, 40);
    }

    #[test]
    fn a_region_sees_its_part_of_a_gap() {
        let p = profile();
        let t = Timeline::of(&p).unwrap();
        let idle = t.idle(&[(5, 15), (500, 600)]);
        assert_eq!(idle.window_ns, 110.0);
        assert_eq!(idle.active_ns, 5.0);
        let lengths: Vec<u64> = idle.gaps.iter().map(|g| g.length_ns).collect();
        assert_eq!(lengths, vec![100, 5]);
        assert!(idle.gaps[0].dma_queues.is_empty());
        assert_eq!(idle.gaps[0].before.as_deref(), Some("Tensor MATMUL"));
    }
}
