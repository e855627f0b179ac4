//! `--help` and `-h` as a new user reads them: the three recommended commands and the presets, and
//! under each command only the flags that work there; `config show` showing what a preset changes.

use assert_cmd::Command;

fn run(args: &[&str]) -> (i32, String, String) {
    let out = Command::cargo_bin("profile-run")
        .unwrap()
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn help_lists_the_recommended_commands_and_every_preset_and_h_is_short() {
    let (code, long, _) = run(&["--help"]);
    assert_eq!(code, 0);
    for wanted in [
        "profile-run -c ncu/trace -- python train.py",
        "profile-run -c ncu/sampled -- python train.py",
        "profile-run -c ncu/default -- python train.py",
        "ncu/distributed ",
        "neuron/neff ",
        "Exit codes:",
    ] {
        assert!(long.contains(wanted), "--help lacks {wanted:?}:\n{long}");
    }
    let (code, short, _) = run(&["-h"]);
    assert_eq!(code, 0);
    assert!(
        short.contains("profile-run -c ncu/trace -- python train.py"),
        "{short}"
    );
    assert!(!short.contains("neuron/neff"), "-h stays short:\n{short}");
    assert!(short.lines().count() * 2 < long.lines().count(), "{short}");
}

/// The flags a command's `--help` shows (`--force`, `-v`, …).
fn flags(help: &str) -> Vec<String> {
    help.lines()
        .map(str::trim_start)
        .filter(|l| l.starts_with('-'))
        .filter_map(|l| l.split([' ', ',']).next())
        .map(str::to_string)
        .collect()
}

#[test]
fn every_flag_a_command_shows_is_one_it_takes() {
    let (_, diff, _) = run(&["diff", "--help"]);
    let (_, show, _) = run(&["config", "show", "--help"]);
    for help in [&diff, &show] {
        for refused in ["-v", "--force"] {
            assert!(
                !flags(help).contains(&refused.to_string()),
                "{refused} in:\n{help}"
            );
        }
    }
    let (_, report, _) = run(&["report", "--help"]);
    assert!(flags(&report).contains(&"--force".to_string()), "{report}");
    assert!(flags(&report).contains(&"-v".to_string()), "{report}");
    // What the help no longer shows is refused where it would do nothing.
    let (code, _, err) = run(&["diff", "a", "b", "-v"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("-v"), "{err}");
}

#[test]
fn config_show_prints_what_the_preset_sets_and_everything_with_all() {
    let (code, own, err) = run(&["config", "show", "-c", "ncu/sampled"]);
    assert_eq!(code, 0, "{err}");
    let (code, all, _) = run(&["config", "show", "-c", "ncu/sampled", "--all"]);
    assert_eq!(code, 0);
    assert!(own.contains("sampling:"), "{own}");
    assert!(
        !own.contains("neuron:"),
        "Neuron settings are not ncu/sampled's:\n{own}"
    );
    assert!(all.contains("neuron:"), "{all}");
    assert!(own.lines().count() * 3 < all.lines().count(), "{own}");
    // Every value shown is the resolved one: the YAML parses, and what it holds the whole has too.
    let parsed: serde_yaml::Value = serde_yaml::from_str(&own).unwrap();
    let whole: serde_yaml::Value = serde_yaml::from_str(&all).unwrap();
    let timing = &parsed["pipeline"]["ncu"]["timing"];
    assert!(!timing.is_null(), "{own}");
    assert_eq!(timing, &whole["pipeline"]["ncu"]["timing"]);
    // With nothing given, the default preset whole.
    let (_, plain, _) = run(&["config", "show"]);
    assert!(
        plain.starts_with("# the built-in default preset, every key"),
        "{plain}"
    );
    assert!(plain.contains("neuron:"), "{plain}");
}
