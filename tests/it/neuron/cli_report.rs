//! `profile-run report` on every Neuron input kind, recognised by content (full JSON, Parquet,
//! summary JSON and text, an inspect output directory), the region methods as overrides, and the
//! report.md excerpt in docs/neuron.md kept equal to what the CLI writes.

use std::path::{Path, PathBuf};

use assert_cmd::Command;

use super::cli::{assert_mlp_scope, close, report_json, rules, Env, MLP};
use crate::common::{fixture, repo};

/// `profile-run report INPUT` with the MLP overrides; the report directory.
fn report_on(env: &Env, input: &Path, extra: &[&str]) -> PathBuf {
    let out = env.path(&format!(
        "report-{}",
        input.file_name().unwrap().to_string_lossy()
    ));
    Command::cargo_bin("profile-run")
        .unwrap()
        .current_dir(env.dir.path())
        .env("HOME", env.dir.path())
        .env("FAKE_NEURON_ARGV_LOG", env.path("argv.log"))
        .args(["report", "--force"])
        .arg(input)
        .arg("--out")
        .arg(&out)
        .args(MLP)
        .args(extra)
        .assert()
        .success();
    out
}

#[test]
fn report_recognises_every_neuron_input_by_content() {
    let env = Env::new();
    // full JSON
    let out = report_on(
        &env,
        &super::decoder_json(),
        &["report.compare=[MLP[0], MLP[3]]"],
    );
    let report = report_json(&out);
    assert_mlp_scope(&report["scopes"][0]);
    assert!(report["run"]["profiler"]["settings"]
        .get("view_format")
        .is_none());
    // Parquet directory (its parent holding one <name>@latest works too)
    let out = report_on(&env, &fixture("neuron/pyarrow_profile@latest"), &[]);
    assert_mlp_scope(&report_json(&out)["scopes"][0]);
    // summary JSON with two subgraphs: one scope each, no regions, a note on why
    let out = report_on(&env, &fixture("neuron/summary_two_subgraphs.json"), &[]);
    let report = report_json(&out);
    let scopes = report["scopes"].as_array().unwrap();
    assert_eq!(scopes.len(), 2);
    assert!(
        scopes[0]["label"].as_str().unwrap().contains(" · n_"),
        "{}",
        scopes[0]["label"]
    );
    assert!(scopes[0]["regions"].as_array().unwrap().is_empty());
    assert!(!scopes[0]["notes"].as_array().unwrap().is_empty());
    assert_eq!(rules(&scopes[1]), ["low_mfu_while_active", "compute_bound"]);
    // the other region methods, as overrides
    let out = report_on(
        &env,
        &super::decoder_json(),
        &["neuron.regions.method=stack_frames"],
    );
    let report = report_json(&out);
    let regions = report["scopes"][0]["regions"].as_array().unwrap();
    assert!(!regions.is_empty());
    for r in regions {
        assert_eq!(
            (r["kind"].as_str(), r["origin"].as_str()),
            (Some("mark"), Some("stack_frames"))
        );
    }
    let out = report_on(
        &env,
        &super::decoder_json(),
        &["neuron.regions.method=none"],
    );
    let report = report_json(&out);
    assert!(report["scopes"][0]["regions"]
        .as_array()
        .unwrap()
        .is_empty());
    assert_eq!(report["run"]["profiler"]["settings"]["method"], "none");
    // summary text: 53.78 ms
    let out = report_on(&env, &fixture("neuron/summary.txt"), &[]);
    let report = report_json(&out);
    let total = report["scopes"][0]["total"]["metrics"]["total_time"]["value"]
        .as_f64()
        .unwrap();
    assert!(close(total, 53.78e6), "{total}");
    // "Syncill_reload_bytes" (the tool's spelling) is spill_reload_bytes: it is shown, labelled, and
    // its rule fires (1.5 GiB of 4.334 GiB read are reloads)
    let metrics = &report["scopes"][0]["total"]["metrics"];
    assert!(close(
        metrics["spill_reload_bytes"]["value"].as_f64().unwrap(),
        1.5 * 1024.0 * 1024.0 * 1024.0
    ));
    let insights = report["scopes"][0]["insights"].to_string();
    assert!(insights.contains("spill_reload_heavy"), "{insights}");
    // byte counts in a finding's text read in the report's units
    assert!(
        insights.contains("more than a quarter of HBM reads (1.61 GB of 4.65 GB)"),
        "{insights}"
    );
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.contains("| Reloaded from HBM | GB | 1.61 |"), "{md}");
    assert!(!md.contains("Spill_"), "{md}");
    // an inspect output directory is viewed first, with the configured tool
    let inspect = env.path("inspect");
    let proc = inspect.join("i-1_pid_77");
    std::fs::create_dir_all(&proc).unwrap();
    std::fs::write(proc.join("neff_ab12.neff"), "n").unwrap();
    std::fs::write(proc.join("ab12_instid_0_vnc_0.ntff"), "t").unwrap();
    let tool = repo().join("tests/support/fake-neuron-explorer");
    let out = report_on(
        &env,
        &inspect,
        &[
            &format!("pipeline.neuron.executable={}", tool.display()),
            "pipeline.neuron.view.format=json",
        ],
    );
    let report = report_json(&out);
    assert_eq!(report["scopes"][0]["label"], "pid 77, NeuronCore 0");
    assert_mlp_scope(&report["scopes"][0]);
    assert!(out.join("views/pid77_ab12_instid0_vnc0.json").is_file());
}

