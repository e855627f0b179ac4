//! `regions.include` / `regions.exclude` on Neuron profiles, in the grammar ncu's regions are picked
//! by, and the nesting of `layer_summary` regions by the region core: a parent's exclusive value of
//! each metric follows its rollup. On the decoder fixture (eight `segment[i]` regions, 44
//! instructions) and the K = 1024 matmul of the sweep (`/sg00` holding `/sg00/_dot.3`).

use assert_cmd::Command;
use serde_json::Value;

use super::cli::{close, report_json, Env};
use super::decoder_json;
use super::real_layout::sweep_file;

/// `profile-run report PROFILE --out r OVERRIDES…`, its output.
fn report(env: &Env, profile: &std::path::Path, overrides: &[&str]) -> std::process::Output {
    Command::cargo_bin("profile-run")
        .unwrap()
        .current_dir(env.dir.path())
        .arg("report")
        .arg(profile)
        .arg("--out")
        .arg(env.path("r"))
        .args(overrides)
        .output()
        .unwrap()
}

/// The first scope of the decoder's report under `overrides`.
fn decoder_scope(overrides: &[&str]) -> Value {
    let env = Env::new();
    let out = report(&env, &decoder_json(), overrides);
    assert!(out.status.success(), "{out:?}");
    report_json(&env.path("r"))["scopes"][0].clone()
}

fn paths(scope: &Value) -> Vec<&str> {
    scope["regions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["path"].as_str().unwrap())
        .collect()
}

fn notes(value: &Value) -> Vec<&str> {
    value["notes"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect()
}

#[test]
fn include_keeps_the_regions_its_globs_and_regexes_name() {
    let scope = decoder_scope(&["regions.include=['segment?1?']"]);
    assert_eq!(paths(&scope), ["segment[1]"]);
    assert!(
        notes(&scope).contains(
            &"regions.include / regions.exclude left out 7 of the profile's 8 regions (their instructions count outside regions)"
        ),
        "{scope:#}"
    );
    let scope = decoder_scope(&[r"regions.include=[regex:segment.[67].]"]);
    assert_eq!(paths(&scope), ["segment[6]", "segment[7]"]);
}

#[test]
fn include_picks_among_the_regions_of_a_method_named_in_regions_auto() {
    // Neuron's regions are always a method's, so `regions.auto.method` beside `regions.include` is
    // no conflict there.
    let scope = decoder_scope(&[
        "--config",
        "neuron/default",
        "regions.auto.method=hierarchy",
        "regions.include=['NeuronLlamaDecoderLayer?2?']",
    ]);
    assert_eq!(
        paths(&scope),
        ["NeuronLlamaModel/NeuronLlamaDecoderLayer[2]"]
    );
}

#[test]
fn exclude_leaves_out_what_it_names_and_its_instructions_count_outside() {
    let scope = decoder_scope(&["regions.exclude=[segment*]"]);
    assert!(paths(&scope).is_empty(), "{scope:#}");
    assert_eq!(scope["total"]["kernel_count"], 44);
    assert_eq!(scope["outside_regions"]["kernel_count"], 44);
}

#[test]
fn a_named_region_the_profile_lacks_shows_empty_with_a_note_as_under_ncu() {
    let scope = decoder_scope(&["regions.include=[no_such_region]"]);
    assert_eq!(paths(&scope), ["no_such_region"]);
    let region = &scope["regions"][0];
    assert_eq!(region["kernel_count"], 0);
    assert_eq!(region["inclusive"]["total_time"]["value"], 0.0);
    assert_eq!(
        notes(region),
        ["Requested in regions.include (`no_such_region`) but this profile has no such region; its times and counts are zero."]
    );
}

#[test]
fn patterns_neuron_cannot_use_are_refused_with_the_key_and_the_fix() {
    let env = Env::new();
    for (overrides, key, fix) in [
        (
            &["regions.include=[a//b]"][..],
            "`regions.include[0]`",
            "name every level",
        ),
        (
            &["regions.domain=LLM", "regions.include=[step]"][..],
            "regions.domain is `LLM`",
            "regions.domain=null",
        ),
    ] {
        let out = report(&env, &decoder_json(), overrides);
        assert_eq!(out.status.code(), Some(2), "{out:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(key) && stderr.contains(fix), "{stderr}");
    }
}

#[test]
fn a_parents_exclusive_values_follow_each_metrics_rollup() {
    let env = Env::new();
    let out = report(&env, &sweep_file(1024), &[]);
    assert!(out.status.success(), "{out:?}");
    let report = report_json(&env.path("r"));
    let regions = report["scopes"][0]["regions"].as_array().unwrap();
    let (parent, child) = (&regions[0], &regions[1]);
    assert_eq!(child["parent"], "sg00");
    let v = |r: &Value, side: &str, k: &str| r[side][k]["value"].as_f64().unwrap();
    // Sums other than time: the parent's own is its inclusive less its child's. The matmul holds
    // every FLOP, so nothing is left to `/sg00` itself.
    for sum in [
        "hardware_flops",
        "model_flops",
        "total_active_time",
        "dma_transfer_count",
        "tensor_engine_instruction_count",
    ] {
        let own = v(parent, "exclusive", sum);
        let expected = v(parent, "inclusive", sum) - v(child, "inclusive", sum);
        assert!(close(own, expected), "{sum}: {own} against {expected}");
        assert!(v(parent, "inclusive", sum) > 0.0, "{sum}");
    }
    assert_eq!(v(parent, "exclusive", "hardware_flops"), 0.0);
    // A time share is re-weighted over the time left to the parent itself.
    let share = v(parent, "exclusive", "active_time_percent");
    let own_share =
        100.0 * v(parent, "exclusive", "total_active_time") / v(parent, "exclusive", "total_time");
    assert!(close(share, own_share), "{share} against {own_share}");
    assert!(share < v(parent, "inclusive", "active_time_percent"));
    assert_eq!(v(parent, "exclusive", "mfu_estimated_percent"), 0.0);
    // A ratio is derived again from the exclusive sums: no transfer is the parent's own.
    assert!(parent["exclusive"]["dma_transfer_average_bytes"]["value"].is_null());
    // A region with no children keeps its inclusive values as its own.
    assert_eq!(child["exclusive"], child["inclusive"]);
    let rollup = |name: &str| {
        report["metrics"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["name"] == name)
            .map(|m| m["rollup"].clone())
            .unwrap()
    };
    assert_eq!(rollup("total_active_time"), "sum");
    assert_eq!(rollup("active_time_percent"), "mean");
    assert_eq!(rollup("mm_arithmetic_intensity"), "derived");
}
