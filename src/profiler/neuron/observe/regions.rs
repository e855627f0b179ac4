//! Neuron's timeline fed to the shared region methods ([`crate::region::methods`]): instructions with
//! their layer paths (`hierarchy`) or NKI frame chains (`stack_frames`), Parquet layer spans, and the
//! collectives (`collectives`). What a region owns is decided here: member instructions whole, or
//! everything in a segment's time windows. The settings are `regions.auto.*`, or the documented alias
//! `neuron.regions.*` while `regions.auto.method` is `none` (see docs/neuron.md).

use std::collections::HashMap;

use serde::Serialize;

use crate::profiler::neuron::readers::model::intervals::union;
use crate::profiler::neuron::readers::model::{Instruction, NeuronProfile};
use crate::profiler::neuron::settings::{RegionMethod, RegionSettings};
use crate::region::methods::{self, collectives, hierarchy, stack_frames, Item, Members, Spans};
use crate::region::{RegionFilter, RegionKind};

pub use crate::region::methods::base_name;

/// Which activity a region owns.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Selection {
    /// Everything in these time intervals (sorted, disjoint), clipped to them.
    Time(Vec<(u64, u64)>),
    /// These instructions (indices into `NeuronProfile::instructions`), whole; DMA and collectives by
    /// the span `[start_ns, end_ns)`.
    Instructions(Vec<usize>),
}

/// One generated region, before metrics.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RegionSpan {
    /// Unique: `MLP[3]`, `model/NeuronLlamaModel[0]/NeuronLlamaDecoderLayer[1]`, `fused_mlp[0]`.
    pub name: String,
    /// The name without instance indices: regions with one base form a distribution.
    pub base: String,
    /// Position among the regions of the same base, in time order.
    pub index: usize,
    pub method: RegionMethod,
    pub start_ns: u64,
    pub end_ns: u64,
    pub selection: Selection,
    /// The `layer_summary` record it stands for (index into `NeuronProfile::layers`), whose figures
    /// are the region's own.
    pub layer: Option<usize>,
}

impl RegionSpan {
    /// The region's path: a hierarchy name is a layer path (a segment per level); any other name is
    /// one segment, whatever it holds.
    pub fn segments(&self) -> Vec<String> {
        if self.method == RegionMethod::Hierarchy {
            return self.name.split('/').map(str::to_string).collect();
        }
        vec![self.name.clone()]
    }

    /// Layer paths nest; every other region is a flat mark.
    pub fn kind(&self) -> RegionKind {
        if self.method == RegionMethod::Hierarchy {
            RegionKind::Stack
        } else {
            RegionKind::Mark
        }
    }
}

/// Why a region filter cannot apply to Neuron regions, with the fix; `None` when it can.
pub fn filter_refusal(filter: &RegionFilter) -> Option<String> {
    let domain = filter.domain.as_deref()?;
    Some(format!(
        "regions.domain is `{domain}`, an NVTX domain; Neuron regions have no domain, so no region \
         pattern could match one: remove regions.domain (regions.domain=null)"
    ))
}

/// Keeps the regions `regions.include` / `regions.exclude` select (docs/neuron.md, "Regions"), in
/// the grammar ncu's regions are selected in; a note says how many were left out.
pub fn select(regions: &mut ProfileRegions, filter: &RegionFilter) {
    if filter.is_empty() || regions.spans.is_empty() {
        return;
    }
    let paths: Vec<(RegionKind, Vec<String>)> = regions
        .spans
        .iter()
        .map(|s| (s.kind(), s.segments()))
        .collect();
    let keys: Vec<(RegionKind, &[String])> =
        paths.iter().map(|(k, p)| (*k, p.as_slice())).collect();
    let keep = filter.keep(&keys);
    let left_out = keep.iter().filter(|k| !**k).count();
    if left_out == 0 {
        return;
    }
    let mut keep = keep.into_iter();
    let total = regions.spans.len();
    regions.spans.retain(|_| keep.next().unwrap_or(true));
    regions.notes.push(format!(
        "regions.include / regions.exclude left out {left_out} of the profile's {total} regions \
         (their instructions count outside regions)"
    ));
}

/// The regions of one profile and why there are none, if so.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ProfileRegions {
    pub spans: Vec<RegionSpan>,
    pub notes: Vec<String>,
}

/// The time a region spans: its windows, or for a set of instructions its whole span.
pub fn windows(span: &RegionSpan) -> Vec<(u64, u64)> {
    match &span.selection {
        Selection::Time(w) => w.clone(),
        Selection::Instructions(_) => vec![(span.start_ns, span.end_ns)],
    }
}

/// Cut the profile into regions with the configured method.
pub fn generate(profile: &NeuronProfile, settings: &RegionSettings) -> ProfileRegions {
    let mut out = match settings.method {
        RegionMethod::None => ProfileRegions::default(),
        RegionMethod::Collectives => by_collectives(profile, settings),
        RegionMethod::Hierarchy => by_hierarchy(profile, settings.hierarchy.depth),
        RegionMethod::StackFrames => by_stack_frames(profile, settings.stack_frames.depth + 1),
    };
    if out.spans.is_empty() && out.notes.is_empty() && settings.method != RegionMethod::None {
        out.notes.push(format!(
            "method `{}` found no regions in {}",
            settings.method.as_str(),
            profile.source.display()
        ));
    }
    out
}

