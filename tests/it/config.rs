//! Layered configuration: presets, precedence, inheritance, error messages and `--origin` output.

use std::fs;
use std::path::{Path, PathBuf};

use profile_run::config::{
    load, preset_names, ClockControl, ConfigError, ConfigSources, KernelNameForm, Loaded, Origin,
    ReplayMode, RollupChoice,
};

use crate::common::repo;

fn sources(files: &[&Path], env: &[(&str, &str)], overrides: &[&str]) -> ConfigSources {
    ConfigSources {
        files: files.iter().map(|p| p.to_path_buf()).collect(),
        overrides: overrides.iter().map(|s| s.to_string()).collect(),
        env: env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
    }
}

fn ok(files: &[&Path], env: &[(&str, &str)], overrides: &[&str]) -> Loaded {
    load(&sources(files, env, overrides)).unwrap_or_else(|e| panic!("config should load: {e}"))
}

fn err(files: &[&Path], env: &[(&str, &str)], overrides: &[&str]) -> ConfigError {
    match load(&sources(files, env, overrides)) {
        Ok(_) => panic!("config should not load"),
        Err(e) => e,
    }
}

/// Write `files` (relative path, text) under a fresh temporary directory.
fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (rel, text) in files {
        let path = dir.path().join(rel);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    }
    dir
}

#[test]
fn every_shipped_preset_loads_by_name_and_by_path() {
    let names = preset_names();
    for expected in [
        "ncu/default",
        "ncu/memory",
        "ncu/compute",
        "ncu/full",
        "ncu/distributed",
    ] {
        assert!(names.contains(&expected), "{expected} is not embedded");
    }
    for entry in fs::read_dir(repo().join("conf/ncu")).unwrap() {
        let path = entry.unwrap().path();
        let by_path = ok(&[&path], &[], &[]);
        let name = format!("ncu/{}", path.file_stem().unwrap().to_str().unwrap());
        let by_name = ok(&[Path::new(&name)], &[], &[]);
        assert_eq!(by_path.config, by_name.config, "{name}");
        assert!(
            by_path.config.defaults.is_empty(),
            "`defaults` leaked from {name}"
        );
        assert!(!by_path.to_yaml().contains("defaults"), "{name}");
    }
}

#[test]
fn presets_change_what_they_say() {
    let memory = ok(&[Path::new("ncu/memory")], &[], &[]).config;
    assert!(memory
        .pipeline
        .ncu
        .ncu_cli
        .sections
        .contains(&"MemoryWorkloadAnalysis".to_string()));
    assert_eq!(memory.report.sections, ["time", "memory", "speed_of_light"]);
    let compute = ok(&[Path::new("ncu/compute")], &[], &[]).config;
    assert_eq!(compute.report.sections, ["time", "compute", "occupancy"]);
    let full = ok(&[Path::new("ncu/full")], &[], &[]).config;
    assert_eq!(full.pipeline.ncu.ncu_cli.set.as_deref(), Some("full"));
    assert!(full.pipeline.ncu.ncu_cli.sections.is_empty());
    let dist = ok(&[Path::new("ncu/distributed")], &[], &[]).config;
    assert_eq!(
        dist.pipeline.ncu.ncu_cli.kernel_name.as_deref(),
        Some("regex:^(?!(_Z[0-9]+)?nccl)")
    );
    assert_eq!(
        dist.pipeline.ncu.ncu_cli.kernel_name_base,
        Some(KernelNameForm::Mangled)
    );
    // Untouched keys still come from the default preset.
    assert_eq!(
        dist.pipeline.ncu.ncu_cli.clock_control,
        Some(ClockControl::None)
    );
}

#[test]
fn precedence_is_file_then_env_then_override() {
    let dir = tree(&[(
        "my.yaml",
        "output: {root: from-file}\nreport: {max_regions: 5}\n",
    )]);
    let file = dir.path().join("my.yaml");
    let env = [("PROFILE_RUN_OUTPUT__ROOT", "from-env")];

    assert_eq!(ok(&[&file], &[], &[]).config.output.root, "from-file");
    assert_eq!(ok(&[&file], &env, &[]).config.output.root, "from-env");
    let all = ok(&[&file], &env, &["output.root=from-override"]);
    assert_eq!(all.config.output.root, "from-override");
    assert_eq!(all.config.report.max_regions, 5);
    assert_eq!(
        all.origin_of("report.max_regions"),
        Some(&Origin::File(file.clone()))
    );
    assert_eq!(
        all.origin_of("output.root"),
        Some(&Origin::Override("output.root=from-override".into()))
    );
}

