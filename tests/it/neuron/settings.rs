//! The `neuron:` and `pipeline.neuron:` sections: shipped presets load, defaults match, unknown keys fail
//! with their path.

use serde::Deserialize;

use profile_run::profiler::neuron::pipeline::{
    CaptureMode, DeviceProfile, NeuronPipeline, ViewFormat,
};
use profile_run::profiler::neuron::settings::{NeuronSettings, RegionMethod};

use crate::common::repo;

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
struct Pipeline {
    neuron: NeuronPipeline,
}

/// The two Neuron sections as the layered config will hold them.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
struct Preset {
    pipeline: Pipeline,
    neuron: NeuronSettings,
}

fn preset(name: &str) -> Preset {
    let path = repo().join("conf/neuron").join(name);
    serde_yaml::from_str(&std::fs::read_to_string(&path).unwrap())
        .unwrap_or_else(|e| panic!("{name}: {e}"))
}

#[test]
fn the_default_preset_spells_out_the_defaults() {
    let p = preset("default.yaml");
    assert_eq!(p.neuron, NeuronSettings::default());
    assert_eq!(p.pipeline.neuron, NeuronPipeline::default());
    assert_eq!(p.pipeline.neuron.inspect.device_profile, DeviceProfile::On);
    assert_eq!(p.pipeline.neuron.view.format, ViewFormat::Parquet);
}

#[test]
fn the_neff_preset_captures_the_second_execution() {
    let p = preset("neff.yaml");
    assert_eq!(p.pipeline.neuron.mode, CaptureMode::Neff);
    assert_eq!(p.pipeline.neuron.capture.profile_nth_exec, Some(2));
    assert_eq!(p.pipeline.neuron.neff, None); // given on the command line
    assert_eq!(p.neuron.regions.method, RegionMethod::Collectives);
}

#[test]
fn options_and_their_errors() {
    let s: NeuronSettings = serde_yaml::from_str(
        "regions: {method: stack_frames, stack_frames: {depth: 1}}\ncompare: ['MLP[0]', 'MLP[3]']\n",
    )
    .unwrap();
    assert_eq!(s.regions.method, RegionMethod::StackFrames);
    assert_eq!(s.regions.stack_frames.depth, 1);
    assert_eq!(s.compare, ["MLP[0]", "MLP[3]"]);

    let err = serde_yaml::from_str::<Preset>("neuron:\n  regions:\n    methd: hierarchy\n")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("neuron.regions") && err.contains("unknown field `methd`"),
        "{err}"
    );
    let err = serde_yaml::from_str::<NeuronSettings>("regions: {method: layers}")
        .unwrap_err()
        .to_string();
    assert!(err.contains("unknown variant `layers`"), "{err}");
    for (text, want) in [
        ("1", DeviceProfile::On),
        ("'1'", DeviceProfile::On),
        ("session", DeviceProfile::Session),
    ] {
        let p: NeuronPipeline =
            serde_yaml::from_str(&format!("inspect: {{device_profile: {text}}}")).unwrap();
        assert_eq!(p.inspect.device_profile, want);
    }
    let err = serde_yaml::from_str::<NeuronPipeline>("inspect: {device_profile: 2}")
        .unwrap_err()
        .to_string();
    assert!(err.contains("expected 1, model or session"), "{err}");
}
