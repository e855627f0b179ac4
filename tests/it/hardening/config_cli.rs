//! Configuration mistakes at the command line (tests/it/config.rs covers the library), templates
//! only from the built-ins or the configured path, and config values that must never reach a shell.

use super::{code_and_stderr, fixture_bytes, report_on, Workspace};

/// `profile-run --dry-run ARGS… -- true` in a directory holding `files`.
fn dry_run(files: &[(&str, &str)], args: &[&str]) -> (i32, String) {
    let ws = Workspace::new();
    for (name, text) in files {
        std::fs::write(ws.dir.path().join(name), text).unwrap();
    }
    code_and_stderr(ws.cmd().arg("--dry-run").args(args).args(["--", "true"]))
}

fn assert_usage(result: (i32, String), expected: &[&str]) {
    let (code, stderr) = result;
    assert_eq!(code, 2, "{stderr}");
    for text in expected {
        assert!(stderr.contains(text), "expected {text:?} in: {stderr}");
    }
}

#[test]
fn an_unknown_key_names_file_and_key() {
    assert_usage(
        dry_run(
            &[("c.yaml", "report:\n  max_regionz: 3\n")],
            &["--config", "c.yaml"],
        ),
        &["c.yaml", "report.max_regionz", "max_regions"],
    );
}

#[test]
fn a_wrong_type_names_file_key_and_expected_type() {
    assert_usage(
        dry_run(
            &[("c.yaml", "report:\n  max_regions: lots\n")],
            &["--config", "c.yaml"],
        ),
        &["c.yaml", "report.max_regions", "whole number", "lots"],
    );
}

#[test]
fn bad_yaml_names_line_and_column() {
    assert_usage(
        dry_run(
            &[("c.yaml", "report:\n  max_regions: [1\n  x: y\n")],
            &["--config", "c.yaml"],
        ),
        &["invalid YAML in c.yaml", "line 3, column"],
    );
}

#[test]
fn a_missing_config_file_lists_the_built_in_presets() {
    assert_usage(
        dry_run(&[], &["--config", "nope.yaml"]),
        &["nope.yaml", "does not exist", "ncu/memory"],
    );
}

#[test]
fn an_override_without_equals_shows_the_form() {
    assert_usage(
        dry_run(&[], &["report.max_regions"]),
        &["report.max_regions", "has no `=`", "dotted.key=value"],
    );
    // For `report` such an argument can only be an input, and says so.
    let r = report_on(&fixture_bytes(), &["report.max_regions"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("report.max_regions does not exist"),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("key=value"), "{}", r.stderr);
}

#[test]
fn a_bad_override_value_names_the_override() {
    assert_usage(
        dry_run(&[], &["report.max_regions=-3"]),
        &["report.max_regions=-3"],
    );
}

#[test]
fn template_errors_name_template_and_line() {
    let cases = [
        ("syntax.md.j2", "ok\n{% for %}\n", "line 2"),
        (
            "filter.md.j2",
            "ok\n\n{{ report.generator | frobnicate }}\n",
            "line 3",
        ),
        ("missing.md.j2", "{{ report.nothing_here }}\n", "line 1"),
    ];
    for (name, text, line) in cases {
        let dir = tempfile::tempdir().unwrap();
        let template = dir.path().join(name);
        std::fs::write(&template, text).unwrap();
        let r = report_on(
            &fixture_bytes(),
            &[&format!("report.template={}", template.display())],
        );
        assert_eq!(r.code, 2, "{name}: {}", r.stderr);
        assert!(
            r.stderr.contains(name) && r.stderr.contains(line),
            "{name}: {}",
            r.stderr
        );
        assert!(
            !r.out().join("report.md").exists(),
            "{name}: nothing half-rendered"
        );
    }
    let r = report_on(&fixture_bytes(), &["report.template=/nonexistent/t.md.j2"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("could not read template /nonexistent/t.md.j2"),
        "{}",
        r.stderr
    );
}

#[test]
fn templates_include_only_built_ins_never_other_files() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("secret.md.j2"), "SECRET").unwrap();
    for include in ["/etc/passwd", "secret.md.j2", "../secret.md.j2"] {
        let template = dir.path().join("user.md.j2");
        std::fs::write(&template, format!("{{% include \"{include}\" %}}\n")).unwrap();
        let r = report_on(
            &fixture_bytes(),
            &[&format!("report.template={}", template.display())],
        );
        assert_eq!(r.code, 2, "{include}: {}", r.stderr);
        assert!(
            r.stderr.contains("template not found"),
            "{include}: {}",
            r.stderr
        );
    }
    // The built-in partials are available by name.
    let template = dir.path().join("user.md.j2");
    std::fs::write(
        &template,
        "{% import \"macros.md.j2\" as m %}# mine: {{ report.scopes | length }} scope(s)\n",
    )
    .unwrap();
    let r = report_on(
        &fixture_bytes(),
        &[&format!("report.template={}", template.display())],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.markdown(), "# mine: 1 scope(s)\n");
}

#[test]
fn config_values_reach_ncu_as_single_literal_arguments() {
    let ws = Workspace::new();
    let marker = ws.dir.path().join("pwned");
    let hostile = format!("; touch {} #", marker.display());
    let subst = format!("$(touch {})", marker.display());
    let backticks = format!("`touch {}`", marker.display());
    ws.cmd()
        .env("FAKE_NCU_EXTRA_ARGS", "3")
        .args(["-q"])
        .arg(format!("pipeline.ncu.ncu_cli.kernel_name={subst}"))
        .arg(format!(
            "pipeline.ncu.ncu_cli.extra_args=[\"{hostile}\", \"{backticks}\", \"; rm -rf ~\"]"
        ))
        .args(["--", "true"])
        .assert()
        .success();
    assert!(!marker.exists(), "nothing ran through a shell");
    let argv = ws.profile_argvs().remove(0);
    let kernel_at = argv.iter().position(|a| a == "--kernel-name").unwrap();
    assert_eq!(argv[kernel_at + 1], subst);
    for literal in [&hostile, &backticks, &"; rm -rf ~".to_string()] {
        assert_eq!(
            argv.iter().filter(|a| *a == literal).count(),
            1,
            "{literal} in {argv:?}"
        );
    }
}