#[test]
fn the_report_md_example_in_docs_is_what_the_cli_writes() {
    let env = Env::new();
    let out = env.path("mlp");
    Command::cargo_bin("profile-run")
        .unwrap()
        .current_dir(fixture("neuron"))
        .args(["report", "llama_tp_decoder.json", "--out"])
        .arg(&out)
        .args(MLP)
        .arg("report.compare=[MLP[0], MLP[3]]")
        .assert()
        .success();
    let written = std::fs::read_to_string(out.join("report.md")).unwrap();
    let docs = std::fs::read_to_string(repo().join("docs/neuron.md")).unwrap();
    let block = docs
        .split("<!-- report.md example -->\n```markdown\n")
        .nth(1)
        .and_then(|rest| {
            rest.split("\n```\n<!-- end of report.md example -->")
                .next()
        })
        .expect("the example block in docs/neuron.md");
    // Every line of the excerpt, in order, except the `…` rows that stand for left-out ones; the
    // region anchors are left out of the excerpt too.
    let mut lines = written.lines().filter(|l| !l.starts_with("<a id="));
    for want in block.lines().filter(|l| *l != "| … |") {
        assert!(
            lines.any(|l| l == want),
            "docs/neuron.md's example line is not in the rendered report.md (in order):\n{want}"
        );
    }
}

#[test]
fn an_ncu_export_without_its_extension_is_not_taken_for_neuron() {
    let env = Env::new();
    let export = env.path("kreplay_raw");
    std::fs::copy(fixture("ncu/h100-2025.3.1/kreplay_raw.csv"), &export).unwrap();
    let out = env.path("ncu-report");
    Command::cargo_bin("profile-run")
        .unwrap()
        .args(["report"])
        .arg(&export)
        .arg("--out")
        .arg(&out)
        .assert()
        .success();
    assert_eq!(report_json(&out)["run"]["profiler"]["name"], "ncu");
    // and a Neuron profile beside it is refused by name, not mixed in
    let output = Command::cargo_bin("profile-run")
        .unwrap()
        .args(["report"])
        .arg(super::decoder_json())
        .arg(&export)
        .arg("--out")
        .arg(env.path("mixed"))
        .assert()
        .code(2)
        .get_output()
        .clone();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("is not a Neuron profile while other inputs are"),
        "{stderr}"
    );
}

/// `profile-run report` on the decoder fixture with `args` only (no MLP overrides); report.json.
fn decoder_report(env: &Env, name: &str, args: &[&str]) -> serde_json::Value {
    let out = env.path(name);
    Command::cargo_bin("profile-run")
        .unwrap()
        .args(["report"])
        .arg(fixture("neuron/llama_tp_decoder.json"))
        .arg("--out")
        .arg(&out)
        .args(args)
        .assert()
        .success();
    report_json(&out)
}

