//! Writes a Neuron Explorer Parquet profile directory from a full-JSON profile, with the tables and
//! columns of profile schema 7.4.0 (the generator the tests use).
//!
//!     cargo run --example gen-neuron-parquet -- OUT_DIR [PROFILE.json] [SCHEMA_VERSION]
//!
//! With `--system OUT_DIR`, a system profile of two instances of two workers each instead (one
//! `<instance-id>_pid_<pid>/` per worker's process, worker 3 late to every collective).
//!
//! With `--scale KIND N OUT_DIR`, a system profile at scale for `benches/neuron_system.sh`: `names`
//! (N events with N distinct names), `processes` (N processes of one worker each), `name-bytes`
//! (one event named with N bytes), `footer` (the events table of a small profile, its footer
//! forged to claim N bytes of metadata, the file sparse).

#[path = "../../tests/it/neuron/parquet_gen.rs"]
mod parquet_gen;
#[path = "../../tests/it/neuron/system_gen.rs"]
mod system_gen;

use std::path::PathBuf;

fn main() {
    let mut args = std::env::args_os().skip(1);
    let usage =
        "usage: gen-neuron-parquet OUT_DIR [PROFILE.json] [SCHEMA_VERSION] | --system OUT_DIR";
    let Some(out) = args.next().map(PathBuf::from) else {
        eprintln!("{usage}");
        std::process::exit(2);
    };
    if out.as_os_str() == "--scale" {
        let (kind, n, root) = match (args.next(), args.next(), args.next()) {
            (Some(k), Some(n), Some(root)) => (k, n, PathBuf::from(root)),
            _ => {
                eprintln!(
                    "usage: gen-neuron-parquet --scale names|processes|name-bytes|footer N OUT_DIR"
                );
                std::process::exit(2);
            }
        };
        let n: usize = n.to_string_lossy().parse().expect("N is a count");
        let dir = match kind.to_string_lossy().as_ref() {
            "names" => system_gen::many_names(&root, n),
            "processes" => system_gen::many_processes(&root, n),
            "name-bytes" => system_gen::long_name(&root, n),
            "footer" => {
                let dir = system_gen::long_name(&root, 8);
                let events = dir.join("SystemProfileEvents.parquet");
                let real = root.join("events.parquet");
                std::fs::rename(&events, &real).unwrap();
                let claimed = u32::try_from(n).expect("a footer claims at most 4 GiB");
                system_gen::forge_footer(&real, &events, claimed, n as u64 + 64);
                std::fs::remove_file(&real).unwrap();
                dir
            }
            other => {
                eprintln!("unknown scale scenario `{other}`");
                std::process::exit(2);
            }
        };
        println!("wrote {}", dir.display());
        return;
    }
    if out.as_os_str() == "--system" {
        let Some(root) = args.next().map(PathBuf::from) else {
            eprintln!("{usage}");
            std::process::exit(2);
        };
        for dir in system_gen::training_run(&root, Some(3), true) {
            println!("wrote {}", dir.display());
        }
        return;
    }
    let json = args.next().map_or_else(
        || {
            PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("tests/fixtures/neuron/llama_tp_decoder.json")
        },
        PathBuf::from,
    );
    let mut opts = parquet_gen::GenOptions::default();
    if let Some(v) = args.next() {
        opts.version = v.to_string_lossy().into_owned();
    }
    parquet_gen::generate(&json, &out, &opts);
    println!("wrote {}", out.display());
}
