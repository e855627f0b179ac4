//! Adapters: no profiler's folder names another's (`src/profiler/neuron/` never `profiler::ncu`,
//! nor the other way), so each can be read, changed or removed alone. What both need stands on a
//! neutral floor (`crate::profiler`'s own files, `run`, `analysis`, …).

use super::{display, krate, within, PROFILER_MODULES};
use crate::architecture::imports::Crate;

/// Each arrow from one adapter's folder into another's (from module, to module, the names taken).
fn crossings(krate: &Crate) -> Vec<(String, String, String)> {
    let mut found = Vec::new();
    for (module, targets) in krate.imports() {
        let Some(own) = PROFILER_MODULES.iter().find(|p| within(&module, p)) else {
            continue;
        };
        for (target, names) in &targets {
            if PROFILER_MODULES
                .iter()
                .any(|other| other != own && within(target, other))
            {
                let names = names.iter().cloned().collect::<Vec<_>>().join(", ");
                found.push((module.clone(), target.clone(), names));
            }
        }
    }
    found
}

#[test]
fn no_adapter_names_another() {
    let krate = krate();
    let found: Vec<String> = crossings(&krate)
        .iter()
        .map(|(from, to, names)| {
            let (from, to) = (display(&krate, from), display(&krate, to));
            format!("{from} -> {to} ({names})")
        })
        .collect();
    assert!(
        found.is_empty(),
        "an adapter names another's module (move what both need to a neutral floor):\n{}",
        found.join("\n")
    );
}

/// The check sees an import and a path in code, from either side, and lets the seam name both.
#[test]
fn a_crossing_between_adapters_is_seen() {
    let dir = tempfile::tempdir().unwrap();
    let write = |rel: &str, text: &str| {
        let path = dir.path().join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write("lib.rs", "pub mod profiler;\n");
    write(
        "profiler/mod.rs",
        "pub mod ncu;\npub mod neuron;\nuse self::ncu::Limit;\nuse self::neuron::Read;\n",
    );
    write(
        "profiler/ncu/mod.rs",
        "pub mod inputs;\npub const Limit: u8 = 1;\n",
    );
    write(
        "profiler/ncu/inputs.rs",
        "fn f() { crate::profiler::neuron::Read(); }\n",
    );
    write(
        "profiler/neuron/mod.rs",
        "use crate::profiler::ncu::Limit;\npub fn Read() {}\n",
    );
    let found = crossings(&Crate::read(dir.path()));
    let arrow = |from: &str, to: &str, names: &str| (from.into(), to.into(), names.into());
    assert_eq!(
        found,
        [
            arrow("profiler::ncu::inputs", "profiler::neuron", "Read"),
            arrow("profiler::neuron", "profiler::ncu", "Limit"),
        ]
    );
}