#[test]
fn regions_auto_cuts_neuron_profiles_and_neuron_regions_is_its_alias() {
    let env = Env::new();
    // The shared keys give the same report as the alias keys (MLP blocks, distribution, comparison).
    let auto = decoder_report(
        &env,
        "auto",
        &[
            "regions.auto.method=collectives",
            "regions.auto.collectives.name=MLP",
            "regions.auto.collectives.op_type_1=AllReduce",
            "regions.auto.collectives.op_type_2=AllReduce",
            "regions.auto.collectives.stride=2",
            "regions.auto.collectives.offset=1",
            "report.compare=[MLP[0], MLP[3]]",
        ],
    );
    let mut alias_args = MLP.to_vec();
    alias_args.push("report.compare=[MLP[0], MLP[3]]");
    let alias = decoder_report(&env, "alias", &alias_args);
    assert_mlp_scope(&auto["scopes"][0]);
    for key in ["scopes", "compare"] {
        assert_eq!(auto[key], alias[key], "{key}");
    }
    // One distribution of the four MLP blocks, the report's own: durations 38, 40, 38, 64 µs give
    // median 39, p90 = 40 + 0.7 × 24 = 56.8, and 64 > 1.5 × 39 is the outlier.
    let d = &auto["scopes"][0]["distributions"][0];
    assert_eq!(
        (d["base"].as_str(), d["count"].as_u64()),
        (Some("MLP"), Some(4))
    );
    for (k, want) in [
        ("min", 38e3),
        ("median", 39e3),
        ("p90", 56.8e3),
        ("max", 64e3),
    ] {
        assert!(close(d[k].as_f64().unwrap(), want), "{k}: {}", d[k]);
    }
    let outliers: Vec<&str> = d["regions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["outlier"] == true)
        .map(|e| e["path"].as_str().unwrap())
        .collect();
    assert_eq!(outliers, ["MLP[3]"]);
    // report.compare is the same for every profiler: two regions side by side.
    let compared: Vec<&str> = auto["compare"][0]["regions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["path"].as_str().unwrap())
        .collect();
    assert_eq!(compared, ["MLP[0]", "MLP[3]"]);
}

#[test]
fn hierarchy_without_a_depth_gives_the_repeated_layers() {
    let env = Env::new();
    let report = decoder_report(&env, "layers", &["regions.auto.method=hierarchy"]);
    let paths: Vec<&str> = report["scopes"][0]["regions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["path"].as_str().unwrap())
        .collect();
    // The fixture's layer paths repeat first at NeuronLlamaDecoderLayer[0..3] (depth 2).
    let layers: Vec<String> = (0..4)
        .map(|l| format!("NeuronLlamaModel/NeuronLlamaDecoderLayer[{l}]"))
        .collect();
    assert_eq!(paths, layers);
    // A depth given still cuts there, through either key.
    let deeper = decoder_report(
        &env,
        "deeper",
        &["regions.auto.method=hierarchy", "regions.auto.depth=3"],
    );
    let alias = decoder_report(
        &env,
        "deeper-alias",
        &[
            "neuron.regions.method=hierarchy",
            "neuron.regions.hierarchy.depth=3",
        ],
    );
    assert_eq!(deeper["scopes"][0]["regions"].as_array().unwrap().len(), 8);
    assert_eq!(deeper["scopes"], alias["scopes"]);
}

#[test]
fn neuron_reports_leave_out_empty_metrics_and_give_evidence_in_table_units() {
    let env = Env::new();
    let report = decoder_report(&env, "units", &["regions.auto.method=hierarchy"]);
    // The decoder profile has no weight or DMA-activity summary values: those metrics are listed
    // nowhere, and one note says so.
    let listed: Vec<&str> = report["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["name"].as_str().unwrap())
        .collect();
    let scope = &report["scopes"][0];
    for gone in [
        "weight_size_bytes",
        "weight_queue_bytes",
        "dma_active_time_percent",
    ] {
        assert!(!listed.contains(&gone), "{gone} is still listed");
        assert!(scope["total"]["metrics"].get(gone).is_none());
    }
    let notes: Vec<&str> = report["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect();
    assert!(
        notes
            .iter()
            .any(|n| n.contains("no value anywhere") && n.contains("`weight_size_bytes`")),
        "{notes:?}"
    );
    // Evidence is in the unit the tables use: a % metric's evidence equals the scope's % value.
    for insight in scope["insights"].as_array().unwrap() {
        for (name, value) in insight["evidence"]["metrics"].as_object().unwrap() {
            let table = &scope["total"]["metrics"][name];
            assert!(
                close(value.as_f64().unwrap(), table["value"].as_f64().unwrap()),
                "{name}: evidence {value} vs table {}",
                table["value"]
            );
        }
    }
    // And every region counts the instructions it owns; together with those outside, the scope's.
    let owned: u64 = scope["regions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["kernel_count"].as_u64().unwrap())
        .sum();
    let outside = scope["outside_regions"]["kernel_count"].as_u64().unwrap();
    let total = scope["total"]["kernel_count"].as_u64().unwrap();
    assert_eq!(owned + outside, total);
    // The fixture's instructions, as its JSON lists them (after the viewer's log lines).
    let text = std::fs::read_to_string(fixture("neuron/llama_tp_decoder.json")).unwrap();
    let raw: serde_json::Value = serde_json::from_str(&text[text.find('{').unwrap()..]).unwrap();
    let listed_instructions = raw["instruction"].as_array().map_or(0, |a| a.len() as u64);
    assert_eq!(total, listed_instructions);
}

#[test]
fn neuron_rules_are_loaded_for_neuron_reports_only() {
    // A broken neuron.insights.rules is a Neuron report's concern: an ncu report does not read it…
    let env = Env::new();
    let out = env.path("ncu");
    Command::cargo_bin("profile-run")
        .unwrap()
        .args(["report"])
        .arg(fixture("ncu/h100-2025.3.1/kreplay_raw.csv"))
        .arg("--out")
        .arg(&out)
        .arg("neuron.insights.rules=/nonexistent/rules.yaml")
        .assert()
        .success();
    assert_eq!(report_json(&out)["run"]["profiler"]["name"], "ncu");
    // …while a Neuron report refuses it by key, before writing anything.
    let out = env.path("neuron");
    Command::cargo_bin("profile-run")
        .unwrap()
        .args(["report"])
        .arg(fixture("neuron/llama_tp_decoder.json"))
        .arg("--out")
        .arg(&out)
        .arg("neuron.insights.rules=/nonexistent/rules.yaml")
        .assert()
        .code(2)
        .stderr(predicates::str::contains("neuron.insights.rules"));
    assert!(!out.join("report.json").exists());
}
