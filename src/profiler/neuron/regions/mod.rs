//! Region generators, one at a time (`neuron.regions.method`): between collectives, along the layer
//! hierarchy, along NKI kernel stack frames. Each gives named spans (`MLP[0]`, `MLP[1]`…) and says
//! which activity belongs to them; a profile without the data a method needs gives no regions and a note.

mod collectives;
mod hierarchy;
mod stack_frames;

use serde::Serialize;

use super::model::NeuronProfile;
use super::settings::{RegionMethod, RegionSettings};

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
    /// Unique: `MLP[3]`, `NeuronLlamaModel/NeuronLlamaDecoderLayer[1]`, `mlp_kernel.fused_mlp[0]`.
    pub name: String,
    /// The name without instance indices: regions with one base form a distribution.
    pub base: String,
    /// Position among the regions of the same base, in time order.
    pub index: usize,
    pub method: RegionMethod,
    pub start_ns: u64,
    pub end_ns: u64,
    pub selection: Selection,
}

/// The regions of one profile and why there are none, if so.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Regions {
    pub spans: Vec<RegionSpan>,
    pub notes: Vec<String>,
}

/// Cut the profile into regions with the configured method.
pub fn generate(profile: &NeuronProfile, settings: &RegionSettings) -> Regions {
    let mut out = match settings.method {
        RegionMethod::None => Regions::default(),
        RegionMethod::Collectives => collectives::generate(profile, &settings.collectives),
        RegionMethod::Hierarchy => hierarchy::generate(profile, settings.hierarchy.depth),
        RegionMethod::StackFrames => stack_frames::generate(profile, settings.stack_frames.depth),
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

/// `a[1]/b[20]/c` → `a/b/c`: the name with every trailing-bracket instance index removed.
pub fn base_name(name: &str) -> String {
    name.split('/')
        .map(|part| match part.rfind('[') {
            Some(i)
                if part.ends_with(']') && part[i + 1..part.len() - 1].parse::<u64>().is_ok() =>
            {
                &part[..i]
            }
            _ => part,
        })
        .collect::<Vec<_>>()
        .join("/")
}

/// Number the regions of each base in time order (`index`), after sorting by start.
fn number(spans: &mut [RegionSpan]) {
    spans.sort_by(|a, b| (a.start_ns, a.end_ns, &a.name).cmp(&(b.start_ns, b.end_ns, &b.name)));
    let mut seen = std::collections::HashMap::<String, usize>::new();
    for s in spans {
        let n = seen.entry(s.base.clone()).or_default();
        s.index = *n;
        *n += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::base_name;

    #[test]
    fn base_names_drop_instance_indices_only() {
        assert_eq!(base_name("MLP[3]"), "MLP");
        assert_eq!(
            base_name("M/NeuronLlamaDecoderLayer[12]/Attn"),
            "M/NeuronLlamaDecoderLayer/Attn"
        );
        assert_eq!(base_name("x[a]"), "x[a]");
        assert_eq!(base_name("plain"), "plain");
    }
}