#[test]
fn later_config_files_win_and_do_not_reset_earlier_ones() {
    let dir = tree(&[
        ("a.yaml", "report: {max_kernels: 3}\n"),
        (
            "b.yaml",
            "defaults: [ncu/default]\noutput: {render: false}\n",
        ),
    ]);
    let loaded = ok(
        &[&dir.path().join("a.yaml"), &dir.path().join("b.yaml")],
        &[],
        &[],
    );
    assert_eq!(loaded.config.report.max_kernels, 3);
    assert!(!loaded.config.output.render);
}

#[test]
fn env_keys_are_case_insensitive_and_values_yaml() {
    let env = [
        ("PROFILE_RUN_REPORT__AGGREGATE", "false"),
        ("profile_run_Report__Max_Kernels", "7"),
    ];
    let config = ok(&[], &env, &[]).config;
    assert!(!config.report.aggregate);
    assert_eq!(config.report.max_kernels, 7);
    // Variables without the prefix are not configuration.
    ok(&[], &[("HOME", "/root")], &[]);
}

#[test]
fn override_values_are_yaml_and_lists_are_replaced() {
    let config = ok(
        &[],
        &[],
        &[
            r#"regions.include=[forward, "train_step/backward"]"#,
            "regions.domain=null",
            "report.sections=[time]",
            "pipeline.ncu.ncu_cli.replay_mode=range",
            "pipeline.ncu.ncu_cli.launch_count=3",
            "report.metric_groups.extra=[a__b.sum]",
        ],
    )
    .config;
    assert_eq!(config.regions.include, ["forward", "train_step/backward"]);
    assert_eq!(config.regions.domain, None);
    assert_eq!(config.report.sections, ["time"]);
    assert_eq!(config.pipeline.ncu.ncu_cli.replay_mode, ReplayMode::Range);
    assert_eq!(config.pipeline.ncu.ncu_cli.launch_count, Some(3));
    // Maps merge key by key: the default groups stay beside the new one.
    assert!(config.report.metric_groups.contains_key("extra"));
    assert!(config.report.metric_groups.contains_key("time"));
}

#[test]
fn scalars_are_taken_as_strings_or_one_item_lists_where_the_key_needs_it() {
    let config = ok(
        &[],
        &[],
        &["pipeline.ncu.ncu_cli.devices=0", "regions.include=decode"],
    )
    .config;
    assert_eq!(config.pipeline.ncu.ncu_cli.devices.as_deref(), Some("0"));
    assert_eq!(config.regions.include, ["decode"]);
}