fn spans_of(
    method: RegionMethod,
    spans: Spans,
    selection: impl Fn(Members) -> Selection,
) -> ProfileRegions {
    ProfileRegions {
        spans: spans
            .spans
            .into_iter()
            .map(|s| RegionSpan {
                name: s.name,
                base: s.base,
                index: s.index,
                method,
                start_ns: s.start_ns,
                end_ns: s.end_ns,
                selection: selection(s.members),
                layer: None,
            })
            .collect(),
        notes: spans.notes,
    }
}

fn instructions(members: Members) -> Selection {
    match members {
        Members::Items(idx) => Selection::Instructions(idx),
        Members::Time(w) => Selection::Time(w),
    }
}

fn by_collectives(profile: &NeuronProfile, settings: &RegionSettings) -> ProfileRegions {
    if profile.collectives.is_empty() {
        // One note either way; a profile with the tool's own layer records is cut along them.
        if has_layer_records(profile) {
            let mut regions = by_layer_summary(profile, None);
            regions.notes.push(
                "no collectives in this profile (no `cc_ops` list or CcOp table): regions follow its \
                 `layer_summary` paths instead, as `regions.auto.method=hierarchy` does"
                    .to_string(),
            );
            return regions;
        }
        return ProfileRegions {
            spans: Vec::new(),
            notes: vec![format!(
                "no collectives in {} (no `cc_ops` list or CcOp table): method `collectives` has nothing \
                 to cut at; use `regions.auto.method=hierarchy` or `stack_frames`",
                profile.source.display()
            )],
        };
    }
    let items: Vec<Item> = profile
        .collectives
        .iter()
        .map(|c| Item {
            start_ns: c.start_ns,
            end_ns: c.end_ns,
            stack: Vec::new(),
            collective: Some(methods::CollectiveItem {
                operation: c.operation.clone(),
                cut_ns: c.cut_ns(),
            }),
        })
        .collect();
    let c = &settings.collectives;
    let cuts = collectives::Cuts {
        name: c.name.clone(),
        op_type_1: c.op_type_1.clone(),
        op_type_2: c.op_type_2.clone(),
        offset: c.offset,
        stride: c.stride,
        count: c.count,
    };
    let start = profile.bounds().map_or(0, |(s, _)| s);
    spans_of(
        RegionMethod::Collectives,
        collectives::regions(&items, &cuts, start),
        instructions,
    )
}

/// The instruction an HLO line names: `dot.11` for `%dot.11 = dot(%p0, %w)`.
fn hlo_instruction(hlo: &str) -> Option<String> {
    let name = hlo.split(" = ").next()?.trim().trim_start_matches('%');
    (!name.is_empty()).then(|| name.to_string())
}

/// Module path components of a layer path; the last part is the operation, not a module.
fn modules(path: &str) -> Vec<String> {
    let mut parts: Vec<String> = path
        .split('/')
        .filter(|p| !p.is_empty())
        .map(str::to_string)
        .collect();
    parts.pop();
    parts
}

fn by_hierarchy(profile: &NeuronProfile, depth: Option<usize>) -> ProfileRegions {
    if has_layer_records(profile) {
        return by_layer_summary(profile, depth);
    }
    // Layer paths where instructions carry them, else Parquet's layer spans (below), else the
    // instructions' HLO instruction names (one level).
    let mut stacks: Vec<(usize, Vec<String>)> = profile
        .instructions
        .iter()
        .enumerate()
        .filter_map(|(n, i)| Some((n, modules(i.layer.as_deref()?))))
        .collect();
    let mut depth = depth;
    if stacks.is_empty() && profile.layer_spans.is_empty() {
        stacks = profile
            .instructions
            .iter()
            .enumerate()
            .filter_map(|(n, i)| Some((n, vec![hlo_instruction(i.hlo_name.as_deref()?)?])))
            .collect();
        depth = depth.or(Some(1));
    }
    if !stacks.is_empty() {
        let items: Vec<Item> = stacks
            .iter()
            .map(|(n, stack)| Item {
                start_ns: profile.instructions[*n].start_ns,
                end_ns: profile.instructions[*n].end_ns,
                stack: stack.clone(),
                collective: None,
            })
            .collect();
        let (spans, _) = hierarchy::regions(&items, depth);
        // Items are the instructions with a path: map back to profile indices.
        return spans_of(RegionMethod::Hierarchy, spans, |m| match m {
            Members::Items(idx) => {
                Selection::Instructions(idx.into_iter().map(|n| stacks[n].0).collect())
            }
            Members::Time(w) => Selection::Time(w),
        });
    }
    if profile.layer_spans.is_empty() {
        return ProfileRegions {
            spans: Vec::new(),
            notes: vec![format!(
                "no layer paths in {}: instructions carry no `layer` or `hlo_name` and there is no \
                 FrameworkInstruction table. Compile with XLA_IR_DEBUG=1 XLA_HLO_DEBUG=1 to record them",
                profile.source.display()
            )],
        };
    }
    // Parquet profiles: `FrameworkInstruction` rows own their time intervals.
    let items: Vec<Item> = profile
        .layer_spans
        .iter()
        .map(|l| Item {
            start_ns: l.start_ns,
            end_ns: l.end_ns,
            stack: modules(&l.path),
            collective: None,
        })
        .collect();
    let (spans, _) = hierarchy::regions(&items, depth);
    let mut regions = spans_of(RegionMethod::Hierarchy, spans, |m| match m {
        Members::Items(idx) => Selection::Time(union(
            idx.into_iter()
                .flat_map(|n| {
                    let l = &profile.layer_spans[n];
                    if l.intervals.is_empty() {
                        vec![(l.start_ns, l.end_ns)]
                    } else {
                        l.intervals.clone()
                    }
                })
                .collect(),
        )),
        Members::Time(w) => Selection::Time(w),
    });
    // A region's span is its owned windows' extent.
    for s in &mut regions.spans {
        if let Selection::Time(w) = &s.selection {
            s.start_ns = w.first().map_or(0, |i| i.0);
            s.end_ns = w.last().map_or(0, |i| i.1);
        }
    }
    regions
}

