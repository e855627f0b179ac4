//! The `neuron:` and `pipeline.neuron:` sections: shipped presets load, defaults match, unknown keys fail
//! with their path.

use serde::Deserialize;

use profile_run::config::{load, Config, ConfigSources, ProfilerKind};
use profile_run::profiler::neuron::capture::pipeline::{
    CaptureMode, DeviceProfile, NeuronPipeline, ViewFormat,
};
use profile_run::profiler::neuron::settings::{NeuronSettings, RegionMethod};

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
struct Pipeline {
    neuron: NeuronPipeline,
}

/// The two Neuron sections alone, for the serde errors of their keys.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
struct Preset {
    pipeline: Pipeline,
    neuron: NeuronSettings,
}

/// The resolved configuration of an embedded preset (`--config neuron/NAME`) plus overrides.
fn preset(name: &str, overrides: &[&str]) -> Config {
    let sources = ConfigSources {
        files: vec![format!("neuron/{name}").into()],
        overrides: overrides.iter().map(|s| s.to_string()).collect(),
        env: Vec::new(),
    };
    load(&sources)
        .unwrap_or_else(|e| panic!("neuron/{name}: {e}"))
        .config
}

#[test]
fn the_default_preset_spells_out_the_defaults() {
    let p = preset("default", &[]);
    assert_eq!(p.pipeline.profiler, ProfilerKind::Neuron);
    assert_eq!(p.neuron, NeuronSettings::default());
    assert_eq!(p.pipeline.neuron, NeuronPipeline::default());
    assert_eq!(p.pipeline.neuron.inspect.device_profile, DeviceProfile::On);
    assert_eq!(p.pipeline.neuron.view.format, ViewFormat::Parquet);
    assert!(p.report.compare.is_empty());
}

#[test]
fn the_neff_preset_captures_the_second_execution() {
    let p = preset("neff", &["pipeline.neuron.neff=model.neff"]);
    assert_eq!(p.pipeline.profiler, ProfilerKind::Neuron);
    assert_eq!(p.pipeline.neuron.mode, CaptureMode::Neff);
    assert_eq!(p.pipeline.neuron.capture.profile_nth_exec, Some(2));
    assert_eq!(
        p.pipeline.neuron.neff.as_deref(),
        Some(std::path::Path::new("model.neff"))
    );
    assert_eq!(p.neuron.regions.method, RegionMethod::Collectives);
}

#[test]
fn report_compare_and_the_region_method_are_overrides() {
    let p = preset(
        "default",
        &[
            "report.compare=[MLP[0], MLP[3]]",
            "neuron.regions.method=hierarchy",
        ],
    );
    assert_eq!(p.report.compare, ["MLP[0]", "MLP[3]"]);
    assert_eq!(p.neuron.regions.method, RegionMethod::Hierarchy);
}

#[test]
fn options_and_their_errors() {
    let s: NeuronSettings =
        serde_yaml::from_str("regions: {method: stack_frames, stack_frames: {depth: 1}}\n")
            .unwrap();
    assert_eq!(s.regions.method, RegionMethod::StackFrames);
    assert_eq!(s.regions.stack_frames.depth, 1);

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