#[test]
fn quoted_override_segments_address_keys_with_dots() {
    let config = ok(
        &[],
        &[],
        &[r#"report.rollups."gpu__time_duration.sum"=max"#],
    )
    .config;
    assert_eq!(
        config.report.rollups["gpu__time_duration.sum"],
        RollupChoice::Max
    );
}

#[test]
fn defaults_are_inherited_recursively_from_the_conf_dir() {
    let dir = tree(&[
        (
            "conf/team/base.yaml",
            "defaults: [ncu/memory]\nreport: {max_kernels: 3}\noutput: {root: base}\n",
        ),
        (
            "conf/team/child.yaml",
            "defaults: [team/base]\noutput: {root: child}\n",
        ),
    ]);
    let child = dir.path().join("conf/team/child.yaml");
    let loaded = ok(&[&child], &[], &[]);
    assert_eq!(loaded.config.report.max_kernels, 3);
    assert_eq!(loaded.config.output.root, "child");
    assert_eq!(
        loaded.config.report.sections,
        ["time", "memory", "speed_of_light"]
    );
    assert!(loaded.config.defaults.is_empty());
    let sources: Vec<String> = loaded.sources().iter().map(|o| o.to_string()).collect();
    let base = dir.path().join("conf/team/base.yaml").display().to_string();
    assert_eq!(
        sources,
        [
            "built-in default preset".to_string(),
            "built-in preset `ncu/memory`".into(),
            base,
            child.display().to_string()
        ]
    );
}

#[test]
fn a_file_in_the_conf_dir_shadows_the_built_in_preset() {
    let dir = tree(&[
        ("conf/ncu/memory.yaml", "report: {max_regions: 9}\n"),
        ("conf/mine.yaml", "defaults: [ncu/memory]\n"),
    ]);
    let loaded = ok(&[&dir.path().join("conf/mine.yaml")], &[], &[]);
    assert_eq!(loaded.config.report.max_regions, 9);
}

#[test]
fn a_defaults_cycle_is_an_error_naming_the_chain() {
    let dir = tree(&[
        ("conf/a.yaml", "defaults: [b]\n"),
        ("conf/b.yaml", "defaults: [a]\n"),
    ]);
    let e = err(&[&dir.path().join("conf/a.yaml")], &[], &[]);
    assert!(matches!(e, ConfigError::PresetCycle { .. }), "{e:?}");
    let msg = e.to_string();
    assert!(
        msg.contains("a.yaml -> ") && msg.contains("b.yaml -> "),
        "{msg}"
    );
}

#[test]
fn an_unknown_parent_preset_is_an_error_with_a_suggestion() {
    let dir = tree(&[("x.yaml", "defaults: [ncu/memroy]\n")]);
    let msg = err(&[&dir.path().join("x.yaml")], &[], &[]).to_string();
    assert!(
        msg.contains("`ncu/memroy`") && msg.contains("did you mean `ncu/memory`?"),
        "{msg}"
    );
}

#[test]
fn an_unknown_key_names_the_file_the_key_and_a_suggestion() {
    let dir = tree(&[("conf/x.yaml", "report:\n  kernel:\n    include: [gemm*]\n")]);
    let file = dir.path().join("conf/x.yaml");
    let e = err(&[&file], &[], &[]);
    let msg = e.to_string();
    assert!(matches!(e, ConfigError::UnknownKey { .. }), "{e:?}");
    assert!(msg.contains(&file.display().to_string()), "{msg}");
    assert!(msg.contains("unknown key `report.kernel`"), "{msg}");
    assert!(
        msg.contains("did you mean `report.kernels.include`?"),
        "{msg}"
    );

    let msg = err(&[], &[], &["report.max_region=3"]).to_string();
    assert!(msg.contains("override `report.max_region=3`"), "{msg}");
    assert!(msg.contains("did you mean `report.max_regions`?"), "{msg}");

    let msg = err(&[], &[("PROFILE_RUN_OUTPUT__ROOTS", "x")], &[]).to_string();
    assert!(
        msg.contains("env PROFILE_RUN_OUTPUT__ROOTS") && msg.contains("`output.root`"),
        "{msg}"
    );

    let msg = err(&[], &[], &["pipeline.ncu.replay_mode=range"]).to_string();
    assert!(
        msg.contains("did you mean `pipeline.ncu.ncu_cli.replay_mode`?"),
        "{msg}"
    );

    let msg = err(&[], &[], &["zzz=1"]).to_string();
    assert!(
        msg.contains("valid top-level keys") && msg.contains("pipeline"),
        "{msg}"
    );
}

#[test]
fn a_wrong_type_names_the_key_the_source_and_what_is_expected() {
    let e = err(&[], &[], &["report.max_regions=abc"]);
    assert!(matches!(e, ConfigError::WrongType { .. }), "{e:?}");
    let msg = e.to_string();
    assert!(
        msg.contains("`report.max_regions`") && msg.contains("override `report.max_regions=abc`"),
        "{msg}"
    );
    assert!(
        msg.contains("whole number") && msg.contains("\"abc\""),
        "{msg}"
    );

    let msg = err(&[], &[("PROFILE_RUN_OUTPUT__RENDER", "maybe")], &[]).to_string();
    assert!(
        msg.contains("`output.render`") && msg.contains("`true` or `false`"),
        "{msg}"
    );
}

#[test]
fn an_invalid_enum_value_lists_the_allowed_values() {
    let msg = err(&[], &[], &["pipeline.ncu.ncu_cli.replay_mode=ranges"]).to_string();
    assert!(msg.contains("`pipeline.ncu.ncu_cli.replay_mode`"), "{msg}");
    assert!(
        msg.contains("kernel, application, range, app-range"),
        "{msg}"
    );

    let msg = err(&[], &[], &["pipeline.ncu.ncu_cli.clock_control=fast"]).to_string();
    assert!(
        msg.contains("`fast`") && msg.contains("base, none, reset"),
        "{msg}"
    );
    assert!(
        msg.contains("override `pipeline.ncu.ncu_cli.clock_control=fast`"),
        "{msg}"
    );

    let msg = err(&[], &[], &["report.sections=[time, memroy]"]).to_string();
    assert!(
        msg.contains("`memroy`") && msg.contains("did you mean `memory`?"),
        "{msg}"
    );
}

#[test]
fn a_bad_rename_regex_names_the_entry_and_the_layer() {
    let msg = err(
        &[],
        &[],
        &[r#"regions.rename=[{pattern: "aten::(", replace: ""}]"#],
    )
    .to_string();
    assert!(msg.contains("regions.rename[0].pattern"), "{msg}");
    assert!(msg.contains("aten::("), "{msg}");
    assert!(msg.contains("override"), "{msg}");
    let msg = err(&[], &[], &["regions.unrequested=hide"]).to_string();
    assert!(
        msg.contains("regions.unrequested") && msg.contains("note"),
        "{msg}"
    );
}

#[test]
fn bad_yaml_is_reported_with_line_and_column() {
    let dir = tree(&[(
        "bad.yaml",
        "report:\n  max_regions: 5\n  sections: [time\noutput: {}\n",
    )]);
    let file = dir.path().join("bad.yaml");
    let e = err(&[&file], &[], &[]);
    let ConfigError::Yaml { line, column, .. } = &e else {
        panic!("{e:?}")
    };
    assert!(*line >= 3 && *column >= 1, "{e}");
    let msg = e.to_string();
    assert!(
        msg.contains(&file.display().to_string()) && msg.contains(&format!("line {line}")),
        "{msg}"
    );
}

#[test]
fn an_unquoted_glob_read_as_a_yaml_alias_is_told_how_to_quote() {
    let dir = tree(&[("alias.yaml", "report:\n  kernels:\n    include: [*gemm*]\n")]);
    let e = err(&[&dir.path().join("alias.yaml")], &[], &[]);
    let msg = e.to_string();
    assert!(msg.contains("line 3") && msg.contains("alias"), "{msg}");
    assert!(
        msg.contains("quote it, as in `include: ['*gemm*']`"),
        "{msg}"
    );
}

#[test]
fn a_missing_file_says_so_and_lists_the_presets() {
    let e = err(&[Path::new("no/such/file.yaml")], &[], &[]);
    let msg = e.to_string();
    assert!(matches!(e, ConfigError::MissingFile { .. }), "{e:?}");
    assert!(
        msg.contains("no/such/file.yaml") && msg.contains("does not exist"),
        "{msg}"
    );
    assert!(
        msg.contains("ncu/memory") && msg.contains("ncu/distributed"),
        "{msg}"
    );
}

#[test]
fn an_override_without_equals_is_an_error() {
    let e = err(&[], &[], &["report.max_regions"]);
    assert!(
        matches!(e, ConfigError::OverrideWithoutEquals { .. }),
        "{e:?}"
    );
    assert!(e.to_string().contains("`report.max_regions`"));
}

#[test]
fn defaults_cannot_be_set_from_env_or_overrides() {
    let msg = err(&[], &[], &["defaults=[ncu/memory]"]).to_string();
    assert!(msg.contains("--config"), "{msg}");
}

#[test]
fn show_with_origin_names_each_source() {
    let dir = tree(&[("my.yaml", "report: {max_kernels: 4}\n")]);
    let file: PathBuf = dir.path().join("my.yaml");
    let loaded = ok(
        &[&file, Path::new("ncu/memory")],
        &[("PROFILE_RUN_OUTPUT__ROOT", "/tmp/x")],
        &["pipeline.ncu.ncu_cli.replay_mode=range"],
    );
    let shown = loaded.show_with_origin();
    let line = |key: &str| {
        shown
            .lines()
            .find(|l| l.starts_with(&format!("{key}: ")))
            .unwrap_or_else(|| panic!("no line for {key} in\n{shown}"))
            .to_string()
    };
    assert!(line("report.max_kernels").ends_with(&format!("# {}", file.display())));
    assert!(line("report.sections").contains("[time, memory, speed_of_light]"));
    assert!(line("report.sections").ends_with("# built-in preset `ncu/memory`"));
    assert!(line("output.root").ends_with("# env PROFILE_RUN_OUTPUT__ROOT"));
    let replay = line("pipeline.ncu.ncu_cli.replay_mode");
    assert!(
        replay.starts_with("pipeline.ncu.ncu_cli.replay_mode: range "),
        "{replay}"
    );
    assert!(
        replay.ends_with("# override `pipeline.ncu.ncu_cli.replay_mode=range`"),
        "{replay}"
    );
    assert!(line("output.render").ends_with("# built-in default preset"));
    assert!(line("report.metric_groups.time").contains("[gpu__time_duration.sum]"));
    assert!(shown.lines().all(|l| l.contains("  # ")), "{shown}");
    assert!(!shown.contains("defaults"), "{shown}");
    assert_eq!(shown, loaded.show_with_origin());
}

#[test]
fn the_fingerprint_is_16_hex_digits_and_follows_the_config() {
    let a = ok(&[], &[], &[]).fingerprint();
    let b = ok(&[], &[], &["report.max_regions=3"]).fingerprint();
    assert_eq!(a.len(), 16);
    assert!(a.chars().all(|c| c.is_ascii_hexdigit()));
    assert_ne!(a, b);
    assert_eq!(a, ok(&[], &[], &[]).fingerprint());
    // The thread count changes how fast a report is made, not what it says.
    assert_eq!(a, ok(&[], &[], &["report.threads=3"]).fingerprint());
    assert_eq!(
        a,
        ok(&[], &[], &["pipeline.signal_grace_seconds=60"]).fingerprint()
    );
    // Adaptive sampling's settings change nothing while it is off; on, they count.
    assert_eq!(
        a,
        ok(&[], &[], &["pipeline.ncu.sampling.error=0.2"]).fingerprint()
    );
    let adaptive = ok(&[], &[], &["pipeline.ncu.sampling.adaptive=true"]).fingerprint();
    assert_ne!(a, adaptive);
    assert_ne!(
        adaptive,
        ok(
            &[],
            &[],
            &[
                "pipeline.ncu.sampling.adaptive=true",
                "pipeline.ncu.sampling.max_samples=8"
            ]
        )
        .fingerprint()
    );
}

#[test]
fn show_with_origin_names_the_file_that_set_a_key_even_to_the_built_in_value() {
    // A verbatim copy of the default preset, and a file that sets one key to its built-in value.
    let default = fs::read_to_string(repo().join("conf/ncu/default.yaml")).unwrap();
    let dir = tree(&[
        ("copy.yaml", default.as_str()),
        ("same.yaml", "report: {max_kernels: 10}\n"),
    ]);
    let copy = dir.path().join("copy.yaml");
    let same = dir.path().join("same.yaml");
    let line = |shown: &str, key: &str| {
        shown
            .lines()
            .find(|l| l.starts_with(&format!("{key}: ")))
            .unwrap_or_else(|| panic!("no line for {key} in\n{shown}"))
            .to_string()
    };

    let shown = ok(&[&copy], &[], &[]).show_with_origin();
    let origin = format!("# {}", copy.display());
    assert!(shown.lines().all(|l| l.ends_with(&origin)), "{shown}");

    let loaded = ok(&[&same], &[], &[]);
    let shown = loaded.show_with_origin();
    assert_eq!(loaded.config.report.max_kernels, 10);
    let max_kernels = line(&shown, "report.max_kernels");
    assert!(
        max_kernels.ends_with(&format!("# {}", same.display())),
        "{max_kernels}"
    );
    assert!(line(&shown, "report.max_regions").ends_with("# built-in default preset"));

    // The copy given after another file resets what that file changed, as any later layer does.
    let loaded = ok(&[&same, &copy], &[], &["report.max_regions=7"]);
    let shown = loaded.show_with_origin();
    assert!(
        line(&shown, "report.max_kernels").ends_with(&origin),
        "{shown}"
    );
    assert!(line(&shown, "report.max_regions").ends_with("# override `report.max_regions=7`"));
}
