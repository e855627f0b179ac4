//! The planners of a run's passes start nothing and open nothing (docs/architecture.md, "A run"):
//! each is a pure function of the plan and of what earlier passes found, so that `--dry-run`
//! prints the plan the run runs and a planner's tests need no fake profiler. Checked over the
//! imports (no file of `process`, the executor, the journal or the run directory) and the code
//! (no file system, no spawning).

use super::{imports::code_of, krate};

/// The planners: which passes a run makes and how each is built.
const PLANNERS: [&str; 6] = [
    "profiler::ncu::capture::passes",
    "profiler::ncu::capture::sampling::deep_plan",
    "profiler::ncu::capture::sampling::workers",
    "profiler::ncu::capture::sampling::share",
    "profiler::ncu::capture::sampling::strata",
    "profiler::ncu::capture::sampling::coverage",
];

/// What a planner may not import: spawning (`process`), and what runs a plan or writes the
/// run's record (the executor's and the journal's own types; their plain data is the plan's).
const RUNNING_MODULES: [&str; 1] = ["process"];
const RUNNING_NAMES: [&str; 3] = ["Executor", "Journal", "RunDir"];

/// Words of code that touch the file system or start a process.
const EFFECTS: [&str; 7] = [
    "std::fs",
    "File::",
    "duct::",
    "std::process",
    "run_streaming",
    "RunDir",
    ".spawn(",
];

#[test]
fn planners_start_no_process_and_open_no_file() {
    let krate = krate();
    let imports = krate.imports();
    let mut found = Vec::new();
    for planner in PLANNERS {
        let file = &krate.files[planner];
        for (imported, names) in &imports[planner] {
            let module = RUNNING_MODULES
                .iter()
                .any(|m| imported == m || imported.starts_with(&format!("{m}::")));
            let name = names.iter().find(|n| RUNNING_NAMES.contains(&n.as_str()));
            if module || name.is_some() {
                found.push(format!("{} imports {imported} ({names:?})", file.display()));
            }
        }
        let text = std::fs::read_to_string(file).unwrap();
        let code = code_of(&text);
        let code = code.split("#[cfg(test)]").next().unwrap_or_default();
        for effect in EFFECTS {
            if code.contains(effect) {
                found.push(format!("{} uses `{effect}`", file.display()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "planners must be pure:\n{}",
        found.join("\n")
    );
}
