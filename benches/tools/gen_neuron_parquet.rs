//! Writes a Neuron Explorer Parquet profile directory from a full-JSON profile, with the tables and
//! columns of profile schema 7.4.0 (the generator the tests use).
//!
//!     cargo run --example gen-neuron-parquet -- OUT_DIR [PROFILE.json] [SCHEMA_VERSION]
//!
//! With `--system OUT_DIR`, a system profile of two instances of two workers each instead (one
//! `<instance-id>_pid_<pid>/` per worker's process, worker 3 late to every collective).

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
