//! Automatic regions (`regions.auto`) on GPU results, read one at a time with the cuts of
//! [`super::methods`] (the same methods Neuron's timeline goes through): where a program marked no
//! ranges, or its ranges are too fine, each result is given regions by a method instead of by its own
//! range stacks. One method at a time:
//!
//! - `hierarchy {depth}`: the range tree cut at a depth; deeper ranges fold into their ancestor
//!   (without a depth, at the layer level once every range is known).
//! - `collectives {…}`: the results of each scope, in launch order, cut at collective kernels
//!   (`nccl*` by default) into flat segments `segment[0]`, `segment[1]`, …; the collectives
//!   themselves form one region `collectives`. Named by position like Neuron Explorer's Region
//!   Highlighter: skip `offset` cuts, start a new segment every `stride` cuts, name `count` of them.
//! - `stack_frames {depth}`: regions along the Python call stack that launched each kernel, where the
//!   source has one (a stack family of frames, outermost first); inside `regions.include`, below the
//!   ranges asked for.

use globset::{Glob, GlobSet, GlobSetBuilder};
use serde::{Deserialize, Serialize};

use super::methods::collectives::Position;
use super::methods::hierarchy;
use super::{Observation, ScopeKey};
use crate::fast_map::FastMap;

/// `regions.auto` as written in a preset.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AutoRegions {
    /// `none` (the program's own ranges), `hierarchy`, `collectives` or `stack_frames`.
    pub method: AutoMethod,
    /// `hierarchy` and `stack_frames`: levels kept (1 = top level only). Unset: `hierarchy` takes the
    /// layer level (the first depth where siblings repeat); `stack_frames` takes 1 on a timeline
    /// (Neuron), 2 on GPU results, every frame inside `regions.include`.
    pub depth: Option<usize>,
    pub collectives: CollectiveCuts,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AutoMethod {
    None,
    Hierarchy,
    Collectives,
    StackFrames,
}

/// How `collectives` cuts and names segments.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CollectiveCuts {
    /// Region name before the index: `segment` gives `segment[0]`, `segment[1]`, …
    pub name: String,
    /// Glob patterns on kernel names that are collectives.
    pub kernels: Vec<String>,
    /// Cuts skipped before the first named segment (the results before them are outside regions).
    pub offset: usize,
    /// Cuts per segment: 2 makes each segment span two collectives.
    pub stride: usize,
    /// Segments named at most (`null`: all); later results are outside regions.
    pub count: Option<usize>,
    /// Timelines with collective operations (Neuron): the operation that opens a segment (unset: any).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub op_type_1: Option<String>,
    /// Timelines with collective operations (Neuron): the operation that closes a segment (unset: any).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub op_type_2: Option<String>,
}

impl Default for AutoRegions {
    /// The default preset's values: the program's own ranges.
    fn default() -> AutoRegions {
        AutoRegions {
            method: AutoMethod::None,
            depth: None,
            collectives: CollectiveCuts {
                name: "segment".into(),
                kernels: vec![
                    "nccl*".into(),
                    "*ncclDevKernel*".into(),
                    "*ncclKernel*".into(),
                ],
                offset: 0,
                stride: 1,
                count: None,
                op_type_1: None,
                op_type_2: None,
            },
        }
    }
}

/// A `regions.auto` pattern or setting that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("regions.auto.{key}: {message}")]
pub struct AutoError {
    pub key: String,
    pub message: String,
}

/// The region of the collective kernels themselves, under `collectives`.
pub const COLLECTIVES_REGION: &str = "collectives";

/// `regions.auto.collectives.kernels` as one matcher: which kernels are collectives, for the
/// `collectives` method and for the cross-rank diagnosis alike.
pub fn collective_kernels(cuts: &CollectiveCuts) -> Result<GlobSet, AutoError> {
    let error = |message: String| AutoError {
        key: "collectives.kernels".into(),
        message,
    };
    if cuts.kernels.is_empty() {
        return Err(error(
            "names no kernel pattern; use e.g. [\"nccl*\"]".into(),
        ));
    }
    let mut set = GlobSetBuilder::new();
    for pattern in &cuts.kernels {
        let glob = Glob::new(pattern).map_err(|e| error(format!("pattern {pattern:?}: {e}")))?;
        set.add(glob);
    }
    set.build().map_err(|e| error(e.to_string()))
}

/// A checked method.
#[derive(Debug, Clone)]
pub enum Regioner {
    Own,
    /// `layer`: no depth was given; every range is kept and the tree is cut at the layer level once
    /// all results are read (`crate::analysis`).
    Hierarchy {
        depth: usize,
        layer: bool,
    },
    Collectives(CollectiveCutter),
    /// `nested`: inside the program's own ranges (`regions.include` set): the frames go below the main
    /// range stack, and a result without a call stack stays in its range; `depth` keeps the innermost
    /// frames there (all of them unless set), the outermost otherwise.
    StackFrames {
        depth: usize,
        nested: bool,
    },
}

#[derive(Debug, Clone)]
pub struct CollectiveCutter {
    name: String,
    kernels: GlobSet,
    position: Position,
}