/// The call chain of an instruction, outermost (kernel entry) first, as frame names. Without parents,
/// `stack_frame_ids` is taken as outermost first.
fn chain(ins: &Instruction, by_id: &HashMap<u64, (&str, Option<u64>)>) -> Vec<String> {
    let name = |id: &u64| {
        by_id
            .get(id)
            .map_or_else(|| format!("frame {id}"), |f| f.0.to_string())
    };
    let has_parents = ins
        .stack_frame_ids
        .iter()
        .any(|id| by_id.get(id).is_some_and(|f| f.1.is_some()));
    if !has_parents {
        return ins.stack_frame_ids.iter().map(name).collect();
    }
    let walk = |mut id: u64| {
        let mut out = vec![id];
        while let Some(&(_, Some(parent))) = by_id.get(&id) {
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
        .iter()
        .map(name)
        .collect()
}

fn by_stack_frames(profile: &NeuronProfile, depth: usize) -> ProfileRegions {
    if profile
        .instructions
        .iter()
        .all(|i| i.stack_frame_ids.is_empty())
    {
        return ProfileRegions {
            spans: Vec::new(),
            notes: vec![format!(
                "no instruction in {} carries NKI stack frames: method `stack_frames` needs NKI kernels \
                 compiled with NEURON_FRAMEWORK_DEBUG=1",
                profile.source.display()
            )],
        };
    }
    let by_id: HashMap<u64, (&str, Option<u64>)> = profile
        .stack_frames
        .iter()
        .map(|f| (f.id, (f.function.as_str(), f.parent)))
        .collect();
    let items: Vec<Item> = profile
        .instructions
        .iter()
        .map(|ins| Item {
            start_ns: ins.start_ns,
            end_ns: ins.end_ns,
            stack: chain(ins, &by_id),
            collective: None,
        })
        .collect();
    spans_of(
        RegionMethod::StackFrames,
        stack_frames::regions(&items, depth),
        instructions,
    )
}

/// Whether the profile has `layer_summary` records with a span to cut along.
fn has_layer_records(profile: &NeuronProfile) -> bool {
    profile.layers.iter().any(|l| l.start_ns.is_some())
}

/// One region per `layer_summary` record with a span (`/sg00`, `/sg00/_dot.3`): the tool's own cut,
/// so its figures are the region's. The path is the record's name without the leading `/`; with
/// `regions.auto.depth` set, paths deeper than it are left out.
fn by_layer_summary(profile: &NeuronProfile, depth: Option<usize>) -> ProfileRegions {
    let mut spans: Vec<RegionSpan> = profile
        .layers
        .iter()
        .enumerate()
        .filter_map(|(n, l)| {
            let (start_ns, end_ns) = (l.start_ns?, l.end_ns?);
            let name = l.name.trim_matches('/').to_string();
            let levels = name.split('/').count();
            if name.is_empty() || depth.is_some_and(|d| levels > d) {
                return None;
            }
            Some(RegionSpan {
                base: base_name(&name),
                index: 0,
                method: RegionMethod::Hierarchy,
                start_ns,
                end_ns,
                selection: Selection::Time(vec![(start_ns, end_ns.max(start_ns))]),
                layer: Some(n),
                name,
            })
        })
        .collect();
    // Parents before children, siblings in time order, as every region list is.
    spans.sort_by_key(|s| (s.start_ns, s.name.len()));
    let mut seen: HashMap<String, usize> = HashMap::new();
    for s in &mut spans {
        let count = seen.entry(s.base.clone()).or_default();
        s.index = *count;
        *count += 1;
    }
    ProfileRegions {
        spans,
        notes: Vec::new(),
    }
}
