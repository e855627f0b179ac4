//! A new user's slips each get a message that says what to type: a misspelt preset, an override key
//! at the wrong level and misspelt, a misspelt subcommand, and a program without the `--` before it.

use assert_cmd::Command;

/// profile-run's stderr and exit code for `args`.
fn refused(args: &[&str]) -> String {
    let out = Command::cargo_bin("profile-run")
        .unwrap()
        .args(args)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{args:?}");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn a_misspelt_preset_names_the_preset() {
    let err = refused(&["--dry-run", "--config", "ncu/sampeld", "--", "true"]);
    assert!(err.contains("(did you mean `ncu/sampled`?)"), "{err}");
}

#[test]
fn a_misspelt_key_at_the_wrong_level_names_the_whole_key() {
    let err = refused(&["--dry-run", "pipeline.ncu.replay_mod=kernel", "--", "true"]);
    assert!(
        err.contains("(did you mean `pipeline.ncu.ncu_cli.replay_mode`?)"),
        "{err}"
    );
}

#[test]
fn a_misspelt_subcommand_names_the_subcommand() {
    let err = refused(&["reprot", "run-dir"]);
    assert!(
        err.contains("did you mean the subcommand: `profile-run report …`?"),
        "{err}"
    );
}

#[test]
fn a_program_without_the_double_dash_is_told_to_put_it_before() {
    for program in ["python3", "train.py"] {
        let err = refused(&["--dry-run", program, "x"]);
        assert!(
            err.contains(&format!(
                "put `--` before it: `profile-run [OPTIONS] [KEY=VALUE]... -- {program} …`"
            )),
            "{err}"
        );
    }
}

#[test]
fn a_misspelt_reader_or_timing_names_the_value_meant() {
    let err = refused(&["--dry-run", "pipeline.ncu.reader=natve", "--", "true"]);
    assert!(err.contains("pipeline.ncu.reader"), "{err}");
    assert!(err.contains("allowed values: native, csv"), "{err}");
    assert!(err.contains("(did you mean `native`?)"), "{err}");
    let err = refused(&["--dry-run", "pipeline.ncu.timing=trce", "--", "true"]);
    assert!(err.contains("allowed values: ncu, trace, auto"), "{err}");
    assert!(err.contains("(did you mean `trace`?)"), "{err}");
}
