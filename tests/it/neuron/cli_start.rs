//! Neuron runs whose program cannot start: each message names the setting that names the program
//! (the workload after `--` in inspect mode, `pipeline.neuron.executable` in NEFF mode), never
//! ncu's.

use std::os::unix::fs::PermissionsExt;

use super::cli::Env;

#[test]
fn a_neff_capture_whose_tool_cannot_start_names_the_neuron_executable() {
    let env = Env::new();
    let neff = env.path("model.neff");
    std::fs::write(&neff, "fake neff").unwrap();
    // Found and executable, so every check before the run passes; the kernel refuses to start it.
    let tool = env.path("neuron-explorer");
    std::fs::write(&tool, b"\x7fELF not really").unwrap();
    std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).unwrap();
    let output = env
        .cmd("neuron/neff")
        .arg(format!("pipeline.neuron.neff={}", neff.display()))
        .arg(format!("pipeline.neuron.executable={}", tool.display()))
        .assert()
        .failure()
        .get_output()
        .clone();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains(&format!("starting `{}` failed", tool.display())),
        "{stderr}"
    );
    assert!(
        stderr.contains("check pipeline.neuron.executable"),
        "{stderr}"
    );
    assert!(!stderr.contains("after `--`"), "{stderr}");
    assert!(!stderr.contains("pipeline.ncu"), "{stderr}");
}
