//! Where a Neuron profile was captured, as it records it: the instance type (the device model of
//! the Run block), the driver, and the runtime, collectives and compiler versions (the summary's text
//! fields, else the metadata's). Nothing is guessed: a field the profile lacks stays unrecorded.

use crate::profiler::neuron::readers::model::NeuronProfile;
use crate::report::model::Platform;

/// What one profile records of its platform.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Provenance {
    /// `inf2.xlarge`, and the device index (`nd_idx`) when the summary has one.
    pub instance: Option<(String, String)>,
    pub driver: Option<String>,
    pub runtime: Option<String>,
}

/// The runtime's libraries, in the order the Run block names them.
const LIBRARIES: [(&str, &str); 3] = [
    ("runtime_version", "Neuron runtime"),
    ("collectives_version", "collectives"),
    ("compiler_version", "compiler"),
];

impl Provenance {
    pub fn of(profile: &NeuronProfile) -> Provenance {
        let text = |key: &str| {
            let from_summary = profile
                .summaries
                .iter()
                .find_map(|s| s.text.get(key).cloned());
            from_summary
                .or_else(|| profile.metadata.get(key).cloned())
                .map(|v| tidy(&v))
                .filter(|v| !v.is_empty())
        };
        let device = profile
            .summaries
            .iter()
            .find_map(|s| s.get("nd_idx"))
            // The Run block's device id; a profile without `nd_idx` names none.
            .map_or_else(|| "—".to_string(), |n| format!("{n}"));
        let libraries: Vec<String> = LIBRARIES
            .iter()
            .filter_map(|(key, name)| text(key).map(|v| format!("{name} {v}")))
            .collect();
        Provenance {
            instance: text("instance_type").map(|t| (device, t)),
            driver: text("driver_version").map(|v| format!("Neuron driver {v}")),
            runtime: (!libraries.is_empty()).then(|| libraries.join(", ")),
        }
    }

    /// Adds what this profile records to the report's platform (several profiles that disagree are
    /// all named).
    pub fn add_to(&self, platform: &mut Platform) {
        if let Some((id, model)) = &self.instance {
            platform.add_device(id.clone(), model.clone());
        }
        if let Some(driver) = &self.driver {
            platform.add_driver(driver);
        }
        if let Some(runtime) = &self.runtime {
            match &mut platform.runtime {
                Some(known) if known.split("; ").any(|r| r == runtime) => {}
                Some(known) => *known = format!("{known}; {runtime}"),
                None => platform.runtime = Some(runtime.clone()),
            }
        }
    }
}

/// A version without the empty build note the tools append (`2.25.0 ()` → `2.25.0`).
fn tidy(value: &str) -> String {
    value.trim().trim_end_matches("()").trim().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profiler::neuron::readers::model::Summary;

    #[test]
    fn the_summary_names_instance_driver_and_runtime() {
        let mut summary = Summary::default();
        for (k, v) in [
            ("instance_type", "inf2.xlarge"),
            ("driver_version", "2.25.0 ()"),
            ("runtime_version", "2.29.40 (f954c)"),
            ("collectives_version", "2.29.41 ()"),
        ] {
            summary.text.insert(k.to_string(), v.to_string());
        }
        summary.metrics.insert("nd_idx".into(), Some(0.0));
        let profile = NeuronProfile {
            summaries: vec![summary],
            ..Default::default()
        };
        let p = Provenance::of(&profile);
        let mut platform = Platform::default();
        p.add_to(&mut platform);
        p.add_to(&mut platform);
        assert_eq!(platform.models(), vec!["inf2.xlarge"]);
        assert_eq!(platform.driver.as_deref(), Some("Neuron driver 2.25.0"));
        assert_eq!(
            platform.runtime.as_deref(),
            Some("Neuron runtime 2.29.40 (f954c), collectives 2.29.41")
        );
        assert_eq!(
            Provenance::of(&NeuronProfile::default()),
            Provenance::default()
        );
    }
}