impl Regioner {
    pub fn new(auto: &AutoRegions) -> Result<Regioner, AutoError> {
        let error = |key: &str, message: String| AutoError {
            key: key.into(),
            message,
        };
        let depth = || match auto
            .depth
            .unwrap_or(super::methods::hierarchy::FALLBACK_DEPTH)
        {
            0 => Err(error(
                "depth",
                "must be 1 or more (1: top-level ranges only)".into(),
            )),
            d => Ok(d),
        };
        Ok(match auto.method {
            AutoMethod::None => Regioner::Own,
            AutoMethod::Hierarchy => match auto.depth {
                None => Regioner::Hierarchy {
                    depth: usize::MAX,
                    layer: true,
                },
                Some(_) => Regioner::Hierarchy {
                    depth: depth()?,
                    layer: false,
                },
            },
            AutoMethod::StackFrames => Regioner::StackFrames {
                depth: depth()?,
                nested: false,
            },
            AutoMethod::Collectives => {
                let c = &auto.collectives;
                if c.stride == 0 {
                    return Err(error("collectives.stride", "must be 1 or more".into()));
                }
                let kernels = collective_kernels(c)?;
                Regioner::Collectives(CollectiveCutter {
                    name: c.name.clone(),
                    kernels,
                    position: Position {
                        offset: c.offset,
                        stride: c.stride,
                        count: c.count,
                    },
                })
            }
        })
    }

    /// The method's name as reports give it in `regions[].origin` (`nvtx` for the program's own).
    pub fn origin<'a>(&self, own: &'a str) -> &'a str {
        match self {
            Regioner::Own => own,
            Regioner::Hierarchy { .. } => "hierarchy",
            Regioner::Collectives(_) => "collectives",
            Regioner::StackFrames { nested: true, .. } => own,
            Regioner::StackFrames { .. } => "stack_frames",
        }
    }

    /// `stack_frames` inside the ranges `regions.include` names: frames below the main range stack.
    /// `depth` is the setting as written (unset: every frame, single-child chains collapsed later).
    pub fn nested_stack_frames(depth: Option<usize>) -> Regioner {
        Regioner::StackFrames {
            depth: depth.unwrap_or(usize::MAX),
            nested: true,
        }
    }

    /// Whether `hierarchy` cuts at the layer level once every range is known.
    pub fn cuts_at_layers(&self) -> bool {
        matches!(self, Regioner::Hierarchy { layer: true, .. })
    }

    /// Whether the method nests call-stack frames inside the program's own ranges.
    pub fn nests_frames(&self) -> bool {
        matches!(self, Regioner::StackFrames { nested: true, .. })
    }

    /// Whether results must be seen one scope at a time in launch order (a single reader).
    pub fn needs_order(&self) -> bool {
        matches!(self, Regioner::Collectives(_))
    }
}

/// Per-reader state: the regions given to the current result, and for `collectives` the cuts seen
/// so far in each scope.
#[derive(Debug, Default)]
pub struct RegionerState {
    cuts: FastMap<ScopeKey, usize>,
    stacks: Vec<Vec<String>>,
    marks: Vec<String>,
    /// Nested `stack_frames`: every frame name placed below a range, so that the frame regions can be
    /// told from the ranges afterwards (their single-child chains are collapsed).
    pub frames: std::collections::HashSet<String>,
}

impl Regioner {
    /// `obs` with its regions given by the method; `Own` leaves it as it is.
    pub fn apply<'a>(
        &self,
        obs: &Observation<'a>,
        state: &'a mut RegionerState,
    ) -> Observation<'a> {
        if let Regioner::Own = self {
            return *obs;
        }
        // Every method gives the result new stacks and marks; none keeps instance ids.
        state.stacks.clear();
        state.marks.clear();
        match self {
            Regioner::Own => {}
            Regioner::Hierarchy { depth, .. } => state.stacks.extend(
                obs.stacks
                    .iter()
                    .map(|s| hierarchy::cut(s, *depth).to_vec()),
            ),
            Regioner::StackFrames {
                depth,
                nested: false,
            } => {
                if let Some(frames) = obs.call_stack {
                    state.stacks.push(hierarchy::cut(frames, *depth).to_vec());
                }
            }
            Regioner::StackFrames {
                depth,
                nested: true,
            } => {
                // The ranges stay; the innermost frames go below the main family's stack. A result
                // without a call stack (autograd's thread) stays in its range.
                state.stacks.extend(obs.stacks.iter().cloned());
                if state.stacks.is_empty() {
                    state.stacks.push(Vec::new());
                }
                if let Some(frames) = obs.call_stack {
                    let inner = &frames[frames.len().saturating_sub(*depth)..];
                    for frame in inner {
                        if !state.frames.contains(frame) {
                            state.frames.insert(frame.clone());
                        }
                    }
                    state.stacks[0].extend(inner.iter().cloned());
                }
            }
            Regioner::Collectives(cuts) => {
                if let Some(mark) = cuts.region_of(obs.scope, obs.kernel, &mut state.cuts) {
                    state.marks.push(mark);
                }
            }
        }
        let mut out = *obs;
        out.instances = None;
        out.stacks = &state.stacks;
        out.marks = &state.marks;
        out
    }
}

impl CollectiveCutter {
    /// The segment (or the collectives' region) of one result, counting cuts per scope.
    fn region_of(
        &self,
        scope: &ScopeKey,
        kernel: &str,
        seen: &mut FastMap<ScopeKey, usize>,
    ) -> Option<String> {
        let cuts = match seen.get_mut(scope) {
            Some(n) => n,
            None => seen.entry(scope.clone()).or_default(),
        };
        if self.kernels.is_match(kernel) {
            *cuts += 1;
            return Some(COLLECTIVES_REGION.to_string());
        }
        let index = self.position.segment(*cuts)?;
        Some(format!("{}[{index}]", self.name))
    }
}
