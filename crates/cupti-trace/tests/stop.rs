//! A process that cannot be traced is stopped at its first CUDA call, not left to run untraced.

use std::process::Command;

/// Set in the child: call the driver's entry point as the CUDA driver would, then report that the
/// process went on.
const CHILD: &str = "CUPTI_TRACE_STOP_CHILD";

#[test]
fn a_process_without_libcupti_stops_at_its_first_cuda_call() {
    if std::env::var_os(CHILD).is_some() {
        let traced = cupti_trace::InitializeInjection();
        println!("went on, traced={traced}");
        return;
    }
    // This machine has no libcupti where the library looks (the CI machine has no CUDA), and the
    // explicit one named does not exist.
    if std::path::Path::new("/usr/local/cuda").exists() {
        eprintln!("skipped: a CUDA toolkit here would provide libcupti");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "a_process_without_libcupti_stops_at_its_first_cuda_call",
            "--nocapture",
        ])
        .env(CHILD, "1")
        .env("PROFILE_RUN_TRACE_DIR", dir.path())
        .env(
            "PROFILE_RUN_LIBCUPTI",
            dir.path().join("no-such-libcupti.so"),
        )
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(cupti_trace::STOPPED_EXIT_CODE),
        "stdout: {stdout}\nstderr: {stderr}"
    );
    assert!(!stdout.contains("went on"), "{stdout}");
    assert!(
        stderr.contains("stopping the process at its first CUDA call"),
        "{stderr}"
    );
    assert!(stderr.contains("no-such-libcupti.so"), "{stderr}");
    let errors: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(".error"))
        .collect();
    assert_eq!(errors.len(), 1, "one cupti.<pid>.error file");
    let why = std::fs::read_to_string(errors[0].path()).unwrap();
    assert!(why.contains("looked for"), "{why}");
}
